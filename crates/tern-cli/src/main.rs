//! `tern`: new projects and the bench lab.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};
use tern_cli::new::{checkout, scaffold, Source};

#[derive(Parser)]
#[command(
    name = "tern",
    version,
    about = "Tern's command line: new projects, the bench lab. An app's own commands \
             (serve, routes, check, migrate) are the app binary's: `cargo run -- --help`"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Makes a project: an app with a route, a template, a static file, a
    /// test and a README; `cargo run` serves it, `cargo test` tests it.
    New {
        /// The project's name (the package's): letters, digits, `-`, `_`.
        name: String,
        /// Where to make it (default: ./NAME). Must not exist, or be empty.
        #[arg(long)]
        path: Option<PathBuf>,
        /// Depend on a checkout of Tern by path (its `crates/`) instead of
        /// crates.io: for Tern's own CI and bench, and to try unreleased
        /// changes.
        #[arg(long, value_name = "CHECKOUT", conflicts_with = "version")]
        tern_path: Option<PathBuf>,
        /// The version requirement of the Tern crates, from crates.io
        /// (default: this `tern`'s version, which the template is
        /// written for).
        #[arg(long, value_name = "REQ")]
        version: Option<String>,
    },
    /// Runs the bench lab: the commands of `tern-bench` (`tern bench run
    /// --quick`, `tern bench site`, ...).
    #[cfg(feature = "bench")]
    Bench {
        #[command(subcommand)]
        command: tern_bench::cli::Cmd,
    },
    /// The bench lab: not in this build (`cargo install tern-cli --features
    /// bench`, or run `tern-bench`).
    #[cfg(not(feature = "bench"))]
    Bench {
        /// Whatever followed `bench`: refused, with how to get the lab.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

/// What `tern bench` says in a build without the `bench` feature.
#[cfg(not(feature = "bench"))]
const NO_BENCH: &str = "error: this `tern` was built without the bench lab (the `bench` \
feature).\nInstall it with `cargo install tern-cli --features bench`, or run the lab's own \
binary: `cargo run -p tern-bench -- ...` in Tern's repository (`tern-bench`).";

fn main() -> Result<()> {
    match Cli::parse().command {
        Cmd::New {
            name,
            path,
            tern_path,
            version,
        } => {
            let source = match (tern_path, version) {
                (Some(path), _) => Source::Path(checkout(&path)?),
                (None, Some(version)) => Source::Version(version),
                (None, None) => Source::published(),
            };
            let dir = path.unwrap_or_else(|| PathBuf::from(&name));
            println!("making {name} in {}", dir.display());
            scaffold(&name, &dir, &source)?;
            println!(
                "done. Next:\n  cd {}\n  cargo run     # http://127.0.0.1:3000\n  cargo test",
                dir.display()
            );
            Ok(())
        }
        #[cfg(feature = "bench")]
        Cmd::Bench { command } => tern_bench::cli::run(command),
        #[cfg(not(feature = "bench"))]
        Cmd::Bench { .. } => {
            // 2, as clap's own usage errors: the command line asked for
            // something this build does not have.
            eprintln!("{NO_BENCH}");
            std::process::exit(2)
        }
    }
}
