//! `App`: routes, scopes, middleware and state, built once into an
//! [`AppService`].
//!
//! One concept per file; this one is the builder, which composes
//! everything once, when the app is built:
//!
//! - `scope`: [`Scope`], routes under a prefix with their own middleware;
//! - `error`: [`BuildError`], an app that cannot be built;
//! - `shared`: what every request of one built app shares (configuration,
//!   problem renderer, security headers);
//! - `service`: the built app, [`AppService`], and [`ResponseFuture`], one
//!   request's way through it (panics, request timeout, access log);
//! - `head`: what is checked of a request's head before any middleware
//!   (framing, body length, `Host`, `ALLOWED_HOSTS`), then its context;
//! - `request_id`: the request IDs Tern makes;
//! - `finish`: the final touches of every answer (exact `Content-Length`,
//!   hidden `500` details, the problem renderer, request ID, security
//!   headers);
//! - `requested`: [`Requested`], what a problem renderer knows of the
//!   request (content negotiation itself is `tern_core::accept`).

mod error;
mod finish;
mod head;
mod request_id;
mod requested;
mod scope;
mod service;
mod shared;

use std::{fmt, future::Future, sync::Arc};

use http::{Method, StatusCode};
use tern_core::{Problem, Response};

pub use error::BuildError;
pub use requested::Requested;
pub use scope::Scope;
pub use service::{AppService, ResponseFuture};
pub(crate) use shared::Shared;

use crate::{
    config::Config,
    handler::Handler,
    routing::{
        method_router::{layer_fn, LayerFn},
        route::LayerBounds,
        table::{Dispatch, Entry, Table},
        IntoMethodRouter, Route, TrailingSlash,
    },
};
use scope::normalize_prefix;
use service::AppInner;

/// How an app renders its problems ([`App::problem_renderer`]).
type Renderer = Arc<dyn Fn(&Problem, &Requested) -> Response + Send + Sync>;
type Constraint = Arc<dyn Fn(&str) -> bool + Send + Sync>;
/// The commands and checklist lines of the app's command line; nothing
/// without the `cli` feature (a field of every build all the same, so
/// that `build_with` names every field in each).
#[cfg(feature = "cli")]
type CommandLine = crate::command::Extensions;
#[cfg(not(feature = "cli"))]
type CommandLine = ();

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
    setting_defaults: Vec<(String, String)>,
    on_start: Vec<crate::start::StartHook>,
    on_build: Vec<BuildHook>,
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    commands: CommandLine,
    metrics: crate::metrics::Metrics,
    ready_checks: Vec<crate::ready::Check>,
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
            setting_defaults: Vec::new(),
            on_start: Vec::new(),
            on_build: Vec::new(),
            commands: CommandLine::default(),
            metrics: crate::metrics::Metrics::default(),
            ready_checks: Vec::new(),
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
    ///     admin.route("/users", get(list)).route_layer(from_fn(audit))
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
    /// `404` (no route; the [`fallback`](App::fallback)) or a `405` (wrong
    /// method). For what applies to all traffic: logging, CORS,
    /// compression, timeouts. Runs before every
    /// [`route_layer`](App::route_layer), [`Scope::route_layer`] and
    /// [`MethodRouter::layer`](crate::routing::MethodRouter::layer).
    /// Layers added later run first.
    ///
    /// Authentication belongs in [`route_layer`](App::route_layer) (or a
    /// [`Scope::route_layer`]): here, an unauthenticated `POST /nope` would
    /// get `401` instead of `404`.
    pub fn layer<L: LayerBounds>(mut self, layer: L) -> Self {
        self.layers.push(layer_fn(layer));
        self
    }

    /// Wraps every route of the app in a layer that runs **after
    /// routing**, only for requests that matched a route and a method:
    /// an unknown path is still a `404` and a wrong method a `405`, without
    /// the layer running. For authentication and authorization. Applies to
    /// the routes registered before and after the call alike, those of
    /// scopes included (not to the [`fallback`](App::fallback)); runs
    /// after the app's [`layer`](App::layer)s and before every
    /// [`Scope::route_layer`] and
    /// [`MethodRouter::layer`](crate::routing::MethodRouter::layer).
    /// Route layers added later run first.
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

    /// Gives the app setting `name` (a variable of a prefix registered
    /// with [`settings`](App::settings), `AUTH_TOKEN_SCHEMES` say) the
    /// value `value` when neither the environment nor `tern.toml` sets
    /// it: the app's own defaults, so it runs with no setup. A name of no
    /// registered prefix is refused when the app is built.
    ///
    /// ```
    /// use serde::Deserialize;
    /// use tern::settings::Settings;
    ///
    /// #[derive(Deserialize)]
    /// struct Api { greeting: String }
    ///
    /// async fn hello(Settings(api): Settings<Api>) -> String { api.greeting.clone() }
    ///
    /// let app = || tern::App::new()
    ///     .settings::<Api>("api")
    ///     .setting_default("API_GREETING", "hello")
    ///     .route("/", tern::routing::get(hello));
    /// let built = app().build_with(tern::Config::default()).unwrap();
    /// assert_eq!(built.settings::<Api>().unwrap().greeting, "hello");
    /// // The environment (or tern.toml) wins:
    /// let config = tern::Config::from_settings([("API_GREETING", "hi")]).unwrap();
    /// assert_eq!(app().build_with(config).unwrap().settings::<Api>().unwrap().greeting, "hi");
    /// ```
    pub fn setting_default(mut self, name: &str, value: &str) -> Self {
        self.setting_defaults
            .push((name.to_owned(), value.to_owned()));
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
    #[cfg(feature = "cli")]
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
        Fut: Future<Output = Result<(), tern_core::BoxError>> + Send + 'static,
    {
        self.on_start.push(Arc::new(move |app| Box::pin(hook(app))));
        self
    }

    /// Runs `hook` with the app each time it is built ([`build`](App::build),
    /// [`build_with`](App::build_with), and so with every way of serving
    /// it, the test client too), in the order added, before the built app
    /// is returned. For what a battery must set up in every built app,
    /// however it is served: its metrics recorded in
    /// [`AppService::metrics`] (a pool's, a hub's), a cache bound to the
    /// app's settings. It cannot fail and must not block: work that can is
    /// an [`on_start`](App::on_start) hook's.
    pub fn on_build<F>(mut self, hook: F) -> Self
    where
        F: Fn(&AppService) + Send + Sync + 'static,
    {
        self.on_build.push(Arc::new(hook));
        self
    }

    /// Adds lines to the production checklist of the `check` command:
    /// `check` runs with the app built for production and prints what
    /// each returns (see [`Finding`](crate::command::Finding)).
    #[cfg(feature = "cli")]
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

    /// Takes the commands and checks out of the app.
    #[cfg(feature = "cli")]
    pub(crate) fn take_commands(&mut self) -> crate::command::Extensions {
        std::mem::take(&mut self.commands)
    }

    /// Takes the start hooks out of the app.
    pub(crate) fn take_start_hooks(&mut self) -> Vec<crate::start::StartHook> {
        std::mem::take(&mut self.on_start)
    }

    /// Each settings registration loaded on its own with `config`: the
    /// errors, for the `check` command.
    #[cfg(feature = "cli")]
    pub(crate) fn settings_errors(&self, config: &Config) -> Vec<crate::config::ConfigError> {
        match crate::settings::with_defaults(config, &self.setting_defaults, &self.settings) {
            Ok(config) => crate::settings::AppSettings::errors(&self.settings, &config),
            Err(e) => vec![e],
        }
    }

    /// The app's metrics: batteries and apps register their counters,
    /// gauges and histograms here at install (see [`crate::metrics`]).
    /// They are served at `TERN_METRICS_PATH` when `TERN_METRICS` is on.
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.metrics
    }

    /// Adds a readiness check, `name` in the answer of `/ready`
    /// (`TERN_READY_PATH`) when it fails: `check` gets the probe's request
    /// context (the app's settings, its config) and says whether the
    /// process can serve now (the database answers, the bus is
    /// connected). It has one second; its error is logged, never sent.
    /// Batteries add theirs at install.
    pub fn ready_check<F, Fut>(mut self, name: &'static str, check: F) -> Self
    where
        F: Fn(crate::RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        self.ready_checks
            .push(crate::ready::Check::new(name, check));
        self
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
            setting_defaults,
            on_start: _,
            on_build,
            commands: _,
            metrics,
            ready_checks,
        } = self;
        let config = crate::settings::with_defaults(&config, &setting_defaults, &settings)
            .map_err(BuildError::config)?;
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
        // `/ready`, unless the app has a route of its own there.
        let builtin_ready = config
            .ready_path
            .clone()
            .filter(|path| !routes.iter().any(|e| e.path == *path && e.host.is_none()));
        if let Some(path) = &builtin_ready {
            routes.push(Entry::new(
                path.clone(),
                crate::ready::method_router(ready_checks),
                None,
            ));
            listing.push(crate::routing::RouteListing {
                host: None,
                path: path.clone(),
                name: None,
                methods: vec![crate::routing::MethodListing {
                    method: "GET".to_owned(),
                    handler: "(built in: TERN_READY_PATH)",
                    middleware: Vec::new(),
                }],
            });
        }
        // `/metrics`, unless the app has a route of its own there.
        let builtin_metrics = config.metrics
            && !routes
                .iter()
                .any(|e| e.path == config.metrics_path && e.host.is_none());
        if builtin_metrics {
            routes.push(Entry::new(
                config.metrics_path.clone(),
                crate::metrics::endpoint::method_router(
                    metrics.clone(),
                    config.metrics_token.clone(),
                ),
                None,
            ));
            listing.push(crate::routing::RouteListing {
                host: None,
                path: config.metrics_path.clone(),
                name: None,
                methods: vec![crate::routing::MethodListing {
                    method: "GET".to_owned(),
                    handler: "(built in: TERN_METRICS)",
                    middleware: Vec::new(),
                }],
            });
        }
        let middleware = layers.iter().rev().map(LayerFn::name).collect();
        let fallback = fallback.unwrap_or_else(|| Route::from_handler(not_found, ()));
        let table = Arc::new(Table::build(
            routes,
            &state,
            &constraints,
            fallback,
            trailing_slash,
            crate::routing::table::Builtins {
                health: config.health_path.as_deref(),
                hidden: &builtin_ready
                    .iter()
                    .map(String::as_str)
                    .chain(builtin_metrics.then_some(config.metrics_path.as_str()))
                    .collect::<Vec<_>>(),
            },
            // `Settings<T>` of a `T` the app does not load stops the build.
            &|id| settings.provides(id),
        )?);
        let dispatch = Route::from_endpoint(Dispatch(Arc::clone(&table)));
        let chain = layers
            .iter()
            .fold(dispatch, |route, layer| layer.apply(route));
        // CORS (`CORS_ALLOWED_ORIGINS`) around the app's own layers, before
        // routing: preflights of any path are answered, `404`s carry it.
        #[cfg(feature = "cors")]
        let chain = match &config.cors {
            Some(cors) => chain.layer(&crate::cors::layer(cors)),
            None => chain,
        };
        let config_metrics_path = config.metrics_path.clone();
        let http_metrics = config.metrics.then(|| {
            crate::metrics::http::HttpMetrics::install(
                &metrics,
                table.labels().to_vec(),
                config.workers,
            )
        });
        let shared = Arc::new(Shared::new(
            config,
            renderer,
            table,
            settings,
            shared::Operations {
                metrics,
                http_metrics,
                metrics_path: builtin_metrics.then_some(config_metrics_path),
                ready_path: builtin_ready,
            },
        ));
        let app = AppService {
            inner: Arc::new(AppInner {
                chain,
                shared,
                listing,
                middleware,
            }),
        };
        for hook in &on_build {
            hook(&app);
        }
        Ok(app)
    }
}

/// A hook added with [`App::on_build`].
type BuildHook = Arc<dyn Fn(&AppService) + Send + Sync>;

async fn not_found(method: Method, uri: http::Uri) -> Problem {
    Problem::new(StatusCode::NOT_FOUND)
        .with_detail(format!("no route matches {method} {}", uri.path()))
}
