//! `App`: routes, scopes, middleware and state, built once into an
//! [`AppService`].

use std::{
    any::Any,
    convert::Infallible,
    fmt,
    future::Future,
    net::SocketAddr,
    panic::AssertUnwindSafe,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    task::{Context, Poll},
};

use futures_util::FutureExt;
use http::{header, HeaderValue, Method, StatusCode};
use tern_core::{body::Body, response::IntoResponse, Problem, Request, Response};

use crate::{
    config::Config,
    context::{Ctx, PathParams, RequestIdValue},
    handler::Handler,
    routing::{
        method_router::{layer_fn, LayerFn},
        route::LayerBounds,
        table::{Dispatch, Entry, Table},
        IntoMethodRouter, Route, TrailingSlash,
    },
};

type Renderer = Arc<dyn Fn(&Problem, &Requested) -> Response + Send + Sync>;
type Constraint = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// A Tern application: routes, scopes, middleware and shared state.
///
/// Build it with [`App::new`] (no state) or [`App::with_state`], register
/// handlers with [`route`](App::route), group routes under a prefix with
/// [`scope`](App::scope), add middleware with [`layer`](App::layer), then
/// run it with [`Server`](crate::Server) or test it with
/// [`TestClient`](crate::test::TestClient). Everything is composed once,
/// when the app is built; nothing is rebuilt per request or per connection.
///
/// ```
/// use tern::{App, routing::get, extract::Path};
///
/// async fn hello() -> &'static str { "Hello, World!" }
/// async fn user(Path(id): Path<u64>) -> String { format!("user {id}") }
///
/// let app = App::new()
///     .route("/", get(hello))
///     .scope("/api", |api| api.route("/users/{id:u64}", get(user)));
/// # let _ = app.build().unwrap();
/// ```
pub struct App<S = ()> {
    state: S,
    routes: Vec<Entry<S>>,
    fallback: Option<Route>,
    layers: Vec<LayerFn>,
    route_layers: Vec<LayerFn>,
    config: Option<Config>,
    renderer: Option<Renderer>,
    constraints: Vec<(String, Constraint)>,
    trailing_slash: TrailingSlash,
    settings: Vec<crate::settings::Registration>,
    commands: crate::command::Extensions,
}

impl<S> fmt::Debug for App<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App")
            .field(
                "routes",
                &self.routes.iter().map(|e| &e.path).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl App<()> {
    /// An app without state.
    pub fn new() -> Self {
        App::with_state(())
    }
}

impl Default for App<()> {
    fn default() -> Self {
        App::new()
    }
}

impl<S: Clone + Send + Sync + 'static> App<S> {
    /// An app whose handlers can take [`State<S>`](crate::extract::State).
    ///
    /// `S` is cloned for each request: keep it cheap to clone (wrap large
    /// things in `Arc`).
    pub fn with_state(state: S) -> Self {
        App {
            state,
            routes: Vec::new(),
            fallback: None,
            layers: Vec::new(),
            route_layers: Vec::new(),
            config: None,
            renderer: None,
            constraints: Vec::new(),
            trailing_slash: TrailingSlash::Strict,
            settings: Vec::new(),
            commands: crate::command::Extensions::default(),
        }
    }

    /// Registers the handlers of `path`.
    ///
    /// Syntax: `/users/{id}` (a parameter), `/users/{id:u64}` (a typed
    /// constraint: `u64`, `i64`, `slug`, `uuid`, or one added with
    /// [`constraint`](App::constraint)), `/files/{*path}` (a glob of one or
    /// more segments). Registering the same path twice merges the methods;
    /// the same method twice is a build error.
    ///
    /// `methods` is a [`MethodRouter`](crate::routing::MethodRouter) whose
    /// handlers need the app's state type `S`; handlers that take another
    /// [`State`](crate::extract::State) are a compile error naming both
    /// types (see [`IntoMethodRouter`]).
    pub fn route(mut self, path: &str, methods: impl IntoMethodRouter<S>) -> Self {
        let methods = methods.into_method_router();
        self.routes.push(Entry::new(path.to_owned(), methods, None));
        self
    }

    /// Registers a route under a name, for building its URL with
    /// [`AppService::url_for`] or the [`Urls`](crate::extract::Urls)
    /// extractor. Names are unique in an app.
    ///
    /// ```
    /// use tern::{App, routing::get};
    ///
    /// let app = App::new()
    ///     .named_route("user", "/users/{id:u64}", get(|| async { "a user" }))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(app.url_for("user", &[("id", "42")]).unwrap(), "/users/42");
    /// ```
    pub fn named_route(
        mut self,
        name: &str,
        path: &str,
        methods: impl IntoMethodRouter<S>,
    ) -> Self {
        let methods = methods.into_method_router();
        self.routes
            .push(Entry::new(path.to_owned(), methods, Some(name)));
        self
    }

    /// Routes for one host, given as `example.com` or with parameters in
    /// whole labels, `{tenant}.example.com` (read them with `Path`, host
    /// parameters first). A request whose host matches is routed only by
    /// these routes; other hosts use the routes registered without a host.
    ///
    /// ```
    /// use tern::{App, extract::Path, routing::get};
    ///
    /// async fn dashboard(Path(tenant): Path<String>) -> String {
    ///     format!("dashboard of {tenant}")
    /// }
    /// let app = App::new()
    ///     .route("/", get(|| async { "marketing site" }))
    ///     .host("{tenant}.example.com", |t| t.route("/", get(dashboard)));
    /// # let _ = app.build().unwrap();
    /// ```
    pub fn host<F>(mut self, pattern: &str, build: F) -> Self
    where
        F: FnOnce(Scope<S>) -> Scope<S>,
    {
        let scope = build(Scope::new(String::new()));
        let host = pattern.to_owned();
        self.routes.extend(scope.finish().map(|mut entry| {
            entry.host = Some(host.clone());
            entry
        }));
        self
    }

    /// What a path that has no route, but would with its trailing slash
    /// added or removed, gets: a 404 (the default), a `308` redirect, or
    /// the same answer.
    pub fn trailing_slash(mut self, policy: TrailingSlash) -> Self {
        self.trailing_slash = policy;
        self
    }

    /// Groups routes under `prefix`, with middleware of their own.
    ///
    /// ```
    /// use tern::{App, routing::get, middleware::{from_fn, Next}, Request};
    ///
    /// async fn list() -> &'static str { "[]" }
    /// async fn audit(req: Request, next: Next) -> tern::Response {
    ///     next.run(req).await
    /// }
    ///
    /// let app = App::new().scope("/admin", |admin| {
    ///     admin.route("/users", get(list)).layer(from_fn(audit))
    /// });
    /// # let _ = app.build().unwrap();
    /// ```
    pub fn scope<F>(mut self, prefix: &str, build: F) -> Self
    where
        F: FnOnce(Scope<S>) -> Scope<S>,
    {
        let scope = build(Scope::new(normalize_prefix(prefix)));
        self.routes.extend(scope.finish());
        self
    }

    /// Answers requests that match no route (by default a `404` problem).
    pub fn fallback<H, T>(mut self, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.fallback = Some(Route::from_handler(handler, self.state.clone()));
        self
    }

    /// Wraps the whole app in a tower layer or a
    /// [`from_fn`](crate::middleware::from_fn) middleware that runs
    /// **before routing**, for every request: also those that will be a
    /// `404` (no route) or a `405` (wrong method). For what applies to all
    /// traffic: logging, CORS, compression, timeouts. Layers added later
    /// run first.
    ///
    /// Authentication belongs in [`route_layer`](App::route_layer) (or a
    /// [`Scope::layer`]): here, an unauthenticated `POST /nope` would get
    /// `401` instead of `404`.
    pub fn layer<L: LayerBounds>(mut self, layer: L) -> Self {
        self.layers.push(layer_fn(layer));
        self
    }

    /// Wraps every route of the app in a layer that runs **after
    /// routing**, only for requests that matched a route and a method:
    /// an unknown path is still a `404` and a wrong method a `405`, without
    /// the layer running. For authentication and authorization. Applies to
    /// the routes registered before and after the call alike (not to the
    /// [`fallback`](App::fallback)); runs after the app's
    /// [`layer`](App::layer)s and before scope and route layers.
    ///
    /// ```
    /// use tern::{App, IntoResponse, Problem, Request, Response, StatusCode};
    /// use tern::{middleware::{from_fn, Next}, routing::get, test::TestClient};
    ///
    /// async fn auth(req: Request, next: Next) -> Response {
    ///     if req.headers().get("authorization").is_some_and(|v| v == "Bearer open-sesame") {
    ///         next.run(req).await
    ///     } else {
    ///         Problem::new(StatusCode::UNAUTHORIZED).into_response()
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let app = App::new()
    ///     .route("/notes", get(|| async { "[]" }))
    ///     .route_layer(from_fn(auth));
    /// let client = TestClient::new(app);
    /// assert_eq!(client.get("/notes").send().await.status(), 401);
    /// assert_eq!(client.get("/nope").send().await.status(), 404);   // not 401
    /// assert_eq!(client.post("/notes").send().await.status(), 405); // not 401
    /// let res = client.get("/notes").header("authorization", "Bearer open-sesame").send().await;
    /// assert_eq!(res.status(), 200);
    /// # }
    /// ```
    pub fn route_layer<L: LayerBounds>(mut self, layer: L) -> Self {
        self.route_layers.push(layer_fn(layer));
        self
    }

    /// Uses `config` instead of reading the environment when served.
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Loads the app's own settings `T` when the app is built: the
    /// `[prefix]` table of `tern.toml`, then the variables
    /// `PREFIX_<FIELD>`, which win; unknown keys, missing and malformed
    /// values stop the start with an error naming the variable. Handlers
    /// take them as [`Settings<T>`](crate::settings::Settings); a
    /// [`Secret`](crate::settings::Secret) field is never printed. See
    /// [`settings`](crate::settings).
    ///
    /// ```
    /// use serde::Deserialize;
    /// use tern::settings::{Secret, Settings};
    ///
    /// #[derive(Deserialize)]
    /// struct Api { token: Secret }
    ///
    /// async fn check(Settings(api): Settings<Api>) -> &'static str {
    ///     if api.token.matches("a-token-from-tests") { "yes" } else { "no" }
    /// }
    ///
    /// let config = tern::Config::from_settings([("API_TOKEN", "a-token-from-tests")]).unwrap();
    /// let app = tern::App::new()
    ///     .settings::<Api>("api")
    ///     .route("/check", tern::routing::get(check));
    /// assert!(app.build_with(config).is_ok());
    ///
    /// // Without `API_TOKEN`, the app does not start, and says why:
    /// let err = tern::App::new().settings::<Api>("api").build().unwrap_err();
    /// assert!(err.to_string().starts_with("API_TOKEN: is not set"));
    /// ```
    pub fn settings<T>(mut self, prefix: &str) -> Self
    where
        T: serde::de::DeserializeOwned + Send + Sync + 'static,
    {
        self.settings
            .push(crate::settings::Registration::of::<T>(prefix));
        self
    }

    /// Renders every problem (rejections, 404, 405, 500, ...) with
    /// `render` instead of the default `application/problem+json`. It
    /// gets what the request asked for ([`Requested`]), so it can answer
    /// browsers with an HTML page and API clients with `problem+json`
    /// (`problem.clone().into_response()`).
    pub fn problem_renderer<F>(mut self, render: F) -> Self
    where
        F: Fn(&Problem, &Requested) -> Response + Send + Sync + 'static,
    {
        self.renderer = Some(Arc::new(render));
        self
    }

    /// Adds a typed constraint usable as `{name:NAME}` in routes.
    ///
    /// ```
    /// let app = tern::App::new()
    ///     .constraint("hex", |s| s.bytes().all(|b| b.is_ascii_hexdigit()))
    ///     .route("/colors/{rgb:hex}", tern::routing::get(|| async { "a color" }));
    /// # let _ = app.build().unwrap();
    /// ```
    pub fn constraint<F>(mut self, name: &str, matcher: F) -> Self
    where
        F: Fn(&str) -> bool + Send + Sync + 'static,
    {
        self.constraints.push((name.to_owned(), Arc::new(matcher)));
        self
    }

    /// Adds a command to the app's command line (`my-app NAME ...`, next
    /// to `serve`, `routes` and `check`; see [`command`](crate::command)).
    /// Batteries add theirs this way (`migrate`, `createsuperuser`).
    pub fn command(mut self, command: crate::command::Command) -> Self {
        self.commands.commands.push(command);
        self
    }

    /// Runs `hook` with the built app before the server starts serving
    /// (with [`run`](crate::run), [`serve`](crate::serve) and the `serve`
    /// command; not for other commands nor the test client), in the order
    /// added. An error stops the start and is printed. For work a process
    /// does once before it serves: migrations in development, a cache
    /// warmed.
    pub fn on_start<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(AppService) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), crate::command::BoxError>> + Send + 'static,
    {
        self.commands
            .on_start
            .push(Arc::new(move |app| Box::pin(hook(app))));
        self
    }

    /// Adds lines to the production checklist of the `check` command:
    /// `check` runs with the app built for production and prints what
    /// each returns (see [`Finding`](crate::command::Finding)).
    pub fn check<F, Fut>(mut self, check: F) -> Self
    where
        F: Fn(AppService) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<crate::command::Finding>> + Send + 'static,
    {
        self.commands
            .checks
            .push(Arc::new(move |app| Box::pin(check(app))));
        self
    }

    /// Takes the commands, start hooks and checks out of the app.
    pub(crate) fn take_commands(&mut self) -> crate::command::Extensions {
        std::mem::take(&mut self.commands)
    }

    /// Each settings registration loaded on its own with `config`: the
    /// errors, for the `check` command.
    pub(crate) fn settings_errors(&self, config: &Config) -> Vec<crate::config::ConfigError> {
        crate::settings::AppSettings::errors(&self.settings, config)
    }

    /// The configuration set with [`config`](App::config), if any.
    pub fn configured(&self) -> Option<&Config> {
        self.config.as_ref()
    }

    /// Builds the app with its own configuration, or the default
    /// (development) one if none was set.
    pub fn build(self) -> Result<AppService, BuildError> {
        let config = self.config.clone().unwrap_or_default();
        self.build_with(config)
    }

    /// Builds the app with `config`: checks every route, composes every
    /// middleware chain. Conflicting or invalid routes are reported here,
    /// with both routes named, never at request time.
    pub fn build_with(self, config: Config) -> Result<AppService, BuildError> {
        let App {
            state,
            routes,
            fallback,
            layers,
            route_layers,
            config: _,
            renderer,
            constraints,
            trailing_slash,
            settings,
            commands: _,
        } = self;
        let settings =
            crate::settings::AppSettings::load(&settings, &config).map_err(BuildError::config)?;
        let mut routes = routes;
        if !route_layers.is_empty() {
            for entry in &mut routes {
                entry.methods.push_layers(&route_layers);
            }
        }
        let mut listing: Vec<crate::routing::RouteListing> = routes
            .iter()
            .map(|entry| crate::routing::RouteListing {
                host: entry.host.clone(),
                path: entry.path.clone(),
                name: entry.name.clone(),
                methods: entry.methods.listing(),
            })
            .collect();
        if let Some(health) = config.health_path.as_deref() {
            if !listing.iter().any(|r| r.path == health) {
                listing.push(crate::routing::RouteListing {
                    host: None,
                    path: health.to_owned(),
                    name: None,
                    methods: vec![crate::routing::MethodListing {
                        method: "GET".to_owned(),
                        handler: "(built in: TERN_HEALTH_PATH)",
                        middleware: Vec::new(),
                    }],
                });
            }
        }
        let middleware = layers.iter().rev().map(LayerFn::name).collect();
        let fallback = fallback.unwrap_or_else(|| Route::from_handler(not_found, ()));
        let table = Arc::new(Table::build(
            routes,
            &state,
            &constraints,
            fallback,
            trailing_slash,
            config.health_path.as_deref(),
        )?);
        let dispatch = Route::from_endpoint(Dispatch(Arc::clone(&table)));
        let chain = layers
            .iter()
            .fold(dispatch, |route, layer| layer.apply(route));
        let shared = Arc::new(Shared::new(config, renderer, table, settings));
        Ok(AppService {
            inner: Arc::new(AppInner {
                chain,
                shared,
                listing,
                middleware,
            }),
        })
    }
}
/// Routes under a common prefix with their own middleware; see
/// [`App::scope`].
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
    fn new(prefix: String) -> Self {
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
    /// [`App::named_route`].
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

    /// Wraps every route of this scope (nested scopes included) in a
    /// layer; runs after the app's layers and before the routes' own.
    pub fn layer<L: LayerBounds>(mut self, layer: L) -> Self {
        self.layers.push(layer_fn(layer));
        self
    }

    fn finish(self) -> impl Iterator<Item = Entry<S>> {
        let layers = self.layers;
        self.routes.into_iter().map(move |mut entry| {
            entry.methods.push_layers(&layers);
            entry
        })
    }
}

fn normalize_prefix(prefix: &str) -> String {
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

/// An app that cannot be built: a conflicting or invalid route, a method
/// registered twice. The message names the routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    message: String,
    /// The app's own settings ([`App::settings`]) could not be loaded.
    config: Option<crate::config::ConfigError>,
}

impl BuildError {
    pub(crate) fn new(message: String) -> Self {
        BuildError {
            message,
            config: None,
        }
    }

    fn config(e: crate::config::ConfigError) -> Self {
        BuildError {
            message: e.to_string(),
            config: Some(e),
        }
    }

    /// The setting at fault when the app's own settings
    /// ([`App::settings`]) could not be loaded (`BOOKMARKS_API_TOKEN`).
    pub fn setting(&self) -> Option<&str> {
        self.config.as_ref().map(|e| e.setting())
    }

    pub(crate) fn into_config(self) -> Result<crate::config::ConfigError, Self> {
        match self.config {
            Some(e) => Ok(e),
            None => Err(self),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}

async fn not_found(method: Method, uri: http::Uri) -> Problem {
    Problem::new(StatusCode::NOT_FOUND)
        .with_detail(format!("no route matches {method} {}", uri.path()))
}

/// What every request of one app shares: configuration and hooks.
pub(crate) struct Shared {
    pub(crate) config: Config,
    renderer: Option<Renderer>,
    security_headers: Vec<(header::HeaderName, HeaderValue)>,
    pub(crate) cookie_key: cookie::Key,
    pub(crate) table: Arc<Table>,
    pub(crate) settings: crate::settings::AppSettings,
}

impl Shared {
    fn new(
        config: Config,
        renderer: Option<Renderer>,
        table: Arc<Table>,
        settings: crate::settings::AppSettings,
    ) -> Self {
        let security_headers = if config.security_headers {
            vec![
                (
                    header::STRICT_TRANSPORT_SECURITY,
                    HeaderValue::from_static("max-age=63072000; includeSubDomains"),
                ),
                (
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'",
                    ),
                ),
                (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
                (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
                // OWASP: turn off the legacy XSS auditor of old browsers,
                // itself a source of cross-site leaks; CSP does the job.
                (header::X_XSS_PROTECTION, HeaderValue::from_static("0")),
                (
                    header::REFERRER_POLICY,
                    HeaderValue::from_static("strict-origin-when-cross-origin"),
                ),
                (
                    header::HeaderName::from_static("cross-origin-opener-policy"),
                    HeaderValue::from_static("same-origin"),
                ),
            ]
        } else {
            Vec::new()
        };
        let cookie_key =
            crate::extract::cookie::cookie_key(config.secret_key.as_ref().map(|k| k.as_bytes()));
        Shared {
            config,
            renderer,
            cookie_key,
            table,
            security_headers,
            settings,
        }
    }

    /// Whether the proxy headers of a request from `peer` are believed.
    pub(crate) fn is_trusted_proxy(&self, peer: Option<SocketAddr>) -> bool {
        peer.is_some_and(|p| {
            self.config
                .trusted_proxies
                .iter()
                .any(|n| n.contains(p.ip()))
        })
    }
}

/// Request IDs: a random per-process prefix and a counter, rendered in
/// batches of [`ID_BATCH`] per thread into one buffer, so a request's ID is
/// a slice of it: no allocation, no call to the OS, one shared counter
/// touch per batch.
const ID_BATCH: usize = 64;
const ID_LEN: usize = 32;

struct IdBatch {
    buf: bytes::Bytes,
    next: usize,
}

thread_local! {
    /// Each thread's batch of request IDs. Safe as a thread-local: it
    /// holds IDs not yet given to any request, never a request's values;
    /// `next_request_id` borrows it for one synchronous call, and an ID,
    /// once cut, belongs to its request only (the batch's buffer is reused
    /// only when no ID cut from it is alive).
    static ID_BATCHES: std::cell::RefCell<IdBatch> = const {
        std::cell::RefCell::new(IdBatch { buf: bytes::Bytes::new(), next: ID_BATCH })
    };
}

fn id_prefix() -> u64 {
    // Process-wide and written once: the same random prefix for every
    // request is the point (IDs from one process share it); it says
    // nothing about any request.
    static PREFIX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PREFIX.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        h.finish()
    })
}

fn next_request_id() -> RequestIdValue {
    // Within a batch only the counter's last two digits change: batches
    // start at multiples of `ID_BATCH`, which divides 256.
    const _: () = assert!(256 % ID_BATCH == 0);
    // Process-wide so that IDs are unique across threads and apps; an
    // atomic add hands each batch's range to one thread only.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    ID_BATCHES.with(|batch| {
        let mut batch = batch.borrow_mut();
        if batch.next == ID_BATCH {
            let first = COUNTER.fetch_add(ID_BATCH as u64, Ordering::Relaxed);
            // The last batch's buffer is reused once every ID cut from it
            // is gone (the usual case): a 2 KiB allocation per batch cost
            // more than the batch saved, through malloc's consolidation.
            let mut buf = match std::mem::take(&mut batch.buf).try_into_mut() {
                Ok(buf) if buf.len() == ID_BATCH * ID_LEN => buf,
                _ => bytes::BytesMut::zeroed(ID_BATCH * ID_LEN),
            };
            let mut head = [0u8; ID_LEN];
            hex(id_prefix(), &mut head[..16]);
            hex(first, &mut head[16..]);
            for (i, id) in buf.chunks_exact_mut(ID_LEN).enumerate() {
                id[..ID_LEN - 2].copy_from_slice(&head[..ID_LEN - 2]);
                hex((first + i as u64) & 0xff, &mut id[ID_LEN - 2..]);
            }
            *batch = IdBatch {
                buf: buf.freeze(),
                next: 0,
            };
        }
        let at = batch.next * ID_LEN;
        batch.next += 1;
        HeaderValue::from_maybe_shared(batch.buf.slice(at..at + ID_LEN))
            .unwrap_or_else(|_| HeaderValue::from_static("0"))
    })
}

fn hex(mut n: u64, out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for slot in out.iter_mut().rev() {
        *slot = DIGITS[(n & 0xf) as usize];
        n >>= 4;
    }
}

struct AppInner {
    chain: Route,
    shared: Arc<Shared>,
    listing: Vec<crate::routing::RouteListing>,
    middleware: Vec<&'static str>,
}

/// A built app: the tower `Service` the server runs and the test client
/// calls.
///
/// Cloning is one reference-count increment; every connection shares the
/// same composed routes and middleware.
#[derive(Clone)]
pub struct AppService {
    inner: Arc<AppInner>,
}

impl fmt::Debug for AppService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AppService")
    }
}

impl AppService {
    /// The configuration the app was built with.
    pub fn config(&self) -> &Config {
        &self.inner.shared.config
    }

    /// What a client gets for an HTTP/1 request hyper could not parse,
    /// instead of hyper's bare `status` with an empty body: the same
    /// problem+json as every other answer, with a request ID and the app's
    /// renderer, as the bytes of an HTTP/1.1 response that closes the
    /// connection. `date` is hyper's `date` line. `None` for a status hyper
    /// does not send for a parse error, or a rendered body not ready at
    /// once (hyper's answer then goes out as it is).
    pub(crate) fn unparsable_answer(&self, status: StatusCode, date: &[u8]) -> Option<Vec<u8>> {
        let shared = &self.inner.shared;
        let limits = &shared.config.limits;
        let detail = match status.as_u16() {
            400 => "the request is not a valid HTTP/1.1 request: it must start with a request \
                    line `METHOD /path HTTP/1.1`, then header lines `Name: value`, each ended \
                    by CRLF, then an empty line"
                .to_owned(),
            414 => "the request target (path and query) is too long".to_owned(),
            431 => format!(
                "the request head is larger than the limit of {} bytes (TERN_MAX_HEAD_BYTES) \
                 or has more than {} header fields (TERN_MAX_HEADERS)",
                limits.max_head_bytes, limits.max_headers
            ),
            _ => return None,
        };
        let mut res = Problem::new(status).with_detail(detail).into_response();
        finish(shared, &mut res, Some(next_request_id()), false, None);
        let (parts, body) = res.into_parts();
        let body = http_body_util::BodyExt::collect(body)
            .now_or_never()?
            .ok()?
            .to_bytes();
        let mut out = Vec::with_capacity(256 + body.len());
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(parts.status.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(parts.status.canonical_reason().unwrap_or("").as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &parts.headers {
            if name == header::CONNECTION || name == header::CONTENT_LENGTH {
                continue;
            }
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"connection: close\r\ncontent-length: ");
        out.extend_from_slice(body.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        if !date.is_empty() {
            out.extend_from_slice(date);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&body);
        Some(out)
    }

    /// The app's routes as API documents see them (`tern-contract`'s
    /// OpenAPI document is made from them), in registration order.
    pub fn api_routes(&self) -> &[crate::routing::ApiRoute] {
        self.inner.shared.table.api()
    }

    /// Every route with its methods, handlers and layers, in registration
    /// order (what the `routes` command prints).
    pub fn routes(&self) -> &[crate::routing::RouteListing] {
        &self.inner.listing
    }

    /// The type names of the app's own layers ([`App::layer`]), which
    /// wrap every request, outermost first.
    pub fn middleware(&self) -> &[&'static str] {
        &self.inner.middleware
    }

    /// The settings `T` loaded by [`App::settings`], if the app loads a `T`.
    pub fn settings<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner.shared.settings.get::<T>()
    }

    /// The path of the route registered with
    /// [`named_route`](App::named_route) as `name`, with `params`
    /// percent-encoded and checked against the route's constraints.
    pub fn url_for(
        &self,
        name: &str,
        params: &[(&str, &str)],
    ) -> Result<String, crate::routing::UrlError> {
        self.inner.shared.table.url_for(name, params)
    }

    /// Answers one request from a client at `peer`.
    ///
    /// Never fails and never panics: a panicking handler becomes a `500`
    /// problem, a handler slower than the request timeout a `503`.
    pub fn call(&self, req: Request, peer: Option<SocketAddr>) -> ResponseFuture {
        self.call_with_drain(req, peer, None)
    }

    pub(crate) fn call_with_drain(
        &self,
        mut req: Request,
        peer: Option<SocketAddr>,
        drain: Option<Arc<crate::drain::DrainState>>,
    ) -> ResponseFuture {
        let inner = Arc::clone(&self.inner);
        let state = match prepare(&inner.shared, &req, peer, drain) {
            // Refused before routing (framing, body length, host): the
            // answer still carries a request ID, like every answer Tern makes.
            Err(mut res) => {
                finish(
                    &inner.shared,
                    &mut res,
                    Some(next_request_id()),
                    false,
                    None,
                );
                State::Done(Some(res))
            }
            Ok(ctx) => {
                let is_head = req.method() == Method::HEAD;
                let http1 = req.version() <= http::Version::HTTP_11;
                let accept = match inner.shared.renderer {
                    Some(_) => req.headers().get(header::ACCEPT).cloned(),
                    None => None,
                };
                let log = inner.shared.config.access_log.then(|| {
                    Box::new(AccessLog {
                        started: std::time::Instant::now(),
                        method: req.method().clone(),
                        path: req.uri().path().to_owned(),
                    })
                });
                // The context goes with the request, wherever the chain
                // takes it; the response future keeps what it needs of it.
                let (request_id, peer) = (ctx.request_id.clone(), ctx.peer);
                req.extensions_mut().insert(ctx);
                let mut app = Some(Arc::clone(&inner.shared));
                // Routing (and any synchronous part of the chain) runs here.
                let fut = {
                    let _entered = crate::context::enter(&mut app);
                    inner.chain.call_in(&mut Some(req))
                };
                State::Running {
                    fut,
                    app,
                    request_id: Some(request_id),
                    peer,
                    timer: None,
                    is_head,
                    http1,
                    log,
                    accept,
                }
            }
        };
        ResponseFuture { inner, state }
    }
}

/// The future of one request through an [`AppService`]: the app's
/// middleware chain and handler, guarded against panics and the request
/// timeout, then the response's final touches (exact `Content-Length`,
/// request ID, security headers, the problem renderer).
///
/// The request timeout's timer is only set if the handler has to wait
/// (most answer on their first poll and never touch the timer wheel), so
/// the timeout counts from the handler's first wait.
pub struct ResponseFuture {
    inner: Arc<AppInner>,
    state: State,
}

enum State {
    Running {
        fut: crate::handler::BoxFuture,
        /// The app, current while the chain polls (see `context`), for
        /// answers that have no request to read it from.
        app: Option<Arc<Shared>>,
        request_id: Option<RequestIdValue>,
        peer: Option<SocketAddr>,
        timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
        is_head: bool,
        http1: bool,
        log: Option<Box<AccessLog>>,
        /// The request's `Accept`, kept only for an app's problem renderer.
        accept: Option<HeaderValue>,
    },
    Done(Option<Response>),
}

struct AccessLog {
    started: std::time::Instant,
    method: Method,
    path: String,
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ResponseFuture")
    }
}

impl Future for ResponseFuture {
    type Output = Response;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        let this = self.get_mut();
        let shared = &this.inner.shared;
        let res = match &mut this.state {
            State::Done(res) => {
                return Poll::Ready(res.take().unwrap_or_else(|| {
                    Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                        .with_detail("the response was already taken")
                        .into_response()
                }))
            }
            State::Running {
                fut,
                app,
                peer,
                timer,
                ..
            } => {
                let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    let _entered = crate::context::enter(app);
                    fut.as_mut().poll(cx)
                }));
                match polled {
                    Ok(Poll::Ready(res)) => res,
                    Err(panic) => panic_response(shared, panic, *peer),
                    Ok(Poll::Pending) => {
                        let limit = shared.config.timeouts.request;
                        let timer =
                            timer.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                        match timer.as_mut().poll(cx) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(()) => Problem::new(StatusCode::SERVICE_UNAVAILABLE)
                                .with_detail(format!(
                                    "the server did not answer within the request timeout ({} ms)",
                                    limit.as_millis()
                                ))
                                .into_response(),
                        }
                    }
                }
            }
        };
        let State::Running {
            request_id,
            is_head,
            http1,
            log,
            accept,
            ..
        } = &mut this.state
        else {
            return Poll::Ready(res);
        };
        let (is_head, http1, log, accept) = (*is_head, *http1, log.take(), accept.take());
        let request_id = request_id.take();
        this.state = State::Done(None);
        if let Some(log) = log {
            tracing::info!(
                target: "tern::access",
                method = %log.method,
                path = log.path,
                status = res.status().as_u16(),
                micros = log.started.elapsed().as_micros() as u64,
                request_id = request_id
                    .as_ref()
                    .and_then(|id| id.to_str().ok())
                    .unwrap_or_default(),
                "request"
            );
        }
        let mut res = res;
        finish(shared, &mut res, request_id, is_head, accept);
        if http1 && res.status() == StatusCode::PAYLOAD_TOO_LARGE {
            // The rest of the body is unread and may be any size: the
            // connection ends here rather than reading it to stay open.
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        Poll::Ready(res)
    }
}

/// RFC 9112 rules hyper leaves to the server: an HTTP/1.1 request has
/// exactly one `Host` (§3.2), and the only transfer coding served is a
/// single `chunked` (§6.1: 501 for the others, rather than handing the app
/// a body still in a coding it did not ask for); a body in a content
/// coding is refused (415, RFC 9110 §15.5.16) for the same reason; and a
/// declared body larger than the limit is refused before it is read (413). One pass over
/// the headers rather than a lookup per rule.
#[allow(clippy::result_large_err)] // the error path is the rare one
fn check_head(req: &Request, max_body: u64) -> Result<(), Problem> {
    let (mut hosts, mut codings) = (0u32, 0u32);
    let mut coding = None;
    let mut length = None;
    let mut content_coding = None;
    for (name, value) in req.headers() {
        if name == header::CONTENT_ENCODING {
            if content_coding.is_none() && !is_identity(value) {
                content_coding = Some(value);
            }
        } else if name == header::HOST {
            hosts += 1;
        } else if name == header::TRANSFER_ENCODING {
            codings += 1;
            coding = Some(value);
        } else if name == header::CONTENT_LENGTH {
            length = Some(value);
        }
    }
    // RFC 9112 §3.2: the authority form is for CONNECT and the asterisk
    // form for OPTIONS; anything else must be a path or an absolute URL.
    let uri = req.uri();
    if uri.scheme().is_none() && uri.authority().is_some() && req.method() != Method::CONNECT {
        return Err(Problem::new(StatusCode::BAD_REQUEST).with_detail(
            "the request target must be a path starting with `/` or an absolute URL",
        ));
    }
    if uri.path() == "*" && req.method() != Method::OPTIONS {
        return Err(Problem::new(StatusCode::BAD_REQUEST)
            .with_detail("the request target `*` is only for OPTIONS"));
    }
    if req.version() <= http::Version::HTTP_11 {
        if hosts == 0 && req.version() == http::Version::HTTP_11 && req.uri().authority().is_none()
        {
            return Err(Problem::new(StatusCode::BAD_REQUEST)
                .with_detail("an HTTP/1.1 request must carry a `Host` header"));
        }
        if hosts > 1 {
            return Err(Problem::new(StatusCode::BAD_REQUEST)
                .with_detail("the request carries more than one `Host` header"));
        }
    }
    if let Some(first) = coding {
        if codings > 1 || !first.as_bytes().eq_ignore_ascii_case(b"chunked") {
            return Err(Problem::new(StatusCode::NOT_IMPLEMENTED)
                .with_detail("only `Transfer-Encoding: chunked` is supported; send the body chunked or with a `Content-Length`"));
        }
    }
    // RFC 9110 §8.4.1, §15.5.16: Tern decodes no content coding, and a
    // body read as if plain while it is `br` or `gzip` is a lie to the
    // handler (and a way around every check of its bytes): 415, with
    // `Accept-Encoding: identity` saying what is taken (`prepare`).
    if let Some(value) = content_coding {
        if !http_body::Body::is_end_stream(req.body()) {
            let shown: String = String::from_utf8_lossy(value.as_bytes())
                .chars()
                .take(40)
                .collect();
            return Err(Problem::new(StatusCode::UNSUPPORTED_MEDIA_TYPE).with_detail(format!(
                "the request body is in the content coding `{shown}` (Content-Encoding), which this server does not decode: send it without a Content-Encoding"
            )));
        }
    }
    if let Some(len) = length {
        let len = len.to_str().ok().and_then(|s| s.parse::<u64>().ok());
        if len.is_some_and(|len| len > max_body) {
            return Err(Problem::new(StatusCode::PAYLOAD_TOO_LARGE)
                .with_detail(tern_core::body::too_large_detail(max_body)));
        }
    }
    Ok(())
}

/// Whether a `Content-Encoding` value names no coding but `identity`
/// (RFC 9110 §8.4.1: a list, in the order applied).
fn is_identity(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| {
        v.split(',')
            .map(str::trim)
            .all(|c| c.is_empty() || c.eq_ignore_ascii_case("identity"))
    })
}

/// Checks done before any middleware: framing, body length, host; then
/// the request's context (see `context`).
#[allow(clippy::result_large_err)] // the error path is the rare one
fn prepare(
    shared: &Arc<Shared>,
    req: &Request,
    peer: Option<SocketAddr>,
    drain: Option<Arc<crate::drain::DrainState>>,
) -> Result<Ctx, Response> {
    let config = &shared.config;
    if let Err(problem) = check_head(req, config.limits.max_body_bytes) {
        let unsupported_coding = problem.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE;
        let mut res = problem.into_response();
        if unsupported_coding {
            res.headers_mut().insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        if req.version() <= http::Version::HTTP_11 {
            // The body was not read and its framing may be the problem:
            // nothing after it on this connection can be trusted.
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        return Err(res);
    }
    // A junk host (`a:80@b`, `a:80/x`) is never valid, in any
    // environment: refused before the allow-list, so that no pattern, no
    // `Host` extractor and no URL built from it ever sees one.
    if let Err(detail) = crate::extract::check_host(req) {
        let mut res = Problem::new(StatusCode::BAD_REQUEST)
            .with_detail(detail)
            .into_response();
        if req.version() <= http::Version::HTTP_11 {
            res.headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        return Err(res);
    }
    // The built-in health check answers whatever the host: orchestrators'
    // probes (Kubernetes) name the pod's address, not a public host, and
    // `ok` tells a forged host nothing (docs/configuration.md).
    let health_probe = matches!(*req.method(), Method::GET | Method::HEAD)
        && shared.table.builtin_health() == Some(req.uri().path());
    if !config.allowed_hosts.is_empty() && !health_probe {
        let host = crate::extract::host_of(req);
        let allowed = host.is_some_and(|h| {
            let name = crate::extract::strip_port(h);
            config.allowed_hosts.iter().any(|p| p.matches(name))
        });
        if !allowed {
            return Err(Problem::new(StatusCode::BAD_REQUEST)
                .with_detail(match host {
                    Some(h) => format!("the host `{h}` is not served here (see ALLOWED_HOSTS)"),
                    None => "the request names no host (see ALLOWED_HOSTS)".to_owned(),
                })
                .into_response());
        }
    }
    let trusted_id = if shared.is_trusted_proxy(peer) {
        req.headers()
            .get(&config.request_id_header)
            .filter(|v| v.len() <= 128 && !v.is_empty())
            .cloned()
    } else {
        None
    };
    let request_id = trusted_id.unwrap_or_else(next_request_id);
    Ok(Ctx {
        shared: Arc::clone(shared),
        peer,
        request_id,
        params: PathParams::default(),
        drain,
    })
}

/// The final touches of every answer, in place (a response is a few
/// hundred bytes: moving it in and out costs more than the touches).
fn finish(
    shared: &Shared,
    res: &mut Response,
    request_id: Option<RequestIdValue>,
    is_head: bool,
    accept: Option<HeaderValue>,
) {
    exact_content_length(res, is_head);
    if res.status() == StatusCode::INTERNAL_SERVER_ERROR && shared.config.is_production() {
        if let Some(hidden) = hide_internals(res, request_id.as_ref(), is_head) {
            *res = hidden;
        }
    }
    if let Some(render) = &shared.renderer {
        if let Some(problem) = res.extensions().get::<Problem>() {
            let problem = problem.clone();
            let headers = std::mem::take(res.headers_mut());
            *res = render(&problem, &Requested { accept });
            // The problem's status, whatever the renderer answered: a
            // renderer that forgets it must not turn errors into `200`s.
            *res.status_mut() = problem.status();
            for (name, value) in headers.iter() {
                if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
                    res.headers_mut().append(name, value.clone());
                }
            }
        }
    }
    let headers = res.headers_mut();
    if let Some(id) = request_id {
        headers.insert(shared.config.request_id_header.clone(), id);
    }
    for (name, value) in &shared.security_headers {
        if !headers.contains_key(name) {
            headers.insert(name.clone(), value.clone());
        }
    }
}

/// What a `500` problem says in production: its detail (a type name, an
/// internal message of the app's) is logged with the request ID, not
/// sent.
const HIDDEN_DETAIL: &str = "the server failed to answer this request";

/// In production, a `500` problem's detail is replaced by
/// [`HIDDEN_DETAIL`] and logged instead: details of server faults are for
/// the operator, not the client. `None`: `res` may be sent as it is.
fn hide_internals(
    res: &Response,
    request_id: Option<&RequestIdValue>,
    is_head: bool,
) -> Option<Response> {
    let problem = res.extensions().get::<Problem>()?;
    if problem.detail() == HIDDEN_DETAIL {
        return None;
    }
    tracing::error!(
        request_id = request_id.and_then(|v| v.to_str().ok()).unwrap_or(""),
        detail = problem.detail(),
        "answered 500 (in production the detail is logged, not sent)"
    );
    let mut hidden = Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail(HIDDEN_DETAIL)
        .into_response();
    for (name, value) in res.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            hidden.headers_mut().append(name, value.clone());
        }
    }
    exact_content_length(&mut hidden, is_head);
    Some(hidden)
}

/// A `Content-Length` header that disagrees with a body of known length
/// would make the response unreadable (and trips hyper's assertions): the
/// body wins. An empty `HEAD` response may advertise the `GET` length.
fn exact_content_length(res: &mut Response, is_head: bool) {
    use http_body::Body as _;
    let Some(len) = res.body().size_hint().exact() else {
        return;
    };
    let Some(declared) = res.headers().get(header::CONTENT_LENGTH) else {
        return;
    };
    if (is_head && len == 0)
        || declared.to_str().ok().and_then(|d| d.parse::<u64>().ok()) == Some(len)
    {
        return;
    }
    tracing::warn!(declared = ?declared, actual = len, "a response declared a wrong Content-Length; sending the body's length");
    res.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
}

fn panic_response(
    shared: &Shared,
    panic: Box<dyn Any + Send>,
    peer: Option<SocketAddr>,
) -> Response {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a handler panicked".to_owned());
    tracing::error!(panic = %message, "handler panicked; answered 500");
    let local = peer.is_none_or(|p| p.ip().is_loopback());
    let detail = if !shared.config.is_production() && local {
        format!("the handler panicked: {message} (shown because this is development and you are on loopback)")
    } else {
        HIDDEN_DETAIL.to_owned()
    };
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail(detail)
        .into_response()
}

impl<B> tower_service::Service<http::Request<B>> for AppService
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<tern_core::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future =
        futures_util::future::Map<ResponseFuture, fn(Response) -> Result<Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        // An app served inside another app's route keeps the outer
        // request's peer.
        let peer = req
            .extensions()
            .get::<std::net::SocketAddr>()
            .copied()
            .or_else(|| crate::context::with(req.extensions(), |c| c.peer).flatten());
        AppService::call(self, req.map(Body::new), peer).map(Ok)
    }
}

/// What a [problem renderer](App::problem_renderer) knows of the request
/// it answers.
#[derive(Debug, Clone, Default)]
pub struct Requested {
    accept: Option<HeaderValue>,
}

impl Requested {
    /// The request's `Accept` header, if it had a readable one.
    pub fn accept(&self) -> Option<&str> {
        self.accept.as_ref().and_then(|v| v.to_str().ok())
    }

    /// Whether the client prefers an HTML page: its `Accept` names
    /// `text/html` (or `application/xhtml+xml`) with a quality at least
    /// that of JSON and `problem+json`. Browsers do; `curl` (`*/*`), API
    /// clients and fetch calls asking for JSON do not.
    ///
    /// ```
    /// use tern::Requested;
    /// assert!(Requested::with_accept("text/html,application/xhtml+xml,*/*;q=0.8").prefers_html());
    /// assert!(!Requested::with_accept("*/*").prefers_html());
    /// assert!(!Requested::with_accept("application/json, text/html;q=0.5").prefers_html());
    /// ```
    pub fn prefers_html(&self) -> bool {
        let Some(accept) = self.accept() else {
            return false;
        };
        let mut html = 0u16;
        let mut json = 0u16;
        for item in accept.split(',') {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or("").trim();
            let q = parts
                .find_map(|p| {
                    let (k, v) = p.split_once('=')?;
                    k.trim()
                        .eq_ignore_ascii_case("q")
                        .then(|| quality(v.trim()))
                })
                .unwrap_or(1000);
            if media.eq_ignore_ascii_case("text/html")
                || media.eq_ignore_ascii_case("application/xhtml+xml")
            {
                html = html.max(q);
            } else if media.eq_ignore_ascii_case("application/json")
                || media.eq_ignore_ascii_case("application/problem+json")
            {
                json = json.max(q);
            }
        }
        html > 0 && html >= json
    }

    /// A `Requested` with this `Accept` (for tests of renderers).
    pub fn with_accept(accept: &str) -> Self {
        Requested {
            accept: HeaderValue::from_str(accept).ok(),
        }
    }
}

/// A q-value (`0.8`) in thousandths; 0 when malformed.
fn quality(v: &str) -> u16 {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    let mut q: u16 = match int {
        "0" => 0,
        "1" => 1000,
        _ => return 0,
    };
    for (i, b) in frac.bytes().enumerate() {
        q += u16::from(b - b'0') * [100, 10, 1][i];
    }
    q.min(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IDs across several batches, some held past their batch (so that its
    /// buffer cannot be reused) and some dropped at once (so that it is):
    /// all distinct, 32 lowercase hex digits, one process prefix.
    #[test]
    fn request_ids_are_distinct_across_reused_and_fresh_batches() {
        let mut seen = std::collections::HashSet::new();
        let mut held = Vec::new();
        for i in 0..ID_BATCH * 6 + 5 {
            let id = next_request_id();
            let text = id.to_str().unwrap_or_default().to_owned();
            assert_eq!(text.len(), ID_LEN, "{text}");
            assert!(
                text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "{text}"
            );
            assert!(seen.insert(text), "a repeated ID");
            if (i / ID_BATCH) % 2 == 0 && i % 7 == 0 {
                held.push(id);
            }
        }
        let prefixes: std::collections::HashSet<_> = seen.iter().map(|t| &t[..16]).collect();
        assert_eq!(prefixes.len(), 1);
        // The held IDs still read as they did.
        for id in &held {
            assert!(seen.contains(id.to_str().unwrap_or_default()));
        }
    }
}
