//! Readiness, then read: how the connection waits for bytes without a
//! buffer (plan §1.8).
//!
//! `AsyncRead::poll_read` needs the buffer before it knows whether there
//! is anything to read, so a connection waiting on it holds a buffer for
//! as long as it is idle. [`Socket`] splits the two: `poll_read_ready`
//! waits holding nothing; `try_read_buf` then reads what is there into a
//! buffer taken only now, without waiting.
//!
//! - `TcpStream`: its own `poll_read_ready` (readiness from the reactor;
//!   nothing per connection), and a read that leaves the readiness
//!   cleared when it drained the socket (one `recvfrom` per request, not
//!   two).
//! - TLS (`tokio_rustls`'s server stream): ready when rustls holds
//!   decrypted bytes not yet read (or the client's `close_notify`), else
//!   when the TCP socket is; the read is a `poll_read` with a waker that
//!   does nothing, and `WouldBlock` if rustls has no whole record yet (it
//!   keeps the partial one; the caller then waits for the socket again).
//!   TLS connections keep rustls's own buffers (tens of KiB) anyway: the
//!   memory goal of §1.8 is for plain TCP.
//! - Any other stream (in-memory ones: `tokio::io::duplex`, the test
//!   client): [`Buffered`], which has no way to learn readiness but to
//!   read, so it reads into a buffer taken from the pool and gives the
//!   buffer back at once when nothing came: an idle connection holds no
//!   buffer there either; a read that brought bytes keeps them until
//!   `try_read_buf` hands the buffer over (swapped in, not copied, when
//!   the caller's is empty).

use std::{
    future::Future as _,
    io,
    pin::{pin, Pin},
    task::{Context, Poll, Waker},
};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};

use super::{give_read, take_read};
use crate::server::watchdog::Linger;

/// A connection's socket, read in two steps so that waiting holds no
/// buffer.
pub(crate) trait Socket: AsyncRead + AsyncWrite + Unpin + Send {
    /// Waits until a read would not block, holding no buffer. May be
    /// ready spuriously: `try_read_buf` then says `WouldBlock`, and the
    /// caller waits again (which registers its waker).
    fn poll_read_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Reads what is there into `buf` (appending), without blocking:
    /// `Ok(0)` at the end of the stream, `WouldBlock` when nothing is
    /// there after all.
    fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize>;

    /// Whether [`poll_read_buf`](Socket::poll_read_buf) reads without a
    /// readiness poll of its own first: the caller then hands it a buffer
    /// before it knows bytes are there (and takes the buffer back when
    /// nothing came).
    const READS_DIRECTLY: bool = false;

    /// Reads what is there into `buf`, or registers `cx`'s waker: one
    /// readiness check, not two, where the socket can (a `TcpStream`'s
    /// `poll_read` checks readiness itself). By default the two steps.
    fn poll_read_buf(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut BytesMut,
    ) -> Poll<io::Result<usize>> {
        loop {
            match self.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
            match self.try_read_buf(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                read => return Poll::Ready(read),
            }
        }
    }
}

impl Socket for tokio::net::TcpStream {
    const READS_DIRECTLY: bool = true;

    /// `poll_read` with the task's waker: tokio's readiness check is part
    /// of it, and a read that took less than its room clears the
    /// readiness (see `try_read_buf`).
    fn poll_read_buf(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut BytesMut,
    ) -> Poll<io::Result<usize>> {
        pin!(self.read_buf(buf)).poll(cx)
    }

    fn poll_read_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        tokio::net::TcpStream::poll_read_ready(self, cx)
    }

    /// A read through `poll_read` rather than `TcpStream::try_read_buf`:
    /// a read that fills less than the room it was given took all the
    /// socket had, and tokio's `poll_read` then clears the readiness, so
    /// the next `poll_read_ready` waits at once instead of paying a
    /// `recvfrom` that says `EAGAIN` (what `try_read_buf` leaves to the
    /// next call: one more system call per request, measured).
    fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        read_now(self, buf)
    }
}

#[cfg(feature = "tls")]
impl Socket for tokio_rustls::server::TlsStream<tokio::net::TcpStream> {
    fn poll_read_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let (tcp, tls) = self.get_ref();
        // `wants_read` is false when rustls holds plaintext not yet read
        // or has seen the client's close_notify: a read returns at once.
        if !tls.wants_read() {
            return Poll::Ready(Ok(()));
        }
        tcp.poll_read_ready(cx)
    }

    fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        read_now(self, buf)
    }
}

/// Polls one read of `io` into `buf` with a waker that does nothing:
/// what is there now, or `WouldBlock`. The caller waits for readiness
/// before it parks, and that poll registers its real waker.
fn read_now<S: AsyncRead + Unpin>(io: &mut S, buf: &mut BytesMut) -> io::Result<usize> {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(io.read_buf(buf)).poll(&mut cx) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
    }
}

/// What a [`Buffered`] read while it waited for readiness.
#[derive(Debug)]
enum Held {
    Nothing,
    Bytes(BytesMut),
    End,
}

/// [`Socket`] for any stream, by reading to learn readiness (see the
/// module's doc).
#[derive(Debug)]
pub(crate) struct Buffered<S> {
    io: S,
    held: Held,
}

impl<S> Buffered<S> {
    pub(crate) fn new(io: S) -> Self {
        Buffered {
            io,
            held: Held::Nothing,
        }
    }

    /// The stream, and the bytes read from it that were not handed out
    /// yet (an upgrade's hand-off must not lose them).
    pub(crate) fn into_inner(self) -> (S, Bytes) {
        let held = match self.held {
            Held::Bytes(b) => b.freeze(),
            Held::Nothing | Held::End => Bytes::new(),
        };
        (self.io, held)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Socket for Buffered<S> {
    fn poll_read_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !matches!(self.held, Held::Nothing) {
            return Poll::Ready(Ok(()));
        }
        let mut buf = take_read();
        let read = pin!(self.io.read_buf(&mut buf)).poll(cx);
        match read {
            Poll::Ready(Ok(0)) => {
                give_read(buf);
                self.held = Held::End;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Ok(_)) => {
                self.held = Held::Bytes(buf);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => {
                give_read(buf);
                Poll::Ready(Err(e))
            }
            Poll::Pending => {
                give_read(buf);
                Poll::Pending
            }
        }
    }

    fn try_read_buf(&mut self, buf: &mut BytesMut) -> io::Result<usize> {
        match std::mem::replace(&mut self.held, Held::Nothing) {
            Held::Bytes(held) => {
                let n = held.len();
                if buf.is_empty() {
                    give_read(std::mem::replace(buf, held));
                } else {
                    buf.extend_from_slice(&held);
                    give_read(held);
                }
                Ok(n)
            }
            Held::End => {
                self.held = Held::End;
                Ok(0)
            }
            Held::Nothing => read_now(&mut self.io, buf),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Buffered<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match &mut this.held {
            Held::Bytes(held) => {
                let n = held.len().min(out.remaining());
                out.put_slice(&held.split_to(n));
                if held.is_empty() {
                    if let Held::Bytes(held) = std::mem::replace(&mut this.held, Held::Nothing) {
                        give_read(held);
                    }
                }
                Poll::Ready(Ok(()))
            }
            Held::End => Poll::Ready(Ok(())),
            Held::Nothing => Pin::new(&mut this.io).poll_read(cx, out),
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Buffered<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl<S: Linger> Linger for Buffered<S> {
    fn reset_on_close(&self) {
        self.io.reset_on_close();
    }

    fn discard_unread(&self) {
        self.io.discard_unread();
    }

    fn linger_close(&self) {
        self.io.linger_close();
    }

    fn set_send_buffer(&self, bytes: usize) -> io::Result<()> {
        self.io.set_send_buffer(bytes)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
