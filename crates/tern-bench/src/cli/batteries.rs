//! The batteries measured on their own: schema contracts (`contracts`),
//! the database workloads (`data`), the admin (`admin`), and the website
//! (`site`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::{fail_on_problems, publish, timing, WrkCores};
use crate::contracts;

/// `tern-bench contracts`'s flags ([`Cmd::Contracts`](super::Cmd::Contracts)).
#[derive(Args)]
pub struct ContractsArgs {
    /// Rounds (scenario order rotated each round).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Seconds per measured trial.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Warm-up seconds per scenario before the first round.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// One round of 1 s, no warm-up, a small callgrind N: checks the
    /// answers (CI); the figures mean nothing.
    #[arg(long)]
    pub quick: bool,
    /// wrk connections.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Distinct sealed messages the `cose` load cycles through.
    #[arg(long, default_value_t = 300_000)]
    pub pool: usize,
    /// Requests per callgrind measurement.
    #[arg(long, default_value_t = 2000)]
    pub requests: usize,
    /// Cores of the server and of wrk.
    #[command(flatten)]
    pub cores: WrkCores,
    /// The `contracts` example binary (built with
    /// `cargo build --release -p tern-bench --example contracts`).
    #[arg(long, default_value = "target/release/examples/contracts")]
    pub binary: PathBuf,
    /// Where the figures go (JSON).
    #[arg(long, default_value = "target/bench-contracts.json")]
    pub out: PathBuf,
}

impl ContractsArgs {
    /// Runs `tern-bench contracts`.
    pub(super) fn run(self) -> Result<()> {
        let ContractsArgs {
            rounds,
            seconds,
            warmup,
            quick,
            connections,
            pool,
            requests,
            cores:
                WrkCores {
                    server_cores,
                    load_cores,
                },
            binary,
            out,
        } = self;
        let (rounds, seconds, warmup_s) = timing(quick, rounds, seconds, warmup);
        let opts = contracts::lab::Options {
            binary,
            rounds,
            seconds,
            warmup_s,
            connections,
            pool,
            callgrind_requests: if quick { 20 } else { requests.max(1) },
            server_cores,
            load_cores,
            quick,
        };
        let report = contracts::lab::run(&opts)?;
        publish(&out, &report, &contracts::lab::terminal(&report), false)
    }
}

/// `tern-bench data`'s flags ([`Cmd::Data`](super::Cmd::Data)).
#[derive(Args)]
pub struct DataArgs {
    /// Rounds (the two servers side by side, first in turn).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Seconds per trial.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Warm-up seconds per server and workload.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// One round of 1 s, no warm-up: checks the answers (CI).
    #[arg(long)]
    pub quick: bool,
    /// wrk connections.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Cores of the servers (taskset list).
    #[arg(long, default_value = "0")]
    pub server_cores: String,
    /// Cores of wrk (taskset list).
    #[arg(long, default_value = "1")]
    pub load_cores: String,
    /// Where `peer-data-tern` and `peer-data-axum` are (built in
    /// bench/peers).
    #[arg(long, default_value = "bench/peers/target/release")]
    pub peers: PathBuf,
    /// Where the figures go (JSON).
    #[arg(long, default_value = "target/bench-data.json")]
    pub out: PathBuf,
}

impl DataArgs {
    /// Runs `tern-bench data`.
    pub(super) fn run(self) -> Result<()> {
        let DataArgs {
            rounds,
            seconds,
            warmup,
            quick,
            connections,
            server_cores,
            load_cores,
            peers,
            out,
        } = self;
        let (rounds, seconds, warmup_s) = timing(quick, rounds, seconds, warmup);
        let opts = crate::data::Options {
            peers,
            rounds,
            seconds,
            warmup_s,
            connections,
            server_cores,
            load_cores,
            quick,
        };
        let report = crate::data::run(&opts)?;
        publish(&out, &report, &crate::data::terminal(&report), false)
    }
}

/// `tern-bench admin`'s flags ([`Cmd::Admin`](super::Cmd::Admin)).
#[derive(Args)]
pub struct AdminArgs {
    /// Rounds (every workload once a round, the order rotated).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Seconds per trial.
    #[arg(long, default_value_t = 5.0)]
    pub seconds: f64,
    /// Warm-up seconds per workload.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// One round of 1 s, no warm-up: checks the pages (CI).
    #[arg(long)]
    pub quick: bool,
    /// wrk connections.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// List requests measured under callgrind after the load, to split
    /// one list request's instructions (0: no callgrind run).
    #[arg(long, default_value_t = 0)]
    pub callgrind: usize,
    /// Where callgrind's output file is kept (`callgrind_annotate` reads
    /// it).
    #[arg(long, default_value = "target/bench-admin-list.callgrind")]
    pub callgrind_out: PathBuf,
    /// Cores of the server and of wrk.
    #[command(flatten)]
    pub cores: WrkCores,
    /// Where `peer-admin-tern` is (built in bench/peers).
    #[arg(long, default_value = "bench/peers/target/release")]
    pub peers: PathBuf,
    /// Where the figures go (JSON; the summary beside it, `.txt`).
    #[arg(long, default_value = "target/bench-admin.json")]
    pub out: PathBuf,
}

impl AdminArgs {
    /// Runs `tern-bench admin`.
    pub(super) fn run(self) -> Result<()> {
        let AdminArgs {
            rounds,
            seconds,
            warmup,
            quick,
            connections,
            callgrind,
            callgrind_out,
            cores:
                WrkCores {
                    server_cores,
                    load_cores,
                },
            peers,
            out,
        } = self;
        let (rounds, seconds, warmup_s) = timing(quick, rounds, seconds, warmup);
        let opts = crate::admin::Options {
            peers,
            rounds,
            seconds,
            warmup_s,
            connections,
            server_cores,
            load_cores,
            callgrind_requests: callgrind,
            callgrind_out,
            quick,
        };
        let report = crate::admin::run(&opts)?;
        publish(&out, &report, &crate::admin::terminal(&report), true)
    }
}

/// `tern-bench site`'s flags ([`Cmd::Site`](super::Cmd::Site)).
#[derive(Args)]
pub struct SiteArgs {
    /// One round of 1 s, no warm-up: checks the answers (CI); the
    /// figures mean nothing.
    #[arg(long)]
    pub quick: bool,
    /// Rounds (row order rotated each round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Seconds per measured trial.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Warm-up seconds per row before the first round.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// wrk connections (one thread).
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Cores of the server and of wrk.
    #[command(flatten)]
    pub cores: WrkCores,
    /// The showcase binary (`cargo build --release -p showcase`).
    #[arg(long, default_value = "target/release/showcase")]
    pub showcase: PathBuf,
    /// Where the figures go (JSON; the summary beside it, `.txt`).
    #[arg(long, default_value = "target/bench-site.json")]
    pub out: PathBuf,
}

impl SiteArgs {
    /// Runs `tern-bench site`.
    pub(super) fn run(self) -> Result<()> {
        let SiteArgs {
            quick,
            rounds,
            duration,
            warmup,
            connections,
            cores:
                WrkCores {
                    server_cores,
                    load_cores,
                },
            showcase,
            out,
        } = self;
        let (rounds, seconds, warmup_s) = timing(quick, rounds, duration, warmup);
        let opts = crate::site::Options {
            showcase,
            rounds,
            seconds,
            warmup_s,
            connections,
            server_cores,
            load_cores,
            quick,
        };
        let report = crate::site::run(&opts)?;
        publish(&out, &report, &crate::site::terminal(&report), true)?;
        fail_on_problems(&report.problems)
    }
}
