//! A server under test: a separate process pinned to its cores, with its
//! CPU time and memory read from `/proc`.

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use anyhow::{bail, Context, Result};

/// A running server.
pub struct ServerProcess {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    clk_tck: f64,
}

/// CPU time and memory of a process at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// User CPU seconds since start.
    pub user_s: f64,
    /// System CPU seconds since start.
    pub system_s: f64,
    /// Resident memory now, KiB.
    pub rss_kib: u64,
    /// Peak resident memory since start, KiB.
    pub peak_rss_kib: u64,
}

impl Usage {
    /// CPU seconds (user and system, every thread) spent since `before`.
    pub fn cpu_s_since(&self, before: &Usage) -> f64 {
        self.user_s + self.system_s - before.user_s - before.system_s
    }
}

fn clk_tck() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// A free loopback port (bound, then released).
pub fn free_addr() -> Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}

impl ServerProcess {
    /// Starts `binary` pinned to `cores` (a `taskset` list such as `0`),
    /// with `BENCH_ADDR` set, and waits for its `listening on` line (or,
    /// from a Tern app run with `tern::run`, its `tern listening` log line).
    pub fn start(binary: &Path, cores: &str, envs: &[(&str, &str)]) -> Result<ServerProcess> {
        Self::start_with(binary, &[], cores, "BENCH_ADDR", envs)
    }

    /// Like [`start`](Self::start), with arguments, the address in the
    /// variable `addr_var` (`TERN_ADDR` for a server configured like a
    /// Tern app).
    pub fn start_with(
        binary: &Path,
        args: &[&str],
        cores: &str,
        addr_var: &str,
        envs: &[(&str, &str)],
    ) -> Result<ServerProcess> {
        Self::spawn(binary, args, cores, addr_var, envs, None)
    }

    /// Like [`start_with`](Self::start_with), in the working directory
    /// `dir` (for a server that keeps files in its own, such as the
    /// showcase's `./data/`); `binary` must then be an absolute path.
    pub fn start_in(
        dir: &Path,
        binary: &Path,
        cores: &str,
        addr_var: &str,
        envs: &[(&str, &str)],
    ) -> Result<ServerProcess> {
        Self::spawn(binary, &[], cores, addr_var, envs, Some(dir))
    }

    fn spawn(
        binary: &Path,
        args: &[&str],
        cores: &str,
        addr_var: &str,
        envs: &[(&str, &str)],
        dir: Option<&Path>,
    ) -> Result<ServerProcess> {
        let addr = free_addr()?;
        let mut cmd = Command::new("taskset");
        cmd.args(["-c", cores])
            .arg(binary)
            .args(args)
            .env(addr_var, addr.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(dir) = dir {
            cmd.current_dir(dir);
        }
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().with_context(|| {
            format!("cannot start {} (is taskset installed?)", binary.display())
        })?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            while let Some(Ok(line)) = lines.next() {
                if line.contains("listening on") || line.contains("tern listening") {
                    let _ = tx.send(());
                }
            }
        });
        if rx.recv_timeout(Duration::from_secs(30)).is_err() {
            let _ = child.kill();
            bail!(
                "{} did not print `listening on` (or `tern listening`) within 30 s",
                binary.display()
            );
        }
        Ok(ServerProcess {
            child,
            addr,
            clk_tck: clk_tck(),
        })
    }

    /// The process ID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Current CPU times and memory, from `/proc/PID/stat` and `status`.
    pub fn usage(&self) -> Result<Usage> {
        let pid = self.child.id();
        let (user_s, system_s) = cpu_times(pid, self.clk_tck)?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
        let kib = |key: &str| {
            status
                .lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Ok(Usage {
            user_s,
            system_s,
            rss_kib: kib("VmRSS:"),
            peak_rss_kib: kib("VmHWM:"),
        })
    }

    /// Sends `SIGTERM` and waits (then kills after 10 s).
    pub fn stop(mut self) -> Result<()> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..100 {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Ok(())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// User and system CPU seconds of process `pid`, every thread, from
/// `/proc/PID/stat`.
fn cpu_times(pid: u32, clk_tck: f64) -> Result<(f64, f64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the `(comm)` which may contain spaces.
    let after = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state); utime is field 14, stime 15.
    let ticks = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    Ok((ticks(14) / clk_tck, ticks(15) / clk_tck))
}

/// CPU seconds (user and system, every thread) that process `pid` has
/// used so far; `None` when it is gone.
pub fn cpu_seconds_of(pid: u32) -> Option<f64> {
    static CLK_TCK: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let (user, system) = cpu_times(pid, *CLK_TCK.get_or_init(clk_tck)).ok()?;
    Some(user + system)
}

/// A clock of this process's own CPU time (user + system, every thread),
/// for a load generator that runs in process.
pub struct OwnCpu {
    clk_tck: f64,
}

impl OwnCpu {
    /// Reads the clock tick once.
    pub fn new() -> OwnCpu {
        OwnCpu { clk_tck: clk_tck() }
    }

    /// CPU seconds this process has used so far.
    pub fn seconds(&self) -> Result<f64> {
        let (user, system) = cpu_times(std::process::id(), self.clk_tck)?;
        Ok(user + system)
    }
}

impl Default for OwnCpu {
    fn default() -> Self {
        Self::new()
    }
}

/// SHA-256 of a file, hex.
pub fn sha256(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Where the peers' release binaries are.
pub fn peer_binary(root: &Path, name: &str, profile: &str) -> PathBuf {
    root.join("bench/peers/target").join(profile).join(name)
}
