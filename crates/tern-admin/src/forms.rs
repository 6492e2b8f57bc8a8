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
    /// The pairs of `text` (a query string or a form body). A name or a
    /// value that is not UTF-8 once decoded is an error (not replaced by
    /// U+FFFD and saved: what was sent is not what would be stored).
    pub(crate) fn parse(text: &[u8]) -> Result<FormInput, String> {
        let mut pairs = Vec::new();
        for part in text.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
            let (name, value) = match part.iter().position(|b| *b == b'=') {
                Some(i) => (&part[..i], &part[i + 1..]),
                None => (part, &b""[..]),
            };
            pairs.push((decode(name)?, decode(value)?));
        }
        Ok(FormInput { pairs })
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

/// One urlencoded name or value: `+` is a space, `%XX` a byte (a `%`
/// without two hex digits stays as it is, as browsers and
/// `form_urlencoded` read it); the bytes must be UTF-8.
fn decode(raw: &[u8]) -> Result<String, String> {
    let hex = |b: u8| {
        char::from(b)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => out.push(b' '),
            b'%' => match (
                raw.get(i + 1).copied().and_then(hex),
                raw.get(i + 2).copied().and_then(hex),
            ) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| "the form has a field that is not UTF-8".to_owned())
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
        let f = FormInput::parse(b"a=%41%zz%4&b&=c&&d=%C3%A9").unwrap();
        assert_eq!(
            f.pairs(),
            [
                ("a".to_owned(), "A%zz%4".to_owned()),
                ("b".to_owned(), String::new()),
                (String::new(), "c".to_owned()),
                ("d".to_owned(), "é".to_owned()),
            ]
        );
        assert!(FormInput::parse(b"title=%FF%FE").is_err());
        assert!(FormInput::parse(b"%FF=x").is_err());
    }
}
