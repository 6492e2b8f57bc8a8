//! `tern-bench soak`: two showcase processes behind nginx on PostgreSQL
//! and Redis under mixed traffic for a set time, judged on errors, leaks
//! and counts ([`crate::soak`]).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::{fail_on_problems, publish};
use crate::soak;

/// `tern-bench soak`'s flags ([`Cmd::Soak`](super::Cmd::Soak)).
#[derive(Args)]
pub struct SoakArgs {
    /// The showcase's release binary, built with `cargo build --release
    /// -p showcase --features redis`.
    #[arg(long, default_value = "target/release/showcase")]
    pub showcase: PathBuf,
    /// Seconds of load (RSS growth is judged from 300 on).
    #[arg(long, default_value_t = 600)]
    pub duration: u64,
    /// HTTP requests per second wrk aims at, at most (each connection
    /// waits connections/rate seconds between requests).
    #[arg(long, default_value_t = 100)]
    pub rate: u32,
    /// wrk's connections.
    #[arg(long, default_value_t = 8)]
    pub connections: usize,
    /// WebSockets held in the chat room, each publishing.
    #[arg(long, default_value_t = 40)]
    pub sockets: usize,
    /// SSE readers of the chat room.
    #[arg(long, default_value_t = 40)]
    pub readers: usize,
    /// Seconds between one socket's publishes (the sockets together stay
    /// under the showcase's 20 a second per client address).
    #[arg(long, default_value_t = 4.0)]
    pub publish_every: f64,
    /// Seconds between readings of each process.
    #[arg(long, default_value_t = 10)]
    pub sample_every: u64,
    /// The Redis database of the run, on `REDIS_URL`'s server.
    #[arg(long, default_value_t = 15)]
    pub redis_db: u32,
    /// Where each run's logs go (a directory per run).
    #[arg(long, default_value = "target/soak")]
    pub logs: PathBuf,
    /// Where the figures go (JSON, and the table beside it).
    #[arg(long, default_value = "target/soak/soak.json")]
    pub out: PathBuf,
}

impl SoakArgs {
    /// Runs `tern-bench soak`.
    pub(super) fn run(self) -> Result<()> {
        let opts = soak::Options {
            showcase: self.showcase,
            duration_s: self.duration,
            rate: self.rate,
            connections: self.connections,
            sockets: self.sockets,
            readers: self.readers,
            publish_every_s: self.publish_every,
            sample_every_s: self.sample_every,
            redis_db: self.redis_db,
            logs: self.logs,
        };
        let report = soak::run(&opts)?;
        publish(&self.out, &report, &soak::terminal(&report), true)?;
        fail_on_problems(&report.problems)
    }
}
