//! The WebSocket workloads (issue 13): Tern's WebSockets
//! (`examples/websocket`, built on tokio-tungstenite) against the two
//! protocol libraries Tern could be built on, each bare on hyper 1
//! (`peer-ws-tungstenite`, `peer-ws-fastwebsockets` in `bench/peers`),
//! in the same run, so that the choice of library is made by measurement.
//!
//! Every trial starts a fresh server process pinned to the server cores,
//! with the same worker count for the three (`TERN_WORKERS`), and checks
//! its answers before any load: text (empty and non-ASCII) and binary
//! echoed on `/` and on a deeper path, a 1 MiB message (over Tern's
//! default limit, so the 20 MiB limit the servers are given is in force),
//! the close handshake. The client is this process (tokio-tungstenite),
//! pinned to the load cores; it compares every echo with what it sent,
//! and a wrong, missing or late answer fails the run.
//!
//! | workload | load | figures |
//! |---|---|---|
//! | `echo-small` | C connections (64), each sending a 32-byte text and awaiting its echo, in a loop | messages/s, server CPU per message |
//! | `echo-large` | 16 connections, 64 KiB binary messages | messages/s, MB/s, server CPU per message |
//! | `held` | N connections (1,000) opened, one message echoed on each, then idle | the server's RSS increase per connection |
//!
//! The server order is rotated each round and each workload; each figure
//! is reported as the median of the rounds with its range, and Tern's
//! median over each bare peer's, with the range of the per-round ratios.
//!
//! The server's and the client's CPU (seconds over wall seconds) are
//! reported beside the throughput: with one core each, a client near 1.0
//! and a server under it means the client set the pace, and the server's
//! CPU per message, not its messages/s, is the figure that compares
//! servers (so it is on `echo-large` on a 2-core machine: the client
//! masks and checks 64 KiB per message).

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::{bail, ensure, Context, Result};
use bytes::Bytes;
use futures_util::{stream, SinkExt, StreamExt, TryStreamExt};
use serde::Serialize;
use tokio::{net::TcpStream, runtime::Runtime};
use tokio_tungstenite::{
    connect_async_with_config,
    tungstenite::{
        protocol::{frame::coding::CloseCode, CloseFrame, WebSocketConfig},
        Message,
    },
    MaybeTlsStream, WebSocketStream,
};

use crate::{
    machine::Machine,
    process::{sha256, OwnCpu, ServerProcess},
    stats::{summarize, Summary},
};

pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The message and frame limit every server is given: Autobahn's
/// case 9 sends up to 16 MiB.
pub const MAX_MESSAGE: usize = 20 * 1024 * 1024;

/// `echo-small`'s text: 32 bytes.
pub const SMALL_LEN: usize = 32;

/// `echo-large`'s binary message: 64 KiB.
pub const LARGE_LEN: usize = 64 * 1024;

/// `echo-large`'s connections.
pub const LARGE_CONNECTIONS: usize = 16;

/// Connections opened (or closed) at once.
pub(crate) const OPEN_AT_ONCE: usize = 64;

/// `held`: sockets opened and closed before the measure.
const HELD_WARM: usize = 16;

/// How long an answer (an echo, a handshake, a close) may take.
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The servers, in table order: Tern, then the bare libraries.
pub const SERVERS: [&str; 3] = ["tern", "tungstenite", "fastwebsockets"];

/// A workload: a name and what it measures.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// `echo-small`, `echo-large`, `held`.
    pub name: &'static str,
    /// What it measures.
    pub description: &'static str,
}

/// The workloads, in table order.
pub const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "echo-small",
        description: "C connections, each sending a 32-byte text message and awaiting its echo in a loop: messages/s, server CPU per message",
    },
    Workload {
        name: "echo-large",
        description: "16 connections, each sending a 64 KiB binary message and awaiting its echo in a loop: messages/s, MB/s of payload (each way), server CPU per message",
    },
    Workload {
        name: "held",
        description: "N connections opened, one 32-byte message echoed on each, then idle: the server's RSS increase (VmRSS) per connection",
    },
];

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// Tern's entrant: `example-websocket` (`cargo build --release -p
    /// example-websocket`).
    pub tern: PathBuf,
    /// Where `peer-ws-tungstenite` and `peer-ws-fastwebsockets` are
    /// (built in bench/peers).
    pub peers: PathBuf,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per measured trial.
    pub seconds: f64,
    /// Warm-up seconds per trial, on the same connections.
    pub warmup_s: f64,
    /// `echo-small`'s connections.
    pub connections: usize,
    /// `held`'s connections.
    pub held: usize,
    /// Worker threads of every server's runtime (`TERN_WORKERS`).
    pub workers: usize,
    /// `taskset` cores of the servers.
    pub server_cores: String,
    /// `taskset` cores of the client (this process).
    pub load_cores: String,
    /// The workloads to run (by name); empty: all.
    pub workloads: Vec<String>,
    /// Quick mode (CI): answers checked, figures not meaningful.
    pub quick: bool,
}

/// A server measured.
#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    /// `tern`, `tungstenite`, `fastwebsockets`.
    pub name: String,
    /// The binary.
    pub binary: String,
    /// Its SHA-256.
    pub sha256: String,
}

/// One server on one workload in one round.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// The round (from 0).
    pub round: usize,
    /// The server.
    pub server: String,
    /// The workload.
    pub workload: String,
    /// Connections.
    pub connections: usize,
    /// Echoes measured (echo workloads).
    pub messages: u64,
    /// Seconds measured, from the start of the load to its last echo
    /// (`held`: the time to open the sockets and echo once on each).
    pub seconds: f64,
    /// Echoes per second (echo workloads).
    pub messages_per_s: Option<f64>,
    /// Payload MB (10^6 bytes) per second, each way (echo workloads).
    pub mb_per_s: Option<f64>,
    /// Server CPU (user + system, every thread) per echo, microseconds.
    pub cpu_us_per_msg: Option<f64>,
    /// Server CPU seconds over wall seconds: near the worker count, the
    /// server is the bottleneck; well under it, the client is.
    pub server_busy: Option<f64>,
    /// The client's (this process's) CPU seconds over wall seconds: near
    /// the number of client cores, the client is the bottleneck.
    pub client_busy: Option<f64>,
    /// `held`: VmRSS before the connections, KiB.
    pub rss_before_kib: Option<u64>,
    /// `held`: VmRSS with them open, KiB.
    pub rss_after_kib: Option<u64>,
    /// `held`: the increase per connection, KiB.
    pub kib_per_connection: Option<f64>,
    /// Connections whose close the server did not answer (a close frame,
    /// then the end of the stream) within 10 s.
    pub unclean_closes: usize,
}

/// A figure of one server on one workload, over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// The server.
    pub server: String,
    /// The workload.
    pub workload: String,
    /// `messages_per_s`, `mb_per_s`, `cpu_us_per_msg`, `server_busy`,
    /// `client_busy`, `kib_per_connection`.
    pub metric: String,
    /// Median, range and spread over the rounds.
    pub summary: Summary,
}

/// Tern's median over a bare peer's, and the range of the per-round ratios.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// The workload.
    pub workload: String,
    /// The metric (see [`Figure::metric`]).
    pub metric: String,
    /// `tungstenite` or `fastwebsockets`.
    pub peer: String,
    /// Median of Tern over median of the peer.
    pub ratio: f64,
    /// Per-round ratios: smallest.
    pub min: f64,
    /// Per-round ratios: largest.
    pub max: f64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Format.
    pub schema: String,
    /// When.
    pub started_unix: u64,
    /// Where.
    pub machine: Machine,
    /// What.
    pub servers: Vec<ServerInfo>,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per trial.
    pub warmup_s: f64,
    /// `echo-small`'s connections.
    pub connections: usize,
    /// `echo-large`'s connections.
    pub large_connections: usize,
    /// `held`'s connections.
    pub held: usize,
    /// Worker threads of every server.
    pub workers: usize,
    /// Server cores.
    pub server_cores: String,
    /// Client cores.
    pub load_cores: String,
    /// Quick mode.
    pub quick: bool,
    /// The workloads.
    pub workloads: Vec<(String, String)>,
    /// Every trial, in run order.
    pub trials: Vec<Trial>,
    /// Every figure over the rounds.
    pub figures: Vec<Figure>,
    /// Tern against each bare peer.
    pub ratios: Vec<Ratio>,
}

pub(crate) fn progress(msg: &str) {
    eprint!("\r\x1b[2K{msg}");
}

/// Runs the lab.
pub fn run(opts: &Options) -> Result<Report> {
    ensure!(opts.rounds > 0, "at least one round");
    ensure!(opts.workers > 0, "at least one worker");
    let chosen: Vec<Workload> = WORKLOADS
        .into_iter()
        .filter(|w| opts.workloads.is_empty() || opts.workloads.iter().any(|n| n == w.name))
        .collect();
    if let Some(unknown) = opts
        .workloads
        .iter()
        .find(|n| !WORKLOADS.iter().any(|w| w.name == n.as_str()))
    {
        bail!(
            "unknown workload {unknown}; they are: {}",
            WORKLOADS.map(|w| w.name).join(", ")
        );
    }
    let machine = Machine::detect();
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let binaries = [
        opts.tern.clone(),
        opts.peers.join("peer-ws-tungstenite"),
        opts.peers.join("peer-ws-fastwebsockets"),
    ];
    let mut servers = Vec::new();
    for (name, binary) in SERVERS.iter().zip(&binaries) {
        ensure!(
            binary.exists(),
            "{} not found: build Tern's with `cargo build --release -p example-websocket`, \
             the peers with `cargo build --release` in bench/peers",
            binary.display()
        );
        servers.push(ServerInfo {
            name: (*name).to_owned(),
            binary: binary.display().to_string(),
            sha256: sha256(binary)?,
        });
    }
    // The client and the servers (children inherit it) each hold every
    // connection of `held`, plus the ones of the checks.
    let want = opts.held as u64 + 1024;
    let got = rlimit::increase_nofile_limit(want).context("raising RLIMIT_NOFILE")?;
    ensure!(
        got >= want,
        "`held` needs {want} open files, and the hard limit allows {got}"
    );
    pin_self(&opts.load_cores)?;
    let rt = client_runtime(cores_in(&opts.load_cores))?;
    let mut trials = Vec::new();
    for round in 0..opts.rounds {
        for (i, w) in chosen.iter().enumerate() {
            for j in 0..SERVERS.len() {
                let k = (round + i + j) % SERVERS.len();
                progress(&format!(
                    "ws: round {}/{} {} {} ...",
                    round + 1,
                    opts.rounds,
                    w.name,
                    SERVERS[k]
                ));
                let t = trial(&rt, opts, &servers[k], w.name, round)
                    .with_context(|| format!("round {}, {}, {}", round + 1, w.name, SERVERS[k]))?;
                trials.push(t);
            }
        }
    }
    progress("");
    eprintln!();
    let (figures, ratios) = figures(&trials, opts.rounds);
    Ok(Report {
        schema: "tern-bench-ws/1".into(),
        started_unix,
        machine,
        servers,
        rounds: opts.rounds,
        seconds: opts.seconds,
        warmup_s: opts.warmup_s,
        connections: opts.connections,
        large_connections: LARGE_CONNECTIONS,
        held: opts.held,
        workers: opts.workers,
        server_cores: opts.server_cores.clone(),
        load_cores: opts.load_cores.clone(),
        quick: opts.quick,
        workloads: chosen
            .iter()
            .map(|w| (w.name.to_owned(), w.description.to_owned()))
            .collect(),
        trials,
        figures,
        ratios,
    })
}

/// Pins every thread of this process (and so the threads and children it
/// starts later) to `cores`.
pub(crate) fn pin_self(cores: &str) -> Result<()> {
    let status = Command::new("taskset")
        .args(["-a", "-cp", cores, &std::process::id().to_string()])
        .stdout(Stdio::null())
        .status()
        .context("cannot run taskset (is it installed?)")?;
    ensure!(status.success(), "taskset -a -cp {cores} failed");
    Ok(())
}

/// The number of cores in a `taskset` list (`1`, `0-3`, `1,3`).
pub(crate) fn cores_in(list: &str) -> usize {
    list.split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => match (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum::<usize>()
        .max(1)
}

/// One thread per client core: a current-thread runtime for one.
pub(crate) fn client_runtime(cores: usize) -> Result<Runtime> {
    let rt = if cores == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cores)
            .enable_all()
            .build()?
    };
    Ok(rt)
}

/// What each server is given: the same worker count, and for Tern the
/// limits the peers have built in (and room for `held`'s connections
/// above its default of 10,000).
fn start(opts: &Options, server: &ServerInfo) -> Result<ServerProcess> {
    let workers = opts.workers.to_string();
    let max = MAX_MESSAGE.to_string();
    let connections = (opts.held + 1024).max(10_000).to_string();
    let mut env = vec![("TERN_WORKERS", workers.as_str())];
    if server.name == "tern" {
        env.extend([
            ("WEBSOCKET_MAX_MESSAGE", max.as_str()),
            ("WEBSOCKET_MAX_FRAME", max.as_str()),
            ("TERN_MAX_CONNECTIONS", connections.as_str()),
        ]);
    }
    ServerProcess::start_with(
        Path::new(&server.binary),
        &[],
        &opts.server_cores,
        "TERN_ADDR",
        &env,
    )
}

fn trial(
    rt: &Runtime,
    opts: &Options,
    server: &ServerInfo,
    workload: &str,
    round: usize,
) -> Result<Trial> {
    let process = start(opts, server)?;
    let addr = process.addr;
    rt.block_on(check(addr))
        .with_context(|| format!("{} answered wrongly", server.name))?;
    let mut t = Trial {
        round,
        server: server.name.clone(),
        workload: workload.to_owned(),
        connections: 0,
        messages: 0,
        seconds: 0.0,
        messages_per_s: None,
        mb_per_s: None,
        cpu_us_per_msg: None,
        server_busy: None,
        client_busy: None,
        rss_before_kib: None,
        rss_after_kib: None,
        kib_per_connection: None,
        unclean_closes: 0,
    };
    match workload {
        "echo-small" | "echo-large" => {
            let (connections, len) = if workload == "echo-small" {
                (opts.connections, SMALL_LEN)
            } else {
                (LARGE_CONNECTIONS, LARGE_LEN)
            };
            let reads = if len == LARGE_LEN {
                LARGE_READS
            } else {
                SMALL_READS
            };
            let mut sockets = rt.block_on(open_many(addr, connections, reads))?;
            if opts.warmup_s > 0.0 {
                sockets = rt.block_on(drive(sockets, len, opts.warmup_s))?.0;
            }
            let client = OwnCpu::new();
            let before = process.usage()?;
            let client_before = client.seconds()?;
            let (sockets, messages, seconds) = rt.block_on(drive(sockets, len, opts.seconds))?;
            let after = process.usage()?;
            let client_cpu = client.seconds()? - client_before;
            t.unclean_closes = rt.block_on(close_all(sockets));
            let cpu = after.user_s + after.system_s - before.user_s - before.system_s;
            t.connections = connections;
            t.messages = messages;
            t.seconds = seconds;
            t.messages_per_s = Some(messages as f64 / seconds);
            t.mb_per_s = Some(messages as f64 * len as f64 / seconds / 1e6);
            t.cpu_us_per_msg = Some(cpu * 1e6 / messages.max(1) as f64);
            t.server_busy = Some(cpu / seconds);
            t.client_busy = Some(client_cpu / seconds);
        }
        "held" => {
            // A few short-lived sockets first, for what a server sets up
            // once (its first handshake, the first upgraded task); more
            // would leave freed memory that the held sockets reuse.
            let warm = rt.block_on(open_many(addr, HELD_WARM, SMALL_READS))?;
            let warm = rt.block_on(echo_once(warm))?;
            rt.block_on(close_all(warm));
            std::thread::sleep(Duration::from_millis(500));
            let before = process.usage()?.rss_kib;
            let started = Instant::now();
            let sockets = rt.block_on(open_many(addr, opts.held, SMALL_READS))?;
            let sockets = rt.block_on(echo_once(sockets))?;
            t.seconds = started.elapsed().as_secs_f64();
            std::thread::sleep(Duration::from_millis(500));
            let after = process.usage()?.rss_kib;
            t.unclean_closes = rt.block_on(close_all(sockets));
            t.connections = opts.held;
            t.rss_before_kib = Some(before);
            t.rss_after_kib = Some(after);
            t.kib_per_connection =
                Some(after.saturating_sub(before) as f64 / opts.held.max(1) as f64);
        }
        other => bail!("unknown workload {other}"),
    }
    process.stop()?;
    Ok(t)
}

/// The client's read buffer for small messages and held sockets: 4 KiB,
/// so that 10,000 held sockets cost the client little.
pub(crate) const SMALL_READS: usize = 4096;

/// The client's read buffer for `echo-large`: tokio-tungstenite's default
/// (128 KiB), read in one call where 4 KiB takes 16 per message; the
/// client is the bottleneck of this workload, and should be as cheap as
/// it can be.
const LARGE_READS: usize = 128 * 1024;

/// The client's configuration, with a read buffer of `reads` bytes.
pub(crate) fn client_config(reads: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(reads)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

pub(crate) async fn open(addr: SocketAddr, path: &str, reads: usize) -> Result<Ws> {
    let url = format!("ws://{addr}{path}");
    let (ws, res) = tokio::time::timeout(
        ANSWER_TIMEOUT,
        connect_async_with_config(url.as_str(), Some(client_config(reads)), true),
    )
    .await
    .with_context(|| format!("{url}: no handshake within {ANSWER_TIMEOUT:?}"))?
    .with_context(|| format!("{url}: the handshake failed"))?;
    ensure!(
        res.status() == 101,
        "{url}: the handshake answered {}",
        res.status()
    );
    Ok(ws)
}

async fn open_many(addr: SocketAddr, n: usize, reads: usize) -> Result<Vec<Ws>> {
    stream::iter(0..n)
        .map(|i| async move { open(addr, &format!("/bench/ws/{i}"), reads).await })
        .buffer_unordered(OPEN_AT_ONCE)
        .try_collect()
        .await
}

/// The next text or binary message (pings are answered by the library,
/// pongs ignored), within [`ANSWER_TIMEOUT`].
pub(crate) async fn next_message(ws: &mut Ws) -> Result<Message> {
    loop {
        let frame = tokio::time::timeout(ANSWER_TIMEOUT, ws.next())
            .await
            .context("no echo within 10 s")?;
        match frame {
            Some(Ok(m @ (Message::Text(_) | Message::Binary(_)))) => return Ok(m),
            Some(Ok(Message::Close(frame))) => bail!("the server closed the socket: {frame:?}"),
            Some(Ok(_)) => {}
            Some(Err(e)) => bail!("the socket failed: {e}"),
            None => bail!("the socket ended"),
        }
    }
}

/// Sends `message` and checks that its echo is the same message.
async fn round_trip(ws: &mut Ws, message: Message) -> Result<()> {
    ws.send(message.clone()).await.context("sending")?;
    let echo = next_message(ws).await?;
    if echo != message {
        bail!(
            "the echo differs from the message: sent {} bytes ({}), got {} bytes ({})",
            message.len(),
            kind(&message),
            echo.len(),
            kind(&echo)
        );
    }
    Ok(())
}

fn kind(m: &Message) -> &'static str {
    match m {
        Message::Text(_) => "text",
        Message::Binary(_) => "binary",
        _ => "control",
    }
}

/// `echo-small`'s text: the connection and the sequence number, 32 bytes.
fn small(connection: usize, seq: u64) -> Message {
    Message::text(format!("{connection:08x}{seq:024x}"))
}

/// `echo-large`'s two messages of a connection, sent in turn: the first
/// byte 0 or 1, the next 8 the connection, then a pattern. Built once (a
/// copy per message would cost the client, the bottleneck of this
/// workload, more than the check needs): an echo of another connection's
/// message, or of this connection's previous one, still differs from the
/// one expected.
fn large_pair(connection: usize) -> [Message; 2] {
    let mut pattern: Vec<u8> = (0..LARGE_LEN)
        .map(|i| (i as u8).wrapping_mul(31) ^ (connection as u8))
        .collect();
    pattern[1..9].copy_from_slice(&(connection as u64).to_le_bytes());
    [0u8, 1].map(|turn| {
        let mut payload = pattern.clone();
        payload[0] = turn;
        Message::binary(payload)
    })
}

/// Sends and checks messages of `len` bytes on every socket, each in its
/// own task, for `seconds`; returns the sockets, the echoes and the time
/// from the start to the last echo.
async fn drive(sockets: Vec<Ws>, len: usize, seconds: f64) -> Result<(Vec<Ws>, u64, f64)> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = sockets
        .into_iter()
        .enumerate()
        .map(|(connection, mut ws)| {
            tokio::spawn(async move {
                let pair = (len == LARGE_LEN).then(|| large_pair(connection));
                let mut seq = 0u64;
                let mut result = Ok(());
                while Instant::now() < deadline {
                    let message = match &pair {
                        Some(pair) => pair[(seq % 2) as usize].clone(),
                        None => small(connection, seq),
                    };
                    if let Err(e) = round_trip(&mut ws, message).await {
                        result = Err(e.context(format!("connection {connection}, message {seq}")));
                        break;
                    }
                    seq += 1;
                }
                (ws, seq, result)
            })
        })
        .collect();
    let mut sockets = Vec::with_capacity(tasks.len());
    let mut messages = 0;
    for task in tasks {
        let (ws, n, result) = task.await.context("a client task panicked")?;
        result?;
        sockets.push(ws);
        messages += n;
    }
    Ok((sockets, messages, started.elapsed().as_secs_f64()))
}

/// One `echo-small` message echoed on every socket.
async fn echo_once(sockets: Vec<Ws>) -> Result<Vec<Ws>> {
    stream::iter(sockets.into_iter().enumerate())
        .map(|(i, mut ws)| async move {
            round_trip(&mut ws, small(i, 0))
                .await
                .with_context(|| format!("connection {i}"))?;
            Ok::<_, anyhow::Error>(ws)
        })
        .buffer_unordered(OPEN_AT_ONCE)
        .try_collect()
        .await
}

/// Closes `ws` with `1000` and waits for the server's close and the end of
/// the stream; whether both came within [`ANSWER_TIMEOUT`].
async fn close(mut ws: Ws) -> bool {
    let done = async {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        if ws.close(Some(frame)).await.is_err() {
            return false;
        }
        let mut answered = false;
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) => answered = true,
                Some(Ok(_)) => {}
                Some(Err(tokio_tungstenite::tungstenite::Error::ConnectionClosed)) | None => {
                    return answered
                }
                Some(Err(_)) => return false,
            }
        }
    };
    tokio::time::timeout(ANSWER_TIMEOUT, done)
        .await
        .unwrap_or(false)
}

/// Closes every socket; the number whose close was not answered.
pub(crate) async fn close_all(sockets: Vec<Ws>) -> usize {
    stream::iter(sockets)
        .map(close)
        .buffer_unordered(OPEN_AT_ONCE * 4)
        .filter(|clean| std::future::ready(!clean))
        .count()
        .await
}

/// The answers, before any load: echoes of text and binary on two paths,
/// a 1 MiB message, the close handshake.
async fn check(addr: SocketAddr) -> Result<()> {
    for path in ["/", "/bench/check?x=1"] {
        let mut ws = open(addr, path, LARGE_READS).await?;
        let messages = [
            Message::text(""),
            Message::text("héllo, wörld ✓"),
            Message::binary(Bytes::from((0..=255u8).collect::<Vec<_>>())),
            Message::binary(Bytes::from(vec![0x5a; 1 << 20])),
        ];
        for (i, m) in messages.into_iter().enumerate() {
            round_trip(&mut ws, m)
                .await
                .with_context(|| format!("{path}: check message {i}"))?;
        }
        ensure!(
            close(ws).await,
            "{path}: the server did not answer the close"
        );
    }
    Ok(())
}

/// The metrics of a workload, in table order, with their labels.
fn metrics(workload: &str) -> &'static [(&'static str, &'static str)] {
    match workload {
        "echo-small" => &[
            ("messages_per_s", "msg/s"),
            ("cpu_us_per_msg", "server CPU us/msg"),
            ("server_busy", "server CPU busy"),
            ("client_busy", "client CPU busy"),
        ],
        "echo-large" => &[
            ("messages_per_s", "msg/s"),
            ("mb_per_s", "MB/s each way"),
            ("cpu_us_per_msg", "server CPU us/msg"),
            ("server_busy", "server CPU busy"),
            ("client_busy", "client CPU busy"),
        ],
        _ => &[("kib_per_connection", "RSS KiB/conn")],
    }
}

fn metric(t: &Trial, name: &str) -> Option<f64> {
    match name {
        "messages_per_s" => t.messages_per_s,
        "mb_per_s" => t.mb_per_s,
        "cpu_us_per_msg" => t.cpu_us_per_msg,
        "server_busy" => t.server_busy,
        "client_busy" => t.client_busy,
        "kib_per_connection" => t.kib_per_connection,
        _ => None,
    }
}

fn figures(trials: &[Trial], rounds: usize) -> (Vec<Figure>, Vec<Ratio>) {
    let value = |server: &str, workload: &str, name: &str, round: usize| {
        trials
            .iter()
            .find(|t| t.server == server && t.workload == workload && t.round == round)
            .and_then(|t| metric(t, name))
    };
    let mut figures = Vec::new();
    let mut ratios = Vec::new();
    for w in WORKLOADS {
        if !trials.iter().any(|t| t.workload == w.name) {
            continue;
        }
        for (name, _) in metrics(w.name) {
            let per_server: Vec<Vec<f64>> = SERVERS
                .iter()
                .map(|s| {
                    (0..rounds)
                        .filter_map(|r| value(s, w.name, name, r))
                        .collect()
                })
                .collect();
            for (s, values) in SERVERS.iter().zip(&per_server) {
                figures.push(Figure {
                    server: (*s).to_owned(),
                    workload: w.name.to_owned(),
                    metric: (*name).to_owned(),
                    summary: summarize(values),
                });
            }
            if name.ends_with("_busy") {
                continue;
            }
            for (k, peer) in SERVERS.iter().enumerate().skip(1) {
                let per_round: Vec<f64> = (0..rounds)
                    .filter_map(|r| {
                        ratio(
                            value("tern", w.name, name, r)?,
                            value(peer, w.name, name, r)?,
                        )
                    })
                    .collect();
                let medians = (
                    summarize(&per_server[0]).median,
                    summarize(&per_server[k]).median,
                );
                let range = summarize(&per_round);
                ratios.push(Ratio {
                    workload: w.name.to_owned(),
                    metric: (*name).to_owned(),
                    peer: (*peer).to_owned(),
                    ratio: ratio(medians.0, medians.1).unwrap_or(f64::NAN),
                    min: range.min,
                    max: range.max,
                });
            }
        }
    }
    (figures, ratios)
}

/// `a / b`, when both are figures and `b` is not zero (a server whose
/// RSS did not grow has no ratio).
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a.is_finite() && b.is_finite() && b > 0.0).then(|| a / b)
}

pub(crate) fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        "-".to_owned()
    } else if v.abs() >= 1000.0 {
        let n = v.round() as i64;
        let digits = n.abs().to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 {
            format!("-{out}")
        } else {
            out
        }
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The report for a terminal: each figure's median with its range over
/// the rounds, and Tern's ratio to each bare peer with the range of the
/// per-round ratios.
pub fn terminal(r: &Report) -> String {
    let m = &r.machine;
    let mut out = format!(
        "machine: {} ({} cores, {} MiB), kernel {}, {}; commit {}{}\n\
         method: {} round(s), server order rotated; echo trials {} s after {} s of warm-up on the same \
         connections; a fresh server process per trial, {} worker thread(s), on core(s) {}; the \
         client (tokio-tungstenite, this process) on core(s) {}; small: {} connections x {} B text; \
         large: {} connections x {} KiB binary; held: {} connections{}\n",
        m.cpu_model,
        m.cores,
        m.memory_kib / 1024,
        m.kernel,
        m.rustc,
        m.git_commit.get(..12).unwrap_or(&m.git_commit),
        if m.git_dirty { " (uncommitted changes)" } else { "" },
        r.rounds,
        r.seconds,
        r.warmup_s,
        r.workers,
        r.server_cores,
        r.load_cores,
        r.connections,
        SMALL_LEN,
        r.large_connections,
        LARGE_LEN / 1024,
        r.held,
        if r.quick { " (QUICK: figures mean nothing)" } else { "" }
    );
    out.push_str(&format!(
        "\n{:<11} {:<18} {:>26} {:>26} {:>26} {:>22} {:>22}\n",
        "workload",
        "figure",
        "tern",
        "tungstenite",
        "fastwebsockets",
        "tern/tungstenite",
        "tern/fastwebsockets"
    ));
    for w in WORKLOADS {
        if !r.figures.iter().any(|f| f.workload == w.name) {
            continue;
        }
        for (name, label) in metrics(w.name) {
            let cell = |s: &str| {
                r.figures
                    .iter()
                    .find(|f| f.server == s && f.workload == w.name && f.metric == *name)
                    .map_or_else(
                        || "-".to_owned(),
                        |f| {
                            format!(
                                "{} [{}-{}]",
                                fmt_value(f.summary.median),
                                fmt_value(f.summary.min),
                                fmt_value(f.summary.max)
                            )
                        },
                    )
            };
            let ratio = |peer: &str| {
                r.ratios
                    .iter()
                    .find(|x| x.peer == peer && x.workload == w.name && x.metric == *name)
                    .map_or_else(String::new, |x| {
                        if x.ratio.is_finite() {
                            format!("{:.3} [{:.3}-{:.3}]", x.ratio, x.min, x.max)
                        } else {
                            "-".to_owned()
                        }
                    })
            };
            out.push_str(&format!(
                "{:<11} {:<18} {:>26} {:>26} {:>26} {:>22} {:>22}\n",
                w.name,
                label,
                cell("tern"),
                cell("tungstenite"),
                cell("fastwebsockets"),
                ratio("tungstenite"),
                ratio("fastwebsockets"),
            ));
        }
    }
    out.push_str(
        "median [min-max] over the rounds; ratios: Tern's median over the peer's [per-round range] \
         (higher is better for msg/s and MB/s, lower for CPU and RSS); a client CPU near its core \
         count means the client set the pace: compare server CPU per message\n",
    );
    let unclean: usize = r.trials.iter().map(|t| t.unclean_closes).sum();
    if unclean > 0 {
        out.push_str(&format!(
            "closes not answered within 10 s: {unclean} (see the trials)\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_lists() {
        for (list, n) in [("1", 1), ("0-3", 4), ("1,3", 2), ("0-1,3", 3), ("", 1)] {
            assert_eq!(cores_in(list), n, "{list}");
        }
    }

    #[test]
    fn messages_have_their_sizes() {
        assert_eq!(small(u32::MAX as usize, u64::MAX).len(), SMALL_LEN);
        let [a, b] = large_pair(3);
        assert_eq!((a.len(), b.len()), (LARGE_LEN, LARGE_LEN));
        assert_ne!(a, b);
        assert_ne!(large_pair(3)[0], large_pair(4)[0]);
        assert_ne!(large_pair(3)[0], large_pair(3 + 256)[0]);
    }

    #[test]
    fn thousands() {
        assert_eq!(fmt_value(1234567.4), "1,234,567");
        assert_eq!(fmt_value(999.0), "999.0");
        assert_eq!(fmt_value(2.345), "2.35");
        assert_eq!(fmt_value(f64::NAN), "-");
    }
}
