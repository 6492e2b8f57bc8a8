//! [`Scope`]: routes under a common prefix, with middleware of their own.

use std::fmt;

use crate::routing::{
    method_router::{layer_fn, LayerFn},
    route::LayerBounds,
    table::Entry,
    IntoMethodRouter,
};

/// Routes under a common prefix with their own middleware; see
/// [`App::scope`](crate::App::scope).
pub struct Scope<S> {
    prefix: String,
    routes: Vec<Entry<S>>,
    layers: Vec<LayerFn>,
}

impl<S> fmt::Debug for Scope<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl<S> Scope<S> {
    pub(super) fn new(prefix: String) -> Self {
        Scope {
            prefix,
            routes: Vec::new(),
            layers: Vec::new(),
        }
    }
}

impl<S: Clone + Send + Sync + 'static> Scope<S> {
    /// Registers the handlers of `prefix + path` (`"/"` is the prefix
    /// itself).
    pub fn route(mut self, path: &str, methods: impl IntoMethodRouter<S>) -> Self {
        let methods = methods.into_method_router();
        self.routes
            .push(Entry::new(join(&self.prefix, path), methods, None));
        self
    }

    /// Registers a named route of `prefix + path`; see
    /// [`App::named_route`](crate::App::named_route).
    pub fn named_route(
        mut self,
        name: &str,
        path: &str,
        methods: impl IntoMethodRouter<S>,
    ) -> Self {
        let methods = methods.into_method_router();
        self.routes
            .push(Entry::new(join(&self.prefix, path), methods, Some(name)));
        self
    }

    /// A nested scope.
    pub fn scope<F>(mut self, prefix: &str, build: F) -> Self
    where
        F: FnOnce(Scope<S>) -> Scope<S>,
    {
        let inner = build(Scope::new(join(&self.prefix, &normalize_prefix(prefix))));
        self.routes.extend(inner.finish());
        self
    }

    /// Wraps every route of this scope (nested scopes included; routes
    /// registered before and after the call alike) in a tower layer or a
    /// [`from_fn`](crate::middleware::from_fn) middleware that runs
    /// **after routing**, only for requests that matched one of these
    /// routes and one of its methods: a path under the prefix that no
    /// route matches is still the app's `404` (or its
    /// [`fallback`](crate::App::fallback)) and a wrong method a `405`,
    /// without the layer running. Like
    /// [`App::route_layer`](crate::App::route_layer), for one part of the
    /// app: authentication of `/admin`, say.
    ///
    /// Runs after the app's [`layer`](crate::App::layer)s and
    /// [`route_layer`](crate::App::route_layer)s and an enclosing
    /// scope's route layers, and before the routes' own
    /// [`MethodRouter::layer`](crate::routing::MethodRouter::layer)s.
    /// Route layers added later run first.
    ///
    /// ```
    /// use tern::{App, IntoResponse, Problem, Request, Response, StatusCode};
    /// use tern::{middleware::{from_fn, Next}, routing::get, test::TestClient};
    ///
    /// async fn admins_only(req: Request, next: Next) -> Response {
    ///     if req.headers().contains_key("x-admin") {
    ///         next.run(req).await
    ///     } else {
    ///         Problem::new(StatusCode::FORBIDDEN).into_response()
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let app = App::new().scope("/admin", |admin| {
    ///     admin
    ///         .route("/users", get(|| async { "[]" }))
    ///         .route_layer(from_fn(admins_only))
    /// });
    /// let client = TestClient::new(app);
    /// assert_eq!(client.get("/admin/users").send().await.status(), 403);
    /// assert_eq!(client.get("/admin/nope").send().await.status(), 404); // not 403
    /// assert_eq!(client.post("/admin/users").send().await.status(), 405); // not 403
    /// let res = client.get("/admin/users").header("x-admin", "1").send().await;
    /// assert_eq!(res.status(), 200);
    /// # }
    /// ```
    pub fn route_layer<L: LayerBounds>(mut self, layer: L) -> Self {
        self.layers.push(layer_fn(layer));
        self
    }

    pub(super) fn finish(self) -> impl Iterator<Item = Entry<S>> {
        let layers = self.layers;
        self.routes.into_iter().map(move |mut entry| {
            entry.methods.push_layers(&layers);
            entry
        })
    }
}

pub(super) fn normalize_prefix(prefix: &str) -> String {
    let trimmed = prefix.trim_end_matches('/');
    if trimmed.starts_with('/') || trimmed.is_empty() {
        trimmed.to_owned()
    } else {
        format!("/{trimmed}")
    }
}

fn join(prefix: &str, path: &str) -> String {
    match path {
        "" | "/" if !prefix.is_empty() => prefix.to_owned(),
        _ if path.starts_with('/') => format!("{prefix}{path}"),
        _ => format!("{prefix}/{path}"),
    }
}
