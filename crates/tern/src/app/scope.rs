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

    /// Wraps every route of this scope (nested scopes included) in a
    /// layer; runs after the app's layers and before the routes' own.
    pub fn layer<L: LayerBounds>(mut self, layer: L) -> Self {
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
