//! A submitted form: its urlencoded pairs, as the admin's handlers read
//! them (a field may come several times: `_selected`).

use http::StatusCode;
use http_body_util::{BodyExt as _, Limited};
use tern::{IntoResponse, Problem, Request, Response};
use tern_core::extract::FromRequest;

/// The largest form the admin reads: 1 MiB, as tern-auth's CSRF check
/// (which reads the same body first).
pub(crate) const MAX_FORM: usize = 1 << 20;

/// The pairs of an `application/x-www-form-urlencoded` body, in order.
///
/// As an extractor: `415` for another content type, `413` past
/// [`MAX_FORM`], `400` for a body that is not a form (not UTF-8, bad
/// escapes). Take it last: the permission check runs before the body is
/// read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FormInput {
    pairs: Vec<(String, String)>,
}

impl FormInput {
    /// The pairs of `text` (a query string or a form body).
    pub(crate) fn parse(text: &[u8]) -> Result<FormInput, String> {
        serde_urlencoded::from_bytes::<Vec<(String, String)>>(text)
            .map(|pairs| FormInput { pairs })
            .map_err(|e| format!("the form cannot be read: {e}"))
    }

    /// The first value of `name`, if it was sent.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub(crate) fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// Every pair.
    pub(crate) fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }
}

fn problem(status: StatusCode, detail: impl Into<String>) -> Response {
    let detail: String = detail.into();
    Problem::new(status).with_detail(detail).into_response()
}

impl<S: Send + Sync> FromRequest<S> for FormInput {
    type Rejection = Response;

    async fn from_request(req: Request, _: &S) -> Result<Self, Response> {
        let is_form = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| {
                v.trim()
                    .eq_ignore_ascii_case("application/x-www-form-urlencoded")
            });
        if !is_form {
            return Err(problem(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "expected a form: send `Content-Type: application/x-www-form-urlencoded`",
            ));
        }
        let bytes = Limited::new(req.into_body(), MAX_FORM)
            .collect()
            .await
            .map_err(|_| {
                problem(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the form is larger than {MAX_FORM} bytes"),
                )
            })?
            .to_bytes();
        FormInput::parse(&bytes).map_err(|e| problem(StatusCode::BAD_REQUEST, e))
    }
}

/// The summary's heading for `n` errors ("There is 1 problem", "There
/// are 2 problems").
pub(crate) fn error_heading(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "There is 1 problem".to_owned(),
        n => format!("There are {n} problems"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn pairs_repeat_and_decode() {
        let f = FormInput::parse(b"_selected=1&_selected=2&title=a+b%26c").unwrap();
        assert_eq!(f.all("_selected"), ["1", "2"]);
        assert_eq!(f.get("title"), Some("a b&c"));
        assert_eq!(f.get("nope"), None);
        assert_eq!(error_heading(2), "There are 2 problems");
        assert_eq!(error_heading(1), "There is 1 problem");
    }
}
