//! The hit rate of the showcase's cache of compressed answers, read from
//! its `/metrics` (`tern_site_compression_cache_total{result=...}`)
//! before and after each trial, so that each row gets the counts of its
//! own load.

use anyhow::{ensure, Result};
use serde::Serialize;

use crate::{client::Client, process::ServerProcess};

/// Compressed answers by the cache's part in them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheCounts {
    /// Sent from the cache.
    pub hits: u64,
    /// Compressed, then kept: a body's second sighting.
    pub misses: u64,
    /// Compressed fast, not kept: a body's first sighting (`first`;
    /// counted against the hit rate as a miss is).
    pub firsts: u64,
    /// Compressed as they streamed, not kept.
    pub bypasses: u64,
}

impl CacheCounts {
    /// What happened between `before` and `self`.
    pub fn since(self, before: CacheCounts) -> CacheCounts {
        CacheCounts {
            hits: self.hits.saturating_sub(before.hits),
            misses: self.misses.saturating_sub(before.misses),
            firsts: self.firsts.saturating_sub(before.firsts),
            bypasses: self.bypasses.saturating_sub(before.bypasses),
        }
    }

    /// The sum of two counts.
    pub fn plus(self, other: CacheCounts) -> CacheCounts {
        CacheCounts {
            hits: self.hits + other.hits,
            misses: self.misses + other.misses,
            firsts: self.firsts + other.firsts,
            bypasses: self.bypasses + other.bypasses,
        }
    }

    /// Hits over every compressed answer; `None` if none was compressed.
    pub fn hit_rate(self) -> Option<f64> {
        let all = self.hits + self.misses + self.firsts + self.bypasses;
        (all > 0).then(|| self.hits as f64 / all as f64)
    }
}

/// The counts in a `/metrics` text; `None` if it has none (a showcase
/// without the cache).
pub(super) fn parse(metrics: &str) -> Option<CacheCounts> {
    let mut counts = CacheCounts::default();
    let mut seen = false;
    for line in metrics.lines() {
        let Some(rest) = line.strip_prefix("tern_site_compression_cache_total{result=\"") else {
            continue;
        };
        let Some((result, value)) = rest.split_once("\"} ") else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        match result {
            "hit" => counts.hits = value,
            "miss" => counts.misses = value,
            "first" => counts.firsts = value,
            "bypass" => counts.bypasses = value,
            _ => continue,
        }
        seen = true;
    }
    seen.then_some(counts)
}

/// The showcase's counts now.
pub(super) fn read(server: &ServerProcess) -> Result<Option<CacheCounts>> {
    let res = Client::connect(server.addr)?.send("GET", "/metrics", &[], None)?;
    ensure!(
        res.status == 200,
        "GET /metrics answered {} (is TERN_METRICS on?)",
        res.status
    );
    Ok(parse(&String::from_utf8_lossy(&res.body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_read_from_the_metrics_text() {
        let text = "# HELP tern_site_compression_cache Compressed answers.\n\
            # TYPE tern_site_compression_cache counter\n\
            tern_site_compression_cache_total{result=\"hit\"} 980\n\
            tern_site_compression_cache_total{result=\"miss\"} 9\n\
            tern_site_compression_cache_total{result=\"first\"} 10\n\
            tern_site_compression_cache_total{result=\"bypass\"} 1\n\
            tern_site_compression_cache_bytes 40000\n";
        let counts = parse(text).unwrap_or_default();
        assert_eq!(
            counts,
            CacheCounts {
                hits: 980,
                misses: 9,
                firsts: 10,
                bypasses: 1
            }
        );
        assert_eq!(counts.hit_rate(), Some(0.98));
        assert_eq!(parse("tern_requests_total 5\n"), None);
        let later = CacheCounts {
            hits: 1980,
            ..counts
        };
        assert_eq!(later.since(counts).hit_rate(), Some(1.0));
        // First sightings count against the hit rate.
        let later = CacheCounts {
            firsts: 1010,
            ..counts
        };
        assert_eq!(later.since(counts).hit_rate(), Some(0.0));
        assert_eq!(CacheCounts::default().hit_rate(), None);
        assert_eq!(counts.plus(counts).hits, 1960);
        assert_eq!(counts.plus(counts).firsts, 20);
    }
}
