//! The clock request latencies are measured with.
//!
//! Two readings per request and a difference in microseconds, on every
//! request while the metrics (or the request span) are on: with
//! `std::time::Instant` that is two `clock_gettime` calls and a checked
//! `timespec` subtraction, about 170 instructions per request, over 1%
//! of a plaintext request. `quanta` reads the CPU's time-stamp counter
//! where it is invariant (scaled to nanoseconds by a calibration made
//! once per process, at most 200 ms, when the first app with metrics is
//! built) and falls back to the monotonic clock elsewhere; the
//! difference is a multiply and a shift.

use std::sync::OnceLock;

static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();

fn clock() -> &'static quanta::Clock {
    CLOCK.get_or_init(quanta::Clock::new)
}

/// Makes the clock (and calibrates it) now rather than on the first
/// request.
pub(crate) fn init() {
    clock();
}

/// A reading of the clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp(u64);

/// Now.
#[inline]
pub(crate) fn now() -> Stamp {
    Stamp(clock().raw())
}

impl Stamp {
    /// Microseconds from this reading to now.
    #[inline]
    pub(crate) fn micros(self) -> u64 {
        let clock = clock();
        clock.delta_as_nanos(self.0, clock.raw()) / 1_000
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
