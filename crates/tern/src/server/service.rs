//! The per-connection hyper service around the shared app.

use std::{
    convert::Infallible,
    future::Future,
    net::SocketAddr,
    pin::Pin,
    sync::{atomic::Ordering, Arc},
    task::{Context, Poll},
};

use hyper::body::Incoming;
use tern_core::body::{Body, OnUnread};

use super::{h2::ConnBody, watchdog::Activity};
use crate::{app::AppService, drain::DrainState};

/// The per-connection service: a handle on the shared app and the peer's
/// address; nothing of the app is copied per connection.
#[derive(Clone)]
pub(super) struct ConnService {
    pub(super) app: AppService,
    pub(super) peer: SocketAddr,
    pub(super) activity: Arc<Activity>,
    pub(super) max_body: u64,
    pub(super) drain: Arc<DrainState>,
    /// Reads the rest of an HTTP/2 request body its handler dropped
    /// (`h2::unread_hook`).
    pub(super) unread: OnUnread,
}

impl hyper::service::Service<http::Request<Incoming>> for ConnService {
    type Response = http::Response<ConnBody>;
    type Error = Infallible;
    type Future = ConnFuture;

    #[inline]
    fn call(&self, req: http::Request<Incoming>) -> ConnFuture {
        let number = self.activity.on_request();
        let max_body = self.max_body;
        let http1 = req.version() <= http::Version::HTTP_11;
        ConnFuture {
            http1,
            number,
            fut: self.app.call_with_drain(
                req.map(|b| {
                    if http1 || http_body::Body::is_end_stream(&b) {
                        Body::from_incoming(b, max_body)
                    } else {
                        Body::from_incoming_with(b, max_body, Arc::clone(&self.unread))
                    }
                }),
                Some(self.peer),
                Some(Arc::clone(&self.drain)),
            ),
            activity: Arc::clone(&self.activity),
        }
    }
}

/// One request on a connection: the app's future, then the connection's
/// activity note (no allocation of its own).
pub(super) struct ConnFuture {
    /// An HTTP/1 answer given while the server drains says
    /// `Connection: close` (HTTP/2 uses GOAWAY instead).
    http1: bool,
    /// This request's number on the connection (see `Activity::on_answer`).
    number: u64,
    fut: crate::app::ResponseFuture,
    pub(super) activity: Arc<Activity>,
}

impl Future for ConnFuture {
    type Output = Result<http::Response<ConnBody>, Infallible>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match Pin::new(&mut this.fut).poll(cx) {
            Poll::Ready(mut res) => {
                this.activity.on_response();
                this.activity.on_answer(this.number, res.status());
                if this.http1 && this.activity.draining.load(Ordering::Relaxed) {
                    // The client learns from this answer that the
                    // connection ends, instead of racing its next request
                    // against the close.
                    res.headers_mut().insert(
                        http::header::CONNECTION,
                        http::HeaderValue::from_static("close"),
                    );
                }
                Poll::Ready(Ok(res.map(|body| ConnBody::new(body, !this.http1))))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}
