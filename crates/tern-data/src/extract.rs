//! `Db`: the app's pool, for a handler.

use std::marker::PhantomData;

use http::request::Parts;
use tern::{settings::Settings, IntoResponse, Response};
use tern_core::extract::{FromRequestParts, RouteCheck};

use crate::{
    list::{check_shape, ListShape, Listing, Pages},
    model::{List, Model},
    DataError, Database, Pool,
};

/// The app's connection pool (a cheap clone), for a handler's queries.
///
/// The app loads its [`Database`] as settings:
/// `App::settings::<Database>("database")`.
#[derive(Debug, Clone)]
pub struct Db(pub Pool);

impl std::ops::Deref for Db {
    type Target = Pool;
    fn deref(&self) -> &Pool {
        &self.0
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Db {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let Settings(db) = Settings::<Database>::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        Ok(Db(db.pool().clone()))
    }
}

/// A list's query string, read for model `M` ([`List::from_pairs`]):
/// `?q=tea&order=-stars&stars__ge=3&page=2&per_page=50`. A parameter that
/// names no column of `M`, a column that cannot be filtered or ordered by,
/// or a value of the wrong kind is a `400` problem naming it.
///
/// With a shape `S` of the app's ([`ListShape`]), `S`'s paging replaces
/// pages (`?limit=&offset=`) and `S`'s filters join the columns'
/// ([`List::from_pairs_as`]); `S` is checked when the route is built.
pub struct ListQuery<M, S = Pages>(pub List, PhantomData<fn() -> (M, S)>);

impl<M, S> ListQuery<M, S> {
    /// The list.
    pub fn into_inner(self) -> List {
        self.0
    }
}

impl<M, S> std::ops::Deref for ListQuery<M, S> {
    type Target = List;
    fn deref(&self) -> &List {
        &self.0
    }
}

impl<M, S> std::fmt::Debug for ListQuery<M, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ListQuery").field(&self.0).finish()
    }
}

impl<M, S> Clone for ListQuery<M, S> {
    fn clone(&self) -> Self {
        ListQuery(self.0.clone(), PhantomData)
    }
}

impl<M, S> PartialEq for ListQuery<M, S> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// The most parameters a list's query may have.
const MAX_PARAMETERS: usize = 32;

fn bad(detail: String) -> Response {
    tern::Problem::new(tern::StatusCode::BAD_REQUEST)
        .with_detail(detail)
        .into_response()
}

/// The query string's pairs, at most [`MAX_PARAMETERS`].
fn pairs(parts: &Parts) -> Result<Vec<(String, String)>, String> {
    let query = parts.uri.query().unwrap_or_default();
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
        .map_err(|e| format!("the query string does not parse: {e}"))?;
    if pairs.len() > MAX_PARAMETERS {
        return Err(format!(
            "a list takes at most {MAX_PARAMETERS} parameters (this query has {})",
            pairs.len()
        ));
    }
    Ok(pairs)
}

/// A shape that is not well made: the app's error (a `500`; the route's
/// build refuses it first).
fn shape_error(e: String) -> Response {
    DataError::Config(e).into_response()
}

impl<St: Send + Sync, M: Model, S: ListShape> FromRequestParts<St> for ListQuery<M, S> {
    type Rejection = Response;

    fn check_route(_: &RouteCheck<'_>) -> Result<(), String> {
        check_shape::<S>(&["q", "order"])
    }

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, Response> {
        check_shape::<S>(&["q", "order"]).map_err(shape_error)?;
        pairs(parts)
            .and_then(|pairs| List::from_pairs_as::<M, S>(&pairs))
            .map(|list| ListQuery(list, PhantomData))
            .map_err(bad)
    }
}

impl<St: Send + Sync, S: ListShape> FromRequestParts<St> for Listing<S> {
    type Rejection = Response;

    fn check_route(_: &RouteCheck<'_>) -> Result<(), String> {
        check_shape::<S>(&[])
    }

    async fn from_request_parts(parts: &mut Parts, _: &St) -> Result<Self, Response> {
        check_shape::<S>(&[]).map_err(shape_error)?;
        pairs(parts)
            .and_then(|pairs| Listing::from_pairs(&pairs))
            .map_err(bad)
    }
}
