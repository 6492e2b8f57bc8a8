use http::{request::Parts, StatusCode};
use serde::de::DeserializeOwned;
use tern_core::extract::{FromRequestParts, RouteCheck};

use super::{de::ParamsDe, probe::Shape, Rejection};

/// Typed route parameters.
///
/// `Path<u64>` for one parameter, `Path<(String, u64)>` for several in
/// order, or `Path<T>` with a struct whose fields are named like the
/// parameters. Values are percent-decoded. A value that does not parse is a
/// `400` naming the parameter. A type that cannot fit the route (a tuple
/// of another length than its parameters, one value for several, a route
/// without parameters) stops the app's build with an error naming the
/// route.
///
/// ```
/// use tern::extract::Path;
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Repo { owner: String, name: String }
///
/// async fn repo(Path(repo): Path<Repo>) -> String {
///     format!("{}/{}", repo.owner, repo.name)
/// }
/// let app = tern::App::new().route("/repos/{owner}/{name}", tern::routing::get(repo));
/// # let _ = app.build().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Path<T>(pub T);

impl<T, S> FromRequestParts<S> for Path<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    /// The route's parameters are read at once.
    const IMMEDIATE: bool = true;

    /// The type must take as many values as the route has parameters:
    /// `Path<u64>` one, `Path<(u64, String)>` two; a route without
    /// parameters takes no `Path`.
    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        let Some(params) = route.params() else {
            // Under a host pattern: checked when a request comes.
            return Ok(());
        };
        let n = params.len();
        let listed = || {
            params
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let ty = std::any::type_name::<T>();
        match super::probe::shape_of::<T>() {
            _ if n == 0 => Err(format!(
                "the handler takes `Path<{ty}>` but the route has no parameters"
            )),
            Shape::Scalar if n > 1 => Err(format!(
                "the handler takes `Path<{ty}>`, one value, but the route has {n} parameters \
                 ({}): take a tuple of {n} values or a struct with these fields",
                listed()
            )),
            Shape::Tuple(len) if len != n => Err(format!(
                "the handler takes `Path<{ty}>`, {len} value(s), but the route has {n} \
                 parameter(s) ({}): make the tuple hold one value per parameter, in order",
                listed()
            )),
            _ => Ok(()),
        }
    }

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        crate::context::with(&parts.extensions, |ctx| {
            if !ctx.params.is_matched() {
                return None;
            }
            if let Some(pair) = ctx.params.single() {
                return Some(T::deserialize(ParamsDe { params: &[pair] }));
            }
            let pairs: smallvec::SmallVec<[(&str, &str); 4]> = ctx.params.iter().collect();
            Some(T::deserialize(ParamsDe { params: &pairs }))
        })
        .flatten()
        .ok_or_else(|| {
            Rejection::internal("`Path` was used on a request that was not routed by a Tern app")
        })?
        .map(Path)
        .map_err(|e| {
            if let (Some((got, expected)), true) = (&e.arity, e.path.is_empty()) {
                // The route and the handler disagree on the parameters: a
                // server bug, not the client's.
                return Rejection::internal(format!(
                    "the route has {got} path parameter(s) but the handler's `Path` \
                     expects {expected}: make the `Path` type match the route's parameters"
                ));
            }
            let detail = if e.path.is_empty() {
                format!("the path parameters are invalid: {}", e.message)
            } else {
                format!("path parameter `{}`: {}", e.path, e.message)
            };
            Rejection::invalid(StatusCode::BAD_REQUEST, detail).with_field(&e.path)
        })
    }

    /// The parameters' types where `T` says more than the route's
    /// pattern (`Path<u32>` on `/{id}`: an integer up to `u32::MAX`), and
    /// the `400` a value that does not parse gets.
    fn describe(op: &mut tern_core::doc::Operation) {
        op.path_of::<T>();
        op.problem(
            "400",
            "A path parameter does not parse as its type (`field` names it).",
        );
    }
}

impl<T> std::ops::Deref for Path<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
