//! The cache's place in the layer: a service between tower-http's
//! `CompressionLayer` and the app.
//!
//! It chooses the request's coding as tower-http will, and for an answer
//! the cache can keep (a body whole in memory, [`MIN_SIZE`] to
//! [`MAX_CACHED_BODY`] bytes, of a compressible type, not encoded, not a
//! range) it sets the compressed body and its headers itself.
//! tower-http then sees a `Content-Encoding` and leaves the answer
//! alone, as it leaves a precompressed file. Every other answer reaches
//! tower-http unchanged, which compresses it as it streams.
//!
//! It also marks every answer that left the app without a
//! `Content-Encoding` ([`Identity`]): the outermost step,
//! [`weaken_etag`], makes a strong `ETag` weak on exactly those that
//! came out encoded, by the cache or by tower-http.

use std::{
    future::Future,
    pin::Pin,
    task::{ready, Context, Poll},
};

use http::{header, HeaderValue};
use http_body::Body as _;
use tern::body::Body;
use tower::{Layer, Service};
use tower_http::compression::CompressionBody;

use super::{
    by_type,
    cache::{CompressionCache, MAX_CACHED_BODY},
    coding::{choose, Coding},
    MIN_SIZE,
};

/// Puts [`CacheService`] around a service.
#[derive(Clone)]
pub(crate) struct CacheLayer {
    cache: CompressionCache,
}

impl CacheLayer {
    pub(crate) fn new(cache: CompressionCache) -> CacheLayer {
        CacheLayer { cache }
    }
}

impl<S> Layer<S> for CacheLayer {
    type Service = CacheService<S>;

    fn layer(&self, inner: S) -> CacheService<S> {
        CacheService {
            inner,
            cache: self.cache.clone(),
        }
    }
}

/// See the [module](self).
#[derive(Clone)]
pub(crate) struct CacheService<S> {
    inner: S,
    cache: CompressionCache,
}

impl<S> Service<tern::Request> for CacheService<S>
where
    S: Service<tern::Request, Response = tern::Response>,
    S::Future: Unpin,
{
    type Response = tern::Response;
    type Error = S::Error;
    type Future = CacheFuture<S::Future>;

    #[inline]
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: tern::Request) -> Self::Future {
        // Only a request that accepts a coding, with a cache that keeps
        // something, takes the cache's path (and a handle to it).
        let cache = if self.cache.cache().is_on() {
            match choose(req.headers()) {
                Coding::Identity => None,
                coding => Some((self.cache.clone(), coding)),
            }
        } else {
            None
        };
        CacheFuture {
            inner: self.inner.call(req),
            cache,
        }
    }
}

/// The future of [`CacheService`].
pub(crate) struct CacheFuture<F> {
    inner: F,
    cache: Option<(CompressionCache, Coding)>,
}

impl<F, E> Future for CacheFuture<F>
where
    F: Future<Output = Result<tern::Response, E>> + Unpin,
{
    type Output = Result<tern::Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut res = ready!(Pin::new(&mut this.inner).poll(cx))?;
        if res.headers().contains_key(header::CONTENT_ENCODING) {
            return Poll::Ready(Ok(res));
        }
        res.extensions_mut().insert(Identity);
        Poll::Ready(Ok(match this.cache.take() {
            Some((cache, coding)) => answer(&cache, coding, res),
            None => res,
        }))
    }
}

/// `res` with its body from the cache when the cache can keep it; else
/// as it is, for tower-http.
fn answer(cache: &CompressionCache, coding: Coding, res: tern::Response) -> tern::Response {
    // tower-http's own test (`ResponseFuture::poll` and its predicate):
    // what fails it is not compressed at all, and not counted.
    let compressed_by_layer = !res.headers().contains_key(header::CONTENT_RANGE)
        && by_type(res.status(), res.version(), res.headers(), res.extensions())
        && res
            .body()
            .size_hint()
            .exact()
            .or_else(|| {
                res.headers()
                    .get(header::CONTENT_LENGTH)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse().ok())
            })
            .is_none_or(|len| len >= u64::from(MIN_SIZE));
    if !compressed_by_layer {
        return res;
    }
    let cache = cache.cache();
    let in_bounds = res
        .body()
        .size_hint()
        .exact()
        .is_some_and(|len| len >= u64::from(MIN_SIZE) && len <= MAX_CACHED_BODY as u64);
    if !in_bounds {
        cache.bypassed();
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let identity = match body.try_into_bytes() {
        Ok(bytes) => bytes,
        Err(body) => {
            cache.bypassed();
            return tern::Response::from_parts(parts, body);
        }
    };
    let encoded = match cache.compressed(coding, &identity) {
        Ok(encoded) => encoded,
        // The encoders write to memory and do not fail; if one did, the
        // layer gets the body and tries in its turn.
        Err(err) => {
            tracing::warn!(error = %err, "compressing an answer for the cache failed");
            return tern::Response::from_parts(parts, Body::from(identity));
        }
    };
    let headers = &mut parts.headers;
    // As tower-http: one `Vary: Accept-Encoding`, added if no `Vary`
    // names it already.
    let varies = headers.get_all(header::VARY).iter().any(|v| {
        v.as_bytes()
            .windows(header::ACCEPT_ENCODING.as_str().len())
            .any(|w| w.eq_ignore_ascii_case(header::ACCEPT_ENCODING.as_str().as_bytes()))
    });
    if !varies {
        headers.append(
            header::VARY,
            HeaderValue::from_static(header::ACCEPT_ENCODING.as_str()),
        );
    }
    headers.remove(header::ACCEPT_RANGES);
    headers.insert(header::CONTENT_ENCODING, coding.header_value());
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(encoded.len()));
    tern::Response::from_parts(parts, Body::from(encoded))
}

/// Set on a response that left the app without a `Content-Encoding`.
#[derive(Clone, Copy)]
pub(crate) struct Identity;

/// A strong `ETag` on a response the layer or the cache compressed
/// becomes weak.
pub(crate) fn weaken_etag(
    mut res: http::Response<CompressionBody<Body>>,
) -> http::Response<CompressionBody<Body>> {
    let compressed = res.extensions_mut().remove::<Identity>().is_some()
        && res.headers().contains_key(header::CONTENT_ENCODING);
    if compressed {
        if let Some(tag) = res.headers().get(header::ETAG) {
            if tag.as_bytes().starts_with(b"\"") {
                let mut weak = b"W/".to_vec();
                weak.extend_from_slice(tag.as_bytes());
                if let Ok(weak) = HeaderValue::from_bytes(&weak) {
                    res.headers_mut().insert(header::ETAG, weak);
                }
            }
        }
    }
    res
}
