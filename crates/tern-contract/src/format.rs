//! The formats a contract travels in, and content negotiation: the
//! request's `Content-Type` picks the decoder, its `Accept` (else its own
//! format) the answer's.

use http::{HeaderMap, HeaderValue, StatusCode};
use serde::{de::DeserializeOwned, Serialize};
use tern::Bytes;
use tern_core::{
    accept::{media_quality, Quality},
    extract::Rejection,
};

/// A wire format of contracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/json` (RFC 8259).
    Json,
    /// `application/cbor` (RFC 8949).
    Cbor,
    /// `application/cose` (RFC 9052): the contract in CBOR, sealed with
    /// a key of the app's [`Keyring`](crate::cose::Keyring).
    Cose,
}

/// The formats, in the order of preference when `Accept` ties.
const FORMATS: [Format; 3] = [Format::Json, Format::Cbor, Format::Cose];

fn memchr_semicolon(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b';')
}

/// Nesting deeper than this is refused (as `serde_json` does).
const MAX_DEPTH: usize = 128;

impl Format {
    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Cbor => "application/cbor",
            Format::Cose => "application/cose",
        }
    }

    /// The format a `Content-Type` names: `application/json` or any
    /// `+json` type, `application/cbor` or any `+cbor` type.
    pub fn of_content_type(value: &HeaderValue) -> Option<Format> {
        let bytes = value.as_bytes();
        // The types as this crate writes them, compared whole.
        match bytes {
            b"application/json" => return Some(Format::Json),
            b"application/cbor" => return Some(Format::Cbor),
            b"application/cose" => return Some(Format::Cose),
            _ => {}
        }
        let essence = match memchr_semicolon(bytes) {
            Some(i) => &bytes[..i],
            None => bytes,
        };
        let essence = essence.trim_ascii();
        // `application/` in any case, without allocating.
        const APPLICATION: &[u8] = b"application/";
        if essence.len() <= APPLICATION.len()
            || !essence[..APPLICATION.len()].eq_ignore_ascii_case(APPLICATION)
        {
            return None;
        }
        let sub = &essence[APPLICATION.len()..];
        let is = |name: &[u8]| {
            sub.eq_ignore_ascii_case(name)
                || (sub.len() > name.len()
                    && sub[sub.len() - name.len() - 1] == b'+'
                    && sub[sub.len() - name.len()..].eq_ignore_ascii_case(name))
        };
        if is(b"json") {
            Some(Format::Json)
        } else if is(b"cbor") {
            Some(Format::Cbor)
        } else if is(b"cose") {
            Some(Format::Cose)
        } else {
            None
        }
    }

    /// Decodes `bytes`: `400` for malformed input, `422` with a `pointer`
    /// for a value of the wrong shape.
    pub fn decode<T: DeserializeOwned>(self, bytes: &[u8]) -> Result<T, Rejection> {
        match self {
            Format::Json => tern::Json::<T>::from_bytes(bytes).map(|tern::Json(v)| v),
            // A COSE payload is CBOR, once opened.
            Format::Cbor | Format::Cose => decode_cbor(bytes),
        }
    }

    /// Encodes `value`.
    pub fn encode<T: Serialize>(self, value: &T) -> Result<Bytes, String> {
        match self {
            Format::Json => serde_json::to_vec(value)
                .map(Bytes::from)
                .map_err(|e| e.to_string()),
            Format::Cbor | Format::Cose => cbor4ii::serde::to_vec(Vec::with_capacity(128), value)
                .map(Bytes::from)
                .map_err(|e| e.to_string()),
        }
    }
}

fn decode_cbor<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Rejection> {
    use ciborium::de::Error;
    let bad = |detail: String| Rejection::invalid(StatusCode::BAD_REQUEST, detail);
    // The hot path: cbor4ii. Its errors do not say which value was wrong:
    // those are explained again by ciborium below (error path only).
    let mut de = cbor4ii::serde::Deserializer::new(Reader {
        buf: bytes,
        depth: MAX_DEPTH,
    });
    match T::deserialize(&mut de) {
        Ok(value) => {
            let rest = de.into_inner().buf.len();
            return if rest == 0 {
                Ok(value)
            } else {
                Err(bad(format!(
                    "the body is not one CBOR item: {rest} bytes follow it"
                )))
            };
        }
        Err(cbor4ii::serde::DecodeError::Core(cbor4ii::core::error::DecodeError::Eof {
            ..
        })) => return Err(bad("the CBOR body ends too early".to_owned())),
        Err(cbor4ii::serde::DecodeError::Core(
            cbor4ii::core::error::DecodeError::DepthOverflow { .. },
        )) => {
            return Err(bad(format!(
                "the CBOR body is nested deeper than {MAX_DEPTH} levels"
            )))
        }
        Err(_) => {}
    }
    let mut rest = bytes;
    match ciborium::de::from_reader_with_recursion_limit::<T, _>(&mut rest, MAX_DEPTH) {
        Ok(value) if rest.is_empty() => Ok(value),
        Ok(_) => Err(bad(format!(
            "the body is not one CBOR item: {} bytes follow it",
            rest.len()
        ))),
        Err(Error::Semantic(_, message)) => {
            // A typed decoder cannot tell a stray `break` from a value of
            // the wrong type: decoded as a generic value (error path
            // only), malformed input fails again.
            let value = match ciborium::de::from_reader_with_recursion_limit::<ciborium::Value, _>(
                bytes, MAX_DEPTH,
            ) {
                Ok(value) => value,
                Err(Error::RecursionLimitExceeded) => {
                    return Err(bad(format!(
                        "the CBOR body is nested deeper than {MAX_DEPTH} levels"
                    )))
                }
                Err(Error::Io(_)) => return Err(bad("the CBOR body ends too early".to_owned())),
                Err(Error::Syntax(offset)) => {
                    return Err(bad(format!(
                        "the body is not valid CBOR (at byte {offset})"
                    )))
                }
                Err(Error::Semantic(_, e)) => {
                    return Err(bad(format!("the body is not valid CBOR: {e}")))
                }
            };
            let pointer = cbor_pointer_of::<T>(&value);
            let at = pointer
                .as_deref()
                .map(|p| format!(" at `{p}`"))
                .unwrap_or_default();
            let rejection = Rejection::invalid(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("the CBOR body does not have the expected shape{at}: {message}"),
            );
            Err(match pointer {
                Some(pointer) => rejection.with_pointer(&pointer),
                None => rejection,
            })
        }
        Err(Error::RecursionLimitExceeded) => Err(bad(format!(
            "the CBOR body is nested deeper than {MAX_DEPTH} levels"
        ))),
        Err(Error::Syntax(offset)) => Err(bad(format!(
            "the body is not valid CBOR (at byte {offset})"
        ))),
        Err(Error::Io(_)) => Err(bad("the CBOR body ends too early".to_owned())),
    }
}

/// The JSON pointer of the value a CBOR body (decoded as a generic value,
/// on the error path only) gets wrong for `T`.
fn cbor_pointer_of<T: DeserializeOwned>(value: &ciborium::Value) -> Option<String> {
    let json = serde_json::to_value(value).ok()?;
    tern::__private::json_pointer::<T, _>(json)
}

/// The request's format, from its `Content-Type`: `415` naming the
/// formats when it has another one, or none.
pub(crate) fn request_format(headers: &HeaderMap) -> Result<Format, Rejection> {
    let content_type = headers.get(http::header::CONTENT_TYPE);
    content_type
        .and_then(Format::of_content_type)
        .ok_or_else(|| {
            let sent = content_type
                .and_then(|v| v.to_str().ok())
                .map(|v| format!("`{v}`"))
                .unwrap_or_else(|| "no `Content-Type`".to_owned());
            Rejection::unsupported_media_type(format!(
                "the body must be `application/json`, `application/cbor` or (with COSE keys) \
                 `application/cose` (the request has {sent})"
            ))
        })
}

/// The answer's format: the best that `accept` allows (by `q`, read by
/// [`tern_core::accept`] as every Tern crate reads it, then the request's
/// format, then JSON); without `Accept`, the request's format
/// or JSON. The answer to a `sealed` request is COSE, never plaintext;
/// only such an answer can be COSE (sealed with the request's key).
/// `406` when `Accept` allows none.
pub(crate) fn answer_format(
    accept: Option<&HeaderValue>,
    request: Option<Format>,
    sealed: bool,
) -> Result<Format, Rejection> {
    let Some(accept) = accept.and_then(|v| v.to_str().ok()) else {
        return Ok(if sealed {
            Format::Cose
        } else {
            request.unwrap_or(Format::Json)
        });
    };
    if sealed {
        return if media_quality(accept, Format::Cose.media_type()).is_acceptable() {
            Ok(Format::Cose)
        } else {
            Err(Rejection::invalid(
                StatusCode::NOT_ACCEPTABLE,
                format!(
                    "the request was sealed (`application/cose`), so its answer is sealed too, \
                     never plaintext; the request's `Accept: {}` does not allow \
                     `application/cose`",
                    accept.get(..100).unwrap_or(accept)
                ),
            ))
        };
    }
    let mut best: Option<(Format, Quality)> = None;
    let preference = |f: Format| {
        if Some(f) == request {
            0
        } else {
            1 + FORMATS.iter().position(|x| *x == f).unwrap_or(0)
        }
    };
    for format in FORMATS {
        if format == Format::Cose {
            // Only the answer to a sealed request can be sealed (with its
            // key).
            continue;
        }
        let q = media_quality(accept, format.media_type());
        if !q.is_acceptable() {
            continue;
        }
        best = match best {
            Some((b, bq)) if bq > q || (bq == q && preference(b) <= preference(format)) => {
                Some((b, bq))
            }
            _ => Some((format, q)),
        };
    }
    best.map(|(f, _)| f).ok_or_else(|| {
        Rejection::invalid(
            StatusCode::NOT_ACCEPTABLE,
            format!(
                "this endpoint answers `application/json` or `application/cbor`; the request's \
                 `Accept: {}` allows neither",
                accept.get(..100).unwrap_or(accept)
            ),
        )
    })
}

/// A slice for cbor4ii that counts nesting (as deep as `MAX_DEPTH`) and
/// tells what is left after the item.
struct Reader<'a> {
    buf: &'a [u8],
    depth: usize,
}

impl<'de> cbor4ii::core::dec::Read<'de> for Reader<'de> {
    type Error = std::convert::Infallible;

    #[inline]
    fn fill<'short>(
        &'short mut self,
        want: usize,
    ) -> Result<cbor4ii::core::dec::Reference<'de, 'short>, Self::Error> {
        let len = want.min(self.buf.len());
        Ok(cbor4ii::core::dec::Reference::Long(&self.buf[..len]))
    }

    #[inline]
    fn advance(&mut self, n: usize) {
        let n = n.min(self.buf.len());
        self.buf = &self.buf[n..];
    }

    #[inline]
    fn step_in(&mut self) -> bool {
        match self.depth.checked_sub(1) {
            Some(depth) => {
                self.depth = depth;
                true
            }
            None => false,
        }
    }

    #[inline]
    fn step_out(&mut self) {
        self.depth += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(accept: &str, request: Option<Format>) -> Option<Format> {
        answer_format(
            Some(&HeaderValue::from_str(accept).expect("a header")),
            request,
            request == Some(Format::Cose),
        )
        .ok()
    }

    #[test]
    fn accept_picks_the_answer() {
        use Format::*;
        assert_eq!(choose("application/cbor", Some(Json)), Some(Cbor));
        assert_eq!(choose("application/json", Some(Cbor)), Some(Json));
        assert_eq!(choose("*/*", Some(Cbor)), Some(Cbor));
        assert_eq!(choose("*/*", None), Some(Json));
        assert_eq!(choose("application/*", Some(Cbor)), Some(Cbor));
        assert_eq!(
            choose("application/json;q=0.5, application/cbor", Some(Json)),
            Some(Cbor)
        );
        assert_eq!(choose("application/cbor;q=0, */*", None), Some(Json));
        // `Q` is `q` (RFC 9110 §12.4.2): JSON at 0.5, CBOR at 1.
        assert_eq!(
            choose("application/json;Q=0.5, application/cbor", Some(Json)),
            Some(Cbor)
        );
        assert_eq!(choose("text/html", Some(Json)), None);
        assert_eq!(choose("application/json;q=0", None), None);
        assert_eq!(answer_format(None, Some(Cbor), false).ok(), Some(Cbor));
        assert_eq!(choose("application/cose", Some(Json)), None);
        assert_eq!(choose("*/*", Some(Cose)), Some(Cose));
        // A sealed request's answer is sealed, or a 406.
        assert_eq!(choose("application/json", Some(Cose)), None);
        assert_eq!(
            choose("application/cbor, application/json", Some(Cose)),
            None
        );
        assert_eq!(choose("application/cose;q=0, */*", Some(Cose)), None);
        assert_eq!(choose("application/*;q=0.1", Some(Cose)), Some(Cose));
        assert_eq!(answer_format(None, Some(Cose), true).ok(), Some(Cose));
    }

    #[test]
    fn content_types() {
        let f = |s: &str| Format::of_content_type(&HeaderValue::from_str(s).expect("a header"));
        assert_eq!(f("application/json; charset=utf-8"), Some(Format::Json));
        assert_eq!(f("application/problem+json"), Some(Format::Json));
        assert_eq!(f("Application/CBOR"), Some(Format::Cbor));
        assert_eq!(f("text/json"), None);
        assert_eq!(f("application/jsonx"), None);
    }
}
