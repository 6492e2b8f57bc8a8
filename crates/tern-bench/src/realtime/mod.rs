//! The realtime workloads (issue 13): Tern's channels (`tern-realtime`)
//! with many clients held, broadcasts to large topics, and a client that
//! stops reading, served by `peer-realtime-tern` (`bench/peers`: one
//! current-thread runtime, so one server core, with the JSON path beside
//! the sockets).
//!
//! Every trial starts fresh server processes pinned to the server cores
//! and checks their answers before any load: `GET /json` byte for byte,
//! and on `/socket` a join, a publish echoed to the joined publisher
//! (the envelope compared field by field) and a refused topic. The
//! client is this process (tokio-tungstenite, one current-thread runtime)
//! pinned to the load cores, with wrk beside it for HTTP.
//!
//! | workload | load | figures |
//! |---|---|---|
//! | `held` | N idle sockets (0, 1,000, 10,000) joined to `bench:idle`, then wrk on `GET /json` | req/s with N held and over N = 0 in the same round; the server's RSS increase per socket |
//! | `fanout` | N subscribers of `bench:fan`; a publisher socket (not joined) publishes M broadcasts, each sent once the one before reached everyone | delivery latency p50/p99/max over every delivery; per broadcast, the time to its last delivery (p50, max) |
//! | `fanout-redis`, `fanout-nats` | the same across two server processes sharing a Redis channel or NATS subject; half the subscribers on each, the publisher on the first | latency on the publisher's server and on the other, apart |
//! | `slow` | 1,000 subscribers and, in two of three variants, one more that never reads (a 4 KiB receive buffer); bursts of 1 KiB messages | the fast subscribers' latency with no stalled client, with one under `REALTIME_SLOW_CONSUMER=close` and under `drop`; whether the stalled one was closed |
//!
//! A message's data carries its send time (microseconds since an instant
//! of this process) and its number; a subscriber reads only those two out
//! of each message (no JSON parse) and records the receive time minus the
//! send time. Every subscriber must get every message: a missing one, a
//! wrong answer, a wrk error or a held socket that the server closes is a
//! problem, and the command fails after writing its figures.
//!
//! The client's cost is in every latency: with one client core, the
//! 10,000th delivery of a broadcast is read after the 9,999 before it.

use std::{
    net::{SocketAddr, TcpStream as StdTcpStream},
    ops::Range,
    path::{Path, PathBuf},
    sync::{
        atomic::{AtomicU32, Ordering},
        Arc,
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use anyhow::{bail, ensure, Context, Result};
use futures_util::{stream, SinkExt, StreamExt, TryStreamExt};
use serde::Serialize;
use tokio::{
    net::TcpSocket,
    runtime::Runtime,
    sync::{watch, Notify},
};
use tokio_tungstenite::{
    client_async_with_config,
    tungstenite::{self, Message},
    MaybeTlsStream,
};

mod report;

pub use report::terminal;

use crate::{
    client::Client,
    machine::Machine,
    process::{sha256, OwnCpu, ServerProcess},
    stats::Summary,
    wrk::{self, LoadResult, TableRequest},
    ws::{
        client_config, client_runtime, close_all, cores_in, next_message, open, pin_self, progress,
        Ws, ANSWER_TIMEOUT, OPEN_AT_ONCE, SMALL_READS,
    },
};

/// The topic `held`'s sockets join.
pub const IDLE_TOPIC: &str = "bench:idle";

/// The topic of `fanout` and `slow`.
pub const FAN_TOPIC: &str = "bench:fan";

/// The topic the two-process workloads probe the backend with.
const PROBE_TOPIC: &str = "bench:probe";

/// `GET /json`'s answer.
const JSON_BODY: &[u8] = br#"{"message":"Hello, World!"}"#;

/// The stalled client's receive buffer (`SO_RCVBUF`, which Linux doubles).
pub const STALLED_RCVBUF: u32 = 4096;

/// `slow`'s message: the data's padding, so that each message is about
/// 1 KiB on the wire.
pub const SLOW_PAD: usize = 1000;

/// How long a broadcast (or a burst) may take to reach everyone.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the backend may take to carry a first message between the two
/// processes.
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// The stalled client, read at the end: quiet this long means the server
/// keeps it open.
const QUIET: Duration = Duration::from_secs(1);

/// The server's default `REALTIME_SEND_QUEUE`, for the report.
pub const SEND_QUEUE: usize = 256;

/// A workload: a name and what it measures.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// `held`, `fanout`, `fanout-redis`, `fanout-nats`, `slow`.
    pub name: &'static str,
    /// What it measures.
    pub description: &'static str,
}

/// The workloads, in table order.
pub const WORKLOADS: [Workload; 5] = [
    Workload {
        name: "held",
        description: "N idle sockets joined to bench:idle held while wrk requests GET /json: req/s, its ratio to N = 0 in the same round, the server's RSS increase per socket",
    },
    Workload {
        name: "fanout",
        description: "one publisher, N subscribers of bench:fan on one server: delivery latency over every delivery, and per broadcast the time to its last delivery",
    },
    Workload {
        name: "fanout-redis",
        description: "as fanout, across two server processes over Redis pub/sub: half the subscribers on each, the publisher on the first",
    },
    Workload {
        name: "fanout-nats",
        description: "as fanout, across two server processes over NATS: half the subscribers on each, the publisher on the first",
    },
    Workload {
        name: "slow",
        description: "bursts of 1 KiB messages to fast subscribers, with no stalled client, with one that never reads under REALTIME_SLOW_CONSUMER=close, and under drop: the fast ones' latency; whether the stalled one was closed",
    },
];

/// `slow`'s variants, in table order.
pub const SLOW_VARIANTS: [&str; 3] = ["none", "stalled-close", "stalled-drop"];

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// `peer-realtime-tern`.
    pub binary: PathBuf,
    /// Rounds.
    pub rounds: usize,
    /// `held`: seconds of wrk per trial.
    pub seconds: f64,
    /// `held`: seconds of wrk before the sockets open (0: none).
    pub warmup_s: f64,
    /// `held`: wrk's connections.
    pub connections: usize,
    /// `held`: the socket counts.
    pub held: Vec<usize>,
    /// `fanout*`: the subscriber counts.
    pub fanout: Vec<usize>,
    /// `fanout*`: broadcasts measured per trial.
    pub broadcasts: usize,
    /// Broadcasts (and bursts) sent before the measured ones.
    pub warm: usize,
    /// `fanout*`: the shortest time between two broadcasts (each is also
    /// sent only after the one before reached everyone).
    pub interval: Duration,
    /// `slow`: fast subscribers.
    pub slow_subscribers: usize,
    /// `slow`: bursts measured, at least (more when the stalled client's
    /// buffers take more; see [`slow_bursts`]).
    pub bursts: usize,
    /// `slow`: messages per burst.
    pub burst: usize,
    /// The workloads to run (by name); empty: all.
    pub workloads: Vec<String>,
    /// `taskset` cores of the servers (both, in the two-process workloads).
    pub server_cores: String,
    /// `taskset` cores of the client (this process) and wrk.
    pub load_cores: String,
    /// Redis, for `fanout-redis`.
    pub redis_url: String,
    /// NATS, for `fanout-nats`.
    pub nats_url: String,
    /// Quick mode (CI): answers checked, figures not meaningful.
    pub quick: bool,
}

/// The settings a report was made with.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Rounds.
    pub rounds: usize,
    /// `held`: wrk seconds per trial.
    pub seconds: f64,
    /// `held`: wrk warm-up seconds.
    pub warmup_s: f64,
    /// `held`: wrk connections (one wrk thread).
    pub connections: usize,
    /// `held`: socket counts.
    pub held: Vec<usize>,
    /// `fanout*`: subscriber counts.
    pub fanout: Vec<usize>,
    /// `fanout*`: broadcasts measured.
    pub broadcasts: usize,
    /// Broadcasts or bursts before the measured ones.
    pub warm: usize,
    /// `fanout*`: shortest time between broadcasts, ms.
    pub interval_ms: u64,
    /// `slow`: fast subscribers.
    pub slow_subscribers: usize,
    /// `slow`: bursts measured (see [`slow_bursts`]).
    pub bursts: usize,
    /// `slow`: messages per burst.
    pub burst: usize,
    /// `slow`: the stalled client's `SO_RCVBUF`.
    pub stalled_rcvbuf: u32,
    /// The kernel's largest TCP send buffer (`net.ipv4.tcp_wmem`'s
    /// third value): what the server's socket to the stalled client
    /// may hold before its writes block.
    pub tcp_wmem_max: u64,
    /// What the server's socket to the stalled client holds before its
    /// writes block: `WEBSOCKET_SEND_BUFFER` (its default), doubled by
    /// Linux; 0 in runs from before the server capped it (then
    /// `tcp_wmem_max`).
    #[serde(default)]
    pub send_buffer: u64,
    /// The server's `REALTIME_SEND_QUEUE` (its default).
    pub send_queue: usize,
    /// Server cores (both servers of the two-process workloads).
    pub server_cores: String,
    /// Client and wrk cores.
    pub load_cores: String,
    /// Quick mode.
    pub quick: bool,
}

/// One `held` trial.
#[derive(Debug, Clone, Serialize)]
pub struct HeldTrial {
    /// The round (from 0).
    pub round: usize,
    /// Sockets held.
    pub held: usize,
    /// Seconds to open and join them.
    pub open_s: f64,
    /// VmRSS before the sockets (after wrk's warm-up), KiB.
    pub rss_before_kib: u64,
    /// VmRSS with them joined, before wrk, KiB.
    pub rss_after_kib: u64,
    /// The increase per socket, KiB (none for 0 sockets).
    pub kib_per_socket: Option<f64>,
    /// wrk's requests per second.
    pub rps: f64,
    /// `rps` over the same round's `rps` with 0 held.
    pub ratio_to_none: Option<f64>,
    /// The server's CPU seconds over wrk's seconds.
    pub server_busy: f64,
    /// What wrk measured.
    pub load: LoadResult,
    /// Text or binary messages the held sockets got (none are sent).
    pub unexpected_messages: u64,
    /// Held sockets that ended while held.
    pub ended: usize,
    /// Closes the server did not answer within 10 s.
    pub unclean_closes: usize,
}

/// Latency of the deliveries to a set of subscribers, microseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    /// Subscribers.
    pub subscribers: usize,
    /// Deliveries measured.
    pub deliveries: u64,
    /// Deliveries that never came.
    pub missing: u64,
    /// Over every delivery: median.
    pub p50_us: u32,
    /// 99th percentile.
    pub p99_us: u32,
    /// Largest.
    pub max_us: u32,
    /// Per broadcast, the time to its last delivery: median over the
    /// broadcasts.
    pub last_p50_us: u32,
    /// Largest.
    pub last_max_us: u32,
}

/// One `fanout*` trial.
#[derive(Debug, Clone, Serialize)]
pub struct FanoutTrial {
    /// The round (from 0).
    pub round: usize,
    /// `fanout`, `fanout-redis`, `fanout-nats`.
    pub workload: String,
    /// Subscribers in all.
    pub subscribers: usize,
    /// Broadcasts measured.
    pub broadcasts: usize,
    /// `all`, or `publisher's server` and `other server`.
    pub groups: Vec<(String, Latency)>,
    /// The client's CPU seconds over the broadcasts' wall seconds.
    pub client_busy: f64,
    /// The servers' CPU seconds over the same (summed over the servers).
    pub server_busy: f64,
    /// The servers' CPU (summed) per delivery, every broadcast's
    /// (the unmeasured ones too), microseconds.
    pub server_cpu_us_per_delivery: f64,
    /// Milliseconds until a first message crossed the backend.
    pub probe_ms: Option<f64>,
    /// Messages the subscribers got that were not broadcasts, or twice.
    pub unexpected_messages: u64,
    /// Closes the server did not answer within 10 s.
    pub unclean_closes: usize,
}

/// What became of the stalled client.
#[derive(Debug, Clone, Serialize)]
pub struct Stalled {
    /// Messages published while it was stalled.
    pub published: u64,
    /// Messages it found when it read at the end.
    pub received: u64,
    /// Whether the server had ended the connection.
    pub closed: bool,
    /// How: `close frame CODE`, `no close frame`, `open`.
    pub how: String,
}

/// One `slow` trial.
#[derive(Debug, Clone, Serialize)]
pub struct SlowTrial {
    /// The round (from 0).
    pub round: usize,
    /// `none`, `stalled-close`, `stalled-drop`.
    pub variant: String,
    /// The fast subscribers' latency (per burst: the time to the last
    /// delivery of the burst's last message).
    pub latency: Latency,
    /// The same over the bursts that the stalled client did not get
    /// (it was closed, or they were dropped for it): after its overflow.
    pub latency_after: Option<Latency>,
    /// The stalled client, in the stalled variants.
    pub stalled: Option<Stalled>,
    /// The client's CPU seconds over the bursts' wall seconds.
    pub client_busy: f64,
    /// The server's.
    pub server_busy: f64,
    /// The server's CPU per delivery to a fast subscriber, every
    /// burst's (the unmeasured ones too; the stalled client's share is in
    /// it), microseconds.
    pub server_cpu_us_per_delivery: f64,
    /// Messages the fast subscribers got that were not broadcasts, or
    /// twice.
    pub unexpected_messages: u64,
    /// Closes the server did not answer within 10 s.
    pub unclean_closes: usize,
}

/// A figure over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// The workload.
    pub workload: String,
    /// The case: the count (`10000`), the count and the subscribers' server
    /// (`10000 other server`), or `slow`'s variant.
    pub case: String,
    /// `rps`, `ratio_to_none`, `kib_per_socket`, `server_busy`, `p50_us`,
    /// `p99_us`, `max_us`, `last_p50_us`, `last_max_us`, `client_busy`.
    pub metric: String,
    /// Median, range and spread over the rounds.
    pub summary: Summary,
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
    /// The server binary.
    pub binary: String,
    /// Its SHA-256.
    pub sha256: String,
    /// How.
    pub settings: Settings,
    /// The workloads run.
    pub workloads: Vec<(String, String)>,
    /// Workloads skipped, and why.
    pub skipped: Vec<String>,
    /// `held` trials, in run order.
    pub held: Vec<HeldTrial>,
    /// `fanout*` trials, in run order.
    pub fanout: Vec<FanoutTrial>,
    /// `slow` trials, in run order.
    pub slow: Vec<SlowTrial>,
    /// Every figure over the rounds.
    pub figures: Vec<Figure>,
    /// What went wrong (the command fails when this is not empty).
    pub problems: Vec<String>,
}

/// Whether something listens at `url`'s host and port.
pub fn reachable(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    use std::net::ToSocketAddrs;
    host_port.to_socket_addrs().is_ok_and(|mut addrs| {
        addrs.any(|a| StdTcpStream::connect_timeout(&a, Duration::from_millis(500)).is_ok())
    })
}

/// Runs the lab.
pub fn run(opts: &Options) -> Result<Report> {
    ensure!(opts.rounds > 0, "at least one round");
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
    let chosen: Vec<Workload> = WORKLOADS
        .into_iter()
        .filter(|w| opts.workloads.is_empty() || opts.workloads.iter().any(|n| n == w.name))
        .collect();
    ensure!(
        opts.binary.exists(),
        "{} not found: build it with `cargo build --release -p peer-realtime-tern` in bench/peers",
        opts.binary.display()
    );
    let machine = Machine::detect();
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let most = opts
        .held
        .iter()
        .chain(&opts.fanout)
        .copied()
        .chain([opts.slow_subscribers])
        .max()
        .unwrap_or(0);
    // The client holds every socket; each server (a child: it inherits
    // the limit) holds its share, and wrk its connections.
    let want = most as u64 + 1024;
    let got = rlimit::increase_nofile_limit(want).context("raising RLIMIT_NOFILE")?;
    ensure!(
        got >= want,
        "{most} sockets need {want} open files, and the hard limit allows {got}"
    );
    pin_self(&opts.load_cores)?;
    let rt = client_runtime(cores_in(&opts.load_cores))?;
    let script =
        std::env::temp_dir().join(format!("tern-bench-realtime-{}.lua", std::process::id()));
    let json = TableRequest {
        method: "GET".into(),
        path: "/json".into(),
        headers: Vec::new(),
        body: None,
    };
    std::fs::write(&script, wrk::script(&[json], 1))?;
    let tcp_wmem_max = tcp_wmem_max();
    let bursts = slow_bursts(opts, SEND_BUFFER);
    let mut skipped = Vec::new();
    let mut runnable = Vec::new();
    for w in chosen {
        let service = match w.name {
            "fanout-redis" => Some(("Redis", opts.redis_url.as_str())),
            "fanout-nats" => Some(("NATS", opts.nats_url.as_str())),
            _ => None,
        };
        if let Some((name, url)) = service {
            if !reachable(url) {
                let why = format!("{}: skipped ({name} at {url} is unreachable)", w.name);
                eprintln!("{why}");
                skipped.push(why);
                continue;
            }
        }
        runnable.push(w);
    }
    let lab = Lab {
        rt: &rt,
        opts,
        bursts,
        script: &script,
        max_connections: (most + 1024).max(10_000).to_string(),
    };
    let (mut held, mut fanout, mut slow) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..opts.rounds {
        for w in &runnable {
            let step = |what: &str| {
                progress(&format!(
                    "realtime: round {}/{} {} {what} ...",
                    round + 1,
                    opts.rounds,
                    w.name
                ));
            };
            match w.name {
                "held" => {
                    let first = held.len();
                    for n in rotated(&opts.held, round) {
                        step(&n.to_string());
                        let t = lab
                            .held(n, round)
                            .with_context(|| format!("round {}, held {n}", round + 1))?;
                        held.push(t);
                    }
                    let none = held[first..].iter().find(|t| t.held == 0).map(|t| t.rps);
                    for t in &mut held[first..] {
                        t.ratio_to_none = none.filter(|r| *r > 0.0).map(|r| t.rps / r);
                    }
                }
                "slow" => {
                    for variant in rotated(&SLOW_VARIANTS, round) {
                        step(variant);
                        let t = lab
                            .slow(variant, round)
                            .with_context(|| format!("round {}, slow {variant}", round + 1))?;
                        slow.push(t);
                    }
                }
                name => {
                    for n in rotated(&opts.fanout, round) {
                        step(&n.to_string());
                        let t = lab
                            .fanout(name, n, round)
                            .with_context(|| format!("round {}, {name} {n}", round + 1))?;
                        fanout.push(t);
                    }
                }
            }
        }
    }
    progress("");
    eprintln!();
    let _ = std::fs::remove_file(&script);
    let mut report = Report {
        schema: "tern-bench-realtime/1".into(),
        started_unix,
        machine,
        binary: opts.binary.display().to_string(),
        sha256: sha256(&opts.binary)?,
        settings: Settings {
            rounds: opts.rounds,
            seconds: opts.seconds,
            warmup_s: opts.warmup_s,
            connections: opts.connections,
            held: opts.held.clone(),
            fanout: opts.fanout.clone(),
            broadcasts: opts.broadcasts,
            warm: opts.warm,
            interval_ms: opts.interval.as_millis() as u64,
            slow_subscribers: opts.slow_subscribers,
            bursts,
            burst: opts.burst,
            stalled_rcvbuf: STALLED_RCVBUF,
            tcp_wmem_max,
            send_buffer: SEND_BUFFER,
            send_queue: SEND_QUEUE,
            server_cores: opts.server_cores.clone(),
            load_cores: opts.load_cores.clone(),
            quick: opts.quick,
        },
        workloads: runnable
            .iter()
            .map(|w| (w.name.to_owned(), w.description.to_owned()))
            .collect(),
        skipped,
        held,
        fanout,
        slow,
        figures: Vec::new(),
        problems: Vec::new(),
    };
    report.figures = report::figures(&report);
    report.problems = report::problems(&report);
    Ok(report)
}

/// `items`, starting at the round's turn.
fn rotated<T: Copy>(items: &[T], round: usize) -> Vec<T> {
    let mut v = items.to_vec();
    if !v.is_empty() {
        let k = round % v.len();
        v.rotate_left(k);
    }
    v
}

/// `net.ipv4.tcp_wmem`'s largest send buffer (4 MiB when unreadable).
fn tcp_wmem_max() -> u64 {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem")
        .ok()
        .and_then(|s| s.split_whitespace().nth(2)?.parse().ok())
        .unwrap_or(4 << 20)
}

/// The server's socket send buffer: its default `WEBSOCKET_SEND_BUFFER`
/// (64 KiB), which Linux doubles.
pub const SEND_BUFFER: u64 = 2 * 64 * 1024;

/// `slow`'s bursts: at least `opts.bursts`, and enough that the stalled
/// client falls behind with a quarter of the messages still to come. What
/// it can take before the server's queue overflows is the server's send
/// buffer (`send_buffer`), its own receive buffer, the queue, a burst
/// written at one wake-up and the protocol library's write buffer.
pub fn slow_bursts(opts: &Options, send_buffer: u64) -> usize {
    let message = SLOW_PAD as u64;
    let takes = send_buffer
        + 2 * u64::from(STALLED_RCVBUF)
        + (SEND_QUEUE as u64 + opts.burst as u64 + 1) * message
        + 16 * 1024;
    let messages = takes.div_ceil(message) * 5 / 4;
    let burst = opts.burst.max(1) as u64;
    let needed = usize::try_from(messages.div_ceil(burst)).unwrap_or(usize::MAX);
    needed.saturating_sub(opts.warm).max(opts.bursts)
}

struct Lab<'a> {
    rt: &'a Runtime,
    opts: &'a Options,
    /// `slow`'s bursts measured.
    bursts: usize,
    script: &'a Path,
    max_connections: String,
}

impl Lab<'_> {
    /// A server with `env` (and the connection limit), its answers checked.
    fn start(&self, env: &[(&str, &str)]) -> Result<ServerProcess> {
        let mut all = vec![("TERN_MAX_CONNECTIONS", self.max_connections.as_str())];
        all.extend_from_slice(env);
        let process = ServerProcess::start_with(
            &self.opts.binary,
            &[],
            &self.opts.server_cores,
            "TERN_ADDR",
            &all,
        )?;
        check_json(process.addr).context("GET /json answered wrongly")?;
        self.rt
            .block_on(check_channels(process.addr))
            .context("/socket answered wrongly")?;
        Ok(process)
    }

    fn wrk(&self, addr: SocketAddr, seconds: f64) -> Result<LoadResult> {
        let (script, cores) = (self.script.to_owned(), self.opts.load_cores.clone());
        let connections = self.opts.connections;
        // wrk runs on a blocking thread: the held sockets' tasks keep
        // being served (pings answered) meanwhile.
        self.rt.block_on(async move {
            tokio::task::spawn_blocking(move || {
                wrk::run_wrk(&script, addr, &cores, connections, seconds)
            })
            .await
            .context("wrk's thread panicked")?
        })
    }

    fn held(&self, n: usize, round: usize) -> Result<HeldTrial> {
        let process = self.start(&[])?;
        let addr = process.addr;
        if self.opts.warmup_s > 0.0 {
            self.wrk(addr, self.opts.warmup_s)?;
        }
        std::thread::sleep(Duration::from_millis(500));
        let before = process.usage()?.rss_kib;
        let started = Instant::now();
        let sockets = self.rt.block_on(open_joined(addr, n, IDLE_TOPIC))?;
        let open_s = started.elapsed().as_secs_f64();
        let (stop, stopped) = watch::channel(false);
        let holders: Vec<_> = {
            let _in = self.rt.enter();
            sockets
                .into_iter()
                .map(|ws| tokio::spawn(hold(ws, stopped.clone())))
                .collect()
        };
        // Time for the memory to settle; the holders are polled meanwhile.
        self.rt
            .block_on(async { tokio::time::sleep(Duration::from_millis(500)).await });
        let after = process.usage()?.rss_kib;
        let cpu_before = process.usage()?;
        let load = self.wrk(addr, self.opts.seconds)?;
        let cpu_after = process.usage()?;
        let _ = stop.send(true);
        let mut open = Vec::with_capacity(n);
        let (mut unexpected, mut ended) = (0, 0);
        for h in holders {
            let (ws, extra, gone) = self.rt.block_on(h).context("a client task panicked")?;
            unexpected += extra;
            if gone {
                ended += 1;
            } else {
                open.push(ws);
            }
        }
        let unclean_closes = self.rt.block_on(close_all(open));
        process.stop()?;
        let seconds = load.duration_us as f64 / 1e6;
        let cpu = cpu_after.user_s + cpu_after.system_s - cpu_before.user_s - cpu_before.system_s;
        Ok(HeldTrial {
            round,
            held: n,
            open_s,
            rss_before_kib: before,
            rss_after_kib: after,
            kib_per_socket: (n > 0).then(|| after.saturating_sub(before) as f64 / n as f64),
            rps: load.rps(),
            ratio_to_none: None,
            server_busy: if seconds > 0.0 { cpu / seconds } else { 0.0 },
            load,
            unexpected_messages: unexpected,
            ended,
            unclean_closes,
        })
    }

    fn fanout(&self, workload: &str, n: usize, round: usize) -> Result<FanoutTrial> {
        let channel = format!(
            "tern-bench-{}-{}-{round}-{n}-{}",
            std::process::id(),
            workload,
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_micros())
        );
        let backend = match workload {
            "fanout-redis" => Some(("redis", self.opts.redis_url.as_str())),
            "fanout-nats" => Some(("nats", self.opts.nats_url.as_str())),
            _ => None,
        };
        let mut servers = Vec::new();
        match backend {
            Some((name, url)) => {
                let env = [
                    ("REALTIME_BACKEND", name),
                    ("REALTIME_URL", url),
                    ("REALTIME_CHANNEL", channel.as_str()),
                ];
                servers.push(self.start(&env)?);
                servers.push(self.start(&env)?);
            }
            None => servers.push(self.start(&[])?),
        }
        let addrs: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();
        let opts = self.opts;
        let measured = opts.warm..opts.warm + opts.broadcasts;
        let total = measured.end;
        // Subscribers [0, first) on the publisher's server, the rest on
        // the other one.
        let first = if addrs.len() > 1 { n / 2 } else { n };
        let (result, probe_ms, unclean_closes, cpu) = self.rt.block_on(async {
            let mut sockets = open_joined(addrs[0], first, FAN_TOPIC).await?;
            if let Some(other) = addrs.get(1) {
                sockets.extend(open_joined(*other, n - first, FAN_TOPIC).await?);
            }
            let mut publisher = open(addrs[0], "/socket", SMALL_READS).await?;
            let probe_ms = match addrs.get(1) {
                Some(other) => Some(probe(&mut publisher, *other).await?),
                None => None,
            };
            let cpu = CpuClock::start(&servers)?;
            let mut result =
                broadcast_to(sockets, &mut publisher, total, 1, 0, opts.interval).await?;
            let cpu = cpu.stop(&servers)?;
            let unclean = close_all(std::mem::take(&mut result.sockets)).await
                + close_all(vec![publisher]).await;
            Ok::<_, anyhow::Error>((result, probe_ms, unclean, cpu))
        })?;
        for s in servers {
            s.stop()?;
        }
        let lats: Vec<&[u32]> = result.latencies.iter().map(Vec::as_slice).collect();
        let seqs: Vec<Range<usize>> = measured.map(|s| s..s + 1).collect();
        let groups = if addrs.len() > 1 {
            vec![
                (
                    "publisher's server".to_owned(),
                    latency(&lats[..first], &seqs),
                ),
                ("other server".to_owned(), latency(&lats[first..], &seqs)),
            ]
        } else {
            vec![("all".to_owned(), latency(&lats, &seqs))]
        };
        Ok(FanoutTrial {
            round,
            workload: workload.to_owned(),
            subscribers: n,
            broadcasts: opts.broadcasts,
            groups,
            client_busy: cpu.client_busy,
            server_busy: cpu.server_busy,
            server_cpu_us_per_delivery: cpu.server_cpu_s * 1e6 / (n * total).max(1) as f64,
            probe_ms,
            unexpected_messages: result.unexpected,
            unclean_closes,
        })
    }

    fn slow(&self, variant: &str, round: usize) -> Result<SlowTrial> {
        let policy = if variant == "stalled-drop" {
            "drop"
        } else {
            "close"
        };
        let server = self.start(&[("REALTIME_SLOW_CONSUMER", policy)])?;
        let addr = server.addr;
        let opts = self.opts;
        let burst = opts.burst.max(1);
        let total = (opts.warm + self.bursts) * burst;
        let servers = [server];
        let (result, stalled, unclean_closes, cpu) = self.rt.block_on(async {
            let sockets = open_joined(addr, opts.slow_subscribers, FAN_TOPIC).await?;
            let mut stalled = match variant {
                "none" => None,
                _ => Some(open_stalled(addr, FAN_TOPIC).await?),
            };
            let mut publisher = open(addr, "/socket", SMALL_READS).await?;
            let cpu = CpuClock::start(&servers)?;
            let pad = SLOW_PAD;
            let mut result =
                broadcast_to(sockets, &mut publisher, total, burst, pad, opts.interval).await?;
            let cpu = cpu.stop(&servers)?;
            let stalled = match stalled.take() {
                Some(ws) => Some(read_stalled(ws, total as u64).await),
                None => None,
            };
            let unclean = close_all(std::mem::take(&mut result.sockets)).await
                + close_all(vec![publisher]).await;
            Ok::<_, anyhow::Error>((result, stalled, unclean, cpu))
        })?;
        let [server] = servers;
        server.stop()?;
        let lats: Vec<&[u32]> = result.latencies.iter().map(Vec::as_slice).collect();
        let bursts: Vec<Range<usize>> = (opts.warm..opts.warm + self.bursts)
            .map(|b| b * burst..(b + 1) * burst)
            .collect();
        let after: Vec<Range<usize>> = match &stalled {
            Some(s) => bursts
                .iter()
                .filter(|b| b.start as u64 >= s.received)
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        Ok(SlowTrial {
            round,
            variant: variant.to_owned(),
            latency: latency(&lats, &bursts),
            latency_after: (!after.is_empty()).then(|| latency(&lats, &after)),
            stalled,
            client_busy: cpu.client_busy,
            server_busy: cpu.server_busy,
            server_cpu_us_per_delivery: cpu.server_cpu_s * 1e6
                / (opts.slow_subscribers * total).max(1) as f64,
            unexpected_messages: result.unexpected,
            unclean_closes,
        })
    }
}

/// CPU of the client and the servers over a stretch of wall time.
struct CpuClock {
    own: OwnCpu,
    client: f64,
    servers: f64,
    started: Instant,
}

struct Busy {
    client_busy: f64,
    server_busy: f64,
    server_cpu_s: f64,
}

fn servers_cpu(servers: &[ServerProcess]) -> Result<f64> {
    let mut sum = 0.0;
    for s in servers {
        let u = s.usage()?;
        sum += u.user_s + u.system_s;
    }
    Ok(sum)
}

impl CpuClock {
    fn start(servers: &[ServerProcess]) -> Result<CpuClock> {
        let own = OwnCpu::new();
        Ok(CpuClock {
            client: own.seconds()?,
            own,
            servers: servers_cpu(servers)?,
            started: Instant::now(),
        })
    }

    fn stop(self, servers: &[ServerProcess]) -> Result<Busy> {
        let wall = self.started.elapsed().as_secs_f64().max(1e-9);
        let server_cpu_s = servers_cpu(servers)? - self.servers;
        Ok(Busy {
            client_busy: (self.own.seconds()? - self.client) / wall,
            server_busy: server_cpu_s / wall,
            server_cpu_s,
        })
    }
}

/// `GET /json`, byte for byte.
fn check_json(addr: SocketAddr) -> Result<()> {
    let mut c = Client::connect(addr)?;
    let res = c.send("GET", "/json", &[], None)?;
    ensure!(
        res.status == 200
            && res.body == JSON_BODY
            && res.header("content-type") == Some("application/json"),
        "got {} {:?} {:?}",
        res.status,
        res.header("content-type"),
        String::from_utf8_lossy(&res.body)
    );
    Ok(())
}

fn text_of(m: &Message) -> Result<&str> {
    match m {
        Message::Text(t) => Ok(t.as_str()),
        other => bail!("a {} message where text was expected", other.len()),
    }
}

/// The channel protocol: a join answered, a publish delivered to the
/// joined publisher with its data intact, a topic outside `bench:`
/// refused and the socket still open, the close answered.
async fn check_channels(addr: SocketAddr) -> Result<()> {
    let mut ws = open(addr, "/socket", SMALL_READS).await?;
    join(&mut ws, "bench:check").await?;
    let data = serde_json::json!({"n": [1, 2.5, null], "s": "héllo ✓"});
    let publish = serde_json::json!({"op": "publish", "topic": "bench:check", "event": "check", "data": data});
    ws.send(Message::text(publish.to_string())).await?;
    let got = next_message(&mut ws).await.context("the publish")?;
    let got: serde_json::Value = serde_json::from_str(text_of(&got)?)?;
    ensure!(
        got["topic"] == "bench:check"
            && got["event"] == "check"
            && got["data"] == data
            && got["id"].is_string(),
        "the publish came back as {got}"
    );
    for op in ["join", "publish"] {
        let refused = serde_json::json!({"op": op, "topic": "other:x", "event": "e", "data": 1});
        let refused = if op == "join" {
            serde_json::json!({"op": "join", "topic": "other:x"})
        } else {
            refused
        };
        ws.send(Message::text(refused.to_string())).await?;
        let got = next_message(&mut ws).await.context("a refused command")?;
        let got: serde_json::Value = serde_json::from_str(text_of(&got)?)?;
        ensure!(
            got["op"] == "error" && got["topic"] == "other:x",
            "{op} on other:x answered {got}"
        );
    }
    ensure!(
        close_all(vec![ws]).await == 0,
        "the server did not answer the close"
    );
    Ok(())
}

async fn join(ws: &mut Ws, topic: &str) -> Result<()> {
    let command = format!(r#"{{"op":"join","topic":"{topic}"}}"#);
    ws.send(Message::text(command)).await.context("joining")?;
    let answer = next_message(ws).await.context("the join's answer")?;
    let text = text_of(&answer)?;
    ensure!(
        text.starts_with(r#"{"op":"joined""#) && text.contains(topic),
        "joining {topic} answered {text}"
    );
    Ok(())
}

/// `n` sockets on `/socket`, each joined to `topic`.
async fn open_joined(addr: SocketAddr, n: usize, topic: &str) -> Result<Vec<Ws>> {
    stream::iter(0..n)
        .map(|i| async move {
            let mut ws = open(addr, "/socket", SMALL_READS).await?;
            join(&mut ws, topic)
                .await
                .with_context(|| format!("socket {i}"))?;
            Ok::<_, anyhow::Error>(ws)
        })
        .buffer_unordered(OPEN_AT_ONCE)
        .try_collect()
        .await
}

/// A socket that joins `topic` and then never reads, with a small
/// receive buffer so that the server's writes block soon.
async fn open_stalled(addr: SocketAddr, topic: &str) -> Result<Ws> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // Before connecting, so that the window offered is small from the
    // start.
    socket.set_recv_buffer_size(STALLED_RCVBUF)?;
    let stream = socket.connect(addr).await?;
    stream.set_nodelay(true)?;
    let url = format!("ws://{addr}/socket");
    let (mut ws, res) = tokio::time::timeout(
        ANSWER_TIMEOUT,
        client_async_with_config(
            url.as_str(),
            MaybeTlsStream::Plain(stream),
            Some(client_config(SMALL_READS)),
        ),
    )
    .await
    .context("the stalled socket: no handshake within 10 s")?
    .context("the stalled socket: the handshake failed")?;
    ensure!(
        res.status() == 101,
        "the stalled socket: the handshake answered {}",
        res.status()
    );
    join(&mut ws, topic).await?;
    Ok(ws)
}

/// Reads what the stalled client was sent, until the end or a quiet
/// second: whether the server had closed it.
async fn read_stalled(mut ws: Ws, published: u64) -> Stalled {
    let mut received = 0;
    let mut code = None;
    let closed = loop {
        match tokio::time::timeout(QUIET, ws.next()).await {
            Err(_) => break false,
            Ok(Some(Ok(Message::Text(_) | Message::Binary(_)))) => received += 1,
            Ok(Some(Ok(Message::Close(frame)))) => {
                code = Some(frame.map_or(1005, |f| u16::from(f.code)));
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(tungstenite::Error::ConnectionClosed)) | None) => break true,
            Ok(Some(Err(_))) => break true,
        }
    };
    let how = match (closed, code) {
        (false, _) => "open".to_owned(),
        (true, Some(code)) => format!("close frame {code}"),
        (true, None) => "no close frame".to_owned(),
    };
    if !closed {
        // Still open: closed by the drop that follows.
        drop(ws);
    }
    Stalled {
        published,
        received,
        closed,
        how,
    }
}

/// A held socket: answers pings (the library does, when read), counts
/// messages (none are expected) until told to stop.
async fn hold(mut ws: Ws, mut stop: watch::Receiver<bool>) -> (Ws, u64, bool) {
    let mut unexpected = 0;
    let ended = loop {
        tokio::select! {
            _ = stop.changed() => break false,
            m = ws.next() => match m {
                Some(Ok(Message::Text(_) | Message::Binary(_))) => unexpected += 1,
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break true,
            },
        }
    };
    (ws, unexpected, ended)
}

/// Publishes through the publisher, on the first server, to
/// [`PROBE_TOPIC`] until a socket on `other` gets one: the backend is
/// up both ways. Returns the milliseconds that took.
async fn probe(publisher: &mut Ws, other: SocketAddr) -> Result<f64> {
    let mut probe = open(other, "/socket", SMALL_READS).await?;
    join(&mut probe, PROBE_TOPIC).await?;
    let started = Instant::now();
    let command = format!(r#"{{"op":"publish","topic":"{PROBE_TOPIC}","event":"probe","data":0}}"#);
    loop {
        ensure!(
            started.elapsed() < PROBE_TIMEOUT,
            "no message crossed the backend within {PROBE_TIMEOUT:?}"
        );
        publisher.send(Message::text(command.as_str())).await?;
        if let Ok(Some(Ok(Message::Text(_)))) =
            tokio::time::timeout(Duration::from_millis(100), probe.next()).await
        {
            break;
        }
    }
    let ms = started.elapsed().as_secs_f64() * 1e3;
    // Probes still in flight reach only `probe`, which closes now.
    close_all(vec![probe]).await;
    Ok(ms)
}

/// Counts of deliveries per message, and a signal when one is complete.
struct Tally {
    counts: Vec<AtomicU32>,
    expected: u32,
    complete: Notify,
}

impl Tally {
    fn done(&self, seqs: Range<usize>) -> bool {
        self.counts[seqs]
            .iter()
            .all(|c| c.load(Ordering::Acquire) >= self.expected)
    }
}

/// What the subscribers recorded.
struct Broadcasts {
    sockets: Vec<Ws>,
    /// Per subscriber, per message: receive minus send time, us
    /// (`u32::MAX`: never came).
    latencies: Vec<Vec<u32>>,
    unexpected: u64,
}

/// The message's number and send time, read out of a delivery
/// (`..."data":[SEQ,SENT...`) without parsing the JSON.
fn stamp(text: &str) -> Option<(usize, u64)> {
    const KEY: &str = "\"data\":[";
    let rest = &text[text.find(KEY)? + KEY.len()..];
    let (seq, rest) = rest.split_once(',')?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    Some((seq.parse().ok()?, rest[..end].parse().ok()?))
}

/// A publish command whose data is `[seq, sent]` and, with `pad` > 0, a
/// string of `pad` bytes.
fn publish_command(seq: usize, sent: u64, pad: &str) -> String {
    if pad.is_empty() {
        format!(r#"{{"op":"publish","topic":"{FAN_TOPIC}","event":"b","data":[{seq},{sent}]}}"#)
    } else {
        format!(
            r#"{{"op":"publish","topic":"{FAN_TOPIC}","event":"b","data":[{seq},{sent},"{pad}"]}}"#
        )
    }
}

/// A subscriber: records each message's latency until told to stop.
async fn subscribe(
    mut ws: Ws,
    base: Instant,
    tally: Arc<Tally>,
    mut stop: watch::Receiver<bool>,
) -> (Ws, Vec<u32>, u64) {
    let mut latencies = vec![u32::MAX; tally.counts.len()];
    let mut unexpected = 0;
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            m = ws.next() => match m {
                Some(Ok(Message::Text(text))) => {
                    let now = base.elapsed().as_micros() as u64;
                    match stamp(text.as_str()) {
                        Some((seq, sent)) if seq < latencies.len() && latencies[seq] == u32::MAX => {
                            latencies[seq] = now.saturating_sub(sent).min(u64::from(u32::MAX - 1)) as u32;
                            if tally.counts[seq].fetch_add(1, Ordering::AcqRel) + 1 == tally.expected {
                                tally.complete.notify_one();
                            }
                        }
                        _ => unexpected += 1,
                    }
                }
                Some(Ok(Message::Binary(_))) => unexpected += 1,
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
        }
    }
    (ws, latencies, unexpected)
}

/// Publishes `total` messages in bursts of `burst` (padded with `pad`
/// bytes), each burst after the one before reached every subscriber and
/// at least `interval` after it was sent; every subscriber records every
/// message's latency.
async fn broadcast_to(
    sockets: Vec<Ws>,
    publisher: &mut Ws,
    total: usize,
    burst: usize,
    pad: usize,
    interval: Duration,
) -> Result<Broadcasts> {
    let base = Instant::now();
    let tally = Arc::new(Tally {
        counts: (0..total).map(|_| AtomicU32::new(0)).collect(),
        expected: u32::try_from(sockets.len()).context("too many subscribers")?,
        complete: Notify::new(),
    });
    let (stop, stopped) = watch::channel(false);
    let tasks: Vec<_> = sockets
        .into_iter()
        .map(|ws| tokio::spawn(subscribe(ws, base, Arc::clone(&tally), stopped.clone())))
        .collect();
    let pad = "x".repeat(pad);
    let mut seq = 0;
    while seq < total {
        let first = seq;
        let sent_at = tokio::time::Instant::now();
        while seq < total && seq < first + burst {
            let sent = base.elapsed().as_micros() as u64;
            publisher
                .send(Message::text(publish_command(seq, sent, &pad)))
                .await
                .context("publishing")?;
            seq += 1;
        }
        let deadline = sent_at + DELIVERY_TIMEOUT;
        while !tally.done(first..seq) {
            if tokio::time::timeout_at(deadline, tally.complete.notified())
                .await
                .is_err()
            {
                // Counted as missing below.
                break;
            }
        }
        tokio::time::sleep_until(sent_at + interval).await;
    }
    let _ = stop.send(true);
    let mut out = Broadcasts {
        sockets: Vec::with_capacity(tasks.len()),
        latencies: Vec::with_capacity(tasks.len()),
        unexpected: 0,
    };
    for t in tasks {
        let (ws, latencies, unexpected) = t.await.context("a subscriber task panicked")?;
        out.sockets.push(ws);
        out.latencies.push(latencies);
        out.unexpected += unexpected;
    }
    Ok(out)
}

/// The nearest-rank percentile `p` (0-100) of sorted values.
fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Latency over the subscribers `lats`: every delivery of every message
/// in `groups`, and per group the time to its last delivery (a group is
/// one broadcast, or a burst, whose last delivery is its last message's).
fn latency(lats: &[&[u32]], groups: &[Range<usize>]) -> Latency {
    let mut all = Vec::with_capacity(lats.len() * groups.iter().map(|g| g.len()).sum::<usize>());
    let mut last = Vec::with_capacity(groups.len());
    let mut missing = 0;
    for g in groups {
        let mut worst = 0;
        for l in lats {
            for &v in &l[g.clone()] {
                if v == u32::MAX {
                    missing += 1;
                } else {
                    all.push(v);
                    worst = worst.max(v);
                }
            }
        }
        last.push(worst);
    }
    all.sort_unstable();
    last.sort_unstable();
    Latency {
        subscribers: lats.len(),
        deliveries: all.len() as u64,
        missing,
        p50_us: percentile(&all, 50.0),
        p99_us: percentile(&all, 99.0),
        max_us: all.last().copied().unwrap_or(0),
        last_p50_us: percentile(&last, 50.0),
        last_max_us: last.last().copied().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_read_from_envelopes() {
        let sent = publish_command(7, 123_456, "");
        assert!(sent.ends_with(r#""data":[7,123456]}"#), "{sent}");
        let envelope = r#"{"topic":"bench:fan","event":"b","id":"ab.3","data":[7,123456]}"#;
        assert_eq!(stamp(envelope), Some((7, 123_456)));
        let padded = r#"{"topic":"bench:fan","event":"b","id":"ab.3","data":[12,99,"xxxx"]}"#;
        assert_eq!(stamp(padded), Some((12, 99)));
        for bad in [
            r#"{"op":"joined","topic":"bench:fan","presence":[]}"#,
            r#"{"data":[x,1]}"#,
            r#"{"data":[1]}"#,
        ] {
            assert_eq!(stamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&v, 100.0), 100);
        assert_eq!(percentile(&[5], 99.0), 5);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn latency_counts_missing_and_last_deliveries() {
        let a = [10, 20, u32::MAX, 40];
        let b = [30, 5, 7, 1];
        let l = latency(&[&a, &b], &[0..1, 1..2, 2..4]);
        assert_eq!(l.missing, 1);
        assert_eq!(l.deliveries, 7);
        assert_eq!(l.max_us, 40);
        // Last deliveries per group: 30, 20, 40.
        assert_eq!((l.last_p50_us, l.last_max_us), (30, 40));
    }

    #[test]
    fn rotation() {
        assert_eq!(rotated(&[0, 1, 2], 4), vec![1, 2, 0]);
        assert!(rotated::<usize>(&[], 1).is_empty());
    }

    #[test]
    fn urls_to_addresses() {
        assert!(!reachable("redis://127.0.0.1:1/"));
        assert!(!reachable("nats://user:pw@127.0.0.1:1"));
    }
}
