//! A tiny xorshift PRNG: the tables must be identical on every machine and
//! every toolchain, so the generator is written here rather than taken
//! from a crate whose output could change between versions.

/// Marsaglia's xorshift64 (shifts 13, 7, 17).
///
/// Not for anything but reproducible test data: the low bits are weak and
/// `below` has a modulo bias of at most `n / 2^64`, negligible for the
/// small ranges used here.
pub(crate) struct XorShift64(u64);

impl XorShift64 {
    /// A generator; a zero seed (the one fixed point) is replaced.
    pub(crate) fn new(seed: u64) -> Self {
        XorShift64(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform in `0..n`; `n` must not be zero.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn between(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True `percent` times in a hundred.
    pub(crate) fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    /// An index into `weights`, drawn in proportion to them.
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut pick = self.below(total as usize) as u32;
        for (i, &w) in weights.iter().enumerate() {
            if pick < w {
                return i;
            }
            pick -= w;
        }
        weights.len() - 1
    }

    /// Fisher-Yates.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// One of `items`.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::XorShift64;

    #[test]
    fn known_sequence() {
        // Pins the generator: changing it changes every table hash.
        let mut rng = XorShift64::new(1);
        assert_eq!(rng.next_u64(), 1_082_269_761);
        assert_eq!(rng.next_u64(), 1_152_992_998_833_853_505);
    }

    #[test]
    fn weighted_follows_weights() {
        let mut rng = XorShift64::new(7);
        let mut counts = [0u32; 3];
        for _ in 0..100_000 {
            counts[rng.weighted(&[70, 20, 10])] += 1;
        }
        assert!((69_000..71_000).contains(&counts[0]), "{counts:?}");
        assert!((19_000..21_000).contains(&counts[1]), "{counts:?}");
    }
}
