use http::request::Parts;
use tern_core::extract::{FromRequestParts, OptionalFromRequestParts};

use super::Rejection;

/// A value a middleware put in the request's extensions
/// (`req.extensions_mut().insert(value)`); `500` when it is absent, which
/// is a bug in the app, not in the request.
///
/// `Option<Extension<T>>` is `None` when no middleware added a `T`: for a
/// value that only some routes' middleware adds (the user a token named).
#[derive(Debug, Clone, Copy, Default)]
pub struct Extension<T>(pub T);

impl<T, S> FromRequestParts<S> for Extension<T>
where
    T: Clone + Send + Sync + 'static,
    S: Send + Sync,
{
    type Rejection = Rejection;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        parts.extensions.get::<T>().cloned().map(Extension).ok_or_else(|| {
            Rejection::internal(format!(
                    "no `{}` was added to the request; is the middleware that adds it installed on this route?",
                    std::any::type_name::<T>()
                ),
            )
        })
    }
}

impl<T, S> OptionalFromRequestParts<S> for Extension<T>
where
    T: Clone + Send + Sync + 'static,
    S: Send + Sync,
{
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Self::Rejection> {
        Ok(parts.extensions.get::<T>().cloned().map(Extension))
    }
}
