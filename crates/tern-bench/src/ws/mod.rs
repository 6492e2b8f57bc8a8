//! The WebSocket workloads (issue 13): Tern's WebSockets
//! (`examples/websocket`, built on tokio-tungstenite) against the two
//! protocol libraries Tern could be built on, each bare on hyper 1
//! (`peer-ws-tungstenite`, `peer-ws-fastwebsockets` in `bench/peers`),
//! in the same run, so that the choice of library is made by measurement.
//!
//! Every trial starts a fresh server process pinned to the server cores,
//! with the same worker count for the three (`TERN_WORKERS`), and checks
//! its answers before any load: text (empty and non-ASCII) and binary
//! echoed on `/` and on a deeper path, a 1 MiB message (over Tern's
//! default limit, so the 20 MiB limit the servers are given is in force),
//! the close handshake. The client is this process (tokio-tungstenite),
//! pinned to the load cores; it compares every echo with what it sent,
//! and a wrong, missing or late answer fails the run.
//!
//! | workload | load | figures |
//! |---|---|---|
//! | `echo-small` | C connections (64), each sending a 32-byte text and awaiting its echo, in a loop | messages/s, server CPU per message |
//! | `echo-large` | 16 connections, 64 KiB binary messages | messages/s, MB/s, server CPU per message |
//! | `held` | N connections (1,000) opened, one message echoed on each, then idle | the server's RSS increase per connection |
//!
//! The server order is rotated each round and each workload; each figure
//! is reported as the median of the rounds with its range, and Tern's
//! median over each bare peer's, with the range of the per-round ratios.
//!
//! The server's and the client's CPU (seconds over wall seconds) are
//! reported beside the throughput: with one core each, a client near 1.0
//! and a server under it means the client set the pace, and the server's
//! CPU per message, not its messages/s, is the figure that compares
//! servers (so it is on `echo-large` on a 2-core machine: the client
//! masks and checks 64 KiB per message).

use std::{path::PathBuf, time::Duration};

// The client's sockets (sockets), the runs and their trials (trials),
// and what a run records and prints (report).
mod report;
mod sockets;
mod trials;

pub use crate::workloads::Workload;
pub(crate) use report::fmt_value;
pub use report::{terminal, Figure, Ratio, Report, ServerInfo, Trial};
pub(crate) use sockets::{client_config, close_all, next_message, open, Ws, SMALL_READS};
pub use trials::run;

/// The message and frame limit every server is given: Autobahn's
/// case 9 sends up to 16 MiB.
pub const MAX_MESSAGE: usize = 20 * 1024 * 1024;

/// `echo-small`'s text: 32 bytes.
pub const SMALL_LEN: usize = 32;

/// `echo-large`'s binary message: 64 KiB.
pub const LARGE_LEN: usize = 64 * 1024;

/// `echo-large`'s connections.
pub const LARGE_CONNECTIONS: usize = 16;

/// Connections opened (or closed) at once.
pub(crate) const OPEN_AT_ONCE: usize = 64;

/// How long an answer (an echo, a handshake, a close) may take.
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The servers, in table order: Tern, then the bare libraries.
pub const SERVERS: [&str; 3] = ["tern", "tungstenite", "fastwebsockets"];

/// The workloads, in table order.
pub const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "echo-small",
        description: "C connections, each sending a 32-byte text message and awaiting its echo in a loop: messages/s, server CPU per message",
    },
    Workload {
        name: "echo-large",
        description: "16 connections, each sending a 64 KiB binary message and awaiting its echo in a loop: messages/s, MB/s of payload (each way), server CPU per message",
    },
    Workload {
        name: "held",
        description: "N connections opened, one 32-byte message echoed on each, then idle: the server's RSS increase (VmRSS) per connection",
    },
];

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// Tern's entrant: `example-websocket` (`cargo build --release -p
    /// example-websocket`).
    pub tern: PathBuf,
    /// Where `peer-ws-tungstenite` and `peer-ws-fastwebsockets` are
    /// (built in bench/peers).
    pub peers: PathBuf,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per measured trial.
    pub seconds: f64,
    /// Warm-up seconds per trial, on the same connections.
    pub warmup_s: f64,
    /// `echo-small`'s connections.
    pub connections: usize,
    /// `held`'s connections.
    pub held: usize,
    /// Worker threads of every server's runtime (`TERN_WORKERS`).
    pub workers: usize,
    /// `taskset` cores of the servers.
    pub server_cores: String,
    /// `taskset` cores of the client (this process).
    pub load_cores: String,
    /// The workloads to run (by name); empty: all.
    pub workloads: Vec<String>,
    /// Quick mode (CI): answers checked, figures not meaningful.
    pub quick: bool,
}
