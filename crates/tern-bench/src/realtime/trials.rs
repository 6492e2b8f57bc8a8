//! What a run records: one struct per workload's trial, the figures
//! compared against the goals, and the whole report.

use serde::Serialize;

use super::Settings;
use crate::{machine::Machine, stats::Summary, wrk::LoadResult};

/// One `held` trial.
#[derive(Debug, Clone, Serialize)]
pub struct HeldTrial {
    /// The round (from 0).
    pub round: usize,
    /// Sockets held.
    pub held: usize,
    /// Seconds to open and join them.
    pub open_s: f64,
    /// VmRSS before the sockets (after wrk's warm-up), KiB.
    pub rss_before_kib: u64,
    /// VmRSS with them joined, before wrk, KiB.
    pub rss_after_kib: u64,
    /// The increase per socket, KiB (none for 0 sockets).
    pub kib_per_socket: Option<f64>,
    /// wrk's requests per second.
    pub rps: f64,
    /// `rps` over the same round's `rps` with 0 held.
    pub ratio_to_none: Option<f64>,
    /// The server's CPU seconds over wrk's seconds.
    pub server_busy: f64,
    /// What wrk measured.
    pub load: LoadResult,
    /// Text or binary messages the held sockets got (none are sent).
    pub unexpected_messages: u64,
    /// Held sockets that ended while held.
    pub ended: usize,
    /// Closes the server did not answer within 10 s.
    pub unclean_closes: usize,
}

/// Latency of the deliveries to a set of subscribers, microseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    /// Subscribers.
    pub subscribers: usize,
    /// Deliveries measured.
    pub deliveries: u64,
    /// Deliveries that never came.
    pub missing: u64,
    /// Over every delivery: median.
    pub p50_us: u32,
    /// 99th percentile.
    pub p99_us: u32,
    /// Largest.
    pub max_us: u32,
    /// Per broadcast, the time to its last delivery: median over the
    /// broadcasts.
    pub last_p50_us: u32,
    /// Largest.
    pub last_max_us: u32,
}

/// One `fanout*` trial.
#[derive(Debug, Clone, Serialize)]
pub struct FanoutTrial {
    /// The round (from 0).
    pub round: usize,
    /// `fanout`, `fanout-redis`, `fanout-nats`.
    pub workload: String,
    /// Subscribers in all.
    pub subscribers: usize,
    /// Broadcasts measured.
    pub broadcasts: usize,
    /// `all`, or `publisher's server` and `other server`.
    pub groups: Vec<(String, Latency)>,
    /// The client's CPU seconds over the broadcasts' wall seconds.
    pub client_busy: f64,
    /// The servers' CPU seconds over the same (summed over the servers).
    pub server_busy: f64,
    /// The servers' CPU (summed) per delivery, every broadcast's
    /// (the unmeasured ones too), microseconds.
    pub server_cpu_us_per_delivery: f64,
    /// Milliseconds until a first message crossed the backend.
    pub probe_ms: Option<f64>,
    /// Messages the subscribers got that were not broadcasts, or twice.
    pub unexpected_messages: u64,
    /// Closes the server did not answer within 10 s.
    pub unclean_closes: usize,
}

/// What became of the stalled client.
#[derive(Debug, Clone, Serialize)]
pub struct Stalled {
    /// Messages published while it was stalled.
    pub published: u64,
    /// Messages it found when it read at the end.
    pub received: u64,
    /// Whether the server had ended the connection.
    pub closed: bool,
    /// How: `close frame CODE`, `no close frame`, `open`.
    pub how: String,
}

/// One `slow` trial.
#[derive(Debug, Clone, Serialize)]
pub struct SlowTrial {
    /// The round (from 0).
    pub round: usize,
    /// `none`, `stalled-close`, `stalled-drop`.
    pub variant: String,
    /// The fast subscribers' latency (per burst: the time to the last
    /// delivery of the burst's last message).
    pub latency: Latency,
    /// The same over the bursts that the stalled client did not get
    /// (it was closed, or they were dropped for it): after its overflow.
    pub latency_after: Option<Latency>,
    /// The stalled client, in the stalled variants.
    pub stalled: Option<Stalled>,
    /// The client's CPU seconds over the bursts' wall seconds.
    pub client_busy: f64,
    /// The server's.
    pub server_busy: f64,
    /// The server's CPU per delivery to a fast subscriber, every
    /// burst's (the unmeasured ones too; the stalled client's share is in
    /// it), microseconds.
    pub server_cpu_us_per_delivery: f64,
    /// Messages the fast subscribers got that were not broadcasts, or
    /// twice.
    pub unexpected_messages: u64,
    /// Closes the server did not answer within 10 s.
    pub unclean_closes: usize,
}

/// A figure over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// The workload.
    pub workload: String,
    /// The case: the count (`10000`), the count and the subscribers' server
    /// (`10000 other server`), or `slow`'s variant.
    pub case: String,
    /// `rps`, `ratio_to_none`, `kib_per_socket`, `server_busy`, `p50_us`,
    /// `p99_us`, `max_us`, `last_p50_us`, `last_max_us`, `client_busy`.
    pub metric: String,
    /// Median, range and spread over the rounds.
    pub summary: Summary,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Format.
    pub schema: String,
    /// When.
    pub started_unix: u64,
    /// Where.
    pub machine: Machine,
    /// The server binary.
    pub binary: String,
    /// Its SHA-256.
    pub sha256: String,
    /// How.
    pub settings: Settings,
    /// The workloads run.
    pub workloads: Vec<(String, String)>,
    /// Workloads skipped, and why.
    pub skipped: Vec<String>,
    /// `held` trials, in run order.
    pub held: Vec<HeldTrial>,
    /// `fanout*` trials, in run order.
    pub fanout: Vec<FanoutTrial>,
    /// `slow` trials, in run order.
    pub slow: Vec<SlowTrial>,
    /// Every figure over the rounds.
    pub figures: Vec<Figure>,
    /// What went wrong (the command fails when this is not empty).
    pub problems: Vec<String>,
}
