//! The bench lab's command line: `tern-bench` and `tern bench` (crate
//! `tern-cli`) parse the same [`Cmd`].

use std::path::PathBuf;

use crate::{callgrind, compare, contracts, evidence::Settings, inprocess, report, run, scaling};
use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

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
    Run {
        /// About a second per server and workload, to check correctness
        /// (CI); the figures mean nothing.
        #[arg(long)]
        quick: bool,
        /// Rounds (server order rotated each round).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Seconds per measured trial.
        #[arg(long, default_value_t = 8.0)]
        duration: f64,
        /// Warm-up seconds before each trial.
        #[arg(long, default_value_t = 2.0)]
        warmup: f64,
        /// Connection counts, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "16,1000")]
        connections: Vec<usize>,
        /// Servers, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "tern,hyper,axum,actix")]
        servers: Vec<String>,
        /// Workloads, comma-separated (default: all).
        #[arg(long, value_delimiter = ',')]
        workloads: Vec<String>,
        /// Idle keep-alive connections for the memory stage (0 skips it).
        #[arg(long, default_value_t = 5000)]
        idle_connections: usize,
        /// Cores of the server (taskset list).
        #[arg(long, default_value = "0")]
        server_cores: String,
        /// Cores of the load generator (taskset list).
        #[arg(long, default_value = "1")]
        load_cores: String,
        /// Do not build bench/peers first.
        #[arg(long)]
        no_build: bool,
        /// Measure a tree with uncommitted changes (refused otherwise,
        /// except in quick mode: evidence must name the code it measured;
        /// the evidence then says "dirty").
        #[arg(long)]
        allow_dirty: bool,
        /// Where evidence and reports go.
        #[arg(long, default_value = "bench/results/latest")]
        out: PathBuf,
    },
    /// The paired regression gate: builds `--base` in a worktree, runs its
    /// Tern peer and the working tree's alternately, and fails a workload
    /// whose median head/base throughput ratio is below 0.85 with a
    /// majority of the pairs below too (fewer than 3 pairs fails), or
    /// whose instructions per request over a socket (callgrind) exceed
    /// the base's by more than 3%.
    Compare {
        /// The base revision (a commit, tag or branch).
        #[arg(long)]
        base: String,
        /// Rounds (pairs) per workload.
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Seconds per trial.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Connections.
        #[arg(long, default_value_t = 16)]
        connections: usize,
        /// Workloads, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "plaintext,json,user,mixed"
        )]
        workloads: Vec<String>,
        /// Cargo features of the head's peers.
        #[arg(long, value_delimiter = ',')]
        head_features: Vec<String>,
        /// Requests per callgrind count of instructions per request (the
        /// second signal); 0 turns it off.
        #[arg(long, default_value_t = 2000)]
        instructions: usize,
        /// The gate's self-test: inject this fraction (0.10 for 10%) of
        /// the base's time per request as extra work into the head on
        /// every workload (builds the head with `peer-tern/slowdown`).
        #[arg(long)]
        slowdown: Option<f64>,
        /// Cores of the server (taskset list).
        #[arg(long, default_value = "0")]
        server_cores: String,
        /// Cores of the load generator (taskset list).
        #[arg(long, default_value = "1")]
        load_cores: String,
    },
    /// Rebuilds the HTML report and summary from an evidence file.
    Report {
        /// The evidence JSON.
        evidence: PathBuf,
    },
    /// Cost per size of every parser of client input (callgrind): the
    /// instructions one request costs at n, 2n and 4n; fails when a step
    /// costs more than 2.6 times the one before (linear work doubles).
    Scaling {
        /// Smaller sizes (CI).
        #[arg(long)]
        quick: bool,
        /// Parsers, comma-separated (default: all).
        #[arg(long, value_delimiter = ',')]
        parsers: Vec<String>,
        /// The `scaling` example binary (built with
        /// `cargo build --release -p tern-bench --example scaling`).
        #[arg(long, default_value = "target/release/examples/scaling")]
        binary: PathBuf,
        /// Where the figures go (JSON).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Schema contracts: plain serde JSON against validated JSON, CBOR
    /// and COSE (AES-256-GCM) on an 8-field order, over real sockets
    /// (rounds, rotated order) and in process (callgrind); prints the
    /// ratios against the goals (a miss is reported, not a failure) and
    /// fails on any answer outside 2xx.
    Contracts {
        /// Rounds (scenario order rotated each round).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Seconds per measured trial.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Warm-up seconds per scenario before the first round.
        #[arg(long, default_value_t = 2.0)]
        warmup: f64,
        /// One round of 1 s, no warm-up, a small callgrind N: checks the
        /// answers (CI); the figures mean nothing.
        #[arg(long)]
        quick: bool,
        /// wrk connections.
        #[arg(long, default_value_t = 16)]
        connections: usize,
        /// Distinct sealed messages the `cose` load cycles through.
        #[arg(long, default_value_t = 300_000)]
        pool: usize,
        /// Requests per callgrind measurement.
        #[arg(long, default_value_t = 2000)]
        requests: usize,
        /// Cores of the server (taskset list).
        #[arg(long, default_value = "0")]
        server_cores: String,
        /// Cores of wrk (taskset list).
        #[arg(long, default_value = "1")]
        load_cores: String,
        /// The `contracts` example binary (built with
        /// `cargo build --release -p tern-bench --example contracts`).
        #[arg(long, default_value = "target/release/examples/contracts")]
        binary: PathBuf,
        /// Where the figures go (JSON).
        #[arg(long, default_value = "target/bench-contracts.json")]
        out: PathBuf,
    },
    /// The database workloads: Tern against axum + sqlx (one row by key,
    /// a page with its total, a session-authenticated request, a plain
    /// one), on SQLite and, with `POSTGRES_URL`, PostgreSQL; databases
    /// made, seeded and dropped by the run; fails on any answer outside
    /// 2xx or any difference between the servers' answers.
    Data {
        /// Rounds (the two servers side by side, first in turn).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Seconds per trial.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Warm-up seconds per server and workload.
        #[arg(long, default_value_t = 2.0)]
        warmup: f64,
        /// One round of 1 s, no warm-up: checks the answers (CI).
        #[arg(long)]
        quick: bool,
        /// wrk connections.
        #[arg(long, default_value_t = 16)]
        connections: usize,
        /// Cores of the servers (taskset list).
        #[arg(long, default_value = "0")]
        server_cores: String,
        /// Cores of wrk (taskset list).
        #[arg(long, default_value = "1")]
        load_cores: String,
        /// Where `peer-data-tern` and `peer-data-axum` are (built in
        /// bench/peers).
        #[arg(long, default_value = "bench/peers/target/release")]
        peers: PathBuf,
        /// Where the figures go (JSON).
        #[arg(long, default_value = "target/bench-data.json")]
        out: PathBuf,
    },
    /// The WebSockets: Tern (`example-websocket`) against
    /// tokio-tungstenite and fastwebsockets, each bare on hyper 1
    /// (`peer-ws-*`): small and large echoes, memory per held socket;
    /// servers rotated each round; fails on any echo that differs from
    /// what was sent.
    Ws {
        /// Rounds (server order rotated each round).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Seconds per echo trial.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// Warm-up seconds per echo trial (on the same connections).
        #[arg(long, default_value_t = 1.0)]
        warmup: f64,
        /// One round of 1 s, no warm-up, 200 held sockets: checks the
        /// answers (CI); the figures mean nothing.
        #[arg(long)]
        quick: bool,
        /// `echo-small`'s connections.
        #[arg(long, default_value_t = 64)]
        connections: usize,
        /// `held`'s connections.
        #[arg(long, default_value_t = 1000)]
        held: usize,
        /// Worker threads of every server's runtime (`TERN_WORKERS`).
        #[arg(long, default_value_t = 1)]
        workers: usize,
        /// Workloads, comma-separated (default: all): echo-small,
        /// echo-large, held.
        #[arg(long, value_delimiter = ',')]
        workloads: Vec<String>,
        /// Cores of the servers (taskset list).
        #[arg(long, default_value = "0")]
        server_cores: String,
        /// Cores of the client, this process (taskset list).
        #[arg(long, default_value = "1")]
        load_cores: String,
        /// Tern's entrant (`cargo build --release -p example-websocket`).
        #[arg(long, default_value = "target/release/example-websocket")]
        tern: PathBuf,
        /// Where `peer-ws-tungstenite` and `peer-ws-fastwebsockets` are
        /// (built in bench/peers).
        #[arg(long, default_value = "bench/peers/target/release")]
        peers: PathBuf,
        /// Where the figures go (JSON).
        #[arg(long, default_value = "target/bench-ws.json")]
        out: PathBuf,
    },
    /// Tern's realtime channels (`peer-realtime-tern`, one server core):
    /// idle sockets held while wrk measures the JSON path beside them
    /// (and the server's RSS per socket), broadcast latency to large
    /// topics in one process and across two over Redis and NATS, and a
    /// client that stops reading; fails on any missing delivery or wrong
    /// answer (after writing the figures).
    Realtime {
        /// Rounds (counts and variants rotated each round).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// `held`: seconds of wrk per trial.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        /// `held`: seconds of wrk before the sockets open.
        #[arg(long, default_value_t = 1.0)]
        warmup: f64,
        /// Small counts, about a second per trial: checks the answers and
        /// every delivery (CI); the figures mean nothing.
        #[arg(long)]
        quick: bool,
        /// `held`: wrk's connections (one thread), as the lab's json
        /// workload.
        #[arg(long, default_value_t = 16)]
        connections: usize,
        /// `held`: idle sockets, comma-separated (0 is the baseline of the
        /// ratio).
        #[arg(long, value_delimiter = ',', default_value = "0,1000,10000")]
        held: Vec<usize>,
        /// `fanout*`: subscribers, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
        fanout: Vec<usize>,
        /// `fanout*`: broadcasts measured per trial.
        #[arg(long, default_value_t = 50)]
        broadcasts: usize,
        /// Shortest time between two broadcasts (or bursts), ms; each
        /// also waits for the one before to reach everyone.
        #[arg(long, default_value_t = 100)]
        interval_ms: u64,
        /// `slow`: fast subscribers.
        #[arg(long, default_value_t = 1000)]
        slow_subscribers: usize,
        /// `slow`: bursts measured, at least: more when the stalled
        /// client's buffers (the server's TCP send buffer, up to
        /// `net.ipv4.tcp_wmem`'s largest) need more to overflow.
        #[arg(long, default_value_t = 20)]
        bursts: usize,
        /// `slow`: 1 KiB messages per burst.
        #[arg(long, default_value_t = 64)]
        burst: usize,
        /// Workloads, comma-separated (default: all): held, fanout,
        /// fanout-redis, fanout-nats, slow.
        #[arg(long, value_delimiter = ',')]
        workloads: Vec<String>,
        /// Cores of the servers (taskset list).
        #[arg(long, default_value = "0")]
        server_cores: String,
        /// Cores of the client, this process, and wrk (taskset list).
        #[arg(long, default_value = "1")]
        load_cores: String,
        /// Redis for `fanout-redis` (default: `REDIS_URL`, else
        /// redis://127.0.0.1:6379/); skipped when unreachable.
        #[arg(long)]
        redis_url: Option<String>,
        /// NATS for `fanout-nats` (default: `NATS_URL`, else
        /// nats://127.0.0.1:4222); skipped when unreachable.
        #[arg(long)]
        nats_url: Option<String>,
        /// Where `peer-realtime-tern` is (built in bench/peers).
        #[arg(long, default_value = "bench/peers/target/release")]
        peers: PathBuf,
        /// Where the figures go (JSON; the summary beside it, `.txt`).
        #[arg(long, default_value = "target/bench-realtime.json")]
        out: PathBuf,
    },
    /// The website: the showcase's home page, `/index.json` and
    /// `/llms.txt` beside its `/plaintext`, without and with
    /// `Accept-Encoding: br` (compression on), in one process; every
    /// answer checked first; prints each row's req/s and ratio to
    /// plaintext against the goals (a miss is reported, not a failure)
    /// and fails on a failed check, a wrk error or an answer outside 2xx.
    Site {
        /// One round of 1 s, no warm-up: checks the answers (CI); the
        /// figures mean nothing.
        #[arg(long)]
        quick: bool,
        /// Rounds (row order rotated each round).
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Seconds per measured trial.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Warm-up seconds per row before the first round.
        #[arg(long, default_value_t = 2.0)]
        warmup: f64,
        /// wrk connections (one thread).
        #[arg(long, default_value_t = 16)]
        connections: usize,
        /// Cores of the server (taskset list).
        #[arg(long, default_value = "0")]
        server_cores: String,
        /// Cores of wrk (taskset list).
        #[arg(long, default_value = "1")]
        load_cores: String,
        /// The showcase binary (`cargo build --release -p showcase`).
        #[arg(long, default_value = "target/release/showcase")]
        showcase: PathBuf,
        /// Where the figures go (JSON; the summary beside it, `.txt`).
        #[arg(long, default_value = "target/bench-site.json")]
        out: PathBuf,
    },
    /// Instructions per request, Tern vs a hand-written handler (callgrind).
    Inprocess {
        /// Requests per measurement.
        #[arg(long, default_value_t = 2000)]
        requests: usize,
        /// The `inprocess` example binary (built with
        /// `cargo build --release -p tern-bench --example inprocess`).
        #[arg(long, default_value = "target/release/examples/inprocess")]
        binary: PathBuf,
    },
}

fn write_outputs(out: &std::path::Path, e: &crate::evidence::Evidence) -> Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("evidence.json"), serde_json::to_vec_pretty(e)?)?;
    std::fs::write(out.join("report.html"), report::html(e))?;
    let summary = report::terminal(e);
    std::fs::write(out.join("summary.txt"), &summary)?;
    println!("{summary}");
    println!("evidence: {}", out.join("evidence.json").display());
    println!("report:   {}", out.join("report.html").display());
    Ok(())
}

/// Runs one command of the bench lab.
pub fn run(command: Cmd) -> Result<()> {
    match command {
        Cmd::Run {
            quick,
            rounds,
            duration,
            warmup,
            connections,
            servers,
            workloads,
            idle_connections,
            server_cores,
            load_cores,
            no_build,
            allow_dirty,
            out,
        } => {
            let root = std::env::current_dir()?;
            if !quick && !allow_dirty && crate::machine::Machine::detect().git_dirty {
                anyhow::bail!(
                    "the tree has uncommitted changes (`git status`), so the evidence could not \
                     name the code it measured: commit them, or pass --allow-dirty (the evidence \
                     then says dirty)"
                );
            }
            let profile = if quick { "dev" } else { "release" };
            if !no_build {
                run::build_peers(&root, profile)?;
            }
            let workloads = if workloads.is_empty() {
                run::workloads().into_iter().map(|w| w.name).collect()
            } else {
                workloads
            };
            let settings = if quick {
                Settings {
                    rounds: 1,
                    warmup_s: 0.0,
                    duration_s: 1.0,
                    connections: vec![16],
                    server_cores,
                    load_cores,
                    quick: true,
                }
            } else {
                Settings {
                    rounds,
                    warmup_s: warmup,
                    duration_s: duration,
                    connections,
                    server_cores,
                    load_cores,
                    quick: false,
                }
            };
            let opts = run::Options {
                root,
                servers,
                workloads,
                settings,
                idle_connections: if quick { 200 } else { idle_connections },
                profile: profile.to_owned(),
                out_dir: out.clone(),
            };
            let evidence = run::run(&opts)?;
            write_outputs(&out, &evidence)?;
            let errors: u64 = evidence.summary.iter().map(|r| r.errors).sum();
            if errors > 0 && !quick {
                eprintln!("warning: {errors} socket errors or non-2xx responses (see evidence)");
            }
            if quick && errors > 0 {
                anyhow::bail!("{errors} socket errors or non-2xx responses in quick mode");
            }
            Ok(())
        }
        Cmd::Compare {
            base,
            rounds,
            duration,
            connections,
            workloads,
            mut head_features,
            instructions,
            slowdown,
            server_cores,
            load_cores,
        } => {
            let root = std::env::current_dir()?;
            if slowdown.is_some() && !head_features.iter().any(|f| f == "peer-tern/slowdown") {
                head_features.push("peer-tern/slowdown".into());
            }
            let chosen: Vec<run::Workload> = run::workloads()
                .into_iter()
                .filter(|w| workloads.contains(&w.name))
                .collect();
            if chosen.len() != workloads.len() {
                anyhow::bail!("unknown workload in {workloads:?}");
            }
            let worktree = compare::Worktree::add(&root, &base)?;
            let base_side =
                compare::build_side("base", &worktree.path, &root.join("target/bench-base"), &[])?;
            let mut head_side = compare::build_side(
                "head",
                &root,
                &root.join("target/bench-head"),
                &head_features,
            )?;
            let verdicts = compare::compare(
                &mut head_side,
                &base_side,
                &chosen,
                &compare::Plan {
                    rounds,
                    seconds: duration,
                    conns: connections,
                    cores: (&server_cores, &load_cores),
                    instructions,
                    slowdown,
                },
            )?;
            let mut failed = 0;
            for v in &verdicts {
                println!(
                    "{:<10} {} {} (ratios: {})",
                    v.workload,
                    if v.pass { "PASS" } else { "FAIL" },
                    v.reason,
                    v.ratios
                        .iter()
                        .map(|r| format!("{r:.3}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                failed += usize::from(!v.pass);
            }
            if failed > 0 {
                anyhow::bail!("{failed} workload(s) failed the gate against {base}");
            }
            Ok(())
        }
        Cmd::Report { evidence } => {
            let e: crate::evidence::Evidence = serde_json::from_slice(&std::fs::read(&evidence)?)?;
            let out = evidence
                .parent()
                .map_or_else(|| PathBuf::from("."), PathBuf::from);
            write_outputs(&out, &e)
        }
        Cmd::Scaling {
            quick,
            parsers,
            binary,
            out,
        } => {
            let mut results = Vec::new();
            println!(
                "{:<18} {:<26} {:>24} {:>36} {:>13}",
                "parser", "size counts", "sizes n / 2n / 4n", "instructions", "ratios"
            );
            for parser in scaling::parsers() {
                if !parsers.is_empty() && !parsers.iter().any(|p| p == parser.name) {
                    continue;
                }
                let r = scaling::measure(&binary, &parser, quick)
                    .with_context(|| format!("measuring {}", parser.name))?;
                println!(
                    "{:<18} {:<26} {:>24} {:>36} {:>13}{}",
                    r.parser,
                    r.unit,
                    r.sizes
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(" / "),
                    r.instructions
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join(" / "),
                    r.ratios
                        .iter()
                        .map(|s| format!("{s:.2}"))
                        .collect::<Vec<_>>()
                        .join(" / "),
                    if r.linear { "" } else { "  NOT LINEAR" }
                );
                results.push(r);
            }
            if let Some(out) = out {
                if let Some(dir) = out.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::write(&out, serde_json::to_vec_pretty(&results)?)?;
            }
            let bad: Vec<_> = results
                .iter()
                .filter(|r| !r.linear)
                .map(|r| r.parser.clone())
                .collect();
            if !bad.is_empty() {
                anyhow::bail!("cost grows faster than the input: {}", bad.join(", "));
            }
            Ok(())
        }
        Cmd::Contracts {
            rounds,
            seconds,
            warmup,
            quick,
            connections,
            pool,
            requests,
            server_cores,
            load_cores,
            binary,
            out,
        } => {
            let opts = contracts::lab::Options {
                binary,
                rounds: if quick { 1 } else { rounds.max(1) },
                seconds: if quick { 1.0 } else { seconds },
                warmup_s: if quick { 0.0 } else { warmup },
                connections,
                pool,
                callgrind_requests: if quick { 20 } else { requests.max(1) },
                server_cores,
                load_cores,
                quick,
            };
            let report = contracts::lab::run(&opts)?;
            print!("{}", contracts::lab::terminal(&report));
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&out, serde_json::to_vec_pretty(&report)?)?;
            println!("figures: {}", out.display());
            Ok(())
        }
        Cmd::Data {
            rounds,
            seconds,
            warmup,
            quick,
            connections,
            server_cores,
            load_cores,
            peers,
            out,
        } => {
            let opts = crate::data::Options {
                peers,
                rounds: if quick { 1 } else { rounds.max(1) },
                seconds: if quick { 1.0 } else { seconds },
                warmup_s: if quick { 0.0 } else { warmup },
                connections,
                server_cores,
                load_cores,
                quick,
            };
            let report = crate::data::run(&opts)?;
            print!("{}", crate::data::terminal(&report));
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&out, serde_json::to_vec_pretty(&report)?)?;
            println!("figures: {}", out.display());
            Ok(())
        }
        Cmd::Ws {
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
        } => {
            let opts = crate::ws::Options {
                tern,
                peers,
                rounds: if quick { 1 } else { rounds.max(1) },
                seconds: if quick { 1.0 } else { seconds },
                warmup_s: if quick { 0.0 } else { warmup },
                connections,
                held: if quick { held.min(200) } else { held },
                workers,
                workloads,
                server_cores,
                load_cores,
                quick,
            };
            let report = crate::ws::run(&opts)?;
            print!("{}", crate::ws::terminal(&report));
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&out, serde_json::to_vec_pretty(&report)?)?;
            println!("figures: {}", out.display());
            let unclean: usize = report.trials.iter().map(|t| t.unclean_closes).sum();
            if quick && unclean > 0 {
                anyhow::bail!("{unclean} closes not answered in quick mode");
            }
            Ok(())
        }
        Cmd::Realtime {
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
        } => {
            let env_or = |given: Option<String>, var: &str, default: &str| {
                given
                    .or_else(|| std::env::var(var).ok().filter(|v| !v.is_empty()))
                    .unwrap_or_else(|| default.to_owned())
            };
            let opts = crate::realtime::Options {
                binary: peers.join("peer-realtime-tern"),
                rounds: if quick { 1 } else { rounds.max(1) },
                seconds: if quick { 1.0 } else { seconds },
                warmup_s: if quick { 0.0 } else { warmup },
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
            let summary = crate::realtime::terminal(&report);
            print!("{summary}");
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&out, serde_json::to_vec_pretty(&report)?)?;
            std::fs::write(out.with_extension("txt"), &summary)?;
            println!("figures: {}", out.display());
            if !report.problems.is_empty() {
                anyhow::bail!(
                    "{} problem(s), listed above and in the figures",
                    report.problems.len()
                );
            }
            Ok(())
        }
        Cmd::Site {
            quick,
            rounds,
            duration,
            warmup,
            connections,
            server_cores,
            load_cores,
            showcase,
            out,
        } => {
            let opts = crate::site::Options {
                showcase,
                rounds: if quick { 1 } else { rounds.max(1) },
                seconds: if quick { 1.0 } else { duration },
                warmup_s: if quick { 0.0 } else { warmup },
                connections,
                server_cores,
                load_cores,
                quick,
            };
            let report = crate::site::run(&opts)?;
            let summary = crate::site::terminal(&report);
            print!("{summary}");
            if let Some(dir) = out.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&out, serde_json::to_vec_pretty(&report)?)?;
            std::fs::write(out.with_extension("txt"), &summary)?;
            println!("figures: {}", out.display());
            if !report.problems.is_empty() {
                anyhow::bail!(
                    "{} problem(s), listed above and in the figures",
                    report.problems.len()
                );
            }
            Ok(())
        }
        Cmd::Inprocess { requests, binary } => {
            println!(
                "{:<12} {:>14} {:>14} {:>8}",
                "scenario", "handwritten", "tern", "ratio"
            );
            for scenario in inprocess::SCENARIOS {
                let hand = callgrind::measure(&binary, "handwritten", scenario, requests)
                    .with_context(|| format!("{scenario}, handwritten"))?;
                let tern = callgrind::measure(&binary, "tern", scenario, requests)
                    .with_context(|| format!("{scenario}, tern"))?;
                println!(
                    "{:<12} {:>14.0} {:>14.0} {:>7.2}x",
                    scenario,
                    hand.per_request,
                    tern.per_request,
                    tern.per_request / hand.per_request
                );
            }
            Ok(())
        }
    }
}
