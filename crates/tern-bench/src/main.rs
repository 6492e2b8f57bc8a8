//! `tern-bench`: the bench lab's command line (also `tern bench`).

use clap::Parser as _;

fn main() -> anyhow::Result<()> {
    tern_bench::cli::run(tern_bench::cli::Cli::parse().command)
}
