//! The body type shared by requests and responses.

use std::{
    fmt,
    pin::Pin,
    sync::Arc,
    task::{ready, Context, Poll},
};

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;

use crate::{BodyError, BoxError};

#[doc(hidden)]
pub mod conn;

type BoxBody = http_body_util::combinators::UnsyncBoxBody<Bytes, BodyError>;

/// The body of a Tern request or response.
///
/// Fixed bodies (`Body::empty()`, `Body::from(bytes)`) are stored inline, so a
/// response built from a string or a `Vec<u8>` is neither boxed nor chunked:
/// its exact length is known and sent as `Content-Length`. Bodies read from a
/// connection keep the connection's limit on how many bytes may be read, so
/// any consumer (an extractor, a stream) gets the same 413 when a client
/// sends more than allowed.
///
/// ```
/// use tern_core::body::Body;
/// use http_body::Body as _;
///
/// let body = Body::from("hello");
/// assert_eq!(body.size_hint().exact(), Some(5));
/// ```
pub struct Body {
    kind: Kind,
}

enum Kind {
    Empty,
    Full(Option<Bytes>),
    Incoming {
        body: hyper::body::Incoming,
        remaining: u64,
        /// The limit it started with, for the error past it.
        limit: u64,
        on_unread: Option<OnUnread>,
    },
    /// Read by Tern's own HTTP/1.1 connection ([`Body::from_conn`]).
    Conn(conn::ConnBody),
    Boxed(BoxBody),
}

/// What becomes of the unread rest of a request body: called, when a body
/// made by [`Body::from_incoming_with`] is dropped before its end, with
/// that rest and how many more bytes its limit allows.
///
/// A server uses it to keep reading (and so checking) an HTTP/2 request
/// that the handler answered without reading it all; see the `tern`
/// crate's `docs/hardening.md`.
pub type OnUnread = Arc<dyn Fn(hyper::body::Incoming, u64) + Send + Sync>;

impl Body {
    /// An empty body; `Content-Length: 0` on responses.
    pub const fn empty() -> Self {
        Body { kind: Kind::Empty }
    }

    /// Wraps any `http_body::Body` whose data is `Bytes`.
    ///
    /// A `Body` passed in is returned as is, not boxed again.
    pub fn new<B>(body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        try_downcast::<Body, B>(body).unwrap_or_else(|body| Body {
            kind: Kind::Boxed(body.map_err(BodyError::new).boxed_unsync()),
        })
    }

    /// A body read from a hyper connection, of which at most `limit` bytes
    /// may be read; past that, reading fails with an error for which
    /// [`BodyError::is_length_limit`] is true.
    pub fn from_incoming(body: hyper::body::Incoming, limit: u64) -> Self {
        Body {
            kind: Kind::Incoming {
                body,
                remaining: limit,
                limit,
                on_unread: None,
            },
        }
    }

    /// Like [`Body::from_incoming`], and if the body is dropped before its
    /// end, `on_unread` gets the rest of it and what is left of `limit`.
    pub fn from_incoming_with(
        body: hyper::body::Incoming,
        limit: u64,
        on_unread: OnUnread,
    ) -> Self {
        Body {
            kind: Kind::Incoming {
                body,
                remaining: limit,
                limit,
                on_unread: Some(on_unread),
            },
        }
    }

    /// A streaming body from a stream of byte chunks, sent chunked (its
    /// length is not known in advance).
    pub fn from_stream<S, T, E>(stream: S) -> Self
    where
        S: futures_util::Stream<Item = Result<T, E>> + Send + 'static,
        T: Into<Bytes> + 'static,
        E: Into<BoxError> + 'static,
    {
        use futures_util::TryStreamExt;
        let frames = stream
            .map_ok(|chunk| Frame::data(chunk.into()))
            .map_err(BodyError::new);
        Body {
            kind: Kind::Boxed(http_body_util::StreamBody::new(frames).boxed_unsync()),
        }
    }

    /// The bytes of a body that is whole in memory ([`Body::empty`],
    /// `Body::from(bytes)`), taken without polling; any other body (a
    /// stream, a request body still on its connection) is given back
    /// unchanged.
    ///
    /// For middleware that works on whole answers (a cache of compressed
    /// pages, say) and leaves streams alone. No copy: the `Bytes` the body
    /// was made from is returned.
    ///
    /// ```
    /// use tern_core::body::Body;
    ///
    /// let body = Body::from("hello");
    /// assert_eq!(body.try_into_bytes().unwrap(), "hello");
    ///
    /// let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>("hello")]);
    /// assert!(Body::from_stream(chunks).try_into_bytes().is_err());
    /// ```
    pub fn try_into_bytes(mut self) -> Result<Bytes, Body> {
        match &mut self.kind {
            Kind::Empty => Ok(Bytes::new()),
            Kind::Full(bytes) => Ok(bytes.take().unwrap_or_default()),
            _ => Err(self),
        }
    }

    /// Reads the whole body into one buffer.
    ///
    /// Fails with the body's error, e.g. when the client sent more than the
    /// configured limit ([`BodyError::is_length_limit`]).
    pub fn collect_bytes(
        self,
    ) -> impl std::future::Future<Output = Result<Bytes, BodyError>> + Send {
        CollectBytes {
            body: self,
            first: None,
            more: None,
        }
    }
}

/// [`Body::collect_bytes`]'s future: the body and what it read so far, a
/// small future for an extractor's to hold (`http_body_util`'s `Collect`
/// keeps room for trailers and a list of chunks). Trailers are dropped,
/// as `Collected::to_bytes` drops them.
struct CollectBytes {
    body: Body,
    /// The first chunk, given back as it is if no other follows.
    first: Option<Bytes>,
    /// Every chunk once a second one came.
    more: Option<bytes::BytesMut>,
}

impl std::future::Future for CollectBytes {
    type Output = Result<Bytes, BodyError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            let frame = ready!(http_body::Body::poll_frame(Pin::new(&mut this.body), cx));
            let data = match frame {
                None => {
                    return Poll::Ready(Ok(match this.more.take() {
                        Some(all) => all.freeze(),
                        None => this.first.take().unwrap_or_default(),
                    }))
                }
                Some(Err(err)) => return Poll::Ready(Err(err)),
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => data,
                    Err(_trailers) => continue,
                },
            };
            if data.is_empty() {
                continue;
            }
            match (&mut this.more, &this.first) {
                (Some(all), _) => all.extend_from_slice(&data),
                (None, None) => this.first = Some(data),
                (None, Some(first)) => {
                    let mut all = bytes::BytesMut::with_capacity(first.len() + data.len());
                    all.extend_from_slice(first);
                    all.extend_from_slice(&data);
                    this.first = None;
                    this.more = Some(all);
                }
            }
        }
    }
}

impl Drop for Body {
    #[inline]
    fn drop(&mut self) {
        let Kind::Incoming {
            body,
            on_unread: Some(_),
            ..
        } = &self.kind
        else {
            return;
        };
        if http_body::Body::is_end_stream(body) {
            return;
        }
        if let Kind::Incoming {
            body,
            remaining,
            on_unread: Some(on_unread),
            ..
        } = std::mem::replace(&mut self.kind, Kind::Empty)
        {
            on_unread(body, remaining);
        }
    }
}

fn try_downcast<T: 'static, K: 'static>(k: K) -> Result<T, K> {
    let mut k = Some(k);
    if let Some(k) = <dyn std::any::Any>::downcast_mut::<Option<T>>(&mut k) {
        Ok(k.take().expect("the option was just filled"))
    } else {
        Err(k.expect("the option was just filled"))
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::empty()
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::Empty => "empty",
            Kind::Full(_) => "full",
            Kind::Incoming { .. } | Kind::Conn(_) => "incoming",
            Kind::Boxed(_) => "stream",
        };
        f.debug_tuple("Body").field(&kind).finish()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        if bytes.is_empty() {
            Body::empty()
        } else {
            Body {
                kind: Kind::Full(Some(bytes)),
            }
        }
    }
}

macro_rules! body_from {
    ($($ty:ty),*) => {$(
        impl From<$ty> for Body {
            fn from(value: $ty) -> Self {
                Body::from(Bytes::from(value))
            }
        }
    )*};
}
body_from!(&'static [u8], &'static str, Vec<u8>, String);

impl From<()> for Body {
    fn from(_: ()) -> Self {
        Body::empty()
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BodyError;

    #[inline]
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match &mut self.get_mut().kind {
            Kind::Empty => Poll::Ready(None),
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Incoming {
                body,
                remaining,
                limit,
                ..
            } => {
                let frame = ready!(Pin::new(body).poll_frame(cx));
                Poll::Ready(match frame {
                    None => None,
                    Some(Err(err)) => Some(Err(BodyError::new(err))),
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            let len = data.len() as u64;
                            if len > *remaining {
                                *remaining = 0;
                                return Poll::Ready(Some(Err(BodyError::length_limit(*limit))));
                            }
                            *remaining -= len;
                        }
                        Some(Ok(frame))
                    }
                })
            }
            Kind::Conn(body) => body.poll_frame(cx),
            Kind::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    #[inline]
    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Empty => true,
            Kind::Full(bytes) => bytes.is_none(),
            Kind::Incoming { body, .. } => body.is_end_stream(),
            Kind::Conn(body) => body.is_end_stream(),
            Kind::Boxed(body) => body.is_end_stream(),
        }
    }

    #[inline]
    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Empty => SizeHint::with_exact(0),
            Kind::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Incoming { body, .. } => body.size_hint(),
            Kind::Conn(body) => body.size_hint(),
            Kind::Boxed(body) => body.size_hint(),
        }
    }
}

/// The one wording of a `413` for a body over `TERN_MAX_BODY_BYTES`,
/// whether `Content-Length` announced it or reading found it.
pub fn too_large_detail(limit: u64) -> String {
    format!("the request body is larger than the limit of {limit} bytes (TERN_MAX_BODY_BYTES)")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use http_body::Body as _;

    #[test]
    fn fixed_bodies_have_exact_length() {
        assert_eq!(Body::from("abc").size_hint().exact(), Some(3));
        assert_eq!(Body::from(String::new()).size_hint().exact(), Some(0));
        assert_eq!(Body::empty().size_hint().exact(), Some(0));
    }

    /// `collect_bytes` gives what `http_body_util`'s `collect` gives: one
    /// chunk as it is (no copy), several joined in order, empty chunks and
    /// trailers skipped, the first error as it came.
    #[test]
    fn collect_bytes_agrees_with_http_body_util() {
        use futures_util::FutureExt;
        let one = Bytes::from_static(b"whole");
        let got = Body::from(one.clone())
            .collect_bytes()
            .now_or_never()
            .unwrap()
            .unwrap();
        assert_eq!(got.as_ptr(), one.as_ptr());
        assert_eq!(
            Body::empty()
                .collect_bytes()
                .now_or_never()
                .unwrap()
                .unwrap(),
            ""
        );
        let frames = |n: usize| {
            (0..n).map(|i| match i % 4 {
                0 => Ok::<_, BodyError>(Frame::data(Bytes::from(format!("[{i}]")))),
                1 => Ok(Frame::data(Bytes::new())),
                2 => Ok(Frame::data(Bytes::from(vec![b'x'; i]))),
                _ => Ok(Frame::trailers(http::HeaderMap::new())),
            })
        };
        for n in [0, 1, 2, 3, 5, 9, 40] {
            let body = || {
                Body::new(http_body_util::StreamBody::new(futures_util::stream::iter(
                    frames(n),
                )))
            };
            let ours = body().collect_bytes().now_or_never().unwrap().unwrap();
            let theirs = BodyExt::collect(body())
                .now_or_never()
                .unwrap()
                .unwrap()
                .to_bytes();
            assert_eq!(ours, theirs, "{n} frames");
        }
        let failing = futures_util::stream::iter([
            Ok(Frame::data(Bytes::from_static(b"a"))),
            Err(BodyError::new(std::io::Error::other("cut"))),
            Ok(Frame::data(Bytes::from_static(b"b"))),
        ]);
        let err = Body::new(http_body_util::StreamBody::new(failing))
            .collect_bytes()
            .now_or_never()
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains("cut"), "{err}");
    }

    #[test]
    fn only_bodies_in_memory_give_their_bytes_without_polling() {
        let bytes = Bytes::from_static(b"whole");
        let taken = Body::from(bytes.clone()).try_into_bytes().unwrap();
        // The same buffer, not a copy.
        assert_eq!(taken.as_ptr(), bytes.as_ptr());
        assert_eq!(Body::empty().try_into_bytes().unwrap(), Bytes::new());
        let stream = futures_util::stream::iter([Ok::<_, std::io::Error>("a"), Ok("b")]);
        let back = Body::from_stream(stream).try_into_bytes().unwrap_err();
        assert!(matches!(back.kind, Kind::Boxed(_)));
        // A body wrapped by `Body::new` is still the inline one.
        let wrapped = Body::new(Body::from("abc"));
        assert_eq!(wrapped.try_into_bytes().unwrap(), "abc");
    }

    #[test]
    fn new_does_not_rebox_a_body() {
        let body = Body::new(Body::from("abc"));
        assert!(matches!(body.kind, Kind::Full(_)));
    }
}
