//! `tern-bench ops`: what the operators' tools cost per request: the
//! metrics (`TERN_METRICS`) and the request span (Tern's default log
//! output) on against off, in one peer binary started with different
//! environments in alternating rounds.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::LoadGeneratorCores;
use crate::{compare, run, stats::median};

/// The cost each part may add to the server's time per request.
pub(super) const GOAL: f64 = 0.03;

/// `tern-bench ops`' flags ([`Cmd::Ops`](super::Cmd::Ops)).
#[derive(Args)]
pub struct OpsArgs {
    /// One round of 1 s per variant and workload, 2,000 requests per
    /// callgrind count: checks that every variant serves (CI); the
    /// figures mean nothing.
    #[arg(long)]
    pub quick: bool,
    /// Rounds (pairs of the variant and `off`) per variant and workload.
    #[arg(long, default_value_t = 7)]
    pub rounds: usize,
    /// Seconds per trial.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// wrk connections.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Workloads, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "plaintext,mixed")]
    pub workloads: Vec<String>,
    /// Variants against `off`, comma-separated: `metrics`, `span`, `all`.
    #[arg(long, value_delimiter = ',', default_value = "metrics,span,all")]
    pub variants: Vec<String>,
    /// The log output's format for `span` and `all`: `json` or `text`
    /// (`TERN_LOG_FORMAT`).
    #[arg(long, default_value = "json")]
    pub log_format: String,
    /// Requests per callgrind count (0: no instruction counts).
    #[arg(long, default_value_t = 20_000)]
    pub instructions: usize,
    /// Cores of the server and of the load generator.
    #[command(flatten)]
    pub cores: LoadGeneratorCores,
    /// Where the figures go (JSON, and the summary beside it).
    #[arg(long, default_value = "bench/results/latest/ops.json")]
    pub out: PathBuf,
}

/// One variant on one workload, against `off`.
#[derive(Debug, Serialize)]
pub(super) struct Row {
    /// `metrics`, `span` or `all`.
    pub(super) variant: String,
    /// The workload.
    pub workload: String,
    /// Each round's throughput, variant over `off` (one saturated server
    /// core: the inverse of the ratio of server time per request).
    pub ratios: Vec<f64>,
    /// Their median.
    pub median: f64,
    /// Server time per request, variant over `off`, minus one: what the
    /// part adds (from the median ratio).
    pub added_time: f64,
    /// Instructions per request over a socket (callgrind), off and with
    /// the variant.
    pub instructions: Option<compare::Instructions>,
    /// `added_time` at most [`GOAL`].
    pub within_goal: bool,
}

impl OpsArgs {
    /// Runs `tern-bench ops`.
    pub(super) fn run(self) -> Result<()> {
        let OpsArgs {
            quick,
            rounds,
            duration,
            connections,
            workloads,
            variants,
            instructions,
            log_format,
            cores:
                LoadGeneratorCores {
                    server_cores,
                    load_cores,
                },
            out,
        } = self;
        let (rounds, duration) = if quick { (1, 1.0) } else { (rounds, duration) };
        let instructions = if quick {
            instructions.min(2_000)
        } else {
            instructions
        };
        for v in &variants {
            if !matches!(v.as_str(), "metrics" | "span" | "all") {
                anyhow::bail!("unknown variant `{v}`: metrics, span or all");
            }
        }
        let chosen: Vec<run::Workload> = run::workloads()
            .into_iter()
            .filter(|w| workloads.contains(&w.name))
            .collect();
        if chosen.len() != workloads.len() {
            anyhow::bail!("unknown workload in {workloads:?}");
        }
        let root = std::env::current_dir()?;
        let built = compare::build_side("off", &root, &root.join("target/bench-head"), &[])?;
        let side = |name: &'static str| compare::Side {
            name,
            binary: built.binary.clone(),
            slowdown_iterations: None,
            env: vec![
                ("BENCH_OPS", name.to_owned()),
                ("TERN_LOG_FORMAT", log_format.clone()),
                ("RUST_LOG", "info".to_owned()),
            ],
        };
        let off = side("off");
        let mut rows = Vec::new();
        for variant in &variants {
            let name: &'static str = match variant.as_str() {
                "metrics" => "metrics",
                "span" => "span",
                _ => "all",
            };
            let mut head = side(name);
            let verdicts = compare::compare(
                &mut head,
                &off,
                &chosen,
                &compare::Plan {
                    rounds,
                    seconds: duration,
                    conns: connections,
                    cores: (&server_cores, &load_cores),
                    instructions,
                    slowdown: None,
                },
            )?;
            for v in verdicts {
                let m = median(&v.ratios);
                let added_time = 1.0 / m - 1.0;
                rows.push(Row {
                    variant: name.to_owned(),
                    workload: v.workload,
                    ratios: v.ratios,
                    median: m,
                    added_time,
                    instructions: v.instructions,
                    within_goal: added_time <= GOAL,
                });
            }
        }
        let mut summary = format!(
            "what the operators' tools cost per request, against off ({rounds} rounds of \
             {duration} s, {connections} connections, server on core {server_cores}, \
             TERN_LOG_FORMAT={log_format})\n\
             {:<8} {:<10} {:>8} {:>12} {:>14} {:>14} {:>8}\n",
            "variant", "workload", "median", "added time", "instr. off", "instr. on", "goal"
        );
        for r in &rows {
            let (a, b) = r
                .instructions
                .map_or((String::from("-"), String::from("-")), |i| {
                    (format!("{:.0}", i.base), format!("{:.0}", i.head))
                });
            summary.push_str(&format!(
                "{:<8} {:<10} {:>8.3} {:>11.1}% {:>14} {:>14} {:>8}\n",
                r.variant,
                r.workload,
                r.median,
                r.added_time * 100.0,
                a,
                b,
                if r.within_goal { "met" } else { "missed" }
            ));
        }
        super::publish(&out, &rows, &summary, true)
    }
}
