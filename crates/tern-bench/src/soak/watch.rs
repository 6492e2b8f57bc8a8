//! What the soak reads of each showcase process: its memory, file
//! descriptors and threads from `/proc/<pid>/`, and its `/metrics`.

use std::{collections::BTreeMap, net::SocketAddr};

use anyhow::{ensure, Result};
use serde::Serialize;

use crate::client::Client;

/// One reading of one process.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sample {
    /// Seconds since the load started (negative: before it).
    pub t_s: f64,
    /// Which process (0 or 1).
    pub process: usize,
    /// `VmRSS`, KiB.
    pub rss_kib: u64,
    /// Entries of `/proc/<pid>/fd`.
    pub fds: u64,
    /// `Threads`.
    pub threads: u64,
    /// The scrape.
    pub metrics: Scrape,
}

/// What one scrape of `/metrics` said.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scrape {
    /// `tern_http_requests_total`, every series summed.
    pub requests: u64,
    /// `tern_http_requests_total` by status class.
    pub requests_by_status: BTreeMap<String, u64>,
    /// `tern_connections_open` by protocol.
    pub connections_open: BTreeMap<String, u64>,
    /// `tern_db_pool_connections` by state.
    pub pool: BTreeMap<String, u64>,
    /// `tern_realtime_subscribers`.
    pub subscribers: u64,
    /// `process_resident_memory_bytes`, KiB.
    pub rss_kib: u64,
    /// `process_open_fds`.
    pub fds: u64,
}

/// The value of `key` in a series' label set (`{a="x",b="y"}`).
fn label<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    let pattern = format!("{key}=\"");
    let at = labels.find(&pattern)? + pattern.len();
    let rest = &labels[at..];
    Some(&rest[..rest.find('"')?])
}

/// Parses Prometheus's text format, keeping the series the soak needs.
pub(super) fn parse(text: &str) -> Scrape {
    let mut s = Scrape::default();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let (name, labels) = series.split_once('{').unwrap_or((series, ""));
        let n = value.max(0.0) as u64;
        match name {
            "tern_http_requests_total" => {
                s.requests += n;
                if let Some(status) = label(labels, "status") {
                    *s.requests_by_status.entry(status.to_owned()).or_default() += n;
                }
            }
            "tern_connections_open" => {
                if let Some(p) = label(labels, "protocol") {
                    s.connections_open.insert(p.to_owned(), n);
                }
            }
            "tern_db_pool_connections" => {
                if let Some(state) = label(labels, "state") {
                    s.pool.insert(state.to_owned(), n);
                }
            }
            "tern_realtime_subscribers" => s.subscribers = n,
            "process_resident_memory_bytes" => s.rss_kib = n / 1024,
            "process_open_fds" => s.fds = n,
            _ => {}
        }
    }
    s
}

/// `GET /metrics` on `addr` with the token, on a connection of its own
/// (closed after).
pub(super) fn scrape(addr: SocketAddr, token: &str) -> Result<Scrape> {
    let auth = format!("Bearer {token}");
    let res = Client::connect(addr)?.send(
        "GET",
        "/metrics",
        &[("Authorization", &auth), ("Connection", "close")],
        None,
    )?;
    ensure!(res.status == 200, "/metrics answered {}", res.status);
    Ok(parse(&String::from_utf8_lossy(&res.body)))
}

/// `VmRSS` (KiB) and `Threads` from `/proc/<pid>/status`, and the
/// entries of `/proc/<pid>/fd`.
pub(super) fn proc_figures(pid: u32) -> Result<(u64, u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |key: &str| {
        status
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))?.count() as u64;
    Ok((field("VmRSS:"), fds, field("Threads:")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_the_soak_needs_are_read() {
        let text = "# HELP tern_http_requests_total Requests answered\n\
# TYPE tern_http_requests_total counter\n\
tern_http_requests_total{route=\"/\",method=\"GET\",status=\"2xx\"} 10\n\
tern_http_requests_total{route=\"/items\",method=\"POST\",status=\"2xx\"} 5\n\
tern_http_requests_total{route=\"(unmatched)\",method=\"GET\",status=\"4xx\"} 1\n\
tern_http_requests_total_other 99\n\
tern_connections_open{protocol=\"http1\"} 3\n\
tern_connections_open{protocol=\"websocket\"} 0\n\
tern_db_pool_connections{state=\"idle\"} 4\n\
process_resident_memory_bytes 2.097152e7\n\
process_open_fds 31\n";
        let s = parse(text);
        assert_eq!(s.requests, 16);
        assert_eq!(s.requests_by_status.get("4xx"), Some(&1));
        assert_eq!(s.connections_open.get("http1"), Some(&3));
        assert_eq!(s.connections_open.get("websocket"), Some(&0));
        assert_eq!(s.pool.get("idle"), Some(&4));
        assert_eq!(s.rss_kib, 20480);
        assert_eq!(s.fds, 31);
    }
}
