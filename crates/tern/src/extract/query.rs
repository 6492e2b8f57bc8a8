use http::{request::Parts, StatusCode};
use serde::de::DeserializeOwned;
use tern_core::extract::{FromRequestParts, OptionalFromRequestParts};

use super::{
    de::{from_urlencoded, UrlencodedLimits},
    Rejection,
};

/// A typed query string.
///
/// Lists as `tag=a&tag=b`, `tag[]=a&tag[]=b` or `tag[0]=a&tag[1]=b`;
/// nested maps as `user[name]=x`; values percent-decoded (`+` is a space);
/// an empty value reads as `None` for an `Option`. A value that does not
/// parse is a `400` whose detail and `field` member name the parameter.
///
/// `Option<Query<T>>` is `None` when the request has no query string (or
/// an empty one, `/search?`), and the same `400` when it has one that
/// does not parse as `T`.
///
/// ```
/// use tern::extract::Query;
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Search { q: String, #[serde(default)] tag: Vec<String>, page: Option<u32> }
///
/// async fn search(Query(s): Query<Search>) -> String {
///     format!("{} {:?} {:?}", s.q, s.tag, s.page)
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::get(search);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned> Query<T> {
    /// Parses a query string (without the `?`), within the default
    /// limits (`TERN_MAX_FORM_FIELDS`, `TERN_MAX_FORM_DEPTH`; the extractor
    /// applies the app's configured ones).
    pub fn try_from_str(query: &str) -> Result<Self, Rejection> {
        Self::parse(
            query,
            UrlencodedLimits::of(&crate::config::Limits::default()),
        )
    }

    pub(crate) fn parse(query: &str, limits: UrlencodedLimits) -> Result<Self, Rejection> {
        from_urlencoded(query, limits)
            .map(Query)
            .map_err(|e| reject("query parameter", e))
    }
}

pub(crate) fn reject(what: &str, e: super::de::DeError) -> Rejection {
    if e.limit {
        return Rejection::invalid(
            StatusCode::BAD_REQUEST,
            format!("too many {what}s: {}", e.message),
        );
    }
    let detail = if e.path.is_empty() {
        format!("invalid {what}s: {}", e.message)
    } else {
        format!("{what} `{}`: {}", e.path, e.message)
    };
    Rejection::invalid(StatusCode::BAD_REQUEST, detail).with_field(&e.path)
}

impl<T, S> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    /// The query string is read at once.
    const IMMEDIATE: bool = true;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        Query::parse(
            parts.uri.query().unwrap_or_default(),
            UrlencodedLimits::current(&parts.extensions),
        )
    }

    /// One query parameter per field of `T` (learnt from its
    /// `Deserialize` impl), and the `400` a parameter that is missing or
    /// does not parse gets.
    fn describe(op: &mut tern_core::doc::Operation) {
        op.query_of::<T>();
        op.problem(
            "400",
            "A query parameter is missing or does not parse (`field` names it), or the query \
             string is malformed or past the limits.",
        );
    }
}

/// `None` without a query string; one that does not parse is the `400`
/// of `Query<T>`, not `None`.
impl<T, S> OptionalFromRequestParts<S> for Query<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Option<Self>, Rejection> {
        // `/search?` is what a form with no filled field submits: no
        // parameters, like `/search`.
        if parts.uri.query().is_none_or(str::is_empty) {
            return Ok(None);
        }
        <Self as FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(Some)
    }
}

impl<T> std::ops::Deref for Query<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}
