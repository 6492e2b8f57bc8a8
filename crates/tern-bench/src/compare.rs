//! The paired regression gate: head and base built from their own
//! revisions, run alternately on the same machine in the same job, judged
//! on the per-round head/base throughput ratios.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::{
    process::ServerProcess,
    run::{Drive, Workload},
    stats::median,
    wrk,
};

/// A workload fails when the median head/base ratio is below this and a
/// majority of the pairs are too.
pub const THRESHOLD: f64 = 0.90;

/// Fewer pairs than this is inconclusive, which fails.
pub const MIN_PAIRS: usize = 3;

/// The gate's verdict on one workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Workload name.
    pub workload: String,
    /// head/base throughput ratio of each round.
    pub ratios: Vec<f64>,
    /// Their median.
    pub median: f64,
    /// How many are below [`THRESHOLD`].
    pub below: usize,
    /// Whether the workload passes.
    pub pass: bool,
    /// Why, in words.
    pub reason: String,
}

/// Judges one workload from its (head rps, base rps) pairs.
pub fn judge(workload: &str, pairs: &[(f64, f64)]) -> Verdict {
    let ratios: Vec<f64> = pairs
        .iter()
        .filter(|(h, b)| *h > 0.0 && *b > 0.0)
        .map(|(h, b)| h / b)
        .collect();
    let median = median(&ratios);
    let below = ratios.iter().filter(|r| **r < THRESHOLD).count();
    let (pass, reason) = if ratios.len() < MIN_PAIRS {
        (
            false,
            format!(
                "inconclusive: {} usable pairs, at least {MIN_PAIRS} needed",
                ratios.len()
            ),
        )
    } else if median < THRESHOLD && below * 2 > ratios.len() {
        (
            false,
            format!(
                "regression: median ratio {median:.3} and {below} of {} pairs below {THRESHOLD}",
                ratios.len()
            ),
        )
    } else {
        (
            true,
            format!(
                "median ratio {median:.3}, {below} of {} pairs below {THRESHOLD}",
                ratios.len()
            ),
        )
    };
    Verdict {
        workload: workload.to_owned(),
        ratios,
        median,
        below,
        pass,
        reason,
    }
}

/// A checkout of `rev` in a temporary worktree, removed on drop.
pub struct Worktree {
    repo: PathBuf,
    /// Its path.
    pub path: PathBuf,
}

impl Worktree {
    /// `git worktree add --detach` of `rev`.
    pub fn add(repo: &Path, rev: &str) -> Result<Worktree> {
        let path = std::env::temp_dir().join(format!("tern-bench-base-{}", std::process::id()));
        let status = Command::new("git")
            .current_dir(repo)
            .args(["worktree", "add", "--detach", "--force"])
            .arg(&path)
            .arg(rev)
            .status()
            .context("cannot run git")?;
        if !status.success() {
            bail!("git worktree add of `{rev}` failed");
        }
        if !path.join("bench/peers/Cargo.toml").exists() {
            bail!("revision `{rev}` has no bench/peers: it predates the bench lab and cannot be compared");
        }
        Ok(Worktree {
            repo: repo.to_owned(),
            path,
        })
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = Command::new("git")
            .current_dir(&self.repo)
            .args(["worktree", "remove", "--force"])
            .arg(&self.path)
            .status();
    }
}

/// One side of the comparison: a Tern peer binary.
pub struct Side {
    /// `head` or `base`.
    pub name: &'static str,
    /// The binary.
    pub binary: PathBuf,
}

/// Builds the Tern peer of the checkout at `root` (only `peer-tern`: the
/// other peers are not compared) into `target_dir`, and returns it.
///
/// Both sides use stable target directories under the main checkout's
/// `target/` (`bench-head`, `bench-base`), so repeated comparisons only
/// rebuild what changed, and the head's build never overwrites the
/// binaries `tern-bench run` measures.
pub fn build_side(
    name: &'static str,
    root: &Path,
    target_dir: &Path,
    features: &[String],
) -> Result<Side> {
    let mut cmd = Command::new("cargo");
    cmd.args([
        "build",
        "--locked",
        "--release",
        "-p",
        "peer-tern",
        "--manifest-path",
    ])
    .arg(root.join("bench/peers/Cargo.toml"))
    .arg("--target-dir")
    .arg(target_dir);
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    let status = cmd.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("building the Tern peer of {name} (features {features:?}) failed");
    }
    Ok(Side {
        name,
        binary: target_dir.join("release/peer-tern"),
    })
}

fn trial(
    side: &Side,
    w: &Workload,
    script: &Path,
    cores: (&str, &str),
    conns: usize,
    seconds: f64,
) -> Result<f64> {
    let server = ServerProcess::start(&side.binary, cores.0, &[])?;
    let result = match &w.drive {
        Drive::Wrk { .. } => wrk::run_wrk(script, server.addr, cores.1, conns, seconds)?,
        Drive::H2load { path } => wrk::run_h2load(path, server.addr, cores.1, conns, seconds)?,
    };
    server.stop()?;
    if result.socket_errors() + result.non_2xx > 0 {
        bail!(
            "{} on {}: {} errors",
            side.name,
            w.name,
            result.socket_errors() + result.non_2xx
        );
    }
    Ok(result.rps())
}

/// Runs head and base alternately (round i: head first on odd rounds,
/// base first on even ones) and judges each workload.
pub fn compare(
    head: &Side,
    base: &Side,
    workloads: &[Workload],
    rounds: usize,
    seconds: f64,
    conns: usize,
    cores: (&str, &str),
) -> Result<Vec<Verdict>> {
    let dir = std::env::temp_dir().join(format!("tern-bench-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut verdicts = Vec::new();
    for w in workloads {
        let script = dir.join(format!("{}.lua", w.name));
        if let Drive::Wrk { table, pipeline } = &w.drive {
            std::fs::write(&script, wrk::script(table, *pipeline))?;
        }
        let mut pairs = Vec::with_capacity(rounds);
        for round in 0..rounds {
            eprint!("\r\x1b[2K{} round {}/{}", w.name, round + 1, rounds);
            let (h, b) = if round % 2 == 1 {
                let h = trial(head, w, &script, cores, conns, seconds)?;
                (h, trial(base, w, &script, cores, conns, seconds)?)
            } else {
                let b = trial(base, w, &script, cores, conns, seconds)?;
                (trial(head, w, &script, cores, conns, seconds)?, b)
            };
            pairs.push((h, b));
        }
        verdicts.push(judge(&w.name, &pairs));
    }
    eprintln!();
    Ok(verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate() {
        // Identical within noise: pass.
        assert!(judge("w", &[(100.0, 101.0), (99.0, 100.0), (102.0, 100.0)]).pass);
        // 15% slower every round: fail.
        let v = judge(
            "w",
            &[(85.0, 100.0), (86.0, 100.0), (84.0, 100.0), (85.0, 100.0)],
        );
        assert!(!v.pass && v.reason.starts_with("regression"), "{v:?}");
        // One bad round among good ones: the majority rule keeps it a pass.
        assert!(judge("w", &[(70.0, 100.0), (99.0, 100.0), (100.0, 100.0)]).pass);
        // Median low and a majority of pairs below: fail.
        let v = judge(
            "w",
            &[
                (89.0, 100.0),
                (89.5, 100.0),
                (95.0, 100.0),
                (96.0, 100.0),
                (80.0, 100.0),
            ],
        );
        assert_eq!(v.below, 3);
        assert!(!v.pass);
        // Median low (even count) but only half the pairs below: pass.
        let v = judge(
            "w",
            &[(70.0, 100.0), (80.0, 100.0), (95.0, 100.0), (96.0, 100.0)],
        );
        assert!(v.median < THRESHOLD && v.below == 2 && v.pass, "{v:?}");
        // Too few pairs, or failed trials: inconclusive, which fails.
        assert!(!judge("w", &[(100.0, 100.0), (100.0, 100.0)]).pass);
        assert!(!judge("w", &[(100.0, 0.0), (100.0, 100.0), (100.0, 100.0)]).pass);
    }
}
