//! Sockets that stay open: WebSocket echoes against the protocol
//! libraries (`ws`) and Tern's realtime channels (`realtime`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::{fail_on_problems, publish, timing};

/// `tern-bench ws`'s flags ([`Cmd::Ws`](super::Cmd::Ws)).
#[derive(Args)]
pub struct WsArgs {
    /// Rounds (server order rotated each round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Seconds per echo trial.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Warm-up seconds per echo trial (on the same connections).
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// One round of 1 s, no warm-up, 200 held sockets: checks the
    /// answers (CI); the figures mean nothing.
    #[arg(long)]
    pub quick: bool,
    /// `echo-small`'s connections.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// `held`'s connections.
    #[arg(long, default_value_t = 1000)]
    pub held: usize,
    /// Worker threads of every server's runtime (`TERN_WORKERS`).
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Workloads, comma-separated (default: all): echo-small,
    /// echo-large, held.
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Cores of the servers (taskset list).
    #[arg(long, default_value = "0")]
    pub server_cores: String,
    /// Cores of the client, this process (taskset list).
    #[arg(long, default_value = "1")]
    pub load_cores: String,
    /// Tern's entrant (`cargo build --release -p example-websocket`).
    #[arg(long, default_value = "target/release/example-websocket")]
    pub tern: PathBuf,
    /// Where `peer-ws-tungstenite` and `peer-ws-fastwebsockets` are
    /// (built in bench/peers).
    #[arg(long, default_value = "bench/peers/target/release")]
    pub peers: PathBuf,
    /// Where the figures go (JSON).
    #[arg(long, default_value = "target/bench-ws.json")]
    pub out: PathBuf,
}

impl WsArgs {
    /// Runs `tern-bench ws`.
    pub(super) fn run(self) -> Result<()> {
        let WsArgs {
            rounds,
            seconds,
            warmup,
            quick,
            connections,
            held,
            workers,
            workloads,
            server_cores,
            load_cores,
            tern,
            peers,
            out,
        } = self;
        let (rounds, seconds, warmup_s) = timing(quick, rounds, seconds, warmup);
        let opts = crate::ws::Options {
            tern,
            peers,
            rounds,
            seconds,
            warmup_s,
            connections,
            held: if quick { held.min(200) } else { held },
            workers,
            workloads,
            server_cores,
            load_cores,
            quick,
        };
        let report = crate::ws::run(&opts)?;
        publish(&out, &report, &crate::ws::terminal(&report), false)?;
        let unclean: usize = report.trials.iter().map(|t| t.unclean_closes).sum();
        if quick && unclean > 0 {
            anyhow::bail!("{unclean} closes not answered in quick mode");
        }
        Ok(())
    }
}

/// `tern-bench realtime`'s flags ([`Cmd::Realtime`](super::Cmd::Realtime)).
#[derive(Args)]
pub struct RealtimeArgs {
    /// Rounds (counts and variants rotated each round).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// `held`: seconds of wrk per trial.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// `held`: seconds of wrk before the sockets open.
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Small counts, about a second per trial: checks the answers and
    /// every delivery (CI); the figures mean nothing.
    #[arg(long)]
    pub quick: bool,
    /// `held`: wrk's connections (one thread), as the lab's json
    /// workload.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// `held`: idle sockets, comma-separated (0 is the baseline of the
    /// ratio).
    #[arg(long, value_delimiter = ',', default_value = "0,1000,10000")]
    pub held: Vec<usize>,
    /// `fanout*`: subscribers, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    pub fanout: Vec<usize>,
    /// `fanout*`: broadcasts measured per trial.
    #[arg(long, default_value_t = 50)]
    pub broadcasts: usize,
    /// Shortest time between two broadcasts (or bursts), ms; each
    /// also waits for the one before to reach everyone.
    #[arg(long, default_value_t = 100)]
    pub interval_ms: u64,
    /// `slow`: fast subscribers.
    #[arg(long, default_value_t = 1000)]
    pub slow_subscribers: usize,
    /// `slow`: bursts measured, at least: more when the stalled
    /// client's buffers (the server's TCP send buffer, up to
    /// `net.ipv4.tcp_wmem`'s largest) need more to overflow.
    #[arg(long, default_value_t = 20)]
    pub bursts: usize,
    /// `slow`: 1 KiB messages per burst.
    #[arg(long, default_value_t = 64)]
    pub burst: usize,
    /// Workloads, comma-separated (default: all): held, fanout,
    /// fanout-redis, fanout-nats, slow.
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Cores of the servers (taskset list).
    #[arg(long, default_value = "0")]
    pub server_cores: String,
    /// Cores of the client, this process, and wrk (taskset list).
    #[arg(long, default_value = "1")]
    pub load_cores: String,
    /// Redis for `fanout-redis` (default: `REDIS_URL`, else
    /// redis://127.0.0.1:6379/); skipped when unreachable.
    #[arg(long)]
    pub redis_url: Option<String>,
    /// NATS for `fanout-nats` (default: `NATS_URL`, else
    /// nats://127.0.0.1:4222); skipped when unreachable.
    #[arg(long)]
    pub nats_url: Option<String>,
    /// Where `peer-realtime-tern` is (built in bench/peers).
    #[arg(long, default_value = "bench/peers/target/release")]
    pub peers: PathBuf,
    /// Where the figures go (JSON; the summary beside it, `.txt`).
    #[arg(long, default_value = "target/bench-realtime.json")]
    pub out: PathBuf,
}

impl RealtimeArgs {
    /// Runs `tern-bench realtime`.
    pub(super) fn run(self) -> Result<()> {
        let RealtimeArgs {
            rounds,
            seconds,
            warmup,
            quick,
            connections,
            held,
            fanout,
            broadcasts,
            interval_ms,
            slow_subscribers,
            bursts,
            burst,
            workloads,
            server_cores,
            load_cores,
            redis_url,
            nats_url,
            peers,
            out,
        } = self;
        let env_or = |given: Option<String>, var: &str, default: &str| {
            given
                .or_else(|| std::env::var(var).ok().filter(|v| !v.is_empty()))
                .unwrap_or_else(|| default.to_owned())
        };
        let (rounds, seconds, warmup_s) = timing(quick, rounds, seconds, warmup);
        let opts = crate::realtime::Options {
            binary: peers.join("peer-realtime-tern"),
            rounds,
            seconds,
            warmup_s,
            connections,
            held: if quick {
                let mut small: Vec<usize> = held.iter().map(|&n| n.min(100)).collect();
                small.dedup();
                small
            } else {
                held
            },
            fanout: if quick {
                vec![fanout.iter().copied().min().unwrap_or(100).min(100)]
            } else {
                fanout
            },
            broadcasts: if quick {
                broadcasts.min(10)
            } else {
                broadcasts
            },
            warm: if quick { 1 } else { 5 },
            interval: std::time::Duration::from_millis(if quick {
                interval_ms.min(20)
            } else {
                interval_ms
            }),
            slow_subscribers: if quick {
                slow_subscribers.min(50)
            } else {
                slow_subscribers
            },
            bursts: if quick { bursts.min(8) } else { bursts },
            burst,
            workloads,
            server_cores,
            load_cores,
            redis_url: env_or(redis_url, "REDIS_URL", "redis://127.0.0.1:6379/"),
            nats_url: env_or(nats_url, "NATS_URL", "nats://127.0.0.1:4222"),
            quick,
        };
        let report = crate::realtime::run(&opts)?;
        publish(&out, &report, &crate::realtime::terminal(&report), true)?;
        fail_on_problems(&report.problems)
    }
}
