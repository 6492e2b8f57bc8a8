//! `MethodRouter`: the handlers of one path, one per method.

use std::{fmt, sync::Arc};

use http::{header, HeaderValue, Method, StatusCode};
use tern_core::{extract::RouteCheck, response::IntoResponse, Problem, Request, Response};

use super::route::{LayerBounds, Route};
use crate::handler::{BoxFuture, Handler};

/// A layer waiting for the route it wraps, with its type's name (for
/// the `routes` command).
#[derive(Clone)]
pub(crate) struct LayerFn {
    name: &'static str,
    wrap: Arc<dyn Fn(Route) -> Route + Send + Sync>,
}

impl LayerFn {
    pub(crate) fn apply(&self, route: Route) -> Route {
        (self.wrap)(route)
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }
}

pub(crate) fn layer_fn<L: LayerBounds>(layer: L) -> LayerFn {
    LayerFn {
        name: std::any::type_name::<L>(),
        wrap: Arc::new(move |route: Route| route.layer(&layer)),
    }
}

/// A handler waiting for the app's state.
trait ErasedHandler<S>: Send + Sync {
    fn into_route(self: Box<Self>, state: S) -> Route;
    fn check_route(&self, route: &RouteCheck<'_>) -> Result<(), String>;
    fn describe(&self) -> tern_core::doc::Operation;
    fn name(&self) -> &'static str;
}

struct MakeRoute<H, T>(H, std::marker::PhantomData<fn() -> T>);

impl<H, T, S> ErasedHandler<S> for MakeRoute<H, T>
where
    H: Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    fn into_route(self: Box<Self>, state: S) -> Route {
        Route::from_handler(self.0, state)
    }

    fn check_route(&self, route: &RouteCheck<'_>) -> Result<(), String> {
        H::check_route(route)
    }

    fn describe(&self) -> tern_core::doc::Operation {
        let mut op = tern_core::doc::Operation::default();
        H::describe(&mut op);
        op
    }

    fn name(&self) -> &'static str {
        std::any::type_name::<H>()
    }
}

enum Pending<S> {
    Handler(Box<dyn ErasedHandler<S>>),
    Route(Route),
}

impl<S> Pending<S> {
    fn handler<H, T>(handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
        S: Clone + Send + Sync + 'static,
    {
        Pending::Handler(Box::new(MakeRoute(handler, std::marker::PhantomData)))
    }

    fn check_route(&self, route: &RouteCheck<'_>) -> Result<(), String> {
        match self {
            Pending::Handler(h) => h.check_route(route),
            Pending::Route(_) => Ok(()),
        }
    }

    fn describe(&self) -> tern_core::doc::Operation {
        match self {
            Pending::Handler(h) => h.describe(),
            Pending::Route(_) => tern_core::doc::Operation::default(),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Pending::Handler(h) => h.name(),
            Pending::Route(_) => "(a tower service)",
        }
    }

    fn into_route(self, state: &S) -> Route
    where
        S: Clone,
    {
        match self {
            Pending::Handler(h) => h.into_route(state.clone()),
            Pending::Route(r) => r,
        }
    }
}

/// The handlers registered for one path, by method.
///
/// Built with [`get`], [`post`], ... and chained with
/// [`MethodRouter::post`], ... ; middleware added with
/// [`MethodRouter::layer`] wraps every handler of this path.
///
/// Requests are dispatched by method: `HEAD` is answered by the `GET`
/// handler when there is no `HEAD` handler (hyper sends no body),
/// `OPTIONS` without a handler gets `204` with an `Allow` header, and any
/// other method without a handler gets `405 Method Not Allowed` with the
/// `Allow` header listing the methods the path has.
///
/// ```
/// use tern::routing::get;
///
/// async fn show() -> &'static str { "a user" }
/// async fn update() -> &'static str { "updated" }
///
/// let users: tern::routing::MethodRouter = get(show).put(update);
/// # let _ = users;
/// ```
pub struct MethodRouter<S = ()> {
    methods: Vec<(Method, Pending<S>)>,
    any: Option<Pending<S>>,
    layers: Vec<LayerFn>,
}

impl<S> fmt::Debug for MethodRouter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodRouter")
            .field(
                "methods",
                &self.methods.iter().map(|(m, _)| m).collect::<Vec<_>>(),
            )
            .field("any", &self.any.is_some())
            .finish()
    }
}

impl<S> Default for MethodRouter<S> {
    fn default() -> Self {
        MethodRouter {
            methods: Vec::new(),
            any: None,
            layers: Vec::new(),
        }
    }
}

macro_rules! method_fns {
    ($($name:ident => $method:ident),* $(,)?) => {
        $(
            #[doc = concat!("Routes `", stringify!($method), "` requests to `handler`.")]
            pub fn $name<H, T, S>(handler: H) -> MethodRouter<S>
            where
                H: Handler<T, S>,
                T: 'static,
                S: Clone + Send + Sync + 'static,
            {
                MethodRouter::default().on(Method::$method, handler)
            }
        )*

        impl<S: Clone + Send + Sync + 'static> MethodRouter<S> {
            $(
                #[doc = concat!("Also routes `", stringify!($method), "` requests to `handler`.")]
                pub fn $name<H, T>(self, handler: H) -> Self
                where
                    H: Handler<T, S>,
                    T: 'static,
                {
                    self.on(Method::$method, handler)
                }
            )*
        }
    };
}

method_fns! {
    get => GET,
    post => POST,
    put => PUT,
    patch => PATCH,
    delete => DELETE,
    head => HEAD,
    options => OPTIONS,
    trace => TRACE,
}

/// Routes requests of every method to `handler`.
pub fn any<H, T, S>(handler: H) -> MethodRouter<S>
where
    H: Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    MethodRouter::default().fallback(handler)
}

/// Routes requests of `method` to `handler`.
pub fn on<H, T, S>(method: Method, handler: H) -> MethodRouter<S>
where
    H: Handler<T, S>,
    T: 'static,
    S: Clone + Send + Sync + 'static,
{
    MethodRouter::default().on(method, handler)
}

impl<S: Clone + Send + Sync + 'static> MethodRouter<S> {
    /// Routes requests of `method` to `handler`, replacing an earlier one.
    pub fn on<H, T>(mut self, method: Method, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.methods.retain(|(m, _)| *m != method);
        self.methods.push((method, Pending::handler(handler)));
        self
    }

    /// Routes requests of every method that has no handler of its own.
    pub fn fallback<H, T>(mut self, handler: H) -> Self
    where
        H: Handler<T, S>,
        T: 'static,
    {
        self.any = Some(Pending::handler(handler));
        self
    }

    /// Routes requests of `method` to a tower service.
    pub fn on_service(mut self, method: Method, route: Route) -> Self {
        self.methods.retain(|(m, _)| *m != method);
        self.methods.push((method, Pending::Route(route)));
        self
    }

    /// Wraps every handler of this path (those registered before and
    /// after the call alike, and the [`fallback`](Self::fallback) for
    /// other methods) in a tower layer or a
    /// [`from_fn`](crate::middleware::from_fn) middleware that runs
    /// **after routing**, once the path and the method matched: a `405`
    /// for a method without a handler, and the `204` with `Allow` that
    /// answers an `OPTIONS` without a handler, do not go through it; a
    /// `HEAD` answered by the `GET` handler does.
    ///
    /// The innermost layers: they run after the app's
    /// [`layer`](crate::App::layer)s, its
    /// [`route_layer`](crate::App::route_layer)s and the
    /// [`Scope::route_layer`](crate::Scope::route_layer)s, just before
    /// the handler. Layers added later run first.
    pub fn layer<L: LayerBounds>(mut self, layer: L) -> Self {
        self.layers.push(layer_fn(layer));
        self
    }

    /// Checks every handler's extractors against the route (its
    /// parameters, what the app provides).
    pub(crate) fn check_route(&self, route: &RouteCheck<'_>) -> Result<(), String> {
        for (method, pending) in &self.methods {
            pending
                .check_route(route)
                .map_err(|e| format!("its {method} handler: {e}"))?;
        }
        if let Some(any) = &self.any {
            any.check_route(route)
                .map_err(|e| format!("its handler for any method: {e}"))?;
        }
        Ok(())
    }

    /// Each method's operation, as its handler describes it; `any`
    /// handlers are listed under the methods they are most likely to get.
    pub(crate) fn describe(&self) -> Vec<(Method, tern_core::doc::Operation)> {
        let mut ops: Vec<(Method, tern_core::doc::Operation)> = self
            .methods
            .iter()
            .map(|(m, p)| (m.clone(), p.describe()))
            .collect();
        if let Some(any) = &self.any {
            for method in [
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ] {
                if !ops.iter().any(|(m, _)| *m == method) {
                    ops.push((method, any.describe()));
                }
            }
        }
        ops
    }

    /// Each method with its handler's and its layers' type names,
    /// outermost layer first; `*` for the handler of any method.
    pub(crate) fn listing(&self) -> Vec<crate::routing::MethodListing> {
        let middleware: Vec<&'static str> = self.layers.iter().rev().map(LayerFn::name).collect();
        let entry = |method: String, p: &Pending<S>| crate::routing::MethodListing {
            method,
            handler: p.name(),
            middleware: middleware.clone(),
        };
        let mut out: Vec<_> = self
            .methods
            .iter()
            .map(|(m, p)| entry(m.to_string(), p))
            .collect();
        if let Some(any) = &self.any {
            out.push(entry("*".to_owned(), any));
        }
        out
    }

    pub(crate) fn push_layers(&mut self, layers: &[LayerFn]) {
        self.layers.extend(layers.iter().cloned());
    }

    /// Merges `other` into `self`; `other`'s handlers win for a method
    /// both have. Returns the methods both had.
    pub(crate) fn merge(&mut self, other: MethodRouter<S>) -> Vec<Method> {
        let mut both = Vec::new();
        for (method, pending) in other.methods {
            if self.methods.iter().any(|(m, _)| *m == method) {
                both.push(method.clone());
            }
            self.methods.retain(|(m, _)| *m != method);
            self.methods.push((method, pending));
        }
        if other.any.is_some() {
            self.any = other.any;
        }
        self.layers.extend(other.layers);
        both
    }

    /// Composes the chain of every method: done once, at build time.
    pub(crate) fn finish(self, state: &S) -> MethodRoutes {
        let wrap = |route: Route| self.layers.iter().fold(route, |r, layer| layer.apply(r));
        let mut routes = MethodRoutes {
            get: None,
            head: None,
            post: None,
            put: None,
            patch: None,
            delete: None,
            options: None,
            other: Vec::new(),
            any: self.any.map(|p| wrap(p.into_route(state))),
            allow: HeaderValue::from_static(""),
        };
        let mut allow: Vec<&str> = Vec::new();
        for (method, pending) in self.methods {
            let route = wrap(pending.into_route(state));
            let slot = match method {
                Method::GET => &mut routes.get,
                Method::HEAD => &mut routes.head,
                Method::POST => &mut routes.post,
                Method::PUT => &mut routes.put,
                Method::PATCH => &mut routes.patch,
                Method::DELETE => &mut routes.delete,
                Method::OPTIONS => &mut routes.options,
                _ => {
                    routes.other.push((method, route));
                    continue;
                }
            };
            *slot = Some(route);
        }
        for (name, present) in [
            ("GET", routes.get.is_some()),
            ("HEAD", routes.get.is_some() || routes.head.is_some()),
            ("POST", routes.post.is_some()),
            ("PUT", routes.put.is_some()),
            ("PATCH", routes.patch.is_some()),
            ("DELETE", routes.delete.is_some()),
        ] {
            if present {
                allow.push(name);
            }
        }
        let others: Vec<String> = routes.other.iter().map(|(m, _)| m.to_string()).collect();
        allow.extend(others.iter().map(String::as_str));
        allow.push("OPTIONS");
        routes.allow = HeaderValue::from_str(&allow.join(", "))
            .unwrap_or_else(|_| HeaderValue::from_static("GET"));
        routes
    }
}

/// The composed endpoints of one path.
pub(crate) struct MethodRoutes {
    get: Option<Route>,
    head: Option<Route>,
    post: Option<Route>,
    put: Option<Route>,
    patch: Option<Route>,
    delete: Option<Route>,
    options: Option<Route>,
    other: Vec<(Method, Route)>,
    any: Option<Route>,
    allow: HeaderValue,
}

impl MethodRoutes {
    /// Dispatches by method.
    #[inline]
    pub(crate) fn call(&self, slot: &mut Option<Request>) -> BoxFuture {
        let Some(req) = slot.as_ref() else {
            return super::route::taken();
        };
        let route = match *req.method() {
            Method::GET => self.get.as_ref(),
            Method::POST => self.post.as_ref(),
            Method::HEAD => self.head.as_ref().or(self.get.as_ref()),
            Method::PUT => self.put.as_ref(),
            Method::PATCH => self.patch.as_ref(),
            Method::DELETE => self.delete.as_ref(),
            Method::OPTIONS => self.options.as_ref(),
            ref m => self
                .other
                .iter()
                .find(|(o, _)| o == m)
                .map(|(_, r)| r)
                .or_else(|| self.extended_connect(req)),
        };
        match route.or(self.any.as_ref()) {
            Some(route) => route.call_in(slot),
            None => {
                let res = self.unrouted(req.method());
                Box::pin(std::future::ready(res))
            }
        }
    }

    /// An extended CONNECT (RFC 8441, HTTP/2; it names a protocol such as
    /// `websocket`) is HTTP/2's form of an HTTP/1.1 `GET` with `Upgrade`:
    /// without a CONNECT handler of its own, the path's GET handler takes
    /// it (`tern_realtime::WebSocketUpgrade` accepts both forms).
    fn extended_connect(&self, req: &Request) -> Option<&Route> {
        if req.method() == Method::CONNECT
            && req.extensions().get::<hyper::ext::Protocol>().is_some()
        {
            self.get.as_ref()
        } else {
            None
        }
    }

    fn unrouted(&self, method: &Method) -> Response {
        let mut res = if method == Method::OPTIONS {
            StatusCode::NO_CONTENT.into_response()
        } else {
            Problem::new(StatusCode::METHOD_NOT_ALLOWED)
                .with_detail(format!(
                    "this path does not answer {method}; it answers {}",
                    self.allow.to_str().unwrap_or_default()
                ))
                .into_response()
        };
        res.headers_mut().insert(header::ALLOW, self.allow.clone());
        res
    }
}
