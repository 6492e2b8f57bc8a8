//! The server: accepts connections and runs an [`AppService`] on them with
//! hyper (HTTP/1.1 with keep-alive and pipelining, HTTP/2 by prior
//! knowledge), under the configured limits and timeouts, until a graceful
//! shutdown.

use std::{
    future::Future,
    io,
    sync::{atomic::Ordering, Arc},
    time::{Duration, Instant},
};

use futures_util::FutureExt as _;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpListener,
    sync::watch,
};

use crate::{
    app::{App, AppService},
    config::{Config, Http1Engine, RuntimeMode, Timeouts},
    drain::DrainState,
};

mod bind;
mod connection;
mod error;
mod framing;
mod h1;
mod h2;
mod logging;
mod preface;
mod service;
mod watchdog;

use bind::bind;
use connection::{Builders, Connection};
pub use error::Error;
#[doc(hidden)]
pub use framing::fuzz_framing;
use h1::conn::H1Conn;
pub(crate) use h1::conn::{Handover, PendingUpgrade};
/// Whether the codec's writer takes a request ID field of this name
/// beside the answer's map (`AppService::call_checked`).
pub(crate) use h1::write::may_set as h1_writer_may_set;
use service::ConnService;
use watchdog::{Activity, Linger, Verdict, WatchedIo, DRAIN_IDLE_GRACE};

use crate::metrics::http::Reason;

/// A connection's socket as the server wrapped it, found again under an
/// upgrade: read and written without hyper's wrappers, and its kernel
/// buffers within reach.
pub(crate) trait ServerSocket: AsyncRead + AsyncWrite + Unpin + Send {
    /// See [`Linger::set_send_buffer`].
    fn set_send_buffer(&self, bytes: usize) -> std::io::Result<()>;
}

impl<T> ServerSocket for preface::PrefaceCheck<WatchedIo<T>>
where
    T: AsyncRead + AsyncWrite + Linger + Unpin + Send,
{
    fn set_send_buffer(&self, bytes: usize) -> std::io::Result<()> {
        self.get_ref().socket().set_send_buffer(bytes)
    }
}

/// The server's own socket under `upgraded` with the bytes hyper read past
/// the upgrade, or `upgraded` back (an HTTP/2 stream, an in-process
/// connection).
pub(crate) fn server_socket(
    upgraded: hyper::upgrade::Upgraded,
) -> Result<(Box<dyn ServerSocket>, bytes::Bytes), hyper::upgrade::Upgraded> {
    type Plain = TokioIo<preface::PrefaceCheck<WatchedIo<tokio::net::TcpStream>>>;
    let upgraded = match upgraded.downcast::<Plain>() {
        Ok(parts) => return Ok((Box::new(parts.io.into_inner()), parts.read_buf)),
        Err(upgraded) => upgraded,
    };
    #[cfg(feature = "tls")]
    {
        type Tls = TokioIo<
            preface::PrefaceCheck<
                WatchedIo<tokio_rustls::server::TlsStream<tokio::net::TcpStream>>,
            >,
        >;
        match upgraded.downcast::<Tls>() {
            Ok(parts) => Ok((Box::new(parts.io.into_inner()), parts.read_buf)),
            Err(upgraded) => Err(upgraded),
        }
    }
    #[cfg(not(feature = "tls"))]
    Err(upgraded)
}

/// Runs `app`'s command line: serves it until `SIGINT` or `SIGTERM`,
/// then drains it and returns; or, when the process is started with a
/// command (`my-app routes`, `my-app check`, `my-app --help`, the
/// commands the app adds with [`App::command`]), runs that instead. See
/// [`command`](crate::command).
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
///
/// Inside async code (`#[tokio::main]`), use [`serve`] instead (or
/// [`command::serve`](crate::command::serve) with `std::env::args_os()`
/// to keep the command line): `run` refuses to start a runtime within a
/// runtime, with an error that says so.
///
/// Tern logs through `tracing`; if the app has installed no subscriber,
/// `run` (and [`serve`]) install a plain one: lines on standard output at
/// level `info` (or the level in `RUST_LOG`), so the start and the access
/// log (`TERN_ACCESS_LOG`) show. Install your own first to choose the
/// format and filters.
#[cfg(feature = "cli")]
pub fn run<S: Clone + Send + Sync + 'static>(app: App<S>) -> Result<(), Error> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::in_runtime());
    }
    logging::install_default();
    crate::command::run(app, std::env::args_os())
}

/// Serves `app` on the tokio runtime it is awaited in, for
/// `#[tokio::main] async fn main`: binds `TERN_ADDR`, serves until
/// `SIGINT`/`SIGTERM`, drains and returns. It reads no command-line
/// arguments (a binary's flags are its own), so it runs no commands; the
/// configuration and its checks, the start hooks
/// ([`App::on_start`](crate::App::on_start)) and the default log output
/// are those of [`run`]. The configuration's runtime settings
/// (`TERN_RUNTIME`, `TERN_WORKERS`) are the caller's runtime's business
/// and are not applied.
///
/// ```no_run
/// #[tokio::main]
/// async fn main() -> Result<(), tern::Error> {
///     let app = tern::App::new().route("/", tern::routing::get(|| async { "hi" }));
///     tern::serve(app).await
/// }
/// ```
///
/// For the app's command line (`my-app routes`, `my-app check`, the
/// commands of [`App::command`](crate::App::command)) from async code, as
/// [`run`] has it, call [`command::serve`](crate::command::serve) with the
/// process's arguments instead:
///
/// ```no_run
/// #[tokio::main]
/// async fn main() -> Result<(), tern::Error> {
///     let app = tern::App::new().route("/", tern::routing::get(|| async { "hi" }));
///     tern::command::serve(app, std::env::args_os()).await
/// }
/// ```
pub async fn serve<S: Clone + Send + Sync + 'static>(app: App<S>) -> Result<(), Error> {
    logging::install_default();
    crate::start::serve(app).await
}

/// Installs Tern's default log output (as [`run`] and [`serve`] do),
/// unless a `tracing` subscriber is installed already: text or JSON lines
/// (`TERN_LOG_FORMAT`) on standard output, filtered by `RUST_LOG`. For an
/// app served with [`Server::serve_with_shutdown`], which installs none.
pub fn init_logging() {
    logging::install_default();
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

    /// Binds `TERN_ADDR`, serves on the runtime it is awaited in until
    /// `SIGINT`/`SIGTERM`, drains, returns: [`serve`] for an app built
    /// already, when `main` uses it first (to migrate its database, say).
    ///
    /// ```no_run
    /// #[tokio::main]
    /// async fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let config = tern::Config::from_env()?;
    ///     config.validate()?;
    ///     let app = tern::App::new().route("/", tern::routing::get(|| async { "hi" }));
    ///     let service = app.build_with(config)?;
    ///     // ... use `service.settings::<T>()` here ...
    ///     tern::Server::new(service).serve().await?;
    ///     Ok(())
    /// }
    /// ```
    pub async fn serve(self) -> Result<(), Error> {
        logging::install_default();
        let config = self.app.config().clone();
        let listener =
            bind(config.addr, config.reuse_port).map_err(|e| Error::bind(config.addr, e))?;
        let listener = TcpListener::from_std(listener).map_err(Error::io)?;
        announce(&listener, &config);
        self.serve_with_shutdown(listener, shutdown_signal())
            .await
            .map_err(Error::io)
    }

    /// Binds `TERN_ADDR`, serves until `SIGINT`/`SIGTERM`, drains, returns.
    /// Blocks; builds the runtime(s) the configuration asks for.
    pub fn run(self) -> Result<(), Error> {
        self.run_after(async { Ok(()) })
    }

    /// [`run`](Self::run), running `before` first on the runtime that
    /// serves (the app's start hooks: what they open, such as a pool's
    /// connections, must outlive them).
    pub(crate) fn run_after<F>(self, before: F) -> Result<(), Error>
    where
        F: Future<Output = Result<(), Error>>,
    {
        let config = self.app.config().clone();
        match config.runtime {
            RuntimeMode::MultiThread => {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(config.workers)
                    .enable_all()
                    .build()
                    .map_err(Error::io)?;
                rt.block_on(async move {
                    before.await?;
                    let listener = bind(config.addr, config.reuse_port)
                        .map_err(|e| Error::bind(config.addr, e))?;
                    let listener = TcpListener::from_std(listener).map_err(Error::io)?;
                    announce(&listener, &config);
                    self.serve_with_shutdown(listener, shutdown_signal())
                        .await
                        .map_err(Error::io)
                })
            }
            RuntimeMode::PerCore => self.run_per_core(&config, before),
        }
    }

    fn run_per_core<F>(self, config: &Config, before: F) -> Result<(), Error>
    where
        F: Future<Output = Result<(), Error>>,
    {
        // The signal handlers are installed before any worker serves: a
        // `SIGTERM` that arrives once the first answer is out must drain,
        // not kill the process.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::io)?;
        // On this runtime, which lives (and drives what `before` opened)
        // until the workers are done.
        rt.block_on(before)?;
        let mut signal = Box::pin(shutdown_signal());
        if rt
            .block_on(async { (&mut signal).now_or_never() })
            .is_some()
        {
            return Ok(());
        }
        let (tx, rx) = watch::channel(false);
        // One socket, one accept queue: each worker's runtime registers its
        // own duplicate of it, so the workers share the port without
        // `SO_REUSEPORT` (which would open it to other processes too).
        let listener =
            bind(config.addr, config.reuse_port).map_err(|e| Error::bind(config.addr, e))?;
        let addr = listener.local_addr().map_err(Error::io)?;
        let mut listeners = Vec::with_capacity(config.workers);
        for _ in 1..config.workers {
            listeners.push(listener.try_clone().map_err(Error::io)?);
        }
        listeners.push(listener);
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
        rt.block_on(signal);
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
        // Exports the app's metrics while it serves; flushes the spans and
        // metrics when this returns, after the drain.
        #[cfg(feature = "otel")]
        let _otel = crate::otel::serving(&self.app);
        let builder = Arc::new(connection_builders(&config));
        let limit = Arc::new(tokio::sync::Semaphore::new(config.limits.max_connections));
        let unread = h2::unread_hook(config.timeouts.request);
        let (stop_tx, stop_rx) = watch::channel(false);
        let drain = DrainState::new(stop_rx.clone());
        #[cfg(feature = "tls")]
        let tls = match &config.tls {
            Some(files) => Some(crate::tls::acceptor(files).map_err(io::Error::other)?),
            None => None,
        };
        // What every connection of Tern's own HTTP/1 engine shares.
        let tern = (config.http1 == Http1Engine::Tern).then(|| {
            Arc::new(TernEngine {
                settings: Arc::new(h1::conn::Settings {
                    limits: (&config.limits).into(),
                    app: self.app.clone(),
                    drain: Arc::clone(&drain),
                    timeouts: config.timeouts.clone(),
                }),
                builders: Arc::clone(&builder),
                unread: Arc::clone(&unread),
            })
        });
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
                if let Some(m) = self.app.http_metrics() {
                    m.reject(Reason::MaxConnections);
                }
                tracing::warn!(%peer, max = config.limits.max_connections, "connection refused: TERN_MAX_CONNECTIONS reached");
                drop(stream);
                continue;
            };
            let _ = stream.set_nodelay(true);
            let stop = stop_rx.clone();
            // One task type per engine: a task is as large as its future,
            // and the hyper path's (hyper's HTTP/1 connection inline) is
            // several times Tern's.
            if let Some(engine) = &tern {
                let engine = Arc::clone(engine);
                #[cfg(feature = "tls")]
                if let Some(tls) = &tls {
                    let tls = tls.clone();
                    tokio::spawn(async move {
                        let header_read = engine.settings.timeouts.header_read;
                        match tokio::time::timeout(header_read, tls.accept(stream)).await {
                            Ok(Ok(stream)) => serve_tern(stream, peer, &engine, stop, permit).await,
                            Ok(Err(e)) => {
                                tracing::debug!(%peer, error = %e, "TLS handshake failed")
                            }
                            Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                        }
                    });
                    continue;
                }
                tokio::spawn(async move {
                    serve_tern(stream, peer, &engine, stop, permit).await;
                });
                continue;
            }
            let activity = Arc::new(Activity::new());
            let service = ConnService {
                app: self.app.clone(),
                peer,
                activity: Arc::clone(&activity),
                max_body: config.limits.max_body_bytes,
                drain: Arc::clone(&drain),
                unread: Arc::clone(&unread),
            };
            let builder = Arc::clone(&builder);
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
                            serve_connection(
                                stream, &builder, service, activity, stop, &timeouts, permit,
                            )
                            .await;
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                });
                continue;
            }
            tokio::spawn(async move {
                serve_connection(stream, &builder, service, activity, stop, &timeouts, permit)
                    .await;
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

/// Serves one connection with hyper (`TERN_HTTP1=hyper`) until it
/// closes.
async fn serve_connection<I>(
    io: I,
    builder: &Arc<Builders>,
    service: ConnService,
    activity: Arc<Activity>,
    stop: watch::Receiver<bool>,
    timeouts: &Timeouts,
    permit: tokio::sync::OwnedSemaphorePermit,
) where
    I: AsyncRead + AsyncWrite + Linger + Unpin + Send + 'static,
{
    // The socket holds the connection's permit: an upgraded connection
    // outlives this function and still counts toward the limit.
    let app = service.app.clone();
    let io = WatchedIo::new(io, Arc::clone(&activity), Some(permit), Some(app.clone()));
    let conn = Connection::new(io, service, Arc::clone(builder));
    watch_connection(conn, app, activity, stop, timeouts).await;
}

/// What the connections of Tern's own HTTP/1 engine share, made once per
/// server.
struct TernEngine {
    settings: Arc<h1::conn::Settings>,
    /// For a connection that turns out to be HTTP/2 (hyper's).
    builders: Arc<Builders>,
    unread: tern_core::body::OnUnread,
}

/// Serves one connection whose HTTP/1 is Tern's own (`h1`): the first
/// bytes choose the protocol (within the header timeout), then HTTP/1 is
/// [`H1Conn`]'s, HTTP/2 hyper's as on the other engine.
async fn serve_tern<I>(
    io: I,
    peer: std::net::SocketAddr,
    engine: &TernEngine,
    mut stop: watch::Receiver<bool>,
    permit: tokio::sync::OwnedSemaphorePermit,
) where
    I: h1::buf::Socket + Linger + 'static,
{
    let settings = &engine.settings;
    let timeouts = &settings.timeouts;
    let mut check = preface::PrefaceCheck::new(io);
    let chosen = tokio::select! {
        biased;
        chosen = std::future::poll_fn(|cx| check.poll_choose(cx)) => chosen,
        () = tokio::time::sleep(timeouts.header_read.min(timeouts.keep_alive)) => {
            if let Some(m) = settings.app.http_metrics() {
                m.reject(Reason::HeaderTimeout);
            }
            return;
        }
        _ = stop.wait_for(|s| *s) => return,
    };
    match chosen {
        Err(e) => tracing::debug!(error = %e, "connection ended before its protocol was known"),
        Ok(preface::Protocol::Http1) => {
            let metrics = settings.app.http_metrics();
            if let Some(m) = metrics {
                m.connection_opened(crate::metrics::http::Protocol::Http1);
            }
            let (io, held, n) = check.into_parts();
            let io = h1::conn::Permitted::new(io, Some(permit));
            H1Conn::new(io, &held[..n], Arc::clone(settings), peer, stop).await;
            if let Some(m) = metrics {
                m.connection_closed(crate::metrics::http::Protocol::Http1);
            }
        }
        Ok(preface::Protocol::Http2) => {
            let app = settings.app.clone();
            let activity = Arc::new(Activity::new());
            let service = ConnService {
                app: app.clone(),
                peer,
                activity: Arc::clone(&activity),
                max_body: settings.limits.max_body,
                drain: Arc::clone(&settings.drain),
                unread: Arc::clone(&engine.unread),
            };
            let (io, held, n) = check.into_parts();
            // The preface is read: the HTTP/1 follower must not take the
            // frames for HTTP/1 bytes (it would see bare LFs in them).
            let io = WatchedIo::new(io, Arc::clone(&activity), Some(permit), Some(app.clone()))
                .known_http2();
            let io = preface::PrefaceCheck::replaying(io, &held[..n]);
            let conn = Connection::chosen(io, service, Arc::clone(&engine.builders));
            // Boxed: HTTP/2 connections are the rare and large ones, and
            // every HTTP/1 connection's task would otherwise be sized for
            // hyper's connection.
            Box::pin(watch_connection(conn, app, activity, stop, timeouts)).await;
        }
    }
}

/// Serves one in-memory HTTP/1.1 connection (the server's end of a
/// `tokio::io::duplex`) with Tern's own engine, on a task of its own, as
/// a socket's would be: the test client's
/// [`connect`](crate::test::TestClient::connect) when the app's
/// `TERN_HTTP1` is `tern`. Needs a Tokio runtime.
pub(crate) fn serve_in_memory(
    app: AppService,
    peer: std::net::SocketAddr,
    io: tokio::io::DuplexStream,
) {
    // No server drains an in-memory connection: its stop signal never
    // comes (a dropped sender would read as a shutdown, also to an
    // upgraded connection that outlives this one).
    static NEVER: std::sync::OnceLock<watch::Sender<bool>> = std::sync::OnceLock::new();
    let stop = NEVER.get_or_init(|| watch::channel(false).0).subscribe();
    let settings = Arc::new(h1::conn::Settings {
        limits: (&app.config().limits).into(),
        timeouts: app.config().timeouts.clone(),
        drain: DrainState::new(stop.clone()),
        app,
    });
    let io = h1::conn::Permitted::new(h1::buf::socket::Buffered::new(h1::conn::Memory(io)), None);
    tokio::spawn(H1Conn::new(io, &[], settings, peer, stop));
}

/// Runs a hyper connection until it closes; its watchdog applies the
/// head, keep-alive and shutdown rules.
async fn watch_connection<I>(
    conn: Connection<WatchedIo<I>>,
    app: AppService,
    activity: Arc<Activity>,
    mut stop: watch::Receiver<bool>,
    timeouts: &Timeouts,
) where
    I: AsyncRead + AsyncWrite + Linger + Unpin + Send + 'static,
{
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
                    if let Some(m) = app.http_metrics() {
                        m.reject(Reason::SlowReader);
                    }
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
                    Verdict::SlowHead => {
                        if let Some(m) = app.http_metrics() {
                            m.reject(Reason::HeaderTimeout);
                        }
                        break;
                    }
                    // A client that does not read what it asked for.
                }
            }
        }
    }
    if let (Some(m), Some(protocol)) = (app.http_metrics(), conn.protocol()) {
        m.connection_closed(protocol);
    }
}

fn connection_builders(config: &Config) -> Builders {
    let mut http1 = http1::Builder::new();
    http1
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
    // The watched socket batches a pipeline's answers instead (`WatchedIo`).
    //
    // HTTP/2 stream tasks run under a guard that resets a stream whose
    // answer waits longer than the write timeout for the client's window.
    let mut http2 = http2::Builder::new(h2::StreamExec {
        write_timeout: config.timeouts.write,
    });
    http2
        .timer(TokioTimer::new())
        .max_concurrent_streams(config.limits.max_h2_streams)
        .max_header_list_size(u32::try_from(config.limits.max_head_bytes).unwrap_or(u32::MAX))
        .max_pending_accept_reset_streams(Some(64))
        .max_local_error_reset_streams(Some(256))
        // RFC 8441: WebSockets (and other upgrades) over an HTTP/2 stream
        // through an extended CONNECT; routed to the path's GET handler.
        .enable_connect_protocol();
    Builders { http1, http2 }
}

fn announce(listener: &TcpListener, config: &Config) {
    let addr = listener.local_addr().map_or(config.addr, |a| a);
    tracing::info!(%addr, workers = config.workers, runtime = "multi-thread", env = ?config.env, "tern listening");
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
