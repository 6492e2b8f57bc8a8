//! The evidence file: everything a run measured and how, as JSON.

use serde::{Deserialize, Serialize};

use crate::{machine::Machine, stats::Summary, wrk::LoadResult};

/// How the run was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    /// Rounds; each runs every server on every workload, in rotated order.
    pub rounds: usize,
    /// Warm-up seconds before each measured trial (not recorded).
    pub warmup_s: f64,
    /// Seconds per measured trial.
    pub duration_s: f64,
    /// Connection counts (concurrency stages).
    pub connections: Vec<usize>,
    /// `taskset` cores of the server.
    pub server_cores: String,
    /// `taskset` cores of the load generator.
    pub load_cores: String,
    /// Quick mode (correctness and a short trial; figures not meaningful).
    pub quick: bool,
}

/// A server binary in the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Short name (`tern`, `hyper`, `axum`, `actix`).
    pub name: String,
    /// Path of the binary.
    pub binary: String,
    /// SHA-256 of the binary.
    pub sha256: String,
}

/// A workload in the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadInfo {
    /// Name (`plaintext`, `mixed`, ...).
    pub name: String,
    /// What it requests.
    pub description: String,
    /// Requests in its table.
    pub table_len: usize,
    /// FNV-1a hash of the request table.
    pub table_hash: String,
}

/// One measured trial.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    /// Round number, from 0.
    pub round: usize,
    /// Server name.
    pub server: String,
    /// Workload name.
    pub workload: String,
    /// Connections.
    pub connections: usize,
    /// What the load generator measured.
    pub load: LoadResult,
    /// Requests per second.
    pub rps: f64,
    /// Server user CPU time per request, microseconds.
    pub cpu_user_us_per_req: f64,
    /// Server system CPU time per request, microseconds.
    pub cpu_system_us_per_req: f64,
    /// Server peak RSS during the workload, KiB.
    pub peak_rss_kib: u64,
}

/// RSS per idle keep-alive connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdleConnections {
    /// Server name.
    pub server: String,
    /// Connections opened (each completed one request).
    pub connections: usize,
    /// RSS before, KiB.
    pub rss_before_kib: u64,
    /// RSS with the connections open, KiB.
    pub rss_after_kib: u64,
    /// The difference over the count, KiB.
    pub per_connection_kib: f64,
}

/// The summary of one server on one workload and concurrency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// Server name.
    pub server: String,
    /// Workload name.
    pub workload: String,
    /// Connections.
    pub connections: usize,
    /// Requests per second over the trials.
    pub rps: SummaryDe,
    /// p99 latency over the trials, microseconds.
    pub p99_us: SummaryDe,
    /// Server CPU per request (user + system), microseconds.
    pub cpu_us_per_req: SummaryDe,
    /// Server user CPU per request, median, microseconds.
    pub cpu_user_us_per_req: f64,
    /// Largest peak RSS over the trials, KiB.
    pub peak_rss_kib: u64,
    /// Median rps of the first three trials and of the others (drift check).
    pub first3_vs_rest_rps: (f64, f64),
    /// Socket errors and non-2xx responses over all trials.
    pub errors: u64,
    /// Tern's median rps over this server's (for peers; 1 for Tern).
    pub tern_ratio: Option<f64>,
}

/// A [`Summary`] that can also be read back.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SummaryDe {
    /// Count.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Minimum.
    pub min: f64,
    /// Maximum.
    pub max: f64,
    /// Coefficient of variation.
    pub cv: f64,
}

impl From<Summary> for SummaryDe {
    fn from(s: Summary) -> Self {
        SummaryDe {
            n: s.n,
            median: s.median,
            min: s.min,
            max: s.max,
            cv: s.cv,
        }
    }
}

/// One run's evidence.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Evidence {
    /// Format version.
    pub schema: String,
    /// Unix time the run started.
    pub started_unix: u64,
    /// The machine and toolchain.
    pub machine: Machine,
    /// How it ran.
    pub settings: Settings,
    /// The servers.
    pub servers: Vec<ServerInfo>,
    /// The workloads.
    pub workloads: Vec<WorkloadInfo>,
    /// Every trial, raw.
    pub trials: Vec<Trial>,
    /// RSS per idle connection, per server.
    pub idle_connections: Vec<IdleConnections>,
    /// The summary per server, workload and concurrency.
    pub summary: Vec<Row>,
    /// What this run does not measure, in words.
    pub limitations: Vec<String>,
}
