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

use std::{path::PathBuf, time::Duration};

use anyhow::{ensure, Context, Result};
use serde::Serialize;

// The trials (lab), the client's sockets, what a run records (trials)
// and how it is printed (report).
mod lab;
mod report;
mod sockets;
mod trials;

pub use report::terminal;
pub use trials::{FanoutTrial, Figure, HeldTrial, Latency, Report, SlowTrial, Stalled};

pub use crate::workloads::Workload;
use crate::{
    console::{progress, progress_end},
    load_client::{client_runtime, cores_in, pin_self, raise_open_files},
    machine::{unix_now, Machine},
    process::sha256,
    workloads::choose,
    wrk::{self, TableRequest},
};
use lab::Lab;

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

/// Whether something listens at `url`'s host and port.
pub fn reachable(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    use std::net::ToSocketAddrs;
    host_port.to_socket_addrs().is_ok_and(|mut addrs| {
        addrs.any(|a| crate::run::listening_within(a, Duration::from_millis(500)))
    })
}

/// Runs the lab.
pub fn run(opts: &Options) -> Result<Report> {
    ensure!(opts.rounds > 0, "at least one round");
    let chosen: Vec<Workload> = choose(&WORKLOADS, &opts.workloads)?;
    ensure!(
        opts.binary.exists(),
        "{} not found: build it with `cargo build --release -p peer-realtime-tern` in bench/peers",
        opts.binary.display()
    );
    let machine = Machine::detect();
    let started_unix = unix_now();
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
    raise_open_files(most as u64 + 1024, &format!("{most} sockets need"))?;
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
    progress_end();
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

#[cfg(test)]
mod tests {
    use super::sockets::{latency, percentile, publish_command, stamp};
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
