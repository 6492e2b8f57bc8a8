//! `Db`: the app's pool, for a handler.

use http::request::Parts;
use tern::{settings::Settings, IntoResponse, Response};
use tern_core::extract::FromRequestParts;

use crate::{
    model::{List, Model},
    Database, Pool,
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
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery<M>(pub List, std::marker::PhantomData<fn() -> M>);

impl<M> ListQuery<M> {
    /// The list.
    pub fn into_inner(self) -> List {
        self.0
    }
}

impl<M> std::ops::Deref for ListQuery<M> {
    type Target = List;
    fn deref(&self) -> &List {
        &self.0
    }
}

/// The most parameters a list's query may have.
const MAX_PARAMETERS: usize = 32;

impl<S: Send + Sync, M: Model> FromRequestParts<S> for ListQuery<M> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        let bad = |detail: String| {
            tern::Problem::new(tern::StatusCode::BAD_REQUEST)
                .with_detail(detail)
                .into_response()
        };
        let query = parts.uri.query().unwrap_or_default();
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
            .map_err(|e| bad(format!("the query string does not parse: {e}")))?;
        if pairs.len() > MAX_PARAMETERS {
            return Err(bad(format!(
                "a list takes at most {MAX_PARAMETERS} parameters (this query has {})",
                pairs.len()
            )));
        }
        List::from_pairs::<M>(&pairs)
            .map(|list| ListQuery(list, std::marker::PhantomData))
            .map_err(bad)
    }
}
