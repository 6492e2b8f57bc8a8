//! The lab proper: every server on every workload over real sockets
//! (`run`), the paired regression gate (`compare`), and the report
//! rebuilt from an evidence file (`report`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::LoadGeneratorCores;
use crate::{compare, evidence::Settings, report, run};

/// `tern-bench run`'s flags ([`Cmd::Run`](super::Cmd::Run)).
#[derive(Args)]
pub struct RunArgs {
    /// About a second per server and workload, to check correctness
    /// (CI); the figures mean nothing.
    #[arg(long)]
    pub quick: bool,
    /// Rounds (server order rotated each round).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Seconds per measured trial.
    #[arg(long, default_value_t = 8.0)]
    pub duration: f64,
    /// Warm-up seconds before each trial.
    #[arg(long, default_value_t = 2.0)]
    pub warmup: f64,
    /// Connection counts, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "16,1000")]
    pub connections: Vec<usize>,
    /// Servers, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "tern,hyper,axum,actix")]
    pub servers: Vec<String>,
    /// Workloads, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub workloads: Vec<String>,
    /// Idle keep-alive connections for the memory stage (0 skips it).
    #[arg(long, default_value_t = 5000)]
    pub idle_connections: usize,
    /// Cores of the server and of the load generator.
    #[command(flatten)]
    pub cores: LoadGeneratorCores,
    /// Do not build bench/peers first.
    #[arg(long)]
    pub no_build: bool,
    /// Measure a tree with uncommitted changes (refused otherwise,
    /// except in quick mode: evidence must name the code it measured;
    /// the evidence then says "dirty").
    #[arg(long)]
    pub allow_dirty: bool,
    /// Where evidence and reports go.
    #[arg(long, default_value = "bench/results/latest")]
    pub out: PathBuf,
}

impl RunArgs {
    /// Runs `tern-bench run`.
    pub(super) fn run(self) -> Result<()> {
        let RunArgs {
            quick,
            rounds,
            duration,
            warmup,
            connections,
            servers,
            workloads,
            idle_connections,
            cores:
                LoadGeneratorCores {
                    server_cores,
                    load_cores,
                },
            no_build,
            allow_dirty,
            out,
        } = self;
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
}

/// `tern-bench compare`'s flags ([`Cmd::Compare`](super::Cmd::Compare)).
#[derive(Args)]
pub struct CompareArgs {
    /// The base revision (a commit, tag or branch).
    #[arg(long)]
    pub base: String,
    /// Rounds (pairs) per workload.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Seconds per trial.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Connections.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Workloads, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "plaintext,json,user,mixed"
    )]
    pub workloads: Vec<String>,
    /// Cargo features of the head's peers.
    #[arg(long, value_delimiter = ',')]
    pub head_features: Vec<String>,
    /// Requests per callgrind count of instructions per request (the
    /// second signal); 0 turns it off.
    #[arg(long, default_value_t = 2000)]
    pub instructions: usize,
    /// The gate's self-test: inject this fraction (0.10 for 10%) of
    /// the base's time per request as extra work into the head on
    /// every workload (builds the head with `peer-tern/slowdown`).
    #[arg(long)]
    pub slowdown: Option<f64>,
    /// Cores of the server and of the load generator.
    #[command(flatten)]
    pub cores: LoadGeneratorCores,
}

impl CompareArgs {
    /// Runs `tern-bench compare`.
    pub(super) fn run(self) -> Result<()> {
        let CompareArgs {
            base,
            rounds,
            duration,
            connections,
            workloads,
            mut head_features,
            instructions,
            slowdown,
            cores:
                LoadGeneratorCores {
                    server_cores,
                    load_cores,
                },
        } = self;
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
}

/// `tern-bench report`'s flags ([`Cmd::Report`](super::Cmd::Report)).
#[derive(Args)]
pub struct ReportArgs {
    /// The evidence JSON.
    pub evidence: PathBuf,
}

impl ReportArgs {
    /// Runs `tern-bench report`.
    pub(super) fn run(self) -> Result<()> {
        let ReportArgs { evidence } = self;
        let e: crate::evidence::Evidence = serde_json::from_slice(&std::fs::read(&evidence)?)?;
        let out = evidence
            .parent()
            .map_or_else(|| PathBuf::from("."), PathBuf::from);
        write_outputs(&out, &e)
    }
}

/// Writes the evidence, its HTML report and its summary into `out`,
/// and prints the summary.
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
