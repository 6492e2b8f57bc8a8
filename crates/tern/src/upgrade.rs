//! Upgraded connections: the socket after a `101 Switching Protocols`
//! (WebSockets, custom protocols) or a `CONNECT` tunnel, with the server's
//! limits still applied.
//!
//! An upgraded connection keeps counting toward `TERN_MAX_CONNECTIONS`
//! until its socket closes, and [`Upgraded`] applies two timeouts: no byte
//! from the client for `TERN_KEEP_ALIVE_TIMEOUT` (idle), or bytes waiting
//! to be sent for `TERN_WRITE_TIMEOUT` with none accepted (a client that
//! stopped reading), make reads and writes fail with
//! [`io::ErrorKind::TimedOut`]; dropping it closes the connection.
//!
//! ```
//! use tern::{upgrade, IntoResponse, Request, Response, StatusCode};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//!
//! async fn echo(mut req: Request) -> Response {
//!     let on_upgrade = upgrade::on(&mut req);
//!     tokio::spawn(async move {
//!         let Ok(mut io) = on_upgrade.await else { return };
//!         let mut buf = [0u8; 1024];
//!         while let Ok(n @ 1..) = io.read(&mut buf).await {
//!             if io.write_all(&buf[..n]).await.is_err() {
//!                 break;
//!             }
//!         }
//!     });
//!     let mut res = StatusCode::SWITCHING_PROTOCOLS.into_response();
//!     res.headers_mut().insert("connection", "upgrade".parse().unwrap());
//!     res.headers_mut().insert("upgrade", "echo".parse().unwrap());
//!     res
//! }
//! # let _: tern::routing::MethodRouter = tern::routing::get(echo);
//! ```

use std::{
    fmt,
    future::Future,
    io,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use hyper_util::rt::TokioIo;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    time::{Instant, Sleep},
};

use crate::Request;

/// The upgrade of `req`'s connection, once the response (a `101`, or a
/// `2xx` to `CONNECT`) has been sent. Await it in a task of its own: it
/// completes after the handler has returned its response.
pub fn on(req: &mut Request) -> OnUpgrade {
    let timeouts = crate::context::with(req.extensions(), |c| c.shared.config.timeouts.clone())
        .unwrap_or_default();
    let tern = req
        .extensions_mut()
        .remove::<crate::server::PendingUpgrade>()
        .and_then(|p| p.take());
    let inner = match tern {
        Some(rx) => Source::Tern(rx),
        None => Source::Hyper(hyper::upgrade::on(req)),
    };
    OnUpgrade {
        inner,
        idle: timeouts.keep_alive,
        write: timeouts.write,
    }
}

/// [`on`] for an extractor, which sees the request's head: `None` when the
/// connection cannot be upgraded (HTTP/2, or a request made in process by
/// [`TestClient::send`](crate::test::TestRequest::send); use
/// [`TestClient::connect`](crate::test::TestClient::connect) there).
pub fn on_parts(parts: &mut http::request::Parts) -> Option<OnUpgrade> {
    let tern = parts
        .extensions
        .remove::<crate::server::PendingUpgrade>()
        .and_then(|p| p.take());
    let inner = match tern {
        Some(rx) => Source::Tern(rx),
        None => Source::Hyper(parts.extensions.remove::<hyper::upgrade::OnUpgrade>()?),
    };
    let timeouts = crate::context::with(&parts.extensions, |c| c.shared.config.timeouts.clone())
        .unwrap_or_default();
    Some(OnUpgrade {
        inner,
        idle: timeouts.keep_alive,
        write: timeouts.write,
    })
}

/// A future for an upgraded connection; see [`on`].
pub struct OnUpgrade {
    inner: Source,
    idle: Duration,
    write: Duration,
}

/// Where the upgraded socket comes from: Tern's HTTP/1 connection, or
/// hyper (its HTTP/1 engine, `TERN_HTTP1=hyper`; HTTP/2's extended
/// CONNECT).
enum Source {
    Tern(tokio::sync::oneshot::Receiver<crate::server::Handover>),
    Hyper(hyper::upgrade::OnUpgrade),
}

impl OnUpgrade {
    /// Replaces the idle timeout (default `TERN_KEEP_ALIVE_TIMEOUT`).
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle = idle;
        self
    }

    /// Replaces the write timeout (default `TERN_WRITE_TIMEOUT`).
    pub fn write_timeout(mut self, write: Duration) -> Self {
        self.write = write;
        self
    }
}

impl fmt::Debug for OnUpgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnUpgrade")
            .field("idle", &self.idle)
            .field("write", &self.write)
            .finish()
    }
}

impl Future for OnUpgrade {
    type Output = Result<Upgraded, UpgradeError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (idle, write) = (self.idle, self.write);
        let inner = match &mut self.inner {
            Source::Tern(rx) => {
                return match Pin::new(rx).poll(cx) {
                    Poll::Ready(Ok((socket, read))) => {
                        let io = Io::Server {
                            socket,
                            read: (!read.is_empty()).then_some(read),
                        };
                        Poll::Ready(Ok(Upgraded::new(io, idle, write)))
                    }
                    Poll::Ready(Err(_)) => Poll::Ready(Err(UpgradeError(Why::NotSwitched))),
                    Poll::Pending => Poll::Pending,
                };
            }
            Source::Hyper(inner) => inner,
        };
        match Pin::new(inner).poll(cx) {
            Poll::Ready(Ok(io)) => {
                let io = match crate::server::server_socket(io) {
                    Ok((socket, read)) => Io::Server {
                        socket,
                        read: (!read.is_empty()).then_some(read),
                    },
                    Err(io) => Io::Hyper(TokioIo::new(io)),
                };
                Poll::Ready(Ok(Upgraded::new(io, idle, write)))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(UpgradeError(Why::Hyper(e)))),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The connection did not switch protocols (the response was not a `101`,
/// or the client left first).
#[derive(Debug)]
pub struct UpgradeError(Why);

#[derive(Debug)]
enum Why {
    Hyper(hyper::Error),
    /// Tern's connection answered without switching, or closed first.
    NotSwitched,
}

impl fmt::Display for UpgradeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Why::Hyper(e) => write!(f, "the connection was not upgraded: {e}"),
            Why::NotSwitched => f.write_str(
                "the connection was not upgraded: the answer did not switch protocols, \
                 or the client left first",
            ),
        }
    }
}

impl std::error::Error for UpgradeError {}

/// What an upgraded connection reads and writes.
enum Io {
    /// The server's socket, found under hyper's wrappers (an HTTP/1.1
    /// connection), after the bytes hyper read past the upgrade (dropped
    /// once read: an empty `Bytes` can still hold hyper's whole read
    /// buffer, 8 KiB a held socket).
    Server {
        socket: Box<dyn crate::server::ServerSocket>,
        read: Option<bytes::Bytes>,
    },
    /// An HTTP/2 stream (RFC 8441), an in-process connection.
    Hyper(TokioIo<hyper::upgrade::Upgraded>),
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Server { socket, read } => {
                let Some(early) = read else {
                    return Pin::new(socket).poll_read(cx, buf);
                };
                let n = early.len().min(buf.remaining());
                buf.put_slice(&early.split_to(n));
                if early.is_empty() {
                    *read = None;
                }
                Poll::Ready(Ok(()))
            }
            Io::Hyper(io) => Pin::new(io).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Server { socket, .. } => Pin::new(socket).poll_write(cx, buf),
            Io::Hyper(io) => Pin::new(io).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Server { socket, .. } => Pin::new(socket).poll_write_vectored(cx, bufs),
            Io::Hyper(io) => Pin::new(io).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Io::Server { socket, .. } => socket.is_write_vectored(),
            Io::Hyper(io) => io.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Server { socket, .. } => Pin::new(socket).poll_flush(cx),
            Io::Hyper(io) => Pin::new(io).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Server { socket, .. } => Pin::new(socket).poll_shutdown(cx),
            Io::Hyper(io) => Pin::new(io).poll_shutdown(cx),
        }
    }
}

/// An upgraded connection with idle and write timeouts; see the module
/// docs.
pub struct Upgraded {
    io: Io,
    idle: Duration,
    write: Duration,
    last_read: Instant,
    read_timer: Pin<Box<Sleep>>,
    /// Since when a write has been refused, if one is.
    blocked: Option<Instant>,
    write_timer: Pin<Box<Sleep>>,
}

impl fmt::Debug for Upgraded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upgraded")
            .field("idle", &self.idle)
            .field("write", &self.write)
            .finish()
    }
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_owned())
}

impl Upgraded {
    fn new(io: Io, idle: Duration, write: Duration) -> Self {
        let now = Instant::now();
        Upgraded {
            io,
            idle,
            write,
            last_read: now,
            read_timer: Box::pin(tokio::time::sleep_until(now + idle)),
            blocked: None,
            write_timer: Box::pin(tokio::time::sleep_until(now + write)),
        }
    }

    /// The idle timeout in force.
    pub fn idle_timeout(&self) -> Duration {
        self.idle
    }

    /// The write timeout in force.
    pub fn write_timeout(&self) -> Duration {
        self.write
    }

    /// Caps the kernel's send buffer for this connection (`SO_SNDBUF`;
    /// Linux doubles the figure for its bookkeeping). A client that stops
    /// reading then pins at most that much kernel memory, and a sender's
    /// own queue (a WebSocket's messages) starts to fill soon after,
    /// instead of after the megabytes Linux's autotuning allows
    /// (`net.ipv4.tcp_wmem`). A small buffer also caps the throughput to a
    /// distant client (about the buffer per round trip).
    ///
    /// Does nothing on an upgrade without a socket of its own: an HTTP/2
    /// stream (RFC 8441, where the stream's flow-control window bounds
    /// it), or an in-process connection.
    ///
    /// # Errors
    /// The system refused the option.
    pub fn set_send_buffer(&self, bytes: usize) -> io::Result<()> {
        match &self.io {
            Io::Server { socket, .. } => socket.set_send_buffer(bytes),
            Io::Hyper(_) => Ok(()),
        }
    }

    fn poll_write_with<R>(
        &mut self,
        cx: &mut Context<'_>,
        write: impl FnOnce(Pin<&mut Io>, &mut Context<'_>) -> Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        match write(Pin::new(&mut self.io), cx) {
            Poll::Pending => {
                let now = Instant::now();
                let since = *self.blocked.get_or_insert(now);
                let deadline = since + self.write;
                if deadline <= now {
                    return Poll::Ready(Err(timed_out(
                        "the client has not read for TERN_WRITE_TIMEOUT",
                    )));
                }
                if self.write_timer.deadline() != deadline {
                    self.write_timer.as_mut().reset(deadline);
                }
                if self.write_timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(timed_out(
                        "the client has not read for TERN_WRITE_TIMEOUT",
                    )));
                }
                Poll::Pending
            }
            ready => {
                self.blocked = None;
                ready
            }
        }
    }
}

impl AsyncRead for Upgraded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Pending => {
                let deadline = this.last_read + this.idle;
                if this.read_timer.deadline() != deadline {
                    this.read_timer.as_mut().reset(deadline);
                }
                if this.read_timer.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Err(timed_out(
                        "the client sent nothing for TERN_KEEP_ALIVE_TIMEOUT",
                    )));
                }
                Poll::Pending
            }
            ready => {
                if buf.filled().len() > before {
                    this.last_read = Instant::now();
                }
                ready
            }
        }
    }
}

impl AsyncWrite for Upgraded {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_write_with(cx, |io, cx| io.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_write_with(cx, |io, cx| io.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut()
            .poll_write_with(cx, |io, cx| io.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
