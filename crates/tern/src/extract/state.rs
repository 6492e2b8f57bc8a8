use http::request::Parts;
use tern_core::extract::FromRequestParts;

/// Reads a part of the app's state: `T` is the state itself or anything
/// the state converts to with [`FromRef`].
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicU64, Ordering}};
/// use tern::{App, extract::State, routing::get};
///
/// #[derive(Clone, Default)]
/// struct AppState { hits: Arc<AtomicU64> }
///
/// async fn hit(State(s): State<AppState>) -> String {
///     s.hits.fetch_add(1, Ordering::Relaxed).to_string()
/// }
/// let app = App::with_state(AppState::default()).route("/", get(hit));
/// # let _ = app.build().unwrap();
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct State<T>(pub T);

/// Converts a reference to the app state into a part of it, so that
/// handlers can ask for [`State<Part>`](State).
#[diagnostic::on_unimplemented(
    message = "a handler takes `State<{Self}>`, but the app's state is `{T}`",
    note = "if the app has no state yet, build it with `App::with_state(state)` instead of `App::new()`",
    note = "otherwise take `State<{T}>`, or implement `FromRef<{T}>` for `{Self}` to extract a part of the app's state"
)]
pub trait FromRef<T> {
    /// The part.
    fn from_ref(input: &T) -> Self;
}

impl<T: Clone> FromRef<T> for T {
    fn from_ref(input: &T) -> Self {
        input.clone()
    }
}

impl<Outer, Inner> FromRequestParts<Outer> for State<Inner>
where
    Inner: FromRef<Outer> + Send,
    Outer: Send + Sync,
{
    type Rejection = std::convert::Infallible;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(_: &mut Parts, state: &Outer) -> Result<Self, Self::Rejection> {
        Ok(State(Inner::from_ref(state)))
    }
}

impl<T> std::ops::Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
