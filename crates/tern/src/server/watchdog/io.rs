//! The connection's socket as hyper sees it ([`WatchedIo`]): reports
//! reads and stalled writes to the [`Activity`], follows HTTP/1 framing,
//! holds the answers of a pipelined batch for one write, and replaces
//! hyper's own refusals with the app's answer.

use std::{
    io,
    pin::Pin,
    sync::{atomic::Ordering, Arc},
    task::{ready, Context, Poll},
};

use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::OwnedSemaphorePermit,
};

use super::{Activity, Linger};
use crate::{
    app::AppService,
    protocol::h1::{hyper_refusal, may_be_hyper_refusal, MAX_HYPER_REFUSAL},
    server::framing::{Framing, Scan},
};

/// The connection's socket, telling `Activity` when bytes arrive and when
/// the client stops taking them.
///
/// It also follows HTTP/1 framing to refuse bare LFs in request heads
/// ([`Framing`]), and holds the connection's `TERN_MAX_CONNECTIONS` permit:
/// an upgraded connection (WebSocket) keeps it until its socket closes.
///
/// And it answers a pipelined batch with one write. hyper writes each
/// answer as soon as it is made (its `pipeline_flush` option, which would
/// batch them, loses answers written before a close: see
/// `connection_builders`). When hyper has been handed complete request
/// heads it has not yet taken up (the framing follower counts them,
/// `Activity::requests` counts what hyper dispatched), the answers are
/// kept here ([`WatchedIo::pending`]) and written together once the last
/// of those requests is answered. So that nothing waits on a request that
/// does not answer at once (a slow handler, a streamed body, a `100
/// Continue`), an answer is held for one more poll of the connection only
/// while hyper keeps taking up requests; the first poll that takes up
/// none writes what is held. Closing writes it too, and at most
/// [`MAX_PENDING`] bytes are held.
pub(in crate::server) struct WatchedIo<T: Linger> {
    io: T,
    activity: Arc<Activity>,
    framing: Framing,
    _permit: Option<OwnedSemaphorePermit>,
    /// Renders the answer to a request hyper cannot parse.
    app: Option<AppService>,
    /// That answer, being written in place of hyper's: the bytes, how
    /// many are written, and the length of hyper's own answer.
    replacing: Option<(Vec<u8>, usize, usize)>,
    /// Answers to pipelined requests, not yet written (see above), and
    /// how many of them are.
    pending: Vec<u8>,
    pending_written: usize,
    /// `Activity::requests` when the last flush was put off, or
    /// `u64::MAX`: with no request taken up since, the next flush writes.
    deferred_at: u64,
}

/// Answers held for one write of a pipelined batch, at most.
const MAX_PENDING: usize = 64 * 1024;

impl<T: Linger> WatchedIo<T> {
    /// The socket underneath.
    pub(in crate::server) fn socket(&self) -> &T {
        &self.io
    }

    pub(in crate::server) fn new(
        io: T,
        activity: Arc<Activity>,
        permit: Option<OwnedSemaphorePermit>,
        app: Option<AppService>,
    ) -> Self {
        WatchedIo {
            io,
            activity,
            framing: Framing::new(),
            _permit: permit,
            app,
            replacing: None,
            pending: Vec::new(),
            pending_written: 0,
            deferred_at: u64::MAX,
        }
    }

    /// For a connection whose HTTP/2 preface was read before it was
    /// wrapped (Tern's HTTP/1 engine chose the protocol): the HTTP/1
    /// framing follower, which would otherwise take the frames for
    /// HTTP/1 bytes, lets every byte pass.
    pub(in crate::server) fn known_http2(mut self) -> Self {
        self.framing = Framing::http2();
        self
    }

    /// hyper holds complete request heads it has not taken up yet: more
    /// answers follow this one without waiting for the client.
    #[inline]
    fn more_to_answer(&self) -> bool {
        self.framing.heads() > self.activity.requests.load(Ordering::Relaxed)
    }

    /// Keeps `bufs` with the held answers if they are to be written
    /// together; returns the bytes kept, or `None` to write them now.
    /// hyper's own refusals ([`Self::replaces`]) are never held: they
    /// end the connection, after what is held.
    #[inline]
    fn hold(&mut self, bufs: &[io::IoSlice<'_>]) -> Option<usize> {
        if self.replacing.is_some() || (self.pending.is_empty() && !self.more_to_answer()) {
            return None;
        }
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        if self.pending.len() + len > MAX_PENDING {
            return None;
        }
        if len <= MAX_HYPER_REFUSAL
            && bufs
                .iter()
                .find(|b| !b.is_empty())
                .is_some_and(|b| may_be_hyper_refusal(b))
        {
            return None;
        }
        if self.pending.capacity() == 0 {
            self.pending.reserve(4096);
        }
        for b in bufs {
            self.pending.extend_from_slice(b);
        }
        Some(len)
    }

    /// Writes the held answers; ready when all of them are written.
    fn poll_write_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>>
    where
        T: AsyncWrite + Unpin,
    {
        while self.pending_written < self.pending.len() {
            let res = Pin::new(&mut self.io).poll_write(cx, &self.pending[self.pending_written..]);
            note_write(&self.activity, &res);
            match res {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => self.pending_written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        // The memory goes with the batch: an idle connection holds none.
        self.pending = Vec::new();
        self.pending_written = 0;
        Poll::Ready(Ok(()))
    }

    /// Writes the answer that replaces hyper's (see [`hyper_refusal`]);
    /// reports hyper's bytes written once all of it is.
    fn poll_replace(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>>
    where
        T: AsyncWrite + Unpin,
    {
        while let Some((bytes, written, hyper_len)) = &mut self.replacing {
            if *written == bytes.len() {
                let n = *hyper_len;
                self.replacing = None;
                return Poll::Ready(Ok(n));
            }
            let res = Pin::new(&mut self.io).poll_write(cx, &bytes[*written..]);
            note_write(&self.activity, &res);
            match res {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(0))
    }

    /// Whether `buf` is hyper's own answer to a request it could not parse;
    /// if so, starts writing the app's instead. hyper offers no hook for
    /// that answer, so it is recognised by its bytes: why, and the test
    /// that pins them, at [`hyper_refusal`].
    #[inline]
    fn replaces(&mut self, buf: &[u8]) -> bool {
        if self.framing.passthrough() || !may_be_hyper_refusal(buf) {
            return false;
        }
        let Some((status, date)) = hyper_refusal(buf) else {
            return false;
        };
        let Some(answer) = self
            .app
            .as_ref()
            .and_then(|a| a.unparsable_answer(status, date))
        else {
            return false;
        };
        self.replacing = Some((answer, 0, buf.len()));
        true
    }
}

impl<T: Linger> Drop for WatchedIo<T> {
    fn drop(&mut self) {
        // A client that stopped reading would otherwise leave the kernel
        // holding our unsent bytes and a FIN it never takes (FIN-WAIT-1):
        // reset instead, so the memory goes with the connection.
        if self.activity.reset.load(Ordering::Relaxed) {
            self.io.reset_on_close();
        } else {
            self.io.discard_unread();
            self.io.linger_close();
        }
    }
}

impl<T: AsyncRead + Linger + Unpin> AsyncRead for WatchedIo<T> {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.framing.passthrough() && this.framing.held.is_empty() {
            return Pin::new(&mut this.io).poll_read(cx, buf);
        }
        if this.framing.doomed() && this.framing.held.is_empty() {
            // hyper refused the last request and closes; it reads no more.
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the request broke HTTP/1 framing",
            )));
        }
        if this.framing.awaiting_upgrade(&this.activity) {
            this.activity.wait_for_upgrade(cx.waker());
            if this.framing.awaiting_upgrade(&this.activity) {
                return Poll::Pending;
            }
        }
        let before = buf.filled().len();
        if !this.framing.held.is_empty() {
            // Bytes read past an upgrade request, now that it is decided.
            let n = this.framing.held.len().min(buf.remaining());
            buf.put_slice(&this.framing.held[..n]);
            this.framing.held.drain(..n);
        } else {
            match Pin::new(&mut this.io).poll_read(cx, buf) {
                Poll::Ready(Ok(())) => {}
                other => return other,
            }
            if buf.filled().len() > before {
                this.activity.on_read();
            }
        }
        let read = &mut buf.filled_mut()[before..];
        let scan = this.framing.scan(read, &this.activity);
        if let Scan::Cut(n) = scan {
            buf.set_filled(before + n);
            let end = std::mem::take(&mut this.framing.held);
            let fit = end.len().min(buf.remaining());
            buf.put_slice(&end[..fit]);
            this.framing.held = end[fit..].to_vec();
        } else if let Scan::Hold(n) = scan {
            let mut rest = read[n..].to_vec();
            rest.append(&mut this.framing.held);
            this.framing.held = rest;
            buf.set_filled(before + n);
            if n == 0 {
                // Nothing to hand on yet: hyper would read an empty read
                // as the end of the connection.
                this.activity.wait_for_upgrade(cx.waker());
                if this.framing.awaiting_upgrade(&this.activity) {
                    return Poll::Pending;
                }
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
        }
        Poll::Ready(Ok(()))
    }
}

#[inline]
fn note_write(activity: &Activity, res: &Poll<io::Result<usize>>) {
    match res {
        Poll::Pending => activity.on_write_blocked(),
        Poll::Ready(Ok(n)) if *n > 0 => activity.on_write_progress(),
        Poll::Ready(_) => {}
    }
}

impl<T: AsyncWrite + Linger + Unpin> AsyncWrite for WatchedIo<T> {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(n) = this.hold(&[io::IoSlice::new(buf)]) {
            return Poll::Ready(Ok(n));
        }
        // What is held goes first, in order.
        ready!(this.poll_write_pending(cx))?;
        if this.replacing.is_some() || this.replaces(buf) {
            return this.poll_replace(cx);
        }
        let res = Pin::new(&mut this.io).poll_write(cx, buf);
        note_write(&this.activity, &res);
        res
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(n) = this.hold(bufs) {
            return Poll::Ready(Ok(n));
        }
        ready!(this.poll_write_pending(cx))?;
        if this.replacing.is_some() {
            return this.poll_replace(cx);
        }
        let mut written = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(one), None) = (written.next(), written.next()) {
            if this.replaces(one) {
                return this.poll_replace(cx);
            }
        }
        let res = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        note_write(&this.activity, &res);
        res
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.pending.is_empty() {
            let taken_up = this.activity.requests.load(Ordering::Relaxed);
            if this.more_to_answer() && taken_up != this.deferred_at {
                // hyper took up a request since the last flush and holds
                // more: their answers join this write. The wake brings
                // the next poll that writes if none is taken up by then.
                this.deferred_at = taken_up;
                cx.waker().wake_by_ref();
                return Poll::Ready(Ok(()));
            }
            this.deferred_at = u64::MAX;
            ready!(this.poll_write_pending(cx))?;
        }
        Pin::new(&mut this.io).poll_flush(cx)
    }

    #[inline]
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_write_pending(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::{
        sync::atomic::AtomicUsize,
        time::{Duration, Instant},
    };

    use http_body_util::Full;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};

    use super::*;

    /// One end of an in-memory connection that counts the writes that
    /// reach it.
    struct Counted {
        io: DuplexStream,
        writes: Arc<AtomicUsize>,
    }

    impl Linger for Counted {
        fn reset_on_close(&self) {}
        fn discard_unread(&self) {}
        fn set_send_buffer(&self, _: usize) -> io::Result<()> {
            Ok(())
        }
    }

    impl AsyncRead for Counted {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Pin::new(&mut self.io).poll_read(cx, buf)
        }
    }

    impl AsyncWrite for Counted {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            let res = Pin::new(&mut self.io).poll_write(cx, buf);
            if matches!(res, Poll::Ready(Ok(n)) if n > 0) {
                self.writes.fetch_add(1, Ordering::Relaxed);
            }
            res
        }
        fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.io).poll_flush(cx)
        }
        fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Pin::new(&mut self.io).poll_shutdown(cx)
        }
    }

    /// hyper serving `/` (at once) and `/slow` (after 300 ms) on a
    /// counted, watched connection; returns the client's end and the
    /// write count.
    fn serve() -> (DuplexStream, Arc<AtomicUsize>) {
        let (client, server) = tokio::io::duplex(1 << 20);
        let writes = Arc::new(AtomicUsize::new(0));
        let activity = Arc::new(Activity::new());
        let io = WatchedIo::new(
            Counted {
                io: server,
                writes: Arc::clone(&writes),
            },
            Arc::clone(&activity),
            None,
            None,
        );
        let service = hyper::service::service_fn(move |req: http::Request<_>| {
            let activity = Arc::clone(&activity);
            async move {
                activity.on_request();
                if req.uri().path() == "/slow" {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                }
                activity.on_response();
                Ok::<_, std::convert::Infallible>(http::Response::new(Full::new(
                    bytes::Bytes::from_static(b"hello"),
                )))
            }
        });
        tokio::spawn(
            hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(io), service),
        );
        (client, writes)
    }

    async fn read_answers(client: &mut DuplexStream, n: usize) -> String {
        let mut text = String::new();
        let mut buf = [0u8; 4096];
        while text.matches("hello").count() < n {
            let read = tokio::time::timeout(Duration::from_secs(5), client.read(&mut buf))
                .await
                .expect("answers within 5 s")
                .expect("read");
            assert!(read > 0, "closed early: {text}");
            text.push_str(std::str::from_utf8(&buf[..read]).expect("text"));
        }
        text
    }

    #[tokio::test]
    async fn a_pipelined_batch_is_answered_in_one_write() {
        let (mut client, writes) = serve();
        let batch = "GET / HTTP/1.1\r\nHost: t\r\n\r\n".repeat(16);
        client.write_all(batch.as_bytes()).await.expect("write");
        let text = read_answers(&mut client, 16).await;
        assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 16, "{text}");
        assert_eq!(
            writes.load(Ordering::Relaxed),
            1,
            "sixteen answers, one write"
        );
        // Requests one at a time are answered at once, one write each.
        for i in 2..5 {
            client
                .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\n")
                .await
                .expect("write");
            read_answers(&mut client, 1).await;
            assert_eq!(writes.load(Ordering::Relaxed), i);
        }
    }

    #[tokio::test]
    async fn an_answer_does_not_wait_for_a_slow_one_behind_it() {
        let (mut client, _) = serve();
        client
            .write_all(b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n")
            .await
            .expect("write");
        let start = Instant::now();
        read_answers(&mut client, 1).await;
        assert!(
            start.elapsed() < Duration::from_millis(200),
            "the first answer waited {:?} for the slow one",
            start.elapsed()
        );
        read_answers(&mut client, 2).await;
    }
}
