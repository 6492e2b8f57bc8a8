//! The framework's per-request values (`Ctx`): the app, the peer, the
//! request ID, the route parameters.
//!
//! They are not stored in the request's extensions, which would cost three
//! allocations per request (the map, its table, the boxed value) and a hash
//! lookup per read: the app's [`ResponseFuture`](crate::ResponseFuture)
//! owns the `Ctx` and makes it the thread's *current* context while it
//! polls the middleware chain and the handler ([`enter`]), so everything
//! the request runs through sees it ([`with`]). A request that crosses a
//! tower layer carries a copy in its extensions instead (the layer may hand
//! it to another task, such as `tower::buffer`'s worker), and a copy the
//! request carries takes precedence over the current one.

use std::{cell::RefCell, net::SocketAddr, sync::Arc};

use http::HeaderValue;
use smallvec::SmallVec;

use crate::app::Shared;

thread_local! {
    static CURRENT: RefCell<Option<Box<Ctx>>> = const { RefCell::new(None) };
}

/// While alive, the context that was in `slot` is the thread's current
/// one and `slot` holds the previous current context (a request served
/// inside another's handler); dropping it (also when unwinding) swaps them
/// back. The context is boxed so that these swaps, and every move of the
/// response future that owns it, copy a pointer rather than the whole
/// context: one allocation per request, where storing it as a request
/// extension costs three.
pub(crate) struct Entered<'a> {
    slot: &'a mut Option<Box<Ctx>>,
}

/// Makes `slot`'s context current for as long as the guard lives.
pub(crate) fn enter(slot: &mut Option<Box<Ctx>>) -> Entered<'_> {
    swap_current(slot);
    Entered { slot }
}

fn swap_current(slot: &mut Option<Box<Ctx>>) {
    CURRENT.with(|c| {
        // Only `with` borrows, and never across a poll, so this succeeds.
        if let Ok(mut current) = c.try_borrow_mut() {
            std::mem::swap(&mut *current, slot);
        }
    });
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        swap_current(self.slot);
    }
}

/// Runs `f` on the context of the request whose extensions these are: the
/// copy it carries, else the thread's current one; `None` outside a Tern
/// app.
pub(crate) fn with<R>(extensions: &http::Extensions, f: impl FnOnce(&Ctx) -> R) -> Option<R> {
    if let Some(ctx) = extensions.get::<Ctx>() {
        return Some(f(ctx));
    }
    CURRENT.with(|c| c.try_borrow().ok()?.as_deref().map(f))
}

/// Runs `f` on the thread's current context, for a request known to
/// carry no copy of its own (see [`with_mut`]).
pub(crate) fn with_current_mut<R>(f: impl FnOnce(&mut Ctx) -> R) -> Option<R> {
    CURRENT.with(|c| c.try_borrow_mut().ok()?.as_deref_mut().map(f))
}

/// [`with`], mutably.
pub(crate) fn with_mut<R>(
    extensions: &mut http::Extensions,
    f: impl FnOnce(&mut Ctx) -> R,
) -> Option<R> {
    if let Some(ctx) = extensions.get_mut::<Ctx>() {
        return Some(f(ctx));
    }
    with_current_mut(f)
}

/// Gives a request about to cross a tower layer its own copy of the
/// current context, so that it keeps it if the layer moves it to another
/// task.
pub(crate) fn attach(extensions: &mut http::Extensions) {
    if extensions.get::<Ctx>().is_some() {
        return;
    }
    if let Some(ctx) = CURRENT.with(|c| c.try_borrow().ok()?.as_deref().cloned()) {
        extensions.insert(ctx);
    }
}

/// The framework's per-request values; see the module documentation.
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
    /// The parameters of a match: the host pattern's (if the app routes
    /// by host), then the path's.
    pub(crate) fn set(
        &mut self,
        host: Option<(&Arc<[Box<str>]>, &tern_router::Params<'_, '_>)>,
        names: &Arc<[Box<str>]>,
        params: &tern_router::Params<'_, '_>,
    ) {
        self.values.clear();
        self.ends.clear();
        self.host_names = host.map(|(names, params)| {
            self.push(params);
            Arc::clone(names)
        });
        self.push(params);
        self.names = Some(Arc::clone(names));
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
    // Every `{...}` not written `{{`, in order: whole segments and
    // parameters inside segments (`/img-{id}.png`) alike. The router has
    // checked the pattern already.
    let mut names = Vec::new();
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1)) {
            (b'{', Some(b'{')) | (b'}', Some(b'}')) => i += 2,
            (b'{', _) => {
                let len = pattern[i + 1..].find('}').unwrap_or(pattern.len() - i - 1);
                let inner = &pattern[i + 1..i + 1 + len];
                let inner = inner.strip_prefix('*').unwrap_or(inner);
                names.push(Box::from(inner.split(':').next().unwrap_or(inner)));
                i += len + 2;
            }
            _ => i += 1,
        }
    }
    names.into()
}

/// A request ID: generated ones are slices of a shared batch (see
/// `app::next_request_id`), trusted incoming ones share the request's
/// buffer; either way cloning it into the response is a reference count.
pub(crate) type RequestIdValue = HeaderValue;
