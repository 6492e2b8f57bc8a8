//! What travels with the connection's socket: its `TERN_MAX_CONNECTIONS`
//! permit ([`Permitted`]), and what an upgrade hands over to
//! `tern::upgrade` ([`Handover`], [`PendingUpgrade`]); and the in-memory
//! socket ([`Memory`]) of the test client and the fuzz target.

use std::{
    io,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
};

use bytes::Bytes;
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::{oneshot, OwnedSemaphorePermit},
};

use crate::server::{watchdog::Linger, ServerSocket};

/// What an upgraded connection hands over: its socket (with the
/// connection's permit) and the bytes read past the upgrade's head.
pub(crate) type Handover = (Box<dyn ServerSocket>, Bytes);

/// The receiving half of an upgrade, in the extensions of a request that
/// asked for one (`tern::upgrade::on`). Extensions must be `Clone`: the
/// clones share the one receiver, which the first to ask takes.
#[derive(Clone)]
pub(crate) struct PendingUpgrade(Arc<Mutex<Option<oneshot::Receiver<Handover>>>>);

impl PendingUpgrade {
    /// A pending upgrade and the sender the connection hands over with.
    pub(crate) fn new() -> (oneshot::Sender<Handover>, Self) {
        let (tx, rx) = oneshot::channel();
        (tx, PendingUpgrade(Arc::new(Mutex::new(Some(rx)))))
    }

    /// The receiver, if no clone took it yet.
    pub(crate) fn take(&self) -> Option<oneshot::Receiver<Handover>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The connection's socket and its `TERN_MAX_CONNECTIONS` permit, which
/// an upgraded connection carries away with it.
pub(in crate::server) struct Permitted<S> {
    pub(in crate::server) io: S,
    _permit: Option<OwnedSemaphorePermit>,
}

impl<S> Permitted<S> {
    pub(in crate::server) fn new(io: S, permit: Option<OwnedSemaphorePermit>) -> Self {
        Permitted {
            io,
            _permit: permit,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Permitted<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Permitted<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, b)
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

impl<S> ServerSocket for Permitted<S>
where
    S: AsyncRead + AsyncWrite + Linger + Unpin + Send,
{
    fn set_send_buffer(&self, bytes: usize) -> io::Result<()> {
        self.io.set_send_buffer(bytes)
    }
}

/// An in-memory socket: one end of a `tokio::io::duplex`, closed the
/// plain way (nothing to linger on, nothing to reset).
pub(crate) struct Memory(pub(crate) tokio::io::DuplexStream);

impl AsyncRead for Memory {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Memory {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, b)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

impl Linger for Memory {
    fn reset_on_close(&self) {}
    fn discard_unread(&self) {}
    fn set_send_buffer(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
}
