//! `Db`: the app's pool, for a handler.

use http::request::Parts;
use tern::{settings::Settings, IntoResponse, Response};
use tern_core::extract::FromRequestParts;

use crate::{Database, Pool};

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
