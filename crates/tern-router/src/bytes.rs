//! Word-at-a-time byte helpers for the short strings a router handles.
//!
//! Path segments are a few bytes long, too short for `memchr` and `memcmp`
//! to pay for their call and set-up; reading them as (overlapping) 8- or
//! 4-byte words does the same work in a handful of instructions.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes at `at`, little-endian. Panics if they run past the end.
#[inline]
pub(crate) fn read8(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// The 4 bytes at `at`, little-endian. Panics if they run past the end.
#[inline]
pub(crate) fn read4(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(word))
}

/// Whether any byte of `word` equals `byte`.
///
/// The classic zero-byte test: it can flag a byte *above* a real match
/// wrongly, but never flags a word without one, so "any" is exact.
#[inline]
fn has_byte(word: u64, byte: u8) -> bool {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS != 0
}

/// Whether `bytes` contains `byte`.
#[inline]
pub(crate) fn contains(bytes: &[u8], byte: u8) -> bool {
    let len = bytes.len();
    if len >= 8 {
        let mut at = 0;
        while len - at > 8 {
            if has_byte(read8(bytes, at), byte) {
                return true;
            }
            at += 8;
        }
        has_byte(read8(bytes, len - 8), byte)
    } else if len >= 4 {
        has_byte(read4(bytes, 0) | read4(bytes, len - 4) << 32, byte)
    } else {
        // Not `<[u8]>::contains`: that calls `memchr`, whose set-up costs
        // more than three comparisons.
        #[allow(clippy::manual_contains)]
        bytes.iter().any(|&b| b == byte)
    }
}

/// Whether `a` and `b` hold the same bytes.
#[inline]
pub(crate) fn eq(a: &[u8], b: &[u8]) -> bool {
    let len = a.len();
    if len != b.len() {
        return false;
    }
    if len >= 8 {
        let mut at = 0;
        while len - at > 8 {
            if read8(a, at) != read8(b, at) {
                return false;
            }
            at += 8;
        }
        read8(a, len - 8) == read8(b, len - 8)
    } else if len >= 4 {
        read4(a, 0) == read4(b, 0) && read4(a, len - 4) == read4(b, len - 4)
    } else {
        a.iter().zip(b).all(|(x, y)| x == y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_standard_library() {
        let texts: Vec<Vec<u8>> = (0..40)
            .flat_map(|len| {
                let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                let mut variants = vec![base.clone()];
                for at in 0..len {
                    for byte in [b'%', b'/', 0x80, 0xff, 0x24, 0x26] {
                        let mut v = base.clone();
                        v[at] = byte;
                        variants.push(v);
                    }
                }
                variants
            })
            .collect();
        for a in &texts {
            for byte in [b'%', b'/', 0x80, 0xff, 0] {
                assert_eq!(contains(a, byte), a.contains(&byte), "{a:?} {byte}");
            }
        }
        for a in texts.iter().step_by(7) {
            for b in &texts {
                assert_eq!(eq(a, b), a == b, "{a:?} {b:?}");
            }
        }
    }
}
