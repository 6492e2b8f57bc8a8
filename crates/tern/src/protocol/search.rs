//! Searches of the short byte strings a request is made of (its target,
//! its lines), where `memchr`'s set-up costs more than the search: the
//! first [`SHORT`] bytes are searched a word at a time, the rest (a long
//! line: a large cookie) by `memchr`.

/// How far [`byte`] searches a word at a time.
const SHORT: usize = 64;

/// The position of the first `needle` in `haystack`.
#[inline]
pub(crate) fn byte(haystack: &[u8], needle: u8) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let needles = u64::from_le_bytes([needle; 8]);
    let short = haystack.len().min(SHORT);
    let mut words = haystack[..short].chunks_exact(8);
    let mut at = 0;
    for chunk in words.by_ref() {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_le_bytes(word) ^ needles;
        // A zero byte of `x` (a match) sets its high bit here; a false
        // flag is only ever above a real one, so the lowest is the first.
        let found = x.wrapping_sub(ONES) & !x & HIGHS;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    if let Some(i) = words.remainder().iter().position(|&b| b == needle) {
        return Some(at + i);
    }
    memchr::memchr(needle, &haystack[short..]).map(|i| short + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_match_as_memchr_does() {
        // Every length up to past the word-at-a-time part, a match (or
        // two, or none) at every place, among bytes that trip the
        // zero-byte test's borrow (the needle's neighbours, 0x80 above
        // it, NUL).
        for needle in [b'\n', b'#', 0x00, 0xff] {
            for len in 0..=SHORT + 20 {
                for fill in [
                    b'a',
                    needle.wrapping_add(1),
                    needle.wrapping_sub(1),
                    needle ^ 0x80,
                    0x00,
                    0xff,
                ] {
                    if fill == needle {
                        continue;
                    }
                    let mut bytes = vec![fill; len];
                    assert_eq!(byte(&bytes, needle), None, "{needle} {len} {fill}");
                    for first in 0..len {
                        bytes[first] = needle;
                        assert_eq!(byte(&bytes, needle), Some(first), "{needle} {len} {fill}");
                        assert_eq!(byte(&bytes, needle), memchr::memchr(needle, &bytes));
                        for second in first + 1..len.min(first + 10) {
                            bytes[second] = needle;
                            assert_eq!(byte(&bytes, needle), Some(first));
                            bytes[second] = fill;
                        }
                        bytes[first] = fill;
                    }
                }
            }
        }
        let long = [vec![b'x'; 5000], b"\r\n".to_vec()].concat();
        assert_eq!(byte(&long, b'\n'), Some(5001));
        assert_eq!(byte(&long[..5000], b'\n'), None);
    }
}
