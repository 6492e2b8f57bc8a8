use http::{header, HeaderValue, Method, StatusCode};
use serde::{de::DeserializeOwned, Serialize};
use tern_core::{
    body::Body,
    extract::{FromRequest, OptionalFromRequest},
    response::IntoResponse,
    Request, Response,
};

use super::{
    body::{has_content_type, read_body, unless_absent},
    de::{from_urlencoded, UrlencodedLimits},
    query::reject,
    Rejection,
};

/// A typed `application/x-www-form-urlencoded` body (for `GET` and `HEAD`,
/// the query string), read with the same rules as [`Query`](super::Query):
/// lists, nested maps, errors naming the field (`400`). Another
/// `Content-Type` is a `415`.
///
/// `Option<Form<T>>` is `None` when there is no form: for `GET` and
/// `HEAD` no query string (or an empty one), otherwise no body and no
/// `Content-Type`. A form that is there but does not parse is the same
/// `400` (or `415`) as for `Form<T>`.
///
/// As a response, serializes `T` as a urlencoded body.
///
/// ```
/// use tern::extract::Form;
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Login { user: String, password: String }
///
/// async fn login(Form(login): Form<Login>) -> String {
///     format!("hello {}", login.user)
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::post(login);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Form<T>(pub T);

impl<T, S> FromRequest<S> for Form<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    /// Reads the request; keeps nothing of it.
    const KEEPS_REQUEST: bool = false;

    async fn from_request(req: Request, _: &S) -> Result<Self, Rejection> {
        let limits = UrlencodedLimits::current(req.extensions());
        if req.method() == Method::GET || req.method() == Method::HEAD {
            return super::Query::parse(req.uri().query().unwrap_or_default(), limits)
                .map(|q| Form(q.0));
        }
        if !has_content_type(&req, "application/x-www-form-urlencoded", None) {
            return Err(Rejection::unsupported_media_type(
                "expected a form: send `Content-Type: application/x-www-form-urlencoded`",
            ));
        }
        let bytes = read_body(req.into_body()).await?;
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            Rejection::invalid(StatusCode::BAD_REQUEST, "the form body is not UTF-8")
        })?;
        from_urlencoded(text, limits)
            .map(Form)
            .map_err(|e| reject("form field", e))
    }

    /// An `application/x-www-form-urlencoded` body of `T`'s fields
    /// (learnt from its `Deserialize` impl), and the errors it answers.
    fn describe(op: &mut tern_core::doc::Operation) {
        use tern_core::doc::Format;
        op.body_of::<T>(&["application/x-www-form-urlencoded"], Format::Urlencoded);
        op.problem(
            "400",
            "A form field is missing or does not parse (`field` names it), or the body is not \
             UTF-8.",
        );
        op.problem("413", "The body is larger than the body limit.");
        op.problem(
            "415",
            "The body is not `application/x-www-form-urlencoded`.",
        );
    }
}

impl<T, S> OptionalFromRequest<S> for Form<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, Rejection> {
        let req = if req.method() == Method::GET || req.method() == Method::HEAD {
            // The form is the query string, read as `Option<Query<T>>` does.
            if req.uri().query().is_none_or(str::is_empty) {
                return Ok(None);
            }
            req
        } else {
            match unless_absent(req).await? {
                Some(req) => req,
                None => return Ok(None),
            }
        };
        <Self as FromRequest<S>>::from_request(req, state)
            .await
            .map(Some)
    }
}

impl<T: Serialize> IntoResponse for Form<T> {
    fn into_response(self) -> Response {
        match serde_urlencoded_lite(&self.0) {
            Ok(body) => {
                let mut res = Response::new(Body::from(body));
                res.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/x-www-form-urlencoded"),
                );
                res
            }
            Err(e) => tern_core::Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail(format!("the response could not be encoded as a form: {e}"))
                .into_response(),
        }
    }
}

/// Flat `key=value&...` from a struct of scalars, via JSON values.
fn serde_urlencoded_lite<T: Serialize>(value: &T) -> Result<String, String> {
    let json = serde_json::to_value(value).map_err(|e| e.to_string())?;
    let serde_json::Value::Object(map) = json else {
        return Err("a form must be a struct or map".into());
    };
    let mut out = String::new();
    for (key, value) in map {
        let items = match value {
            serde_json::Value::Array(items) => items,
            other => vec![other],
        };
        for item in items {
            let text = match item {
                serde_json::Value::String(s) => s,
                serde_json::Value::Null => continue,
                serde_json::Value::Object(_) | serde_json::Value::Array(_) => {
                    return Err(format!("`{key}` is nested; forms hold flat values"))
                }
                other => other.to_string(),
            };
            if !out.is_empty() {
                out.push('&');
            }
            encode_into(&key, &mut out);
            out.push('=');
            encode_into(&text, &mut out);
        }
    }
    Ok(out)
}

pub(crate) fn encode_into(s: &str, out: &mut String) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                out.push('%');
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 0xf) as usize] as char);
            }
        }
    }
}
