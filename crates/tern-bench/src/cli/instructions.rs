//! Instructions counted with callgrind: per input size for every parser
//! of client input (`scaling`), and per request against a hand-written
//! handler (`inprocess`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::{callgrind, inprocess, scaling};

/// `tern-bench scaling`'s flags ([`Cmd::Scaling`](super::Cmd::Scaling)).
#[derive(Args)]
pub struct ScalingArgs {
    /// Smaller sizes (CI).
    #[arg(long)]
    pub quick: bool,
    /// Parsers, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub parsers: Vec<String>,
    /// The `scaling` example binary (built with
    /// `cargo build --release -p tern-bench --example scaling`).
    #[arg(long, default_value = "target/release/examples/scaling")]
    pub binary: PathBuf,
    /// Where the figures go (JSON).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl ScalingArgs {
    /// Runs `tern-bench scaling`.
    pub(super) fn run(self) -> Result<()> {
        let ScalingArgs {
            quick,
            parsers,
            binary,
            out,
        } = self;
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
}

/// `tern-bench inprocess`'s flags ([`Cmd::Inprocess`](super::Cmd::Inprocess)).
#[derive(Args)]
pub struct InprocessArgs {
    /// Requests per measurement.
    #[arg(long, default_value_t = 2000)]
    pub requests: usize,
    /// The `inprocess` example binary (built with
    /// `cargo build --release -p tern-bench --example inprocess`).
    #[arg(long, default_value = "target/release/examples/inprocess")]
    pub binary: PathBuf,
}

impl InprocessArgs {
    /// Runs `tern-bench inprocess`.
    pub(super) fn run(self) -> Result<()> {
        let InprocessArgs { requests, binary } = self;
        println!(
            "{:<12} {:>14} {:>14} {:>8} {:>12}",
            "scenario", "handwritten", "tern", "ratio", "fixed cost"
        );
        for scenario in inprocess::SCENARIOS {
            let hand = callgrind::measure(&binary, "handwritten", scenario, requests)
                .with_context(|| format!("{scenario}, handwritten"))?;
            let tern = callgrind::measure(&binary, "tern", scenario, requests)
                .with_context(|| format!("{scenario}, tern"))?;
            println!(
                "{:<12} {:>14.0} {:>14.0} {:>7.2}x {:>12.0}",
                scenario,
                hand.per_request,
                tern.per_request,
                tern.per_request / hand.per_request,
                tern.per_request - hand.per_request
            );
        }
        Ok(())
    }
}
