//! Handlers: the async functions that answer requests.

use std::{future::Future, pin::Pin};

use tern_core::{
    extract::{FromRequest, FromRequestParts, RouteCheck},
    response::IntoResponse,
    Request, Response,
};

/// The boxed future a handler call returns.
pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = Response> + Send + 'static>>;

/// An async function that can answer a request.
///
/// Implemented for every `async fn` (and closure returning a future) whose
/// arguments are extractors (all but the last implement
/// [`FromRequestParts`], the last may implement [`FromRequest`]) and whose
/// output implements [`IntoResponse`]; up to 16 arguments.
///
/// `T` lists the argument types and `S` is the application state; neither
/// is named by users.
///
/// ```
/// use tern::{extract::Path, Json};
///
/// async fn user(Path(id): Path<u64>) -> Json<u64> {
///     Json(id)
/// }
/// let _: tern::routing::MethodRouter = tern::routing::get(user);
/// ```
///
/// A function that is not a handler is reported where it is routed, as
/// "is not a Tern handler". Put `#[tern::handler]` on it to have the
/// mistake reported where it is defined, at the argument or return type at
/// fault, with what to do (feature `macros`, on by default):
///
/// ```
/// use tern::{extract::{Path, State}, Json};
///
/// #[derive(Clone)]
/// struct Db;
///
/// #[tern::handler]
/// async fn user(State(_db): State<Db>, Path(id): Path<u64>) -> Json<u64> {
///     Json(id)
/// }
/// let _: tern::routing::MethodRouter<Db> = tern::routing::get(user);
/// ```
///
/// ```compile_fail
/// use tern::{extract::Path, Json};
///
/// // error: `Json<String>` reads the request body, so it must be the last
/// // argument: move it after `Path<u64>`
/// #[tern::handler]
/// async fn rename(Json(name): Json<String>, Path(id): Path<u64>) -> String {
///     format!("{id}: {name}")
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Tern handler",
    label = "not a handler",
    note = "a handler is an `async fn` whose arguments all implement `FromRequestParts` (the last may implement `FromRequest`, e.g. `Json<T>` or `String`) and whose return type implements `IntoResponse`",
    note = "body extractors (`Json`, `Form`, `String`, `Bytes`, `Multipart`, `Request`) must be the last argument",
    note = "the returned future must be `Send`: do not hold a `!Send` value (such as an `Rc` or a `std::sync::MutexGuard`) across an `.await`",
    note = "put `#[tern::handler]` on the function to get an error that names the argument or return type at fault"
)]
pub trait Handler<T, S>: Clone + Send + Sync + Sized + 'static {
    /// Runs the handler on a request.
    fn call(self, req: Request, state: S) -> Pin<Box<dyn Future<Output = Response> + Send>>;

    /// Checks each argument's extractor against the route's path
    /// parameters when the app is built (see
    /// [`FromRequestParts::check_route`]).
    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        let _ = route;
        Ok(())
    }

    /// Describes the handler's extractors and answer for API documents.
    fn describe(op: &mut tern_core::doc::Operation) {
        let _ = op;
    }
}

impl<F, Fut, Res, S> Handler<((),), S> for F
where
    F: FnOnce() -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Res> + Send,
    Res: IntoResponse,
{
    fn describe(op: &mut tern_core::doc::Operation) {
        <Res as IntoResponse>::describe(op);
    }

    fn call(self, req: Request, _state: S) -> BoxFuture {
        let answer = async move { self().await.into_response() };
        if Res::NEGOTIATED {
            let negotiated = crate::negotiation::Negotiated::of(&req);
            return Box::pin(crate::negotiation::scoped(negotiated, answer));
        }
        Box::pin(answer)
    }
}

/// Handlers whose extractors are all ready at once
/// ([`FromRequestParts::IMMEDIATE`]: `Path`, `Query`, `State`, the head's
/// parts): they extract when the handler is called, while the request's
/// context, app and negotiation are current as they are around each poll,
/// so their future holds the extracted values, not the request. The
/// request is a few hundred bytes: held in the future, it was copied into
/// the future's box, and again when the future split it.
mod immediate {
    use std::{
        future::Future,
        panic::{catch_unwind, resume_unwind, AssertUnwindSafe},
        pin::pin,
        task::{Context, Poll, Waker},
    };

    use tern_core::{response::IntoResponse, Response};

    use super::BoxFuture;
    use crate::negotiation::{self, Negotiated};

    /// An extractor's value, or the answer of its rejection (made under
    /// the negotiation, see [`extract`]), or the `500` of an extractor
    /// that said it was ready at once and was not. The answer is boxed:
    /// rejections are rare, and a small `Err` keeps the values' moves
    /// small.
    pub(super) fn value<T, R: IntoResponse>(
        fut: impl Future<Output = Result<T, R>>,
    ) -> Result<T, Box<Response>> {
        match pin!(fut).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(Ok(value)) => Ok(value),
            Poll::Ready(Err(rejection)) => Err(Box::new(rejection.into_response())),
            Poll::Pending => Err(Box::new(not_ready())),
        }
    }

    /// Runs the extractors (`extract`) with the handler's negotiation
    /// current; a rejection's answer passes through what they left in it
    /// (a sealed request's problem is sealed). A panic comes out of the
    /// returned future, where the app's guard answers it, as one in a
    /// handler's future does.
    pub(super) fn extract<A>(
        negotiated: &mut Option<Negotiated>,
        extract: impl FnOnce() -> Result<A, Box<Response>>,
    ) -> Result<A, BoxFuture> {
        let slot = &mut *negotiated;
        let extracted = catch_unwind(AssertUnwindSafe(|| negotiation::enter_now(slot, extract)));
        match extracted {
            Ok(Ok(values)) => Ok(values),
            Ok(Err(res)) => Err(Box::pin(std::future::ready(negotiation::finished(
                negotiated.take(),
                *res,
            )))),
            Err(panic) => Err(Box::pin(futures_util::future::lazy(move |_| -> Response {
                resume_unwind(panic)
            }))),
        }
    }

    /// The handler's future, under its negotiation if it has one.
    pub(super) fn boxed(
        negotiated: Option<Negotiated>,
        answer: impl Future<Output = Response> + Send + 'static,
    ) -> BoxFuture {
        match negotiated {
            Some(negotiated) => Box::pin(negotiation::scoped(negotiated, answer)),
            None => Box::pin(answer),
        }
    }

    #[cold]
    fn not_ready() -> Response {
        tern_core::Problem::new(http::StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail("an extractor claimed to be ready at once and was not")
            .into_response()
    }
}

/// What a handler answers if an extractor says it reads the head alone
/// (`FromRequest::VIA_PARTS`) but has no future for it: a bug in that
/// extractor, answered rather than a panic.
#[cold]
fn not_via_parts() -> Response {
    tern_core::Problem::new(http::StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail("an extractor claimed to read the request head alone and did not")
        .into_response()
}

macro_rules! impl_handler {
    // The last extractor, a `FromRequestParts` one (`VIA_PARTS`, a
    // compile-time constant), on the head in place.
    (@via_parts $last:ident $m:ident $s:ident $state:ident $parts:ident) => {{
        let found = <$last as FromRequest<$s, $m>>::from_parts(&mut $parts, &$state);
        let value = match found {
            Some(fut) => match fut.await {
                Ok(value) => value,
                Err(rejection) => return rejection.into_response(),
            },
            None => return not_via_parts(),
        };
        value
    }};
    // The last extractor, any other, on the whole request.
    (@via_request $last:ident $m:ident $s:ident $state:ident $req:expr) => {{
        #[allow(unused_mut)]
        let mut req = $req;
        // An extractor that may keep the request (`Request` itself, an
        // app's own) gets it with its context (see `context`); a
        // compile-time constant.
        if <$last as FromRequest<$s, $m>>::KEEPS_REQUEST {
            crate::context::materialize(req.extensions_mut());
        }
        match $last::from_request(req, &$state).await {
            Ok(value) => value,
            Err(rejection) => return rejection.into_response(),
        }
    }};
    ([$($ty:ident),*], $last:ident) => {
        #[allow(non_snake_case, unused_mut)]
        impl<F, Fut, S, Res, M, $($ty,)* $last> Handler<(M, $($ty,)* $last,), S> for F
        where
            F: FnOnce($($ty,)* $last,) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = Res> + Send,
            S: Send + Sync + 'static,
            Res: IntoResponse,
            // `'static`: a handler whose extractors are ready at once
            // holds their values in its boxed future.
            $( $ty: FromRequestParts<S> + Send + 'static, )*
            $last: FromRequest<S, M> + Send + 'static,
        {
            fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
                $( <$ty as FromRequestParts<S>>::check_route(route)?; )*
                <$last as FromRequest<S, M>>::check_route(route)
            }

            fn describe(op: &mut tern_core::doc::Operation) {
                $( <$ty as FromRequestParts<S>>::describe(op); )*
                <$last as FromRequest<S, M>>::describe(op);
                <Res as IntoResponse>::describe(op);
            }

            fn call(self, req: Request, state: S) -> BoxFuture {
                // A compile-time constant: other handlers pay nothing.
                let mut negotiated = Res::NEGOTIATED
                    .then(|| crate::negotiation::Negotiated::of(&req));
                // Every extractor ready at once (compile-time constants):
                // extracted now, and the boxed future holds their values,
                // not the request (see `immediate`).
                if $( <$ty as FromRequestParts<S>>::IMMEDIATE && )*
                    <$last as FromRequest<S, M>>::IMMEDIATE
                {
                    let (mut parts, _body) = req.into_parts();
                    let extracted = immediate::extract(&mut negotiated, || {
                        Ok(( $(
                            immediate::value(
                                <$ty as FromRequestParts<S>>::from_request_parts(&mut parts, &state),
                            )?,
                        )*
                            match <$last as FromRequest<S, M>>::from_parts(&mut parts, &state) {
                                Some(fut) => immediate::value(fut)?,
                                None => return Err(Box::new(not_via_parts())),
                            },
                        ))
                    });
                    return match extracted {
                        Ok(( $($ty,)* $last, )) => immediate::boxed(
                            negotiated,
                            async move { self($($ty,)* $last,).await.into_response() },
                        ),
                        Err(answer) => answer,
                    };
                }
                let answer = async move {
                    impl_handler!(@body self req state M S [$($ty),*] $last)
                };
                match negotiated {
                    // The extractors and the answer see the negotiation
                    // wherever this future is polled; an answer that does
                    // not take it (the handler's `Err(Problem)`) passes
                    // through what the extractor left to finish it.
                    Some(negotiated) => Box::pin(crate::negotiation::scoped(negotiated, answer)),
                    None => Box::pin(answer),
                }
            }
        }
    };
    // A single extractor: a body extractor takes the request as it is, no
    // split and rejoin.
    (@body $f:ident $req:ident $state:ident $m:ident $s:ident [] $last:ident) => {{
        let $last = if <$last as FromRequest<$s, $m>>::VIA_PARTS {
            let (mut parts, _body) = $req.into_parts();
            impl_handler!(@via_parts $last $m $s $state parts)
        } else {
            impl_handler!(@via_request $last $m $s $state $req)
        };
        $f($last,).await.into_response()
    }};
    (@body $f:ident $req:ident $state:ident $m:ident $s:ident [$($ty:ident),+] $last:ident) => {{
        let (mut parts, body) = $req.into_parts();
        $(
            let $ty = match $ty::from_request_parts(&mut parts, &$state).await {
                Ok(value) => value,
                Err(rejection) => return rejection.into_response(),
            };
        )+
        let $last = if <$last as FromRequest<$s, $m>>::VIA_PARTS {
            impl_handler!(@via_parts $last $m $s $state parts)
        } else {
            impl_handler!(@via_request $last $m $s $state Request::from_parts(parts, body))
        };
        $f($($ty,)+ $last,).await.into_response()
    }};
}

impl_handler!([], T1);
impl_handler!([T1], T2);
impl_handler!([T1, T2], T3);
impl_handler!([T1, T2, T3], T4);
impl_handler!([T1, T2, T3, T4], T5);
impl_handler!([T1, T2, T3, T4, T5], T6);
impl_handler!([T1, T2, T3, T4, T5, T6], T7);
impl_handler!([T1, T2, T3, T4, T5, T6, T7], T8);
impl_handler!([T1, T2, T3, T4, T5, T6, T7, T8], T9);
impl_handler!([T1, T2, T3, T4, T5, T6, T7, T8, T9], T10);
impl_handler!([T1, T2, T3, T4, T5, T6, T7, T8, T9, T10], T11);
impl_handler!([T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11], T12);
impl_handler!([T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12], T13);
impl_handler!(
    [T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13],
    T14
);
impl_handler!(
    [T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14],
    T15
);
impl_handler!(
    [T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15],
    T16
);
