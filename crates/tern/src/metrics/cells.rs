//! The cells a metric is counted in: atomics, updated without a lock.

use std::{
    fmt,
    sync::{
        atomic::{AtomicI64, AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

/// The upper bounds of the latency buckets, in microseconds: 0.5 ms to
/// 10 s, as Prometheus's client libraries space them; a last bucket
/// (`+Inf`) takes the rest.
pub(crate) const BOUNDS_US: [u64; 14] = [
    500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
    2_500_000, 5_000_000, 10_000_000,
];

/// The same bounds in seconds, as `/metrics` writes them (`le`).
pub(crate) const BOUNDS_SECONDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Buckets, `+Inf` included.
pub(crate) const BUCKETS: usize = BOUNDS_US.len() + 1;

/// The bucket of a duration of `micros`.
pub(crate) fn bucket_of(micros: u64) -> usize {
    BOUNDS_US.partition_point(|&bound| bound < micros)
}

/// A total that only goes up. Cloning shares the count.
#[derive(Clone, Default)]
pub struct Counter(Arc<AtomicU64>);

impl Counter {
    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// The total so far.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Counter").field(&self.get()).finish()
    }
}

/// A value that goes up and down. Cloning shares the value.
#[derive(Clone, Default)]
pub struct Gauge(Arc<AtomicI64>);

impl Gauge {
    /// Adds one.
    pub fn inc(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Takes one away.
    pub fn dec(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }

    /// Adds `n` (negative to take away).
    pub fn add(&self, n: i64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    /// Sets the value.
    pub fn set(&self, v: i64) {
        self.0.store(v, Ordering::Relaxed);
    }

    /// The value now.
    pub fn get(&self) -> i64 {
        self.0.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Gauge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Gauge").field(&self.get()).finish()
    }
}

/// Durations counted in Tern's buckets (0.5 ms to 10 s). Cloning shares
/// the counts.
#[derive(Clone, Default)]
pub struct Histogram(Arc<HistogramCells>);

#[derive(Default)]
pub(crate) struct HistogramCells {
    buckets: [AtomicU64; BUCKETS],
    sum_us: AtomicU64,
}

impl HistogramCells {
    pub(crate) fn observe_us(&self, micros: u64) {
        self.buckets[bucket_of(micros)].fetch_add(1, Ordering::Relaxed);
        self.sum_us.fetch_add(micros, Ordering::Relaxed);
    }

    /// Adds this cell's counts into `buckets` and returns its sum in µs.
    pub(crate) fn add_into(&self, buckets: &mut [u64; BUCKETS]) -> u64 {
        for (out, cell) in buckets.iter_mut().zip(&self.buckets) {
            *out += cell.load(Ordering::Relaxed);
        }
        self.sum_us.load(Ordering::Relaxed)
    }
}

impl Histogram {
    /// Counts one duration.
    pub fn observe(&self, duration: Duration) {
        self.0
            .observe_us(u64::try_from(duration.as_micros()).unwrap_or(u64::MAX));
    }

    /// How many durations were counted.
    pub fn count(&self) -> u64 {
        self.0
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .sum()
    }

    /// The counts per bucket (not cumulative) and the sum in seconds.
    pub(crate) fn snapshot(&self) -> ([u64; BUCKETS], f64) {
        let mut buckets = [0; BUCKETS];
        let sum = self.0.add_into(&mut buckets);
        (buckets, sum as f64 / 1e6)
    }
}

impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_upper_bounds() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(500), 0, "le is inclusive");
        assert_eq!(bucket_of(501), 1);
        assert_eq!(bucket_of(10_000_000), 13);
        assert_eq!(bucket_of(10_000_001), 14, "+Inf");
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        for (us, s) in BOUNDS_US.iter().zip(BOUNDS_SECONDS) {
            assert_eq!(*us as f64 / 1e6, s);
        }
    }
}
