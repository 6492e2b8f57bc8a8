//! The rejection of Tern's own extractors.

use std::fmt;

use crate::{response::IntoResponse, Problem, Response};
use http::StatusCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Invalid,
    TooLarge,
    UnsupportedMediaType,
    Missing,
    Internal,
}

/// Why an extractor refused a request: renders as a problem+json with the
/// status and a detail naming what was wrong.
///
/// Opaque; ask it with the `is_*` predicates or [`status`](Rejection::status).
#[derive(Debug, Clone)]
pub struct Rejection {
    kind: Kind,
    // Boxed: rejections are rare and `Result<T, Rejection>` stays small.
    problem: Box<Problem>,
}

impl Rejection {
    fn new(kind: Kind, status: StatusCode, detail: impl Into<String>) -> Self {
        Rejection {
            kind,
            problem: Box::new(Problem::new(status).with_detail(detail.into())),
        }
    }

    /// Names the field or parameter that was wrong (the problem's `field`
    /// member).
    pub fn with_field(mut self, field: &str) -> Self {
        if !field.is_empty() {
            *self.problem = self.problem.clone().with_extension("field", field);
        }
        self
    }

    /// Names the value of a JSON body that was wrong, by its JSON pointer
    /// (RFC 6901: `/tags/2`; the problem's `pointer` member).
    pub fn with_pointer(mut self, pointer: &str) -> Self {
        if !pointer.is_empty() {
            *self.problem = self.problem.clone().with_extension("pointer", pointer);
        }
        self
    }

    /// Input present but malformed or of the wrong shape (usually `400`
    /// or `422`).
    pub fn invalid(status: StatusCode, detail: impl Into<String>) -> Self {
        Rejection::new(Kind::Invalid, status, detail)
    }

    /// The body is larger than allowed: `413`.
    pub fn too_large(detail: impl Into<String>) -> Self {
        Rejection::new(Kind::TooLarge, StatusCode::PAYLOAD_TOO_LARGE, detail)
    }

    /// The `Content-Type` is not one the extractor reads: `415`.
    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        Rejection::new(
            Kind::UnsupportedMediaType,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            detail,
        )
    }

    /// Something required is absent (a header, a host).
    pub fn missing(status: StatusCode, detail: impl Into<String>) -> Self {
        Rejection::new(Kind::Missing, status, detail)
    }

    /// The body could not be read: `413` past the limit, `408` on a
    /// timeout, `400` otherwise.
    pub fn from_body_error(err: crate::BodyError) -> Self {
        if let Some(limit) = err.length_limit_bytes() {
            Rejection::new(
                Kind::TooLarge,
                StatusCode::PAYLOAD_TOO_LARGE,
                crate::body::too_large_detail(limit),
            )
        } else if err.is_timeout() {
            Rejection::new(
                Kind::Invalid,
                StatusCode::REQUEST_TIMEOUT,
                "the request body was not received in time",
            )
        } else {
            Rejection::new(
                Kind::Invalid,
                StatusCode::BAD_REQUEST,
                format!("the request body could not be read: {err}"),
            )
        }
    }

    /// The HTTP status this rejection answers with.
    pub fn status(&self) -> StatusCode {
        self.problem.status()
    }

    /// The detail sent to the client.
    pub fn detail(&self) -> &str {
        self.problem.detail()
    }

    /// The input was present but malformed or of the wrong shape.
    pub fn is_invalid(&self) -> bool {
        self.kind == Kind::Invalid
    }

    /// The body was larger than the limit (`413`).
    pub fn is_too_large(&self) -> bool {
        self.kind == Kind::TooLarge
    }

    /// The `Content-Type` was not the one the extractor reads (`415`).
    pub fn is_unsupported_media_type(&self) -> bool {
        self.kind == Kind::UnsupportedMediaType
    }

    /// Something the extractor needs was absent (a header, a host, state).
    pub fn is_missing(&self) -> bool {
        self.kind == Kind::Missing
    }

    /// The problem this rejection renders as.
    pub fn into_problem(self) -> Problem {
        *self.problem
    }

    /// A bug in the app, not in the request: `500`.
    pub fn internal(detail: impl Into<String>) -> Self {
        Rejection::new(Kind::Internal, StatusCode::INTERNAL_SERVER_ERROR, detail)
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.problem, f)
    }
}

impl std::error::Error for Rejection {}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        (*self.problem).into_response()
    }
}
