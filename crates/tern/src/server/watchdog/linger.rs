//! How a connection's socket closes: with a reset for a client that
//! stopped reading, or lingering so that a client's late bytes cannot
//! reset the connection before it reads our last words.

use std::{io, sync::atomic::Ordering, time::Duration};

/// A socket that can be closed with a reset instead of a FIN.
pub(in crate::server) trait Linger {
    /// Makes the coming close discard unsent bytes and reset the
    /// connection (`SO_LINGER` 0).
    fn reset_on_close(&self);

    /// Reads and drops what the client sent that was never read (up to
    /// 64 KiB, without waiting): a socket closed with unread bytes is
    /// reset, and a reset can destroy our last words (a GOAWAY, a 400)
    /// before the client reads them.
    fn discard_unread(&self);

    /// Closes in the lingering way (as nginx's `lingering_close`): our
    /// FIN now, then what the client still sends (bytes already in
    /// flight when we decided to close) is read and dropped for up to
    /// [`LINGER`], on a duplicate of the socket, so that those bytes
    /// cannot make the kernel reset the connection and destroy our last
    /// words before the client reads them. At most [`MAX_LINGERING`]
    /// sockets linger at once; past that, a plain close.
    fn linger_close(&self) {}

    /// Caps the kernel's send buffer (`SO_SNDBUF`): an upgraded socket
    /// whose client stops reading then holds that much, not what Linux's
    /// autotuning grows it to (`net.ipv4.tcp_wmem`, 4 MiB by default).
    fn set_send_buffer(&self, bytes: usize) -> io::Result<()>;
}

/// How long a closed connection keeps reading what the client still sends.
const LINGER: Duration = Duration::from_secs(1);
/// Sockets lingering at once, at most.
const MAX_LINGERING: usize = 1024;

/// Sockets lingering now, in the whole process. Process-wide on purpose:
/// the cap is on the process's file descriptors, whichever server or
/// connection closes; it counts sockets and holds nothing of a request, and
/// each [`LingerSlot`] gives back exactly what it took.
static LINGERING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One lingering socket counted while alive.
struct LingerSlot;

impl LingerSlot {
    fn take() -> Option<LingerSlot> {
        if LINGERING.fetch_add(1, Ordering::Relaxed) >= MAX_LINGERING {
            LINGERING.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(LingerSlot)
    }
}

impl Drop for LingerSlot {
    fn drop(&mut self) {
        LINGERING.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Linger for tokio::net::TcpStream {
    fn reset_on_close(&self) {
        let _ = socket2::SockRef::from(self).set_linger(Some(Duration::ZERO));
    }

    fn set_send_buffer(&self, bytes: usize) -> io::Result<()> {
        socket2::SockRef::from(self).set_send_buffer_size(bytes)
    }

    fn discard_unread(&self) {
        let mut buf = [0u8; 4096];
        for _ in 0..16 {
            match self.try_read(&mut buf) {
                Ok(n) if n > 0 => {}
                _ => break,
            }
        }
    }

    fn linger_close(&self) {
        use tokio::io::AsyncReadExt as _;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Some(slot) = LingerSlot::take() else {
            return;
        };
        // A second descriptor of the same socket: it stays open after
        // this one closes, until the task below is done with it.
        let Ok(dup) = socket2::SockRef::from(self).try_clone() else {
            return;
        };
        if dup.shutdown(std::net::Shutdown::Write).is_err() {
            return;
        }
        let dup: std::net::TcpStream = dup.into();
        runtime.spawn(async move {
            let _slot = slot;
            let Ok(mut stream) = tokio::net::TcpStream::from_std(dup) else {
                return;
            };
            let mut buf = [0u8; 4096];
            let _ = tokio::time::timeout(LINGER, async {
                // Until the client's FIN, an error, or 256 KiB.
                for _ in 0..64 {
                    match stream.read(&mut buf).await {
                        Ok(n) if n > 0 => {}
                        _ => break,
                    }
                }
            })
            .await;
        });
    }
}

#[cfg(feature = "tls")]
impl Linger for tokio_rustls::server::TlsStream<tokio::net::TcpStream> {
    fn reset_on_close(&self) {
        self.get_ref().0.reset_on_close();
    }

    fn discard_unread(&self) {
        self.get_ref().0.discard_unread();
    }

    fn linger_close(&self) {
        self.get_ref().0.linger_close();
    }

    fn set_send_buffer(&self, bytes: usize) -> io::Result<()> {
        self.get_ref().0.set_send_buffer(bytes)
    }
}
