//! The connection's reads and writes: a read buffer taken only once the
//! socket is readable, the write buffer written out, both given back to
//! the pool while the connection waits with nothing in them.

use std::{
    io,
    pin::Pin,
    task::{ready, Context, Poll},
};

use tokio::time::Instant;

use super::H1Conn;
use crate::server::{
    h1::buf::{self, Socket},
    watchdog::Linger,
};

impl<S> H1Conn<S>
where
    S: Socket + Linger + 'static,
{
    /// Reads what the socket has into the read buffer (taken from the pool
    /// for the read, and given back when nothing came: a connection that
    /// waits holds none): `Ok(0)` at its end.
    pub(super) fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let Some(io) = self.io.as_mut() else {
            return Poll::Ready(Ok(0));
        };
        if S::READS_DIRECTLY {
            // One readiness check (the read's own), not two; the buffer is
            // taken first and given back when nothing came, so a waiting
            // connection still holds none.
            read_room(&mut self.rd);
            let read = io.io.poll_read_buf(cx, &mut self.rd);
            if read.is_pending() && self.rd.is_empty() {
                buf::give_read(std::mem::take(&mut self.rd));
            }
            return read;
        }
        loop {
            ready!(io.io.poll_read_ready(cx))?;
            read_room(&mut self.rd);
            match io.io.try_read_buf(&mut self.rd) {
                Ok(n) => return Poll::Ready(Ok(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    /// Whether answer bytes wait to be written.
    pub(super) fn unsent(&self) -> bool {
        self.wr_at < self.wr.len() || self.big.is_some()
    }

    /// Writes out the write buffer, then the large body data after it
    /// (with one vectored write where the socket takes one), then what
    /// follows that data; `Ready(Ok)` once all of it is written.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(io) = self.io.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::NotConnected.into()));
        };
        loop {
            let head = &self.wr[self.wr_at..];
            let big: &[u8] = self.big.as_deref().unwrap_or(&[]);
            let written = match (head.is_empty(), big.is_empty()) {
                (true, true) => match self.after_big.take() {
                    // The end of the large data's chunk: written next.
                    Some(tail) => {
                        self.wr.clear();
                        self.wr_at = 0;
                        self.wr.extend_from_slice(tail);
                        continue;
                    }
                    None => break,
                },
                (false, true) => Pin::new(&mut io.io).poll_write(cx, head),
                (true, false) => Pin::new(&mut io.io).poll_write(cx, big),
                (false, false) => Pin::new(&mut io.io)
                    .poll_write_vectored(cx, &[io::IoSlice::new(head), io::IoSlice::new(big)]),
            };
            match written {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(mut n)) => {
                    self.blocked_since = None;
                    let from_head = n.min(self.wr.len() - self.wr_at);
                    self.wr_at += from_head;
                    n -= from_head;
                    if let Some(big) = self.big.as_mut() {
                        bytes::Buf::advance(big, n.min(big.len()));
                        if big.is_empty() {
                            self.big = None;
                        }
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    self.blocked_since.get_or_insert_with(Instant::now);
                    return Poll::Pending;
                }
            }
        }
        ready!(Pin::new(&mut io.io).poll_flush(cx))?;
        self.wr_at = 0;
        if self.wr.capacity() > buf::WRITE_KEEP {
            buf::give_write(std::mem::take(&mut self.wr));
        } else {
            self.wr.clear();
        }
        Poll::Ready(Ok(()))
    }

    /// The write buffer, taken from the pool when an answer starts.
    pub(super) fn wr(&mut self) -> &mut Vec<u8> {
        if self.wr.capacity() == 0 {
            self.wr = buf::take_write();
        }
        &mut self.wr
    }

    /// Gives the buffers back to the pool while the connection waits with
    /// nothing in them.
    pub(super) fn release_buffers(&mut self) {
        if self.rd.is_empty() && self.rd.capacity() > 0 {
            buf::give_read(std::mem::take(&mut self.rd));
        }
        if self.wr.is_empty() && self.wr.capacity() > 0 {
            buf::give_write(std::mem::take(&mut self.wr));
        }
    }
}

/// A read buffer with room for a read: the pool's, or more room in the
/// one held.
fn read_room(rd: &mut bytes::BytesMut) {
    if rd.capacity() == 0 {
        *rd = buf::take_read();
    } else if rd.capacity() - rd.len() < 1024 {
        rd.reserve(buf::READ_SIZE);
    }
}
