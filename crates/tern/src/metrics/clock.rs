//! The clock request latencies are measured with: one reading when the
//! request comes in, one at its answer, the difference in microseconds,
//! shared by the metrics, the request span and the access log.
//!
//! `std::time::Instant` (the monotonic clock). The integer conversion
//! below avoids `Duration::as_micros`'s 128-bit division. A crate
//! reading the CPU's time-stamp counter (quanta) was tried: it saves
//! about 100 instructions a request but calibrates with a busy loop of
//! up to 200 ms at start, which also made the lab's instruction counts
//! vary from run to run.

use std::time::Instant;

/// A reading of the clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp(Instant);

/// Now.
#[inline]
pub(crate) fn now() -> Stamp {
    Stamp(Instant::now())
}

impl Stamp {
    /// Microseconds from this reading to now.
    #[inline]
    pub(crate) fn micros(self) -> u64 {
        let d = self.0.elapsed();
        d.as_secs()
            .saturating_mul(1_000_000)
            .saturating_add(u64::from(d.subsec_micros()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_microseconds() {
        let start = super::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let us = start.micros();
        // A sleep lasts at least its time; a loaded machine may add more.
        assert!((20_000..2_000_000).contains(&us), "{us}");
    }
}
