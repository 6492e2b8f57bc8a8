//! What a run records, its figures over the rounds, and its report for a
//! terminal.

use serde::Serialize;

use super::{LARGE_LEN, SERVERS, SMALL_LEN, WORKLOADS};
use crate::{
    console::group_thousands,
    machine::Machine,
    stats::{summarize, Summary},
};

/// A server measured.
#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    /// `tern`, `tungstenite`, `fastwebsockets`.
    pub name: String,
    /// The binary.
    pub binary: String,
    /// Its SHA-256.
    pub sha256: String,
}

/// One server on one workload in one round.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// The round (from 0).
    pub round: usize,
    /// The server.
    pub server: String,
    /// The workload.
    pub workload: String,
    /// Connections.
    pub connections: usize,
    /// Echoes measured (echo workloads).
    pub messages: u64,
    /// Seconds measured, from the start of the load to its last echo
    /// (`held`: the time to open the sockets and echo once on each).
    pub seconds: f64,
    /// Echoes per second (echo workloads).
    pub messages_per_s: Option<f64>,
    /// Payload MB (10^6 bytes) per second, each way (echo workloads).
    pub mb_per_s: Option<f64>,
    /// Server CPU (user + system, every thread) per echo, microseconds.
    pub cpu_us_per_msg: Option<f64>,
    /// Server CPU seconds over wall seconds: near the worker count, the
    /// server is the bottleneck; well under it, the client is.
    pub server_busy: Option<f64>,
    /// The client's (this process's) CPU seconds over wall seconds: near
    /// the number of client cores, the client is the bottleneck.
    pub client_busy: Option<f64>,
    /// `held`: VmRSS before the connections, KiB.
    pub rss_before_kib: Option<u64>,
    /// `held`: VmRSS with them open, KiB.
    pub rss_after_kib: Option<u64>,
    /// `held`: the increase per connection, KiB.
    pub kib_per_connection: Option<f64>,
    /// Connections whose close the server did not answer (a close frame,
    /// then the end of the stream) within 10 s.
    pub unclean_closes: usize,
}

/// A figure of one server on one workload, over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// The server.
    pub server: String,
    /// The workload.
    pub workload: String,
    /// `messages_per_s`, `mb_per_s`, `cpu_us_per_msg`, `server_busy`,
    /// `client_busy`, `kib_per_connection`.
    pub metric: String,
    /// Median, range and spread over the rounds.
    pub summary: Summary,
}

/// Tern's median over a bare peer's, and the range of the per-round ratios.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// The workload.
    pub workload: String,
    /// The metric (see [`Figure::metric`]).
    pub metric: String,
    /// `tungstenite` or `fastwebsockets`.
    pub peer: String,
    /// Median of Tern over median of the peer.
    pub ratio: f64,
    /// Per-round ratios: smallest.
    pub min: f64,
    /// Per-round ratios: largest.
    pub max: f64,
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
    /// What.
    pub servers: Vec<ServerInfo>,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per trial.
    pub warmup_s: f64,
    /// `echo-small`'s connections.
    pub connections: usize,
    /// `echo-large`'s connections.
    pub large_connections: usize,
    /// `held`'s connections.
    pub held: usize,
    /// Worker threads of every server.
    pub workers: usize,
    /// Server cores.
    pub server_cores: String,
    /// Client cores.
    pub load_cores: String,
    /// Quick mode.
    pub quick: bool,
    /// The workloads.
    pub workloads: Vec<(String, String)>,
    /// Every trial, in run order.
    pub trials: Vec<Trial>,
    /// Every figure over the rounds.
    pub figures: Vec<Figure>,
    /// Tern against each bare peer.
    pub ratios: Vec<Ratio>,
}

/// The metrics of a workload, in table order, with their labels.
fn metrics(workload: &str) -> &'static [(&'static str, &'static str)] {
    match workload {
        "echo-small" => &[
            ("messages_per_s", "msg/s"),
            ("cpu_us_per_msg", "server CPU us/msg"),
            ("server_busy", "server CPU busy"),
            ("client_busy", "client CPU busy"),
        ],
        "echo-large" => &[
            ("messages_per_s", "msg/s"),
            ("mb_per_s", "MB/s each way"),
            ("cpu_us_per_msg", "server CPU us/msg"),
            ("server_busy", "server CPU busy"),
            ("client_busy", "client CPU busy"),
        ],
        _ => &[("kib_per_connection", "RSS KiB/conn")],
    }
}

fn metric(t: &Trial, name: &str) -> Option<f64> {
    match name {
        "messages_per_s" => t.messages_per_s,
        "mb_per_s" => t.mb_per_s,
        "cpu_us_per_msg" => t.cpu_us_per_msg,
        "server_busy" => t.server_busy,
        "client_busy" => t.client_busy,
        "kib_per_connection" => t.kib_per_connection,
        _ => None,
    }
}

pub(super) fn figures(trials: &[Trial], rounds: usize) -> (Vec<Figure>, Vec<Ratio>) {
    let value = |server: &str, workload: &str, name: &str, round: usize| {
        trials
            .iter()
            .find(|t| t.server == server && t.workload == workload && t.round == round)
            .and_then(|t| metric(t, name))
    };
    let mut figures = Vec::new();
    let mut ratios = Vec::new();
    for w in WORKLOADS {
        if !trials.iter().any(|t| t.workload == w.name) {
            continue;
        }
        for (name, _) in metrics(w.name) {
            let per_server: Vec<Vec<f64>> = SERVERS
                .iter()
                .map(|s| {
                    (0..rounds)
                        .filter_map(|r| value(s, w.name, name, r))
                        .collect()
                })
                .collect();
            for (s, values) in SERVERS.iter().zip(&per_server) {
                figures.push(Figure {
                    server: (*s).to_owned(),
                    workload: w.name.to_owned(),
                    metric: (*name).to_owned(),
                    summary: summarize(values),
                });
            }
            if name.ends_with("_busy") {
                continue;
            }
            for (k, peer) in SERVERS.iter().enumerate().skip(1) {
                let per_round: Vec<f64> = (0..rounds)
                    .filter_map(|r| {
                        ratio(
                            value("tern", w.name, name, r)?,
                            value(peer, w.name, name, r)?,
                        )
                    })
                    .collect();
                let medians = (
                    summarize(&per_server[0]).median,
                    summarize(&per_server[k]).median,
                );
                let range = summarize(&per_round);
                ratios.push(Ratio {
                    workload: w.name.to_owned(),
                    metric: (*name).to_owned(),
                    peer: (*peer).to_owned(),
                    ratio: ratio(medians.0, medians.1).unwrap_or(f64::NAN),
                    min: range.min,
                    max: range.max,
                });
            }
        }
    }
    (figures, ratios)
}

/// `a / b`, when both are figures and `b` is not zero (a server whose
/// RSS did not grow has no ratio).
fn ratio(a: f64, b: f64) -> Option<f64> {
    (a.is_finite() && b.is_finite() && b > 0.0).then(|| a / b)
}

/// `1,234,567` from 1,000 up, `12.3` from 10, `2.35` under it, `-` for
/// no figure.
pub(crate) fn fmt_value(v: f64) -> String {
    if !v.is_finite() {
        "-".to_owned()
    } else if v.abs() >= 1000.0 {
        let n = v.round() as i64;
        group_thousands(&n.abs().to_string(), n < 0)
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The report for a terminal: each figure's median with its range over
/// the rounds, and Tern's ratio to each bare peer with the range of the
/// per-round ratios.
pub fn terminal(r: &Report) -> String {
    let mut out = format!(
        "machine: {}\n\
         method: {} round(s), server order rotated; echo trials {} s after {} s of warm-up on the same \
         connections; a fresh server process per trial, {} worker thread(s), on core(s) {}; the \
         client (tokio-tungstenite, this process) on core(s) {}; small: {} connections x {} B text; \
         large: {} connections x {} KiB binary; held: {} connections{}\n",
        r.machine.summary(false),
        r.rounds,
        r.seconds,
        r.warmup_s,
        r.workers,
        r.server_cores,
        r.load_cores,
        r.connections,
        SMALL_LEN,
        r.large_connections,
        LARGE_LEN / 1024,
        r.held,
        if r.quick { " (QUICK: figures mean nothing)" } else { "" }
    );
    out.push_str(&format!(
        "\n{:<11} {:<18} {:>26} {:>26} {:>26} {:>22} {:>22}\n",
        "workload",
        "figure",
        "tern",
        "tungstenite",
        "fastwebsockets",
        "tern/tungstenite",
        "tern/fastwebsockets"
    ));
    for w in WORKLOADS {
        if !r.figures.iter().any(|f| f.workload == w.name) {
            continue;
        }
        for (name, label) in metrics(w.name) {
            let cell = |s: &str| {
                r.figures
                    .iter()
                    .find(|f| f.server == s && f.workload == w.name && f.metric == *name)
                    .map_or_else(
                        || "-".to_owned(),
                        |f| {
                            format!(
                                "{} [{}-{}]",
                                fmt_value(f.summary.median),
                                fmt_value(f.summary.min),
                                fmt_value(f.summary.max)
                            )
                        },
                    )
            };
            let ratio = |peer: &str| {
                r.ratios
                    .iter()
                    .find(|x| x.peer == peer && x.workload == w.name && x.metric == *name)
                    .map_or_else(String::new, |x| {
                        if x.ratio.is_finite() {
                            format!("{:.3} [{:.3}-{:.3}]", x.ratio, x.min, x.max)
                        } else {
                            "-".to_owned()
                        }
                    })
            };
            out.push_str(&format!(
                "{:<11} {:<18} {:>26} {:>26} {:>26} {:>22} {:>22}\n",
                w.name,
                label,
                cell("tern"),
                cell("tungstenite"),
                cell("fastwebsockets"),
                ratio("tungstenite"),
                ratio("fastwebsockets"),
            ));
        }
    }
    out.push_str(
        "median [min-max] over the rounds; ratios: Tern's median over the peer's [per-round range] \
         (higher is better for msg/s and MB/s, lower for CPU and RSS); a client CPU near its core \
         count means the client set the pace: compare server CPU per message\n",
    );
    let unclean: usize = r.trials.iter().map(|t| t.unclean_closes).sum();
    if unclean > 0 {
        out.push_str(&format!(
            "closes not answered within 10 s: {unclean} (see the trials)\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands() {
        assert_eq!(fmt_value(1234567.4), "1,234,567");
        assert_eq!(fmt_value(999.0), "999.0");
        assert_eq!(fmt_value(2.345), "2.35");
        assert_eq!(fmt_value(f64::NAN), "-");
    }
}
