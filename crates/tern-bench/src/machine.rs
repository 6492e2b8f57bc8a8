//! What the run ran on: machine, toolchain, source revision; and when.

use std::{
    process::Command,
    time::{SystemTime, UNIX_EPOCH},
};

use serde::Serialize;

/// The machine and toolchain of a run.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Machine {
    /// CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Logical cores.
    pub cores: usize,
    /// Total memory in KiB.
    pub memory_kib: u64,
    /// `uname -r`.
    pub kernel: String,
    /// `rustc --version`.
    pub rustc: String,
    /// `wrk --version` (first line).
    pub wrk: String,
    /// `h2load --version`.
    pub h2load: String,
    /// `git rev-parse HEAD`.
    pub git_commit: String,
    /// Whether the work tree had uncommitted changes.
    pub git_dirty: bool,
}

fn first_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let text = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .unwrap_or_else(|| "not installed".to_owned())
}

impl Machine {
    /// Reads the current machine.
    pub fn detect() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .unwrap_or("unknown")
            .trim()
            .to_owned();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Machine {
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_kib,
            kernel: first_line("uname", &["-r"]),
            rustc: first_line("rustc", &["--version"]),
            wrk: first_line("wrk", &["--version"]),
            h2load: first_line("h2load", &["--version"]),
            git_commit: first_line("git", &["rev-parse", "HEAD"]),
            git_dirty: Command::new("git")
                .args(["status", "--porcelain"])
                .output()
                .map(|o| !o.stdout.is_empty())
                .unwrap_or(false),
        }
    }

    /// The machine line of a lab's terminal summary: CPU, cores, memory,
    /// kernel, rustc, wrk when `with_wrk`, and the commit (12 digits),
    /// marked when the tree had uncommitted changes.
    pub(crate) fn summary(&self, with_wrk: bool) -> String {
        let wrk = if with_wrk {
            format!(", {}", self.wrk)
        } else {
            String::new()
        };
        format!(
            "{} ({} cores, {} MiB), kernel {}, {}{wrk}; commit {}{}",
            self.cpu_model,
            self.cores,
            self.memory_kib / 1024,
            self.kernel,
            self.rustc,
            self.git_commit.get(..12).unwrap_or(&self.git_commit),
            if self.git_dirty {
                " (uncommitted changes)"
            } else {
                ""
            }
        )
    }
}

/// Seconds since the Unix epoch (0 on a clock set before it): when a run
/// started.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line() {
        let mut m = Machine {
            cpu_model: "Some CPU".into(),
            cores: 2,
            memory_kib: 4 * 1024 * 1024,
            kernel: "6.1.0".into(),
            rustc: "rustc 1.90.0".into(),
            wrk: "wrk 4.2.0".into(),
            h2load: "h2load 1.59".into(),
            git_commit: "0123456789abcdef0123".into(),
            git_dirty: false,
        };
        assert_eq!(
            m.summary(false),
            "Some CPU (2 cores, 4096 MiB), kernel 6.1.0, rustc 1.90.0; commit 0123456789ab"
        );
        m.git_dirty = true;
        m.git_commit = "short".into();
        assert_eq!(
            m.summary(true),
            "Some CPU (2 cores, 4096 MiB), kernel 6.1.0, rustc 1.90.0, wrk 4.2.0; commit short (uncommitted changes)"
        );
    }
}
