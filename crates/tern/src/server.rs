//! The server: accepts connections and runs an [`AppService`] on them with
//! hyper (HTTP/1.1 with keep-alive and pipelining, HTTP/2 by prior
//! knowledge), under the configured limits and timeouts, until a graceful
//! shutdown.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    io,
    net::SocketAddr,
    pin::Pin,
    sync::{
        atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering},
        Arc,
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::conn::auto,
};
use tern_core::{body::Body, Response};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    net::TcpListener,
    sync::{watch, Notify},
};

use crate::{
    app::{App, AppService, BuildError},
    config::{Config, ConfigError, RuntimeMode, Timeouts},
    drain::DrainState,
};

/// Runs `app` until `SIGINT` or `SIGTERM`, then drains it and returns.
///
/// The configuration is the app's own ([`App::config`]) or, if it has
/// none, [`Config::from_env`]. It is [validated](Config::validate) first:
/// in production a weak `SECRET_KEY` or a missing `ALLOWED_HOSTS` stops the
/// start with an error naming the setting. Builds its own tokio runtime(s)
/// as the configuration says; call it from a plain `fn main`.
///
/// ```no_run
/// fn main() -> Result<(), tern::Error> {
///     let app = tern::App::new().route("/", tern::routing::get(|| async { "hi" }));
///     tern::run(app)
/// }
/// ```
pub fn run<S: Clone + Send + Sync + 'static>(app: App<S>) -> Result<(), Error> {
    let config = match app.configured() {
        Some(config) => config.clone(),
        None => Config::from_env().map_err(Error::config)?,
    };
    config.validate().map_err(Error::config)?;
    let service = app.build_with(config).map_err(Error::build)?;
    Server::new(service).run()
}

/// Serves an [`AppService`] on sockets.
#[derive(Debug, Clone)]
pub struct Server {
    app: AppService,
}

impl Server {
    /// A server for `app`, with the app's configuration.
    pub fn new(app: AppService) -> Self {
        Server { app }
    }

    /// Binds `TERN_ADDR`, serves until `SIGINT`/`SIGTERM`, drains, returns.
    /// Blocks; builds the runtime(s) the configuration asks for.
    pub fn run(self) -> Result<(), Error> {
        let config = self.app.config().clone();
        match config.runtime {
            RuntimeMode::MultiThread => {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(config.workers)
                    .enable_all()
                    .build()
                    .map_err(Error::io)?;
                rt.block_on(async move {
                    let listener = bind(config.addr).map_err(|e| Error::bind(config.addr, e))?;
                    let listener = TcpListener::from_std(listener).map_err(Error::io)?;
                    announce(&listener, &config);
                    self.serve_with_shutdown(listener, shutdown_signal())
                        .await
                        .map_err(Error::io)
                })
            }
            RuntimeMode::PerCore => self.run_per_core(&config),
        }
    }

    fn run_per_core(self, config: &Config) -> Result<(), Error> {
        let (tx, rx) = watch::channel(false);
        let mut listeners = Vec::with_capacity(config.workers);
        let mut addr = config.addr;
        for _ in 0..config.workers {
            let listener = bind(addr).map_err(|e| Error::bind(addr, e))?;
            // Port 0 resolves once; every worker then binds that port.
            addr = listener.local_addr().map_err(Error::io)?;
            listeners.push(listener);
        }
        let mut threads = Vec::with_capacity(listeners.len());
        for (i, listener) in listeners.into_iter().enumerate() {
            let server = self.clone();
            let mut rx = rx.clone();
            let thread = std::thread::Builder::new()
                .name(format!("tern-worker-{i}"))
                .spawn(move || -> io::Result<()> {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()?;
                    rt.block_on(async move {
                        let listener = TcpListener::from_std(listener)?;
                        server
                            .serve_with_shutdown(listener, async move {
                                let _ = rx.wait_for(|stop| *stop).await;
                            })
                            .await
                    })
                })
                .map_err(Error::io)?;
            threads.push(thread);
        }
        tracing::info!(%addr, workers = config.workers, runtime = "per-core", env = ?config.env, "tern listening");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::io)?;
        rt.block_on(shutdown_signal());
        let _ = tx.send(true);
        for thread in threads {
            match thread.join() {
                Ok(result) => result.map_err(Error::io)?,
                Err(_) => return Err(Error::io(io::Error::other("a worker thread panicked"))),
            }
        }
        Ok(())
    }

    /// Serves connections from `listener` on the current tokio runtime
    /// until `signal` completes; then stops accepting, lets in-flight
    /// requests finish (up to `TERN_SHUTDOWN_TIMEOUT`), closes idle
    /// connections and returns.
    pub async fn serve_with_shutdown<F>(self, listener: TcpListener, signal: F) -> io::Result<()>
    where
        F: Future<Output = ()> + Send,
    {
        let config = self.app.config().clone();
        let builder = Arc::new(connection_builder(&config));
        let limit = Arc::new(tokio::sync::Semaphore::new(config.limits.max_connections));
        let (stop_tx, stop_rx) = watch::channel(false);
        let drain = DrainState::new(stop_rx.clone());
        #[cfg(feature = "tls")]
        let tls = match &config.tls {
            Some(files) => Some(crate::tls::acceptor(files).map_err(io::Error::other)?),
            None => None,
        };
        tokio::pin!(signal);
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors (or similar): back off
                        // instead of spinning; the listener stays usable.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                () = &mut signal => break,
            };
            let Ok(permit) = Arc::clone(&limit).try_acquire_owned() else {
                tracing::warn!(%peer, max = config.limits.max_connections, "connection refused: TERN_MAX_CONNECTIONS reached");
                drop(stream);
                continue;
            };
            let _ = stream.set_nodelay(true);
            let activity = Arc::new(Activity::new());
            let service = ConnService {
                app: self.app.clone(),
                peer,
                activity: Arc::clone(&activity),
                max_body: config.limits.max_body_bytes,
                drain: Arc::clone(&drain),
            };
            let builder = Arc::clone(&builder);
            let stop = stop_rx.clone();
            let timeouts = config.timeouts.clone();
            // Plain and TLS connections are separate tasks: a plain one
            // does not carry the (larger) TLS state in its allocation.
            #[cfg(feature = "tls")]
            if let Some(tls) = &tls {
                let tls = tls.clone();
                tokio::spawn(async move {
                    // The handshake is part of the head: same time limit.
                    match tokio::time::timeout(timeouts.header_read, tls.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            serve_connection(stream, &builder, service, activity, stop, &timeouts)
                                .await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                    drop(permit);
                });
                continue;
            }
            tokio::spawn(async move {
                serve_connection(stream, &builder, service, activity, stop, &timeouts).await;
                drop(permit);
            });
        }
        drop(listener);
        let _ = stop_tx.send(true);
        let all = u32::try_from(config.limits.max_connections).unwrap_or(u32::MAX);
        let drained = async {
            let _ = limit.acquire_many(all).await;
            drain.guards_released().await;
        };
        match tokio::time::timeout(config.timeouts.shutdown, drained).await {
            Ok(()) => tracing::info!("tern stopped: every connection drained"),
            Err(_) => tracing::warn!(
                open = config.limits.max_connections - limit.available_permits(),
                guards = drain.open_guards(),
                "tern stopped: shutdown timeout reached with work still open"
            ),
        }
        Ok(())
    }
}

/// Serves one connection until it closes; its watchdog applies the
/// head, keep-alive and shutdown rules.
async fn serve_connection<I>(
    io: I,
    builder: &auto::Builder<TokioExecutor>,
    service: ConnService,
    activity: Arc<Activity>,
    mut stop: watch::Receiver<bool>,
    timeouts: &Timeouts,
) where
    I: AsyncRead + AsyncWrite + Linger + Unpin + Send + 'static,
{
    let io = TokioIo::new(WatchedIo::new(io, Arc::clone(&activity)));
    let conn = builder.serve_connection_with_upgrades(io, service);
    tokio::pin!(conn);
    // The watchdog's timer is armed early enough for any deadline that can
    // arise before it fires (see `Activity::next_check`), so requests never
    // touch it: it wakes at most every `min(header_read, keep_alive)`.
    let check = tokio::time::sleep_until(activity.next_check(timeouts).into());
    tokio::pin!(check);
    let mut closing = false;
    let mut draining = false;
    loop {
        tokio::select! {
            biased;
            _ = conn.as_mut() => break,
            _ = stop.wait_for(|s| *s), if !draining && !closing => {
                // Shutdown. A request in flight gets its answer with
                // `Connection: close`. An idle connection is not cut at
                // once: a client may be sending its next request right
                // now, and closing under it would lose that request. The
                // next request is answered (with `Connection: close`), or
                // the connection closes after `DRAIN_IDLE_GRACE` of quiet.
                draining = true;
                activity.draining.store(true, Ordering::Relaxed);
                if activity.in_flight.load(Ordering::Relaxed) > 0 {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                } else {
                    check.as_mut().reset((Instant::now() + DRAIN_IDLE_GRACE).into());
                }
            }
            () = activity.drain_wake.notified(), if draining && !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            () = check.as_mut() => {
                // A closing connection still flushes what it has: a client
                // that stops reading would hold it open forever.
                if activity.write_stalled(timeouts) {
                    tracing::debug!("resetting a connection whose client stopped reading");
                    activity.reset.store(true, Ordering::Relaxed);
                    break;
                }
                if closing {
                    check.as_mut().reset(activity.next_check(timeouts).into());
                    continue;
                }
                if draining {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                    check.as_mut().reset(activity.next_check(timeouts).into());
                    continue;
                }
                match activity.verdict(timeouts) {
                    Verdict::Wait => {
                        check.as_mut().reset(activity.next_check(timeouts).into());
                    }
                    Verdict::Idle => {
                        conn.as_mut().graceful_shutdown();
                        closing = true;
                        check.as_mut().reset(activity.next_check(timeouts).into());
                    }
                    // A head that takes too long (slowloris): drop the
                    // connection, there is nothing to answer yet.
                    Verdict::SlowHead => break,
                    // A client that does not read what it asked for.
                }
            }
        }
    }
}

fn connection_builder(config: &Config) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        // Tern times request heads itself (`Activity`): hyper's timer also
        // runs while a keep-alive connection is idle, which would cut every
        // idle connection at the header timeout instead of the keep-alive one.
        .header_read_timeout(None)
        .keep_alive(true)
        .max_buf_size(config.limits.max_head_bytes)
        .max_headers(config.limits.max_headers);
    // No `pipeline_flush`: with it, hyper skips flushing while its read
    // buffer holds unread bytes, and closing then discards what is buffered:
    // the automatic 400/431 for a malformed head and any response before a
    // close (a 413 with its body unread, a pipelined answer before a bad
    // request) never reach the client (tests/hostile.rs, tests/limits.rs).
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(config.limits.max_h2_streams)
        .max_header_list_size(u32::try_from(config.limits.max_head_bytes).unwrap_or(u32::MAX))
        .max_pending_accept_reset_streams(Some(64))
        .max_local_error_reset_streams(Some(256));
    builder
}

fn announce(listener: &TcpListener, config: &Config) {
    let addr = listener.local_addr().map_or(config.addr, |a| a);
    tracing::info!(%addr, workers = config.workers, runtime = "multi-thread", env = ?config.env, "tern listening");
}

/// Binds a listening socket with `SO_REUSEPORT` (on Unix): the per-core
/// workers share the port, and a new process can take the port over while
/// the old one drains (a restart without refused connections; Linux lets
/// only the same user share a port this way). With the sysctl
/// `net.ipv4.tcp_migrate_req=1`, connections still queued on the old
/// process's socket when it closes move to the new one instead of being
/// reset (`docs/hardening.md`).
fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    #[cfg(unix)]
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

/// Completes on `SIGINT` (Ctrl-C) or `SIGTERM`.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutdown signal received: draining");
}

/// What a connection is doing, for its timeouts: written by the I/O
/// wrapper and the service, read by the connection's watchdog.
struct Activity {
    start: Instant,
    /// When the last response head was ready (ms since `start`).
    last_ms: AtomicU64,
    /// When the first byte of the pending request head arrived (ms since
    /// `start`), or `NO_HEAD`.
    head_ms: AtomicU64,
    in_flight: AtomicU32,
    /// Whether a request has ever been received on this connection.
    started: AtomicBool,
    /// The server is shutting down: the next request start wakes the
    /// watchdog (`drain_wake`) so that its answer closes the connection.
    draining: AtomicBool,
    drain_wake: Notify,
    /// Close with a reset (a client that stopped reading).
    reset: AtomicBool,
    /// Since when the socket has refused to take bytes we have for it
    /// (ms since `start`), or `NO_HEAD`: a client that does not read.
    write_blocked_ms: AtomicU64,
}

const NO_HEAD: u64 = u64::MAX;

/// At shutdown, how long an idle keep-alive connection stays open for a
/// request its client may already be sending (it is answered with
/// `Connection: close`).
const DRAIN_IDLE_GRACE: Duration = Duration::from_millis(500);

enum Verdict {
    Wait,
    Idle,
    SlowHead,
}

impl Activity {
    fn new() -> Self {
        Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            head_ms: AtomicU64::new(NO_HEAD),
            in_flight: AtomicU32::new(0),
            started: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            drain_wake: Notify::new(),
            write_blocked_ms: AtomicU64::new(NO_HEAD),
            reset: AtomicBool::new(false),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NO_HEAD - 1)
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// Bytes arrived. Between requests, they begin the next request head.
    #[inline]
    fn on_read(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_ms.load(Ordering::Relaxed) == NO_HEAD
        {
            self.head_ms.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    fn on_request(&self) {
        if self.draining.load(Ordering::Relaxed) {
            self.drain_wake.notify_one();
        }
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.started.store(true, Ordering::Relaxed);
        self.head_ms.store(NO_HEAD, Ordering::Relaxed);
    }

    /// The socket would not take bytes we have for it.
    #[inline]
    fn on_write_blocked(&self) {
        if self.write_blocked_ms.load(Ordering::Relaxed) == NO_HEAD {
            self.write_blocked_ms
                .store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// The socket took bytes.
    #[inline]
    fn on_write_progress(&self) {
        if self.write_blocked_ms.load(Ordering::Relaxed) != NO_HEAD {
            self.write_blocked_ms.store(NO_HEAD, Ordering::Relaxed);
        }
    }

    fn on_response(&self) {
        self.last_ms.store(self.now_ms(), Ordering::Relaxed);
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// When the watchdog should look next: the current deadline, or
    /// earlier. Any deadline that can arise later (a head beginning, a
    /// response ending) is at least `min(header_read, keep_alive)` from
    /// now, so nothing needs to wake the watchdog in between; looking
    /// early only re-arms it.
    fn next_check(&self, t: &Timeouts) -> Instant {
        let soonest_new = Instant::now() + t.header_read.min(t.keep_alive).min(t.write);
        self.deadline(t).min(soonest_new)
    }

    /// The connection's current deadline.
    fn deadline(&self, t: &Timeouts) -> Instant {
        let blocked = self.write_blocked_ms.load(Ordering::Relaxed);
        let write = (blocked != NO_HEAD).then(|| self.at(blocked) + t.write);
        let other = self.head_or_idle_deadline(t);
        write.map_or(other, |w| w.min(other))
    }

    fn head_or_idle_deadline(&self, t: &Timeouts) -> Instant {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return Instant::now() + t.keep_alive;
        }
        let head = self.head_ms.load(Ordering::Relaxed);
        if head != NO_HEAD {
            return self.at(head) + t.header_read;
        }
        if !self.started.load(Ordering::Relaxed) {
            // A client that connects and sends nothing, or only part of the
            // HTTP/2 preface, gets the header timeout from the accept.
            return self.start + t.header_read.min(t.keep_alive);
        }
        self.at(self.last_ms.load(Ordering::Relaxed)) + t.keep_alive
    }

    /// Bytes have waited longer than the write timeout for a client that
    /// does not read them.
    fn write_stalled(&self, t: &Timeouts) -> bool {
        let blocked = self.write_blocked_ms.load(Ordering::Relaxed);
        blocked != NO_HEAD && self.at(blocked) + t.write <= Instant::now()
    }

    fn verdict(&self, t: &Timeouts) -> Verdict {
        if self.head_or_idle_deadline(t) > Instant::now() {
            return Verdict::Wait;
        }
        if self.head_ms.load(Ordering::Relaxed) != NO_HEAD || !self.started.load(Ordering::Relaxed)
        {
            Verdict::SlowHead
        } else {
            Verdict::Idle
        }
    }
}

/// The connection's socket, telling `Activity` when bytes arrive and when
/// the client stops taking them.
struct WatchedIo<T: Linger> {
    io: T,
    activity: Arc<Activity>,
}

/// A socket that can be closed with a reset instead of a FIN.
trait Linger {
    /// Makes the coming close discard unsent bytes and reset the
    /// connection (`SO_LINGER` 0).
    fn reset_on_close(&self);
}

impl Linger for tokio::net::TcpStream {
    fn reset_on_close(&self) {
        let _ = socket2::SockRef::from(self).set_linger(Some(Duration::ZERO));
    }
}

#[cfg(feature = "tls")]
impl Linger for tokio_rustls::server::TlsStream<tokio::net::TcpStream> {
    fn reset_on_close(&self) {
        self.get_ref().0.reset_on_close();
    }
}

impl<T: Linger> WatchedIo<T> {
    fn new(io: T, activity: Arc<Activity>) -> Self {
        WatchedIo { io, activity }
    }
}

impl<T: Linger> Drop for WatchedIo<T> {
    fn drop(&mut self) {
        // A client that stopped reading would otherwise leave the kernel
        // holding our unsent bytes and a FIN it never takes (FIN-WAIT-1):
        // reset instead, so the memory goes with the connection.
        if self.activity.reset.load(Ordering::Relaxed) {
            self.io.reset_on_close();
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
        let before = buf.filled().len();
        let res = Pin::new(&mut this.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.on_read();
        }
        res
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
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    #[inline]
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// The per-connection service: a handle on the shared app and the peer's
/// address; nothing of the app is copied per connection.
#[derive(Clone)]
struct ConnService {
    app: AppService,
    peer: SocketAddr,
    activity: Arc<Activity>,
    max_body: u64,
    drain: Arc<DrainState>,
}

impl hyper::service::Service<http::Request<Incoming>> for ConnService {
    type Response = Response;
    type Error = Infallible;
    type Future = ConnFuture;

    #[inline]
    fn call(&self, req: http::Request<Incoming>) -> ConnFuture {
        self.activity.on_request();
        let max_body = self.max_body;
        let http1 = req.version() <= http::Version::HTTP_11;
        ConnFuture {
            http1,
            fut: self.app.call_with_drain(
                req.map(|b| Body::from_incoming(b, max_body)),
                Some(self.peer),
                Some(Arc::clone(&self.drain)),
            ),
            activity: Arc::clone(&self.activity),
        }
    }
}

/// One request on a connection: the app's future, then the connection's
/// activity note (no allocation of its own).
struct ConnFuture {
    /// An HTTP/1 answer given while the server drains says
    /// `Connection: close` (HTTP/2 uses GOAWAY instead).
    http1: bool,
    fut: crate::app::ResponseFuture,
    activity: Arc<Activity>,
}

impl Future for ConnFuture {
    type Output = Result<Response, Infallible>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match Pin::new(&mut this.fut).poll(cx) {
            Poll::Ready(mut res) => {
                this.activity.on_response();
                if this.http1 && this.activity.draining.load(Ordering::Relaxed) {
                    // The client learns from this answer that the
                    // connection ends, instead of racing its next request
                    // against the close.
                    res.headers_mut().insert(
                        http::header::CONNECTION,
                        http::HeaderValue::from_static("close"),
                    );
                }
                Poll::Ready(Ok(res))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The server could not start or failed: a configuration, route, bind or
/// I/O error. The message names the setting or route at fault.
pub struct Error {
    kind: ErrorKind,
}

enum ErrorKind {
    Config(ConfigError),
    Build(BuildError),
    Bind(SocketAddr, io::Error),
    Io(io::Error),
}

impl Error {
    fn config(e: ConfigError) -> Self {
        Error {
            kind: ErrorKind::Config(e),
        }
    }

    fn build(e: BuildError) -> Self {
        Error {
            kind: ErrorKind::Build(e),
        }
    }

    fn bind(addr: SocketAddr, e: io::Error) -> Self {
        Error {
            kind: ErrorKind::Bind(addr, e),
        }
    }

    fn io(e: io::Error) -> Self {
        Error {
            kind: ErrorKind::Io(e),
        }
    }

    /// A setting is missing or wrong.
    pub fn is_config(&self) -> bool {
        matches!(self.kind, ErrorKind::Config(_))
    }

    /// The routes do not build (a conflict, an invalid pattern).
    pub fn is_build(&self) -> bool {
        matches!(self.kind, ErrorKind::Build(_))
    }

    /// The address could not be bound.
    pub fn is_bind(&self) -> bool {
        matches!(self.kind, ErrorKind::Bind(..))
    }

    /// The name of the wrong setting, for a configuration error.
    pub fn setting(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Config(e) => Some(e.setting()),
            ErrorKind::Bind(..) => Some("TERN_ADDR"),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Config(e) => write!(f, "tern cannot start: {e}"),
            ErrorKind::Build(e) => write!(f, "tern cannot start: the routes do not build: {e}"),
            ErrorKind::Bind(addr, e) => write!(
                f,
                "tern cannot start: TERN_ADDR: cannot listen on {addr}: {e}"
            ),
            ErrorKind::Io(e) => write!(f, "tern failed: {e}"),
        }
    }
}

// `fn main() -> Result<(), tern::Error>` prints the Debug form: keep it
// the readable message.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}
