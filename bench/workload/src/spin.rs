//! A fixed amount of CPU work: the regression gate's injected slowdown.
//!
//! It costs the same instructions every call (so callgrind sees it
//! exactly) and about the same time (so throughput sees it too), unlike a
//! busy wait on the clock, whose instruction count depends on how fast
//! the clock advances (and under callgrind, 50 times slower, it barely
//! runs).

use std::hint::black_box;

/// Runs `iterations` rounds of a xorshift step that the optimizer cannot
/// remove, and returns the last state.
#[inline(never)]
pub fn spin(iterations: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15_u64);
    for _ in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    x
}

/// How many iterations of [`spin`] take `nanos` nanoseconds on this
/// machine: the fastest of several timed runs, so that a busy moment of
/// the machine makes the estimate smaller, not larger.
pub fn iterations_for(nanos: f64) -> u64 {
    const PROBE: u64 = 1_000_000;
    let fastest = (0..5)
        .map(|_| {
            let start = std::time::Instant::now();
            black_box(spin(PROBE));
            start.elapsed().as_secs_f64() * 1e9
        })
        .fold(f64::INFINITY, f64::min);
    let per_iteration = fastest / PROBE as f64;
    (nanos / per_iteration).round().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_the_same_every_time() {
        assert_eq!(spin(1000), spin(1000));
        assert_ne!(spin(1000), spin(1001));
        let n = iterations_for(1_000.0);
        assert!(n >= 1, "{n}");
    }
}
