//! The bench lab's command line: `tern-bench` and `tern bench` (crate
//! `tern-cli`) parse the same [`Cmd`].
//!
//! Each command's flags are one `*Args` struct, beside the function that
//! runs it, grouped by what they measure; [`run`] only dispatches.

// The lab over real sockets and its gate; instructions counted with
// callgrind; the batteries' own labs; sockets that stay open.
mod batteries;
mod instructions;
mod lab;
mod ops;
mod realtime;
mod soak;

use std::path::Path;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use serde::Serialize;

pub use batteries::{AdminArgs, ContractsArgs, DataArgs, SiteArgs};
pub use instructions::{InprocessArgs, ScalingArgs};
pub use lab::{CompareArgs, ReportArgs, RunArgs};
pub use ops::OpsArgs;
pub use realtime::{RealtimeArgs, WsArgs};
pub use soak::SoakArgs;

/// `tern-bench`'s arguments.
#[derive(Parser)]
#[command(
    name = "tern-bench",
    about = "Tern's bench lab: in-process overhead and real-socket runs with peers"
)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Cmd,
}

/// The bench lab's commands.
#[derive(Subcommand)]
pub enum Cmd {
    /// Real sockets: every server on every workload, checked, then
    /// measured with wrk/h2load; writes evidence JSON, an HTML report and
    /// a summary.
    Run(RunArgs),
    /// The paired regression gate: builds `--base` in a worktree, runs its
    /// Tern peer and the working tree's alternately, and fails a workload
    /// whose median head/base throughput ratio is below 0.85 with a
    /// majority of the pairs below too (fewer than 3 pairs fails), or
    /// whose instructions per request over a socket (callgrind) exceed
    /// the base's by more than 3%.
    Compare(CompareArgs),
    /// Rebuilds the HTML report and summary from an evidence file.
    Report(ReportArgs),
    /// Cost per size of every parser of client input (callgrind): the
    /// instructions one request costs at n, 2n and 4n; fails when a step
    /// costs more than 2.6 times the one before (linear work doubles).
    Scaling(ScalingArgs),
    /// Schema contracts: plain serde JSON against validated JSON, CBOR
    /// and COSE (AES-256-GCM) on an 8-field order, over real sockets
    /// (rounds, rotated order) and in process (callgrind); prints the
    /// ratios against the goals (a miss is reported, not a failure) and
    /// fails on any answer outside 2xx.
    Contracts(ContractsArgs),
    /// The database workloads: Tern against axum + sqlx (one row by key,
    /// a page with its total, a session-authenticated request, a plain
    /// one), on SQLite and, with `POSTGRES_URL`, PostgreSQL; databases
    /// made, seeded and dropped by the run; fails on any answer outside
    /// 2xx or any difference between the servers' answers.
    Data(DataArgs),
    /// Tern's admin on PostgreSQL (`POSTGRES_URL`): `/ping`, a welcome
    /// page, the login form, the empty creation form, the dashboard, one
    /// row by key and a list of 200 rows, each as a ratio to `/ping` in
    /// the same round, logged in for real as a superuser and as a staff
    /// user with permission rows; statements per page counted, the list
    /// optionally split under callgrind; the schema made, seeded and
    /// dropped by the run; fails on a page that is not 200 with its
    /// marker before or after the load, or any wrk answer outside 2xx.
    Admin(AdminArgs),
    /// The WebSockets: Tern (`example-websocket`) against
    /// tokio-tungstenite and fastwebsockets, each bare on hyper 1
    /// (`peer-ws-*`): small and large echoes, memory per held socket;
    /// servers rotated each round; fails on any echo that differs from
    /// what was sent.
    Ws(WsArgs),
    /// Tern's realtime channels (`peer-realtime-tern`, one server core):
    /// idle sockets held while wrk measures the JSON path beside them
    /// (and the server's RSS per socket), broadcast latency to large
    /// topics in one process and across two over Redis and NATS, and a
    /// client that stops reading; fails on any missing delivery or wrong
    /// answer (after writing the figures).
    Realtime(RealtimeArgs),
    /// The website: the showcase's home page, `/index.json` and
    /// `/llms.txt` beside its `/plaintext`, without and with
    /// `Accept-Encoding: br` (compression on), in one process; every
    /// answer checked first; prints each row's req/s and ratio to
    /// plaintext against the goals (a miss is reported, not a failure)
    /// and fails on a failed check, a wrk error or an answer outside 2xx.
    Site(SiteArgs),
    /// Instructions per request, Tern vs a hand-written handler (callgrind).
    Inprocess(InprocessArgs),
    /// What the metrics (`TERN_METRICS`) and the request span (Tern's
    /// default JSON log output) cost per request: one Tern peer binary,
    /// each variant against `off` in alternating rounds (plaintext and
    /// mixed), with instructions per request (callgrind); prints what
    /// each part adds against the goal of 3% (a miss is reported, not a
    /// failure).
    Ops(OpsArgs),
    /// The soak test: two showcase processes (`--features redis`) behind
    /// nginx on PostgreSQL and Redis, under pages, the contract API in
    /// JSON and CBOR, logins and notes, chat WebSockets and SSE readers at
    /// bounded rates for `--duration` seconds; fails on any error,
    /// connections or file descriptors left after the load, request
    /// counts that disagree with the load's, or (from 300 s) RSS growth
    /// of 5% or more after the warm-up.
    Soak(SoakArgs),
}

/// Runs one command of the bench lab.
pub fn run(command: Cmd) -> Result<()> {
    match command {
        Cmd::Run(args) => args.run(),
        Cmd::Compare(args) => args.run(),
        Cmd::Ops(args) => args.run(),
        Cmd::Report(args) => args.run(),
        Cmd::Scaling(args) => args.run(),
        Cmd::Contracts(args) => args.run(),
        Cmd::Data(args) => args.run(),
        Cmd::Admin(args) => args.run(),
        Cmd::Ws(args) => args.run(),
        Cmd::Realtime(args) => args.run(),
        Cmd::Site(args) => args.run(),
        Cmd::Inprocess(args) => args.run(),
        Cmd::Soak(args) => args.run(),
    }
}

/// `--server-cores` and `--load-cores` of the lab and its gate (`run`,
/// `compare`), whose load generator is wrk or h2load.
#[derive(Args)]
pub struct LoadGeneratorCores {
    /// Cores of the server (taskset list).
    #[arg(long, default_value = "0")]
    pub server_cores: String,
    /// Cores of the load generator (taskset list).
    #[arg(long, default_value = "1")]
    pub load_cores: String,
}

/// `--server-cores` and `--load-cores` of the batteries' labs whose load
/// is wrk (`contracts`, `admin`, `site`).
#[derive(Args)]
pub struct WrkCores {
    /// Cores of the server (taskset list).
    #[arg(long, default_value = "0")]
    pub server_cores: String,
    /// Cores of wrk (taskset list).
    #[arg(long, default_value = "1")]
    pub load_cores: String,
}

/// A lab's rounds, seconds per trial and warm-up seconds: as given (at
/// least one round), or in quick mode one round of 1 s without warm-up.
fn timing(quick: bool, rounds: usize, seconds: f64, warmup: f64) -> (usize, f64, f64) {
    if quick {
        (1, 1.0, 0.0)
    } else {
        (rounds.max(1), seconds, warmup)
    }
}

/// Prints a lab's terminal summary, writes its figures as JSON to `out`
/// (its directory made first) and, when `keep_summary`, the summary beside
/// them (`.txt`); prints where.
fn publish(out: &Path, report: &impl Serialize, summary: &str, keep_summary: bool) -> Result<()> {
    print!("{summary}");
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(out, serde_json::to_vec_pretty(report)?)?;
    if keep_summary {
        std::fs::write(out.with_extension("txt"), summary)?;
    }
    println!("figures: {}", out.display());
    Ok(())
}

/// Fails a lab's command when its run listed problems (after its figures
/// are written).
fn fail_on_problems(problems: &[String]) -> Result<()> {
    if !problems.is_empty() {
        anyhow::bail!(
            "{} problem(s), listed above and in the figures",
            problems.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_mode_timing() {
        assert_eq!(timing(true, 5, 8.0, 2.0), (1, 1.0, 0.0));
        assert_eq!(timing(false, 5, 8.0, 2.0), (5, 8.0, 2.0));
        assert_eq!(timing(false, 0, 8.0, 2.0), (1, 8.0, 2.0));
    }
}
