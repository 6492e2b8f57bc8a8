//! What the framework attaches to every request: one extension, so a
//! request costs one insertion however many framework values it carries.

use std::{net::SocketAddr, sync::Arc};

use http::HeaderValue;
use smallvec::SmallVec;

use crate::app::Shared;

/// The framework's per-request values, stored as one request extension.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) shared: Arc<Shared>,
    pub(crate) peer: Option<SocketAddr>,
    pub(crate) request_id: RequestIdValue,
    pub(crate) params: PathParams,
    pub(crate) drain: Option<Arc<crate::drain::DrainState>>,
}

/// The route parameters of a matched request, decoded: the host
/// pattern's first, then the path's, each in pattern order.
#[derive(Clone, Default)]
pub(crate) struct PathParams {
    host_names: Option<Arc<[Box<str>]>>,
    names: Option<Arc<[Box<str>]>>,
    /// Every value, one after the other (UTF-8); `ends[i]` is where value
    /// `i` ends. Inline up to a few short values: most requests allocate
    /// nothing for their parameters.
    values: SmallVec<[u8; 48]>,
    ends: SmallVec<[u32; 4]>,
}

impl PathParams {
    /// Host parameters (no path matched yet).
    pub(crate) fn new(names: Arc<[Box<str>]>, params: &tern_router::Params<'_, '_>) -> Self {
        let mut p = PathParams::default();
        p.push(params);
        p.host_names = Some(names);
        p
    }

    /// Adds the path's parameters after any host ones.
    pub(crate) fn then(
        mut self,
        names: Arc<[Box<str>]>,
        params: &tern_router::Params<'_, '_>,
    ) -> Self {
        self.push(params);
        self.names = Some(names);
        self
    }

    fn push(&mut self, params: &tern_router::Params<'_, '_>) {
        for (_, value) in params.iter() {
            self.values.extend_from_slice(value.as_bytes());
            self.ends
                .push(u32::try_from(self.values.len()).unwrap_or(u32::MAX));
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        let host = self.host_names.as_deref().unwrap_or(&[]);
        let path = self.names.as_deref().unwrap_or(&[]);
        let names = host.iter().chain(path.iter());
        names
            .zip(self.ends.iter().enumerate())
            .map(move |(name, (i, &end))| {
                let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
                // Whole values were pushed, so every range is UTF-8.
                let value = self
                    .values
                    .get(start..end as usize)
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .unwrap_or_default();
                (&**name, value)
            })
    }

    pub(crate) fn is_matched(&self) -> bool {
        self.names.is_some()
    }
}

/// Names of a pattern's parameters, in order (`/a/{id}/{*rest}` →
/// `id`, `rest`).
pub(crate) fn param_names(pattern: &str) -> Arc<[Box<str>]> {
    let mut names = Vec::new();
    for segment in pattern.split('/') {
        if segment.starts_with("{{") {
            continue;
        }
        if let Some(inner) = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            let inner = inner.strip_prefix('*').unwrap_or(inner);
            let name = inner.split(':').next().unwrap_or(inner);
            names.push(Box::from(name));
        }
    }
    names.into()
}

/// A request ID: generated ones are slices of a shared batch (see
/// `app::next_request_id`), trusted incoming ones share the request's
/// buffer; either way cloning it into the response is a reference count.
pub(crate) type RequestIdValue = HeaderValue;
