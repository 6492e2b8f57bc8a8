//! What a run records, the ratios over the rounds, and its report for a
//! terminal.

use serde::Serialize;

use super::{Answer, CacheCounts};
use crate::{
    console::group_thousands,
    machine::Machine,
    stats::{summarize, Summary},
};

/// Per-round ratios `values[i] / reference[i]`, summarized (rounds where
/// either is missing or the reference is 0 are left out).
pub fn ratio_summary(values: &[f64], reference: &[f64]) -> Summary {
    let ratios: Vec<f64> = values
        .iter()
        .zip(reference)
        .filter(|(_, r)| **r > 0.0)
        .map(|(v, r)| v / r)
        .collect();
    summarize(&ratios)
}

/// One trial of one row.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// The round (from 1).
    pub round: usize,
    /// Its place in the round's order (from 1).
    pub position: usize,
    /// Requests per second.
    pub rps: f64,
    /// Server CPU (user + system, every thread) per request, microseconds.
    pub cpu_us_per_req: f64,
    /// Of which system time, microseconds.
    pub sys_us_per_req: f64,
    /// wrk's p99 latency, microseconds.
    pub p99_us: f64,
    /// Bytes read per response, headers included.
    pub wire_bytes: f64,
    /// Answers outside 2xx and socket errors.
    pub errors: u64,
}

/// One row's figures over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct RowResult {
    /// `home`, `home br`.
    pub row: String,
    /// The request path.
    pub path: String,
    /// With `Accept-Encoding: br`.
    pub br: bool,
    /// The answer checked before the load.
    pub answer: Answer,
    /// The page's size, uncompressed, in bytes.
    pub page_bytes: usize,
    /// Every trial, in round order.
    pub trials: Vec<Trial>,
    /// Requests per second.
    pub rps: Summary,
    /// Per-round req/s over the plaintext row's of the same encoding
    /// (`None` on the plaintext rows).
    pub ratio: Option<Summary>,
    /// The goal of [`ratio`](Self::ratio).
    pub goal: Option<f64>,
    /// Whether the median ratio reaches the goal.
    pub goal_met: Option<bool>,
    /// On a `br` row: per-round req/s over the same page's plain row.
    pub br_over_plain: Option<Summary>,
    /// Server CPU per request.
    pub cpu_us_per_req: Summary,
    /// Bytes read per response, headers included.
    pub wire_bytes: Summary,
    /// The showcase's cache of compressed answers during this row's
    /// measured trials (`None`: no counts at its `/metrics`).
    pub cache: Option<CacheCounts>,
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
    /// The showcase binary.
    pub showcase: String,
    /// Its SHA-256.
    pub showcase_sha256: String,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per row.
    pub warmup_s: f64,
    /// wrk connections.
    pub connections: usize,
    /// Cores of the server.
    pub server_cores: String,
    /// Cores of wrk.
    pub load_cores: String,
    /// Quick mode.
    pub quick: bool,
    /// Every row.
    pub rows: Vec<RowResult>,
    /// What went wrong during or after the load.
    pub problems: Vec<String>,
}

/// `12,345`.
fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_owned();
    }
    group_thousands(&format!("{:.0}", v.abs()), v < 0.0)
}

/// The report for a terminal.
pub fn terminal(r: &Report) -> String {
    let mut out = format!("machine: {}\n", r.machine.summary(true));
    out.push_str(&format!(
        "method: {} round(s) of {} s per row ({} s of warm-up per row first), all rows against one showcase process (SHOWCASE_COMPRESSION=true, TERN_WORKERS=1, TERN_METRICS=on) on core(s) {}, wrk -t1 -c{} on core(s) {}, rows rotated each round{}\nshowcase: {} (sha256 {})\n\n",
        r.rounds,
        r.seconds,
        r.warmup_s,
        r.server_cores,
        r.connections,
        r.load_cores,
        if r.quick { " (QUICK: figures mean nothing)" } else { "" },
        r.showcase,
        r.showcase_sha256.get(..12).unwrap_or(&r.showcase_sha256),
    ));
    out.push_str(&format!(
        "{:<14} {:>26} {:>22} {:>6} {:>5} {:>8} {:>8} {:>9} {:>9} {:>20} {:>9}\n",
        "row",
        "req/s [min-max]",
        "/ plaintext [min-max]",
        "goal",
        "met",
        "page B",
        "sent B",
        "wire B",
        "CPU/req",
        "br / plain [min-max]",
        "cache hit"
    ));
    for row in &r.rows {
        let ratio = row.ratio.map_or("reference".to_owned(), |s| {
            format!("{:.3} [{:.3}-{:.3}]", s.median, s.min, s.max)
        });
        out.push_str(&format!(
            "{:<14} {:>26} {:>22} {:>6} {:>5} {:>8} {:>8} {:>9} {:>7.1}us {:>20} {:>9}\n",
            row.row,
            format!(
                "{} [{}-{}]",
                grouped(row.rps.median),
                grouped(row.rps.min),
                grouped(row.rps.max)
            ),
            ratio,
            row.goal.map_or(String::new(), |g| format!(">={g}")),
            match row.goal_met {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "",
            },
            grouped(row.page_bytes as f64),
            grouped(row.answer.body_bytes as f64),
            grouped(row.wire_bytes.median),
            row.cpu_us_per_req.median,
            row.br_over_plain.map_or(String::new(), |s| format!(
                "{:.3} [{:.3}-{:.3}]",
                s.median, s.min, s.max
            )),
            row.cache
                .and_then(CacheCounts::hit_rate)
                .map_or(String::new(), |r| format!("{:.2}%", r * 100.0)),
        ));
    }
    let goals: Vec<&RowResult> = r.rows.iter().filter(|row| row.goal.is_some()).collect();
    let met = goals
        .iter()
        .filter(|row| row.goal_met == Some(true))
        .count();
    out.push_str(&format!(
        "\ngoals met: {met} of {}{}\n",
        goals.len(),
        if met < goals.len() {
            format!(
                " (missed: {})",
                goals
                    .iter()
                    .filter(|row| row.goal_met != Some(true))
                    .map(|row| row.row.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        }
    ));
    for p in &r.problems {
        out.push_str(&format!("problem: {p}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_taken_per_round_then_summarized() {
        // Round 2's plaintext is slow: its ratio is high, and the
        // median of the ratios is not the ratio of the medians.
        let s = ratio_summary(&[50.0, 40.0, 60.0], &[100.0, 50.0, 100.0]);
        assert_eq!((s.n, s.median, s.min, s.max), (3, 0.6, 0.5, 0.8));
        let s = ratio_summary(&[50.0, 40.0], &[0.0, 80.0]);
        assert_eq!((s.n, s.median), (1, 0.5));
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(grouped(1234567.4), "1,234,567");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(f64::NAN), "-");
    }
}
