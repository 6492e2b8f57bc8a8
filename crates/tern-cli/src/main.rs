//! `tern`: new projects and the bench lab.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};
use tern_cli::new::{built_from, scaffold, Source};

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
        /// A checkout of Tern to depend on by path (default: the one this
        /// `tern` was built from, if it is still there).
        #[arg(long, conflicts_with = "version")]
        tern_path: Option<PathBuf>,
        /// Depend on Tern from crates.io at this version instead.
        #[arg(long)]
        version: Option<String>,
    },
    /// Runs the bench lab: the commands of `tern-bench` (`tern bench run
    /// --quick`, `tern bench site`, ...).
    Bench {
        #[command(subcommand)]
        command: tern_bench::cli::Cmd,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Cmd::New {
            name,
            path,
            tern_path,
            version,
        } => {
            let source = match (tern_path, version) {
                (Some(path), _) => Source::Path(path.canonicalize()?),
                (None, Some(version)) => Source::Version(version),
                (None, None) => built_from().map_or_else(
                    || Source::Version(env!("CARGO_PKG_VERSION").to_owned()),
                    Source::Path,
                ),
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
        Cmd::Bench { command } => tern_bench::cli::run(command),
    }
}
