//! `tern-bench`: the bench lab's command line.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use tern_bench::{callgrind, inprocess};

#[derive(Parser)]
#[command(
    name = "tern-bench",
    about = "Tern's bench lab: in-process overhead and real-socket runs with peers"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
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

fn main() -> Result<()> {
    match Cli::parse().command {
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
