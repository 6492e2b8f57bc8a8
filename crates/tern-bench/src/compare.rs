//! The paired regression gate: head and base built from their own
//! revisions, run alternately on the same machine in the same job, judged
//! on two signals: the per-round head/base throughput ratios (noisy on a
//! shared machine, but they see everything, system calls included) and
//! the user-space instructions per request over a real socket under
//! callgrind (deterministic, so a small regression of Tern's own code
//! cannot hide in the noise).

use std::{
    path::{Path, PathBuf},
    process::Command,
};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use crate::{
    callgrind,
    client::Client,
    process::ServerProcess,
    run::{Drive, Workload},
    stats::median,
    wrk,
};

/// A workload fails when the median head/base throughput ratio is below
/// this and a majority of the pairs are too.
///
/// The coarse signal, for what instruction counts cannot see (system
/// calls, waits, contention): at 0.90, one of three comparisons of
/// identical builds failed on this machine (a median of 0.866 on `mixed`,
/// pairs as low as 0.56: `bench/results/2026-12-01-gate/`). Small
/// regressions of Tern's own code are the instruction count's to catch.
pub const THRESHOLD: f64 = 0.85;

/// Fewer pairs than this is inconclusive, which fails.
pub const MIN_PAIRS: usize = 3;

/// A workload fails when the head runs more than this many times the
/// base's instructions per request. Identical builds differ by well under
/// 1% (timers and the clock: `bench/results/2026-12-01-gate/`).
pub const INSTRUCTIONS_THRESHOLD: f64 = 1.03;

/// Instructions per request of head and base on one workload.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Instructions {
    /// The head's instructions per request.
    pub head: f64,
    /// The base's.
    pub base: f64,
}

impl Instructions {
    /// head / base.
    pub fn ratio(&self) -> f64 {
        self.head / self.base
    }
}

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
    /// Instructions per request (callgrind), when measured.
    pub instructions: Option<Instructions>,
    /// Whether the workload passes.
    pub pass: bool,
    /// Why, in words.
    pub reason: String,
}

/// Judges one workload from its (head rps, base rps) pairs and, when
/// measured, its instructions per request: a regression on either signal
/// fails it.
pub fn judge(workload: &str, pairs: &[(f64, f64)], instructions: Option<Instructions>) -> Verdict {
    let ratios: Vec<f64> = pairs
        .iter()
        .filter(|(h, b)| *h > 0.0 && *b > 0.0)
        .map(|(h, b)| h / b)
        .collect();
    let median = median(&ratios);
    let below = ratios.iter().filter(|r| **r < THRESHOLD).count();
    let (mut pass, mut reason) = if ratios.len() < MIN_PAIRS {
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
    if let Some(i) = instructions {
        let ratio = i.ratio();
        // A NaN (no base count) fails too.
        if ratio.is_nan() || ratio > INSTRUCTIONS_THRESHOLD {
            pass = false;
            reason = format!(
                "regression: {:.0} instructions per request against {:.0} ({ratio:.3}x, over {INSTRUCTIONS_THRESHOLD}); {reason}",
                i.head, i.base
            );
        } else {
            reason = format!(
                "{reason}; instructions {:.0} against {:.0} ({ratio:.3}x)",
                i.head, i.base
            );
        }
    }
    Verdict {
        workload: workload.to_owned(),
        ratios,
        median,
        below,
        instructions,
        pass,
        reason,
    }
}

/// A checkout of `rev` in a worktree kept at `target/bench-base-src`:
/// reused by the next comparison (a checkout touches only the files that
/// differ, so an unchanged base is not rebuilt).
pub struct Worktree {
    /// Its path.
    pub path: PathBuf,
}

impl Worktree {
    /// Checks `rev` out in the kept worktree (made with `git worktree
    /// add --detach` the first time).
    pub fn add(repo: &Path, rev: &str) -> Result<Worktree> {
        let path = repo.join("target/bench-base-src");
        let git = |dir: &Path, args: &[&str]| -> Result<bool> {
            Ok(Command::new("git")
                .current_dir(dir)
                .args(args)
                .status()
                .context("cannot run git")?
                .success())
        };
        // The revision as the repository names it (the worktree has no
        // branches of its own to resolve `HEAD` or `main` against).
        let resolved = Command::new("git")
            .current_dir(repo)
            .args(["rev-parse", "--verify", &format!("{rev}^{{commit}}")])
            .output()
            .context("cannot run git")?;
        if !resolved.status.success() {
            bail!("`{rev}` is not a revision of this repository");
        }
        let commit = String::from_utf8_lossy(&resolved.stdout).trim().to_owned();
        let reused = path.join(".git").exists()
            && git(
                &path,
                &["checkout", "--quiet", "--detach", "--force", &commit],
            )?;
        if !reused {
            let _ = std::fs::remove_dir_all(&path);
            let _ = git(repo, &["worktree", "prune"]);
            let p = path.to_string_lossy();
            if !git(
                repo,
                &["worktree", "add", "--detach", "--force", &p, &commit],
            )? {
                bail!("git worktree add of `{rev}` failed");
            }
        }
        if !path.join("bench/peers/Cargo.toml").exists() {
            bail!("revision `{rev}` has no bench/peers: it predates the bench lab and cannot be compared");
        }
        Ok(Worktree { path })
    }
}

/// One side of the comparison: a Tern peer binary.
pub struct Side {
    /// `head` or `base`.
    pub name: &'static str,
    /// The binary.
    pub binary: PathBuf,
    /// `BENCH_SLOWDOWN_ITERS` for a head built with `peer-tern/slowdown`
    /// (the gate's self-test), set per workload by [`compare`].
    pub slowdown_iterations: Option<u64>,
    /// More environment for the peer (`BENCH_OPS` for `tern-bench ops`).
    pub env: Vec<(&'static str, String)>,
}

impl Side {
    fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = self.env.clone();
        if let Some(n) = self.slowdown_iterations {
            env.push(("BENCH_SLOWDOWN_ITERS", n.to_string()));
        }
        env
    }
}

/// Instructions per request of `side` on `w` over a real socket: the
/// peer runs under callgrind twice, serving `warmup` and then
/// `warmup + n` requests of the workload's table (one keep-alive
/// connection, one request at a time, answers checked for a 2xx), and the
/// difference of the two totals is divided by `n`, so that start, warm-up
/// and shutdown cancel out.
pub fn instructions(side: &Side, w: &Workload, core: &str, warmup: usize, n: usize) -> Result<f64> {
    let Drive::Wrk { table, .. } = &w.drive else {
        bail!(
            "{}: instructions are counted on HTTP/1.1 table workloads only",
            w.name
        );
    };
    let run = |count: usize| -> Result<u64> {
        let out = std::env::temp_dir().join(format!(
            "tern-bench-gate-{}-{}.cg",
            std::process::id(),
            side.name
        ));
        let out_arg = format!("--callgrind-out-file={}", out.display());
        let binary = side.binary.to_string_lossy();
        let env = side.env();
        let server = ServerProcess::start_with(
            Path::new("valgrind"),
            &["--tool=callgrind", &out_arg, &binary],
            core,
            "BENCH_ADDR",
            &env.iter()
                .map(|(k, v)| (*k, v.as_str()))
                .collect::<Vec<_>>(),
        )?;
        {
            let mut client = Client::connect(server.addr)?;
            for r in table.iter().cycle().take(count) {
                let headers: Vec<(&str, &str)> = r
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                let res = client.send(&r.method, &r.path, &headers, r.body.as_deref())?;
                if !(200..300).contains(&res.status) {
                    bail!(
                        "{} on {}: {} {} answered {}",
                        side.name,
                        w.name,
                        r.method,
                        r.path,
                        res.status
                    );
                }
            }
        }
        server.stop()?;
        let total = callgrind::read_total(&out);
        let _ = std::fs::remove_file(&out);
        total
    };
    let base = run(warmup)?;
    let full = run(warmup + n)?;
    Ok(full.saturating_sub(base) as f64 / n.max(1) as f64)
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
        slowdown_iterations: None,
        env: Vec::new(),
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
    let env = side.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = ServerProcess::start(&side.binary, cores.0, &env)?;
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

/// How [`compare`] runs.
#[derive(Debug, Clone)]
pub struct Plan<'a> {
    /// Rounds (pairs) per workload.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// wrk connections.
    pub conns: usize,
    /// (server, load generator) cores, `taskset` lists.
    pub cores: (&'a str, &'a str),
    /// Requests per callgrind count (0: no instruction signal).
    pub instructions: usize,
    /// The gate's self-test: the head (built with `peer-tern/slowdown`)
    /// does this fraction of the base's time per request more work on
    /// every workload (the base's first trial measures it).
    pub slowdown: Option<f64>,
}

/// Requests served before the counted ones in each callgrind run.
const WARMUP: usize = 200;

/// Runs head and base alternately (round i: head first on odd rounds,
/// base first on even ones), counts their instructions per request, and
/// judges each workload.
pub fn compare(
    head: &mut Side,
    base: &Side,
    workloads: &[Workload],
    plan: &Plan<'_>,
) -> Result<Vec<Verdict>> {
    let dir = std::env::temp_dir().join(format!("tern-bench-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (cores, conns, seconds) = (plan.cores, plan.conns, plan.seconds);
    let mut verdicts = Vec::new();
    for w in workloads {
        let script = dir.join(format!("{}.lua", w.name));
        if let Drive::Wrk { table, pipeline } = &w.drive {
            std::fs::write(&script, wrk::script(table, *pipeline))?;
        }
        let mut pairs = Vec::with_capacity(plan.rounds);
        for round in 0..plan.rounds {
            eprint!("\r\x1b[2K{} round {}/{}", w.name, round + 1, plan.rounds);
            let (h, b) = if round % 2 == 1 {
                let h = trial(head, w, &script, cores, conns, seconds)?;
                (h, trial(base, w, &script, cores, conns, seconds)?)
            } else {
                let b = trial(base, w, &script, cores, conns, seconds)?;
                if round == 0 {
                    if let Some(fraction) = plan.slowdown {
                        // One server core, saturated: its time per
                        // request is the inverse of the throughput.
                        let nanos = fraction * 1e9 / b;
                        let n = tern_bench_workload::iterations_for(nanos);
                        eprintln!("\r\x1b[2K{}: injecting {nanos:.0} ns ({n} iterations) per request into the head", w.name);
                        head.slowdown_iterations = Some(n);
                    }
                }
                (trial(head, w, &script, cores, conns, seconds)?, b)
            };
            pairs.push((h, b));
        }
        let counted = if plan.instructions > 0 {
            eprint!("\r\x1b[2K{} instructions (callgrind)", w.name);
            Some(Instructions {
                base: instructions(base, w, cores.0, WARMUP, plan.instructions)?,
                head: instructions(head, w, cores.0, WARMUP, plan.instructions)?,
            })
        } else {
            None
        };
        verdicts.push(judge(&w.name, &pairs, counted));
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
        assert!(judge("w", &[(100.0, 101.0), (99.0, 100.0), (102.0, 100.0)], None).pass);
        // 20% slower every round: fail.
        let v = judge(
            "w",
            &[(80.0, 100.0), (81.0, 100.0), (79.0, 100.0), (80.0, 100.0)],
            None,
        );
        assert!(!v.pass && v.reason.starts_with("regression"), "{v:?}");
        // One bad round among good ones: the majority rule keeps it a pass.
        assert!(judge("w", &[(70.0, 100.0), (99.0, 100.0), (100.0, 100.0)], None).pass);
        // Median low and a majority of pairs below: fail.
        let v = judge(
            "w",
            &[
                (84.0, 100.0),
                (84.5, 100.0),
                (95.0, 100.0),
                (96.0, 100.0),
                (75.0, 100.0),
            ],
            None,
        );
        assert_eq!(v.below, 3);
        assert!(!v.pass);
        // Median low (even count) but only half the pairs below: pass.
        let v = judge(
            "w",
            &[(70.0, 100.0), (72.0, 100.0), (95.0, 100.0), (96.0, 100.0)],
            None,
        );
        assert!(v.median < THRESHOLD && v.below == 2 && v.pass, "{v:?}");
        // Too few pairs, or failed trials: inconclusive, which fails.
        assert!(!judge("w", &[(100.0, 100.0), (100.0, 100.0)], None).pass);
        assert!(!judge("w", &[(100.0, 0.0), (100.0, 100.0), (100.0, 100.0)], None).pass);
    }

    #[test]
    fn the_instruction_signal() {
        let same = [(100.0, 100.0); 3];
        let count = |head, base| Some(Instructions { head, base });
        // Within the threshold: pass, and the reason gives the figures.
        let v = judge("w", &same, count(10_100.0, 10_000.0));
        assert!(v.pass && v.reason.contains("10100 against 10000"), "{v:?}");
        // More instructions than the threshold allows: fail, even with
        // throughput unchanged (a 5% regression hides in its noise).
        let v = judge("w", &same, count(10_500.0, 10_000.0));
        assert!(
            !v.pass && v.reason.starts_with("regression: 10500"),
            "{v:?}"
        );
        // A count that makes no sense fails rather than passes.
        assert!(!judge("w", &same, count(f64::NAN, 10_000.0)).pass);
        assert!(!judge("w", &same, count(10_000.0, 0.0)).pass);
        // Throughput still fails on its own.
        let slow = [(80.0, 100.0); 3];
        assert!(!judge("w", &slow, count(10_000.0, 10_000.0)).pass);
    }
}
