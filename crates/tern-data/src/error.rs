//! What can go wrong with data, and the answer each gets.

use std::fmt;

use tern::{IntoResponse, Problem, Response, StatusCode};

/// A data error. As an answer (`?` in a handler returning
/// `Result<_, DataError>`):
///
/// | error | status |
/// |---|---|
/// | the database cannot be reached, or no connection is free within `DATABASE_ACQUIRE_TIMEOUT` | `503` with `Retry-After: 1` (the pool reconnects when it is back) |
/// | no such row | `404` |
/// | a unique or foreign-key constraint | `409` |
/// | a check or not-null constraint | `422` |
/// | anything else | `500` (its detail is logged, and shown only in development) |
#[derive(Debug)]
pub enum DataError {
    /// A setting or a migration file is wrong (at startup).
    Config(String),
    /// The database's or the driver's error.
    Sqlx(sqlx::Error),
    /// A migration failed; the schema is as it was before it.
    Migration {
        /// The migration's file.
        file: String,
        /// Why.
        error: sqlx::Error,
    },
    /// A value no backend stores the same way (the answer is `422`,
    /// naming the field): a NUL character in a text column, which
    /// PostgreSQL refuses and SQLite keeps. Checked before the query, so
    /// both backends answer alike.
    Invalid(String),
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataError::Config(message) | DataError::Invalid(message) => f.write_str(message),
            DataError::Sqlx(e) => write!(f, "{e}"),
            DataError::Migration { file, error } => write!(
                f,
                "the migration `{file}` failed, and was rolled back: {error}"
            ),
        }
    }
}

impl std::error::Error for DataError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DataError::Sqlx(e) | DataError::Migration { error: e, .. } => Some(e),
            DataError::Config(_) | DataError::Invalid(_) => None,
        }
    }
}

impl From<sqlx::Error> for DataError {
    fn from(e: sqlx::Error) -> Self {
        DataError::Sqlx(e)
    }
}

impl DataError {
    /// Whether the database could not be reached (the answer is `503`).
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            DataError::Sqlx(
                sqlx::Error::PoolTimedOut
                    | sqlx::Error::PoolClosed
                    | sqlx::Error::Io(_)
                    | sqlx::Error::Tls(_)
                    | sqlx::Error::WorkerCrashed
            )
        ) || matches!(self, DataError::Sqlx(sqlx::Error::Database(e)) if is_gone(e.code().as_deref()))
    }

    /// The answer's status.
    pub fn status(&self) -> StatusCode {
        if self.is_unavailable() {
            return StatusCode::SERVICE_UNAVAILABLE;
        }
        match self {
            DataError::Sqlx(sqlx::Error::RowNotFound) => StatusCode::NOT_FOUND,
            DataError::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            DataError::Sqlx(sqlx::Error::Database(e)) => match e.kind() {
                sqlx::error::ErrorKind::UniqueViolation
                | sqlx::error::ErrorKind::ForeignKeyViolation => StatusCode::CONFLICT,
                sqlx::error::ErrorKind::NotNullViolation
                | sqlx::error::ErrorKind::CheckViolation => StatusCode::UNPROCESSABLE_ENTITY,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            },
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// PostgreSQL's codes for a server that is going away or refusing
/// connections (`57P01` admin shutdown, `57P02` crash shutdown, `57P03`
/// cannot connect now, `53300` too many connections).
fn is_gone(code: Option<&str>) -> bool {
    matches!(code, Some("57P01" | "57P02" | "57P03" | "53300"))
}

impl IntoResponse for DataError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = match status {
            StatusCode::SERVICE_UNAVAILABLE => {
                tracing::warn!(error = %self, "the database is unavailable");
                "the database is unavailable; try again shortly".to_owned()
            }
            StatusCode::NOT_FOUND => "there is no such row".to_owned(),
            StatusCode::CONFLICT => {
                "the change conflicts with existing data (a unique value is taken, or a row it refers to is missing)"
                    .to_owned()
            }
            StatusCode::UNPROCESSABLE_ENTITY if matches!(self, DataError::Invalid(_)) => self.to_string(),
            StatusCode::UNPROCESSABLE_ENTITY => {
                "the change breaks a rule of the table (a required value is missing, or a check fails)"
                    .to_owned()
            }
            _ => {
                tracing::error!(error = %self, "a database error");
                // Production replaces a 500's detail (the request ID stays).
                format!("a database error: {self}")
            }
        };
        let mut res = Problem::new(status).with_detail(detail).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            res.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static("1"),
            );
        }
        res
    }
}
