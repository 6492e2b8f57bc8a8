//! `IntoMethodRouter`: what a route takes, so that handlers needing other
//! state than the app's are an error that says what to do.

use super::MethodRouter;

/// What [`App::route`](crate::App::route),
/// [`App::named_route`](crate::App::named_route) and the same methods of
/// [`Scope`](crate::Scope) take: a [`MethodRouter`] whose handlers need the
/// app's state type `S`.
///
/// Implemented for `MethodRouter<S>` only, and sealed; users never name
/// it. It exists for the error: a route whose handlers take
/// [`State<T>`](crate::extract::State) of another type than the app's state
/// is reported as "the handlers of this route need state of type `T`, but
/// the app's state is `S`", with what to do, instead of a type mismatch.
///
/// ```compile_fail
/// use tern::{App, extract::State, routing::get};
///
/// #[derive(Clone)]
/// struct Db;
///
/// async fn count(State(_db): State<Db>) -> &'static str { "0" }
///
/// // error: the handlers of this route need state of type `Db`, but the
/// // app's state is `()`; build the app with `App::with_state(Db)`.
/// let app = App::new().route("/", get(count));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `MethodRouter`, so it cannot be a route",
    label = "expected a `MethodRouter`",
    note = "wrap the handler in a `MethodRouter`: `get(handler)`, `post(handler)`, ... (`tern::routing`)"
)]
pub trait IntoMethodRouter<S>: sealed::Sealed {
    /// The router, with the app's state type.
    #[doc(hidden)]
    fn into_method_router(self) -> MethodRouter<S>;
}

impl<T> sealed::Sealed for MethodRouter<T> {}

// A blanket impl over both state types, with their equality as a bound of
// its own: an unequal pair fails on `SameState`, whose message names both
// types. `S: SameState<T>` has a known self type (the app's), so the
// router's state is still inferred from the app's, as it was with a plain
// `MethodRouter<S>` argument.
impl<S, T> IntoMethodRouter<S> for MethodRouter<T>
where
    S: SameState<T>,
{
    fn into_method_router(self) -> MethodRouter<S> {
        S::cast(self, sealed::Token)
    }
}

/// An app whose state is `Self` can route handlers that need state `T`:
/// only when they are the same type. Sealed (its method takes a private
/// type); public only so that errors name it `SameState`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "the handlers of this route need state of type `{T}`, but the app's state is `{Self}`",
    label = "these handlers take `State<{T}>` (or an extractor that needs a `{T}`)",
    note = "an app made with `App::new()` has no state (`()`): make it with `App::with_state(state)`, `state` being the `{T}` the handlers take",
    note = "an app that has state: make its type and the handlers' `State<..>` agree or, if a `{T}` is a part of the app's state, implement `FromRef<{Self}>` for `{T}`"
)]
pub trait SameState<T>: Sized {
    /// The router, as the app's.
    fn cast(router: MethodRouter<T>, _: sealed::Token) -> MethodRouter<Self>;
}

impl<S> SameState<S> for S {
    fn cast(router: MethodRouter<S>, _: sealed::Token) -> MethodRouter<S> {
        router
    }
}

#[allow(unreachable_pub)] // sealed: public in name only
mod sealed {
    pub trait Sealed {}

    /// Only this crate can name it, so only this crate can implement
    /// `SameState`.
    #[derive(Debug)]
    pub struct Token;
}
