use http::request::Parts;
use tern_core::extract::FromRequestParts;

use super::Rejection;

/// A value a middleware put in the request's extensions
/// (`req.extensions_mut().insert(value)`); `500` when it is absent, which
/// is a bug in the app, not in the request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extension<T>(pub T);

impl<T, S> FromRequestParts<S> for Extension<T>
where
    T: Clone + Send + Sync + 'static,
    S: Send + Sync,
{
    type Rejection = Rejection;

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
