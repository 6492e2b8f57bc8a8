//! The HTTP/2 connection preface: which protocol a connection speaks.
//!
//! The first bytes tell HTTP/2 (the 24-byte preface
//! `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`) from HTTP/1 ([`Protocol`]).
//! RFC 9113 §3.4 makes an invalid preface a connection error of type
//! `PROTOCOL_ERROR` (§5.4.1: GOAWAY, then close), where taking anything
//! that is not the whole preface for HTTP/1 (as hyper-util's `auto`
//! builder does) would answer an HTTP/1.1 400. [`PrefaceCheck`] holds back
//! the first bytes until they decide: once they leave the preface before
//! its 14th byte (`PRI * HTTP/2.0`, a request line no HTTP/1 parser takes)
//! the connection is HTTP/1; after it, the server answers as HTTP/2 — its
//! (empty) SETTINGS, which must be its first frame (§3.4), and GOAWAY
//! `PROTOCOL_ERROR` — and closes. A client that sends part of the preface
//! and waits is left to the connection's header-read timeout.
//!
//! The held bytes then go to hyper in one read with whatever the socket
//! has next, so that hyper's HTTP/1 parser sees a whole short head in its
//! first read (a short first read makes it grow its buffer). The cost for
//! every connection is one copy of at most 24 bytes and a branch per read
//! after it.

use std::{
    io,
    pin::Pin,
    task::{ready, Context, Poll},
};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

// The rule and its answer: `crate::protocol::h2`.
use crate::protocol::h2::{HTTP2_LINE, PREFACE, PREFACE_REFUSAL as REFUSAL};

/// How much of what a refused client still sends is read (and dropped)
/// before the close, so that the close is a FIN the GOAWAY arrives with,
/// not a reset that may discard it.
const DRAIN_LIMIT: usize = 64 * 1024;

enum State {
    /// The first `len` bytes, all a prefix of the preface so far.
    Sniffing {
        buf: [u8; 24],
        len: u8,
    },
    /// Decided: `buf[pos..len]` still to hand on, then the socket's bytes.
    Replay {
        buf: [u8; 24],
        pos: u8,
        len: u8,
    },
    Passthrough,
    /// An invalid preface: `written` bytes of `REFUSAL` sent so far.
    Refusing {
        written: u8,
    },
    ShuttingDown,
    /// Reading what the client still sends (`read` bytes so far).
    Draining {
        read: usize,
    },
    Refused,
}

/// The connection's socket, holding back its first bytes until they tell
/// an invalid HTTP/2 preface (refused here) from everything else (passed
/// on untouched).
pub(super) struct PrefaceCheck<T> {
    io: T,
    state: State,
}

impl<T> PrefaceCheck<T> {
    /// The connection underneath.
    pub(super) fn get_ref(&self) -> &T {
        &self.io
    }

    pub(super) fn new(io: T) -> Self {
        PrefaceCheck {
            io,
            state: State::Sniffing {
                buf: [0; 24],
                len: 0,
            },
        }
    }

    /// The socket and the bytes held back to choose (`held[..n]`), once
    /// [`poll_choose`](Self::poll_choose) chose: for a connection served
    /// by Tern's own HTTP/1 codec, which reads the socket itself.
    pub(super) fn into_parts(self) -> (T, [u8; 24], usize) {
        match self.state {
            State::Replay { buf, pos, len } => {
                let mut held = [0; 24];
                let n = usize::from(len - pos);
                held[..n].copy_from_slice(&buf[usize::from(pos)..usize::from(len)]);
                (self.io, held, n)
            }
            _ => (self.io, [0; 24], 0),
        }
    }

    /// A check that has chosen already, on the bytes `held` (at most 24)
    /// that chose: they are handed on first.
    pub(super) fn replaying(io: T, held: &[u8]) -> Self {
        let mut buf = [0; 24];
        let len = held.len().min(24);
        buf[..len].copy_from_slice(&held[..len]);
        PrefaceCheck {
            io,
            state: State::Replay {
                buf,
                pos: 0,
                len: len as u8,
            },
        }
    }
}

/// What the first `bytes` of a connection say.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// A prefix of the preface: more bytes decide.
    Undecided,
    /// The whole preface (HTTP/2), or not `PRI * HTTP/2.0` (HTTP/1).
    Pass,
    /// `PRI * HTTP/2.0` and then not the preface.
    Invalid,
}

fn verdict(bytes: &[u8]) -> Verdict {
    match bytes.iter().zip(PREFACE).position(|(a, b)| a != b) {
        Some(at) if at >= HTTP2_LINE => Verdict::Invalid,
        Some(_) => Verdict::Pass,
        None if bytes.len() == PREFACE.len() => Verdict::Pass,
        None => Verdict::Undecided,
    }
}

/// The protocol a connection's first bytes chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    Http1,
    Http2,
}

fn refused() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "invalid HTTP/2 connection preface: answered with GOAWAY PROTOCOL_ERROR",
    )
}

impl<T: AsyncRead + AsyncWrite + Unpin> PrefaceCheck<T> {
    /// Reads until the first bytes decide; `Ready(Ok)` once they pass.
    fn poll_sniff(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let State::Sniffing { buf, len } = &mut self.state else {
                return Poll::Ready(Ok(()));
            };
            let mut read = ReadBuf::new(&mut buf[usize::from(*len)..]);
            ready!(Pin::new(&mut self.io).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            let total = usize::from(*len) + n;
            let next = match verdict(&buf[..total]) {
                // End of input: hyper decides what a short request is,
                // unless it began as HTTP/2.
                Verdict::Undecided if n == 0 && total >= HTTP2_LINE => {
                    State::Refusing { written: 0 }
                }
                Verdict::Undecided if n > 0 => {
                    *len = total as u8;
                    continue;
                }
                Verdict::Undecided | Verdict::Pass => State::Replay {
                    buf: *buf,
                    pos: 0,
                    len: total as u8,
                },
                Verdict::Invalid => State::Refusing { written: 0 },
            };
            self.state = next;
        }
    }

    /// Reads until the first bytes decide: the protocol, or (an invalid
    /// preface, refused with GOAWAY) an error once the refusal is sent.
    pub(super) fn poll_choose(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Protocol>> {
        ready!(self.poll_sniff(cx))?;
        match &self.state {
            State::Replay { buf, len, .. }
                if usize::from(*len) == PREFACE.len() && buf == PREFACE =>
            {
                Poll::Ready(Ok(Protocol::Http2))
            }
            State::Replay { .. } | State::Passthrough => Poll::Ready(Ok(Protocol::Http1)),
            _ => {
                ready!(self.poll_refuse(cx))?;
                Poll::Ready(Err(refused()))
            }
        }
    }

    /// Sends the refusal, closes our side, reads what the client still
    /// sends (bounded), then fails the read: hyper-util ends the connection.
    fn poll_refuse(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            match &mut self.state {
                State::Refusing { written } => {
                    let at = usize::from(*written);
                    let n = ready!(Pin::new(&mut self.io).poll_write(cx, &REFUSAL[at..]))?;
                    if n == 0 {
                        return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                    }
                    *written += n as u8;
                    if usize::from(*written) == REFUSAL.len() {
                        self.state = State::ShuttingDown;
                    }
                }
                State::ShuttingDown => {
                    ready!(Pin::new(&mut self.io).poll_shutdown(cx))?;
                    self.state = State::Draining { read: 0 };
                }
                State::Draining { read } => {
                    let mut scratch = [0u8; 1024];
                    let mut buf = ReadBuf::new(&mut scratch);
                    let res = ready!(Pin::new(&mut self.io).poll_read(cx, &mut buf));
                    let n = buf.filled().len();
                    *read += n;
                    if res.is_err() || n == 0 || *read >= DRAIN_LIMIT {
                        self.state = State::Refused;
                    }
                }
                _ => return Poll::Ready(Err(refused())),
            }
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for PrefaceCheck<T> {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let State::Passthrough = this.state {
            return Pin::new(&mut this.io).poll_read(cx, out);
        }
        ready!(this.poll_sniff(cx))?;
        match &mut this.state {
            State::Replay { buf, pos, len } => {
                let n = usize::from(*len - *pos).min(out.remaining());
                out.put_slice(&buf[usize::from(*pos)..usize::from(*pos) + n]);
                *pos += n as u8;
                if *pos == *len {
                    this.state = State::Passthrough;
                    // What the socket has now goes out with the held
                    // bytes. Not ready: the held bytes alone. An error
                    // comes back at the next read (a closed or failed
                    // socket stays so), after the bytes that came first.
                    if out.remaining() > 0 {
                        let _ = Pin::new(&mut this.io).poll_read(cx, out);
                    }
                }
                Poll::Ready(Ok(()))
            }
            State::Passthrough => Pin::new(&mut this.io).poll_read(cx, out),
            _ => this.poll_refuse(cx),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for PrefaceCheck<T> {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    #[inline]
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn the_first_bytes_decide() {
        for (bytes, want) in [
            (&b"GET / HTTP/1.1\r\n"[..], Verdict::Pass),
            (b"P", Verdict::Undecided),
            (b"POST", Verdict::Pass),
            (b"PRI / HTTP/1.1\r\n", Verdict::Pass),
            (b"PRI * HTTP/1.1\r\n", Verdict::Pass),
            (b"PRI * HTTP/2.0", Verdict::Undecided),
            (b"PRI * HTTP/2.0\r\n\r\nSM\r\n", Verdict::Undecided),
            (PREFACE, Verdict::Pass),
            (b"PRI * HTTP/2.0\r\nHost: x\r\n\r\n", Verdict::Invalid),
            (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r?", Verdict::Invalid),
        ] {
            assert_eq!(verdict(&bytes[..bytes.len().min(24)]), want, "{bytes:?}");
        }
    }

    /// The bytes the server reads through the check (or its error), and
    /// what the client receives.
    async fn through(sent: &[u8], close_first: bool) -> (io::Result<Vec<u8>>, Vec<u8>) {
        let (client, server) = tokio::io::duplex(4096);
        let (mut rx, mut tx) = tokio::io::split(client);
        let server_side = async move {
            let mut check = PrefaceCheck::new(server);
            let mut got = Vec::new();
            let mut buf = [0u8; 7];
            loop {
                match check.read(&mut buf).await {
                    Ok(0) => return Ok(got),
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) => return Err(e),
                }
            }
        };
        let client_side = async move {
            tx.write_all(sent).await.expect("the client writes");
            if close_first {
                tx.shutdown().await.expect("the client closes");
            }
            let mut answer = Vec::new();
            rx.read_to_end(&mut answer).await.expect("the client reads");
            let _ = tx.shutdown().await;
            answer
        };
        tokio::join!(server_side, client_side)
    }

    #[tokio::test]
    async fn http1_and_the_real_preface_pass_untouched() {
        for sent in [
            &b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..],
            b"PRI /x HTTP/1.1\r\nHost: x\r\n\r\n",
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0",
            b"PR",
        ] {
            let (got, answer) = through(sent, true).await;
            assert_eq!(got.expect("passed on"), sent);
            assert!(answer.is_empty());
        }
    }

    #[tokio::test]
    async fn the_first_bytes_choose_and_reach_hyper_with_the_next_ones() {
        let request = b"GET /a/longer/path HTTP/1.1\r\nHost: example.com\r\n\r\n";
        let mut preface_and_frame = PREFACE.to_vec();
        preface_and_frame.extend_from_slice(b"\0\0\0\x04\0\0\0\0\0");
        for (sent, want) in [
            (&request[..], Protocol::Http1),
            (&preface_and_frame[..], Protocol::Http2),
        ] {
            let (mut client, server) = tokio::io::duplex(4096);
            client.write_all(sent).await.expect("the client writes");
            let mut check = PrefaceCheck::new(server);
            let chosen = std::future::poll_fn(|cx| check.poll_choose(cx)).await;
            assert_eq!(chosen.expect("chosen"), want);
            // One read hands on the held bytes and the rest together:
            // hyper's parser sees the whole head at once (a 24-byte first
            // read made it double its 8 KiB buffer).
            let mut buf = [0u8; 4096];
            let n = check.read(&mut buf).await.expect("read");
            assert_eq!(&buf[..n], sent);
        }
        // An invalid preface chooses nothing: refused with GOAWAY.
        let (mut client, server) = tokio::io::duplex(4096);
        client
            .write_all(b"PRI * HTTP/2.0\r\nHost: x\r\n\r\n")
            .await
            .expect("the client writes");
        let mut check = PrefaceCheck::new(server);
        let chosen = std::future::poll_fn(|cx| check.poll_choose(cx));
        let reader = async {
            let mut answer = vec![0u8; REFUSAL.len()];
            client.read_exact(&mut answer).await.expect("the refusal");
            drop(client);
            answer
        };
        let (chosen, answer) = tokio::join!(chosen, reader);
        assert_eq!(
            chosen.expect_err("refused").kind(),
            io::ErrorKind::InvalidData
        );
        assert_eq!(answer, REFUSAL);
    }

    #[tokio::test]
    async fn an_invalid_preface_gets_goaway_protocol_error() {
        for (sent, close) in [
            (&b"PRI * HTTP/2.0\r\nHost: x\r\n\r\n"[..], false),
            (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r?", false),
            (b"PRI * HTTP/2.0\r\n\r\n", true),
        ] {
            let (got, answer) = through(sent, close).await;
            assert_eq!(got.expect_err("refused").kind(), io::ErrorKind::InvalidData);
            assert_eq!(answer, REFUSAL);
        }
    }
}
