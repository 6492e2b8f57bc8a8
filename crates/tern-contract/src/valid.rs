//! `Valid<T>`: the extractor that decodes and checks a contract, and the
//! response that checks one before sending it.

use http::StatusCode;
use tern::{config::InvalidResponses, IntoResponse, Json, Problem, Request, Response};
use tern_core::extract::FromRequest;

use crate::{Contract, Violations};

/// A value that keeps its contract.
///
/// As an extractor (the last argument: it reads the body): decodes a JSON
/// body (`415` for another `Content-Type`, `413` over the body limit,
/// `400` for malformed JSON, `422` with a `pointer` for a value of the
/// wrong type or a missing or unknown field), then checks every rule and
/// answers `422` listing **every** broken one:
///
/// ```json
/// {"status": 422, "title": "Unprocessable Entity",
///  "detail": "2 values break their contract: /name must have 1 to 80 characters (it has 0) (length); ...",
///  "errors": [{"pointer": "/name", "rule": "length", "detail": "must have 1 to 80 characters (it has 0)"},
///             {"pointer": "/tags/2", "rule": "length", "detail": "must have at most 20 characters (it has 31)"}]}
/// ```
///
/// As a response: checks the value before sending it as JSON. A value
/// that breaks its contract is the handler's bug: in development a `500`
/// whose detail names each broken rule; in production it is logged and,
/// by `TERN_INVALID_RESPONSES`, sent (default) or replaced by a `500`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Valid<T>(pub T);

impl<T> std::ops::Deref for Valid<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<S, T> FromRequest<S> for Valid<T>
where
    S: Send + Sync,
    T: Contract + Send,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let Json(value) = Json::<T>::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        match value.validate() {
            Ok(()) => Ok(Valid(value)),
            Err(violations) => Err(invalid(StatusCode::UNPROCESSABLE_ENTITY, &violations)),
        }
    }
}

impl<T: Contract> IntoResponse for Valid<T> {
    fn into_response(self) -> Response {
        let Err(violations) = self.0.validate() else {
            return Json(self.0).into_response();
        };
        let policy =
            tern::__private::current_config(|c| c.is_production().then_some(c.invalid_responses))
                .flatten();
        tracing::error!(
            contract = T::NAME,
            violations = %violations,
            "a handler's answer breaks its contract"
        );
        match policy {
            Some(InvalidResponses::Send) => Json(self.0).into_response(),
            // Development, tests, or production set to `fail`.
            _ => invalid(StatusCode::INTERNAL_SERVER_ERROR, &violations),
        }
    }
}

/// The problem listing `violations`.
fn invalid(status: StatusCode, violations: &Violations) -> Response {
    let detail = if status == StatusCode::INTERNAL_SERVER_ERROR {
        format!("the handler's answer breaks its contract: {violations}")
    } else {
        violations.summary()
    };
    Problem::new(status)
        .with_detail(detail)
        .with_extension("errors", &violations.0)
        .into_response()
}
