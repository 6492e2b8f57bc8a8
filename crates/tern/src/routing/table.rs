//! The built route table: host tables, path tables, named routes, the
//! trailing-slash policy, and the dispatch that uses them per request.

use std::{any::TypeId, collections::HashMap, sync::Arc};

use http::{header, HeaderValue, StatusCode};
use tern_core::{extract::RouteCheck, response::IntoResponse, Problem, Request};

use super::{
    method_router::MethodRoutes,
    route::{Endpoint, Route},
    MethodRouter,
};
use crate::{app::BuildError, context::param_names, handler::BoxFuture, metrics::route};

type Constraint = Arc<dyn Fn(&str) -> bool + Send + Sync>;
type Routes<S> = Vec<(String, MethodRouter<S>)>;

/// What a path that matches no route but would with its trailing slash
/// added or removed gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrailingSlash {
    /// `/a` and `/a/` are different paths; the other one is a 404.
    #[default]
    Strict,
    /// `308 Permanent Redirect` to the path that has a route (query kept).
    Redirect,
    /// Answer as if the path had been the one with a route.
    MatchBoth,
}

/// The built-in routes' paths a table needs to know.
pub(crate) struct Builtins<'a> {
    /// `TERN_HEALTH_PATH`: added on every host unless the app has its own.
    pub(crate) health: Option<&'a str>,
    /// Routes left out of API documents (`/ready`, `/metrics`).
    pub(crate) hidden: &'a [&'a str],
}

/// One registered route, before the table is built.
pub(crate) struct Entry<S> {
    pub(crate) path: String,
    pub(crate) methods: MethodRouter<S>,
    pub(crate) name: Option<String>,
    pub(crate) host: Option<String>,
}

impl<S> Entry<S> {
    pub(crate) fn new(path: String, methods: MethodRouter<S>, name: Option<&str>) -> Self {
        Entry {
            path,
            methods,
            name: name.map(str::to_owned),
            host: None,
        }
    }
}

/// A path's methods, parameter names and metrics id.
type PathRoute = (MethodRoutes, Arc<[Box<str>]>, u32);

struct PathTable {
    router: tern_router::Router<usize>,
    routes: Vec<PathRoute>,
}

struct Hosts {
    /// Host patterns as paths of reversed labels: `{t}.example.com` is
    /// `/com/example/{t}`.
    router: tern_router::Router<usize>,
    tables: Vec<(PathTable, Arc<[Box<str>]>)>,
}

/// The routes of an app, built once.
pub(crate) struct Table {
    default: PathTable,
    hosts: Option<Hosts>,
    fallback: Route,
    trailing: TrailingSlash,
    /// Route name → (host table or default, pattern).
    names: HashMap<String, (Option<usize>, String)>,
    /// The health path, when the built-in handler answers it on every
    /// host (the app has no route of its own there).
    builtin_health: Option<String>,
    /// The routes as API documents see them.
    api: Vec<super::ApiRoute>,
    /// The metrics label of each route id: the special answers
    /// (`crate::metrics::route::SPECIAL`), then each path's pattern (under
    /// a host, the host pattern and the path).
    labels: Vec<std::sync::Arc<str>>,
}

fn new_router(constraints: &[(String, Constraint)]) -> tern_router::Router<usize> {
    let mut router = tern_router::Router::new();
    for (name, matcher) in constraints {
        let matcher = Arc::clone(matcher);
        router.constraint(name, move |s: &str| matcher(s));
    }
    router
}

fn build_paths<S: Clone + Send + Sync + 'static>(
    entries: Vec<(String, MethodRouter<S>)>,
    state: &S,
    constraints: &[(String, Constraint)],
    host: Option<&str>,
    provides: &dyn Fn(TypeId) -> bool,
    labels: &mut Vec<std::sync::Arc<str>>,
) -> Result<PathTable, BuildError> {
    let on = |path: &str| match host {
        Some(h) => format!("{path} on host {h}"),
        None => path.to_owned(),
    };
    // Merge the method routers of equal paths, in registration order.
    let mut merged: Vec<(String, MethodRouter<S>)> = Vec::with_capacity(entries.len());
    let mut index_of: HashMap<String, usize> = HashMap::with_capacity(entries.len());
    for (path, methods) in entries {
        if !path.starts_with('/') {
            return Err(BuildError::new(format!(
                "route `{path}` must start with `/`"
            )));
        }
        match index_of.get(&path) {
            Some(&i) => {
                if let Some(method) = merged[i].1.merge(methods).first() {
                    return Err(BuildError::new(format!(
                        "`{method} {}` is registered twice",
                        on(&path)
                    )));
                }
            }
            None => {
                index_of.insert(path.clone(), merged.len());
                merged.push((path, methods));
            }
        }
    }
    let mut router = new_router(constraints);
    let mut routes = Vec::with_capacity(merged.len());
    for (index, (path, methods)) in merged.into_iter().enumerate() {
        router.insert(&path, index).map_err(|e| match host {
            Some(h) => BuildError::new(format!("{e} (host {h})")),
            None => BuildError::new(e.to_string()),
        })?;
        let names = param_names(&path);
        // A host pattern's parameters join the path's: under a host they
        // are not checked here (a mismatch there is a 500 naming it).
        let params: Vec<&str> = names.iter().map(|n| &**n).collect();
        let route = RouteCheck::new(host.is_none().then_some(&params[..]), provides);
        methods
            .check_route(&route)
            .map_err(|e| BuildError::new(format!("route `{}`: {e}", on(&path))))?;
        let id = u32::try_from(labels.len()).unwrap_or(crate::metrics::route::UNKNOWN);
        labels.push(match host {
            Some(h) => std::sync::Arc::from(format!("{h}{path}")),
            None => std::sync::Arc::from(path),
        });
        routes.push((methods.finish(state), names, id));
    }
    Ok(PathTable { router, routes })
}

/// `{tenant}.Example.com.` → `/com/example/{tenant}`.
fn host_pattern_as_path(pattern: &str) -> Result<String, BuildError> {
    let trimmed = pattern.strip_suffix('.').unwrap_or(pattern);
    if trimmed.is_empty() || trimmed.contains(['/', ':']) && !trimmed.contains('{') {
        return Err(BuildError::new(format!(
            "host pattern `{pattern}` must be a host name such as `example.com` or `{{tenant}}.example.com`, without port"
        )));
    }
    let mut out = String::with_capacity(trimmed.len() + 1);
    for label in trimmed.rsplit('.') {
        if label.is_empty() {
            return Err(BuildError::new(format!(
                "host pattern `{pattern}` has an empty label"
            )));
        }
        out.push('/');
        if label.starts_with('{') {
            out.push_str(label);
        } else {
            out.push_str(&label.to_ascii_lowercase());
        }
    }
    Ok(out)
}

/// The request's host as reversed labels, lowercased and without port.
fn host_as_path(host: &str) -> String {
    let name = crate::extract::strip_port(host);
    let name = name.strip_suffix('.').unwrap_or(name);
    let mut out = String::with_capacity(name.len() + 1);
    for label in name.rsplit('.') {
        out.push('/');
        out.extend(label.chars().map(|c| c.to_ascii_lowercase()));
    }
    out
}

impl Table {
    pub(crate) fn build<S: Clone + Send + Sync + 'static>(
        entries: Vec<Entry<S>>,
        state: &S,
        constraints: &[(String, Constraint)],
        fallback: Route,
        trailing: TrailingSlash,
        builtins: Builtins<'_>,
        provides: &dyn Fn(TypeId) -> bool,
    ) -> Result<Table, BuildError> {
        let Builtins { health, hidden } = builtins;
        let mut labels: Vec<std::sync::Arc<str>> = crate::metrics::route::SPECIAL
            .iter()
            .map(|&s| std::sync::Arc::from(s))
            .collect();
        let mut default = Vec::new();
        let mut by_host: Vec<(String, Routes<S>)> = Vec::new();
        let mut names = HashMap::new();
        for entry in entries {
            let host_index = entry.host.as_ref().map(|host| {
                by_host
                    .iter()
                    .position(|(h, _)| h == host)
                    .unwrap_or_else(|| {
                        by_host.push((host.clone(), Vec::new()));
                        by_host.len() - 1
                    })
            });
            if let Some(name) = entry.name {
                if let Some((_, other)) =
                    names.insert(name.clone(), (host_index, entry.path.clone()))
                {
                    return Err(BuildError::new(format!(
                        "the route name `{name}` is given to both `{other}` and `{}`",
                        entry.path
                    )));
                }
            }
            match host_index {
                None => default.push((entry.path, entry.methods)),
                Some(i) => by_host[i].1.push((entry.path, entry.methods)),
            }
        }
        // `/health` answers on every host unless the app has its own.
        let mut builtin_health = health.map(str::to_owned);
        if let Some(path) = health {
            for routes in std::iter::once(&mut default).chain(by_host.iter_mut().map(|(_, r)| r)) {
                if routes.iter().any(|(p, _)| p == path) {
                    builtin_health = None;
                } else {
                    routes.push((path.to_owned(), super::get(health_handler)));
                }
            }
        }
        let mut api: Vec<super::ApiRoute> = Vec::new();
        let hosts_named = by_host.iter().map(|(h, r)| (Some(h.as_str()), r));
        for (host, routes) in std::iter::once((None, &default)).chain(hosts_named) {
            for (path, methods) in routes.iter() {
                if host.is_none() && hidden.contains(&path.as_str()) {
                    continue;
                }
                let operations = methods.describe();
                match api
                    .iter_mut()
                    .find(|r| r.path == *path && r.host.as_deref() == host)
                {
                    Some(route) => route.operations.extend(operations),
                    None => api.push(super::ApiRoute {
                        host: host.map(str::to_owned),
                        path: path.clone(),
                        operations,
                    }),
                }
            }
        }
        let default = build_paths(default, state, constraints, None, provides, &mut labels)?;
        let hosts = if by_host.is_empty() {
            None
        } else {
            let mut router = new_router(constraints);
            let mut tables = Vec::with_capacity(by_host.len());
            for (index, (host, routes)) in by_host.into_iter().enumerate() {
                let as_path = host_pattern_as_path(&host)?;
                router
                    .insert(&as_path, index)
                    .map_err(|e| BuildError::new(format!("host pattern `{host}`: {e}")))?;
                let names = param_names(&as_path);
                tables.push((
                    build_paths(
                        routes,
                        state,
                        constraints,
                        Some(&host),
                        provides,
                        &mut labels,
                    )?,
                    names,
                ));
            }
            Some(Hosts { router, tables })
        };
        Ok(Table {
            default,
            hosts,
            fallback,
            trailing,
            names,
            builtin_health,
            api,
            labels,
        })
    }

    /// The table's identity in the matched-route slot (its address).
    pub(crate) fn id(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// The metrics label of each route id.
    pub(crate) fn labels(&self) -> &[std::sync::Arc<str>] {
        &self.labels
    }

    /// The routes as API documents see them, in registration order.
    pub(crate) fn api(&self) -> &[super::ApiRoute] {
        &self.api
    }

    /// The health path, if the built-in health handler answers it whatever
    /// the host: such a request may skip `ALLOWED_HOSTS` (probes name the
    /// pod's address, and the answer reveals nothing).
    pub(crate) fn builtin_health(&self) -> Option<&str> {
        self.builtin_health.as_deref()
    }

    /// The path of the route named `name`, with `params` encoded.
    pub(crate) fn url_for(
        &self,
        name: &str,
        params: &[(&str, &str)],
    ) -> Result<String, tern_router::UrlError> {
        let (host, pattern) =
            self.names
                .get(name)
                .ok_or_else(|| tern_router::UrlError::UnknownRoute {
                    pattern: format!("named {name}"),
                })?;
        let table = match (host, &self.hosts) {
            (Some(i), Some(hosts)) => &hosts.tables[*i].0,
            _ => &self.default,
        };
        table.router.url(pattern, params)
    }
}

async fn health_handler() -> tern_core::Response {
    let mut res = "ok".into_response();
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// Routes each request: host, then path, then method.
pub(crate) struct Dispatch(pub(crate) Arc<Table>);

impl Endpoint for Dispatch {
    fn call(&self, slot: &mut Option<Request>) -> BoxFuture {
        let Some(req) = slot.as_mut() else {
            return super::route::taken();
        };
        let table = &*self.0;
        let table_id = table.id();
        let mut paths = &table.default;
        let host_path;
        let mut host = None;
        if let Some(hosts) = &table.hosts {
            if let Some(name) = crate::extract::host_of(req) {
                host_path = host_as_path(name);
                if let Ok(m) = hosts.router.at(&host_path) {
                    let (routes, names) = &hosts.tables[*m.value];
                    host = Some((names, m.params));
                    paths = routes;
                }
            }
        }
        // The match borrows the request's path while its parameters go
        // into the request's context: the extensions are held apart
        // meanwhile (a pointer's move each way), so the parameters are
        // decoded in place.
        let mut extensions = std::mem::take(req.extensions_mut());
        let alt;
        let found = match paths.router.at(req.uri().path()) {
            Err(tern_router::MatchError::NotFound) if table.trailing != TrailingSlash::Strict => {
                match other_slash(req.uri().path()) {
                    Some(other) => {
                        alt = other;
                        match paths.router.at(&alt) {
                            Ok(_) if table.trailing == TrailingSlash::Redirect => {
                                let res = redirect(req, &alt);
                                *req.extensions_mut() = extensions;
                                route::set(table_id, route::REDIRECT);
                                return res;
                            }
                            found => found,
                        }
                    }
                    None => Err(tern_router::MatchError::NotFound),
                }
            }
            found => found,
        };
        let found = found.map(|m| {
            let index = *m.value;
            let names = &paths.routes[index].1;

            let host = host.as_ref().map(|(names, params)| (*names, params));
            crate::context::with_mut(&mut extensions, |ctx| {
                ctx.params.set(host, names, &m.params);
            });
            index
        });
        *req.extensions_mut() = extensions;
        // The route is written after the call: an app served inside this
        // route has written its own by then (see `metrics::route`).
        match found {
            Ok(index) => {
                let (methods, _, id) = &paths.routes[index];
                let fut = methods.call(slot);
                route::set(table_id, *id);
                fut
            }
            Err(tern_router::MatchError::MalformedPath) => {
                route::set(table_id, route::MALFORMED);
                Box::pin(std::future::ready(
                    Problem::new(StatusCode::BAD_REQUEST)
                        .with_detail("the request path has a malformed percent-escape or is not UTF-8 once decoded")
                        .into_response(),
                ))
            }
            Err(_) => {
                let fut = table.fallback.call_in(slot);
                route::set(table_id, route::UNMATCHED);
                fut
            }
        }
    }
}

/// `/a/` → `/a`, `/a` → `/a/`; `None` for `/`.
fn other_slash(path: &str) -> Option<String> {
    if path == "/" || path.is_empty() {
        return None;
    }
    Some(match path.strip_suffix('/') {
        Some(trimmed) => trimmed.to_owned(),
        None => format!("{path}/"),
    })
}

fn redirect(req: &Request, path: &str) -> BoxFuture {
    let location = match req.uri().query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_owned(),
    };
    let mut res = StatusCode::PERMANENT_REDIRECT.into_response();
    if let Ok(value) = HeaderValue::try_from(location) {
        res.headers_mut().insert(header::LOCATION, value);
    }
    Box::pin(std::future::ready(res))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_paths() {
        assert_eq!(
            host_pattern_as_path("{tenant}.Example.com").expect("valid"),
            "/com/example/{tenant}"
        );
        assert_eq!(
            host_pattern_as_path("example.com.").expect("valid"),
            "/com/example"
        );
        assert!(host_pattern_as_path("a..b").is_err());
        assert!(host_pattern_as_path("").is_err());
        assert_eq!(host_as_path("Acme.Example.COM:8080"), "/com/example/acme");
        assert_eq!(host_as_path("example.com."), "/com/example");
        assert_eq!(other_slash("/a/"), Some("/a".into()));
        assert_eq!(other_slash("/a"), Some("/a/".into()));
        assert_eq!(other_slash("/"), None);
    }
}
