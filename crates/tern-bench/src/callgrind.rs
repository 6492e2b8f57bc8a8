//! Layer 2, instructions: callgrind counts instructions, which repeat
//! exactly on this noisy machine where times do not.

use std::{path::Path, process::Command};

use anyhow::{bail, Context, Result};
use serde::Serialize;

/// The runtime of the programs run under callgrind (the `inprocess` and
/// `scaling` examples): a current-thread runtime, the same for each. A
/// program that cannot build it prints why and exits with status 1.
///
/// ```no_run
/// let rt = tern_bench::callgrind::target_runtime();
/// rt.block_on(async { /* the requests measured */ });
/// ```
pub fn target_runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("no runtime: {e}");
            std::process::exit(1);
        }
    }
}

/// Instructions per request of one side of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Instructions {
    /// Scenario.
    pub scenario: String,
    /// `tern` or `handwritten`.
    pub side: String,
    /// Requests measured.
    pub requests: usize,
    /// (Ir at N - Ir at 0) / N.
    pub per_request: f64,
}

/// The instructions of one run of `binary` with `args`.
pub(crate) fn total_ir(binary: &Path, args: &[&str]) -> Result<u64> {
    let out_file = std::env::temp_dir().join(format!("tern-bench-cg-{}.out", std::process::id()));
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(binary)
        .args(args)
        .output()
        .context("cannot run valgrind: install it with `apt-get install -y valgrind`")?;
    if !status.status.success() {
        bail!(
            "callgrind failed: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    }
    let total = read_total(&out_file);
    let _ = std::fs::remove_file(&out_file);
    total
}

/// The instructions a callgrind output file counts in all.
pub(crate) fn read_total(out_file: &Path) -> Result<u64> {
    let text = std::fs::read_to_string(out_file)
        .with_context(|| format!("no callgrind output at {}", out_file.display()))?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("no totals in the callgrind output")
}

/// Measures `side` on `scenario` with the `inprocess` example binary.
pub fn measure(binary: &Path, side: &str, scenario: &str, n: usize) -> Result<Instructions> {
    let per_request = per_request(binary, n, |count| {
        vec![side.to_owned(), scenario.to_owned(), count.to_string()]
    })?;
    Ok(Instructions {
        scenario: scenario.to_owned(),
        side: side.to_owned(),
        requests: n,
        per_request,
    })
}

/// (Ir at N - Ir at 0) / N, where `args(count)` are the arguments of a
/// run that serves `count` requests; everything else the two runs do
/// (the warm-up, building the requests) must be the same.
pub fn per_request(binary: &Path, n: usize, args: impl Fn(usize) -> Vec<String>) -> Result<f64> {
    let run = |count: usize| {
        let args = args(count);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        total_ir(binary, &args)
    };
    let base = run(0)?;
    let full = run(n)?;
    Ok(full.saturating_sub(base) as f64 / n.max(1) as f64)
}
