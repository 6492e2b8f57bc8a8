//! One connection served by hyper: HTTP/1.1 or HTTP/2 as its first bytes
//! say ([`PrefaceCheck`]), with hyper's own `http1` or `http2` connection.
//!
//! hyper-util's `auto` builder makes the same choice, but hands the bytes
//! it read to choose to hyper's HTTP/1 parser as a read of their own:
//! hyper cannot parse a head from 24 bytes, reserves its whole read size
//! again with them still in its buffer, and every connection's read buffer
//! doubles to 16 KiB (`PERFORMANCE.md`, "Memory per idle connection").
//! Here the held bytes reach hyper together with the socket's next read
//! (see [`PrefaceCheck`]), and an HTTP/2 connection, the rarer and much
//! larger one, is boxed so that HTTP/1 connections do not carry its size.

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{ready, Context, Poll},
};

use hyper::server::conn::{http1, http2};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::metrics::http::Protocol as MetricsProtocol;

use super::{
    h2::StreamExec,
    preface::{PrefaceCheck, Protocol},
    service::ConnService,
};

/// hyper's two builders, configured once per server.
pub(super) struct Builders {
    pub(super) http1: http1::Builder,
    pub(super) http2: http2::Builder<StreamExec>,
}

type Io<T> = TokioIo<PrefaceCheck<T>>;

/// A connection, from its first bytes to its close; completes when the
/// connection ends (hyper's errors are the client's, logged at `debug`).
// The HTTP/1 connection is the one that lives long: it stays inline in
// the connection's task (boxing it would cost an allocation per
// connection to save the short choosing state's bytes).
#[allow(clippy::large_enum_variant)]
pub(super) enum Connection<T>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    /// Reading the first bytes.
    Choosing {
        io: Option<PrefaceCheck<T>>,
        service: Option<ConnService>,
        builders: Arc<Builders>,
    },
    Http1(http1::UpgradeableConnection<Io<T>, ConnService>),
    Http2(Pin<Box<http2::Connection<Io<T>, ConnService, StreamExec>>>),
    /// Ended; the protocol it spoke, if it got that far (for the metrics).
    Closed(Option<MetricsProtocol>),
}

impl<T> Connection<T>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    pub(super) fn new(io: T, service: ConnService, builders: Arc<Builders>) -> Self {
        Connection::Choosing {
            io: Some(PrefaceCheck::new(io)),
            service: Some(service),
            builders,
        }
    }

    /// A connection whose protocol `io` has chosen already (Tern's HTTP/1
    /// engine chose HTTP/2 and hands it over).
    pub(super) fn chosen(
        io: PrefaceCheck<T>,
        service: ConnService,
        builders: Arc<Builders>,
    ) -> Self {
        Connection::Choosing {
            io: Some(io),
            service: Some(service),
            builders,
        }
    }

    /// Finishes the request in flight (HTTP/1) or the open streams
    /// (HTTP/2, after a GOAWAY), then closes; a connection that has not
    /// sent its first bytes yet closes now.
    pub(super) fn graceful_shutdown(mut self: Pin<&mut Self>) {
        match &mut *self {
            Connection::Choosing { .. } => *self = Connection::Closed(None),
            Connection::Http1(conn) => Pin::new(conn).graceful_shutdown(),
            Connection::Http2(conn) => conn.as_mut().graceful_shutdown(),
            Connection::Closed(_) => {}
        }
    }

    /// The protocol the connection speaks or spoke, once chosen.
    pub(super) fn protocol(&self) -> Option<MetricsProtocol> {
        match self {
            Connection::Choosing { .. } => None,
            Connection::Http1(_) => Some(MetricsProtocol::Http1),
            Connection::Http2(_) => Some(MetricsProtocol::Http2),
            Connection::Closed(p) => *p,
        }
    }
}

impl<T> Future for Connection<T>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            let ended = match this {
                Connection::Choosing {
                    io,
                    service,
                    builders,
                } => {
                    let Some(check) = io.as_mut() else {
                        *this = Connection::Closed(None);
                        continue;
                    };
                    let protocol = match ready!(check.poll_choose(cx)) {
                        Ok(protocol) => protocol,
                        Err(e) => {
                            tracing::debug!(error = %e, "connection ended before its protocol was known");
                            *this = Connection::Closed(None);
                            continue;
                        }
                    };
                    let (Some(io), Some(service)) = (io.take(), service.take()) else {
                        *this = Connection::Closed(None);
                        continue;
                    };
                    if let Some(m) = service.app.http_metrics() {
                        m.connection_opened(match protocol {
                            Protocol::Http1 => MetricsProtocol::Http1,
                            Protocol::Http2 => MetricsProtocol::Http2,
                        });
                    }
                    let io = TokioIo::new(io);
                    *this = match protocol {
                        Protocol::Http1 => Connection::Http1(
                            builders.http1.serve_connection(io, service).with_upgrades(),
                        ),
                        Protocol::Http2 => Connection::Http2(Box::pin(
                            builders.http2.serve_connection(io, service),
                        )),
                    };
                    continue;
                }
                Connection::Http1(conn) => ready!(Pin::new(conn).poll(cx)),
                Connection::Http2(conn) => ready!(conn.as_mut().poll(cx)),
                Connection::Closed(_) => return Poll::Ready(()),
            };
            if let Err(e) = ended {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            *this = Connection::Closed(this.protocol());
        }
    }
}
