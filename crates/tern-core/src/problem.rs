//! `application/problem+json` (RFC 9457): how every error leaves Tern.

use std::borrow::Cow;

use bytes::Bytes;
use http::{header, HeaderValue, StatusCode};
use serde::Serialize;

use crate::{body::Body, response::IntoResponse, Response};

/// The media type of a problem document.
pub const PROBLEM_JSON: HeaderValue = HeaderValue::from_static("application/problem+json");

/// An RFC 9457 problem: a status, a short title and a `detail` a person can
/// act on.
///
/// Every rejection and framework error in Tern is a `Problem`. Returned from
/// a handler it renders as `application/problem+json`; the rendered response
/// also carries the `Problem` in its extensions so that an app can render
/// problems its own way.
///
/// ```
/// use tern_core::{Problem, response::IntoResponse};
/// use http::StatusCode;
///
/// let res = Problem::new(StatusCode::NOT_FOUND)
///     .with_detail("no user has the id 42")
///     .into_response();
/// assert_eq!(res.status(), 404);
/// assert_eq!(res.headers()["content-type"], "application/problem+json");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    type_uri: Option<Cow<'static, str>>,
    title: Cow<'static, str>,
    #[serde(serialize_with = "serialize_status")]
    status: StatusCode,
    detail: Cow<'static, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instance: Option<Cow<'static, str>>,
    #[serde(flatten, skip_serializing_if = "serde_json::Map::is_empty")]
    extensions: serde_json::Map<String, serde_json::Value>,
}

fn serialize_status<S: serde::Serializer>(status: &StatusCode, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u16(status.as_u16())
}

impl Problem {
    /// A problem with the status's canonical reason as its title and detail.
    pub fn new(status: StatusCode) -> Self {
        let title = status.canonical_reason().unwrap_or("Error");
        Problem {
            type_uri: None,
            title: Cow::Borrowed(title),
            status,
            detail: Cow::Borrowed(title),
            instance: None,
            extensions: serde_json::Map::new(),
        }
    }

    /// Sets the `detail`: what went wrong with this request and how to fix it.
    pub fn with_detail(mut self, detail: impl Into<Cow<'static, str>>) -> Self {
        self.detail = detail.into();
        self
    }

    /// Sets the `title`: a short summary that is the same for every
    /// occurrence of this kind of problem.
    pub fn with_title(mut self, title: impl Into<Cow<'static, str>>) -> Self {
        self.title = title.into();
        self
    }

    /// Sets the `type` URI that identifies this kind of problem.
    pub fn with_type(mut self, uri: impl Into<Cow<'static, str>>) -> Self {
        self.type_uri = Some(uri.into());
        self
    }

    /// Sets the `instance` URI that identifies this occurrence.
    pub fn with_instance(mut self, uri: impl Into<Cow<'static, str>>) -> Self {
        self.instance = Some(uri.into());
        self
    }

    /// Adds an extension member, e.g. the name of the field that was wrong.
    pub fn with_extension(mut self, key: impl Into<String>, value: impl Serialize) -> Self {
        let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        self.extensions.insert(key.into(), value);
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The short title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The detail a person can act on.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// The `type` URI, if set.
    pub fn type_uri(&self) -> Option<&str> {
        self.type_uri.as_deref()
    }

    /// An extension member, if set.
    pub fn extension(&self, key: &str) -> Option<&serde_json::Value> {
        self.extensions.get(key)
    }

    /// The problem document as JSON bytes.
    pub fn to_json(&self) -> Bytes {
        // Serializing a struct of strings and a JSON map cannot fail.
        Bytes::from(serde_json::to_vec(self).unwrap_or_default())
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.title,
            self.detail
        )
    }
}

impl std::error::Error for Problem {}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let mut res = Response::new(Body::from(self.to_json()));
        *res.status_mut() = self.status;
        res.headers_mut().insert(header::CONTENT_TYPE, PROBLEM_JSON);
        res.extensions_mut().insert(self);
        res
    }
}
