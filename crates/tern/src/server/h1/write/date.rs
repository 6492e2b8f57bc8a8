//! The `date` field of every answer (RFC 9110 §6.6.1: an origin server
//! with a clock MUST send it), from a per-thread cache.
//!
//! Formatting an IMF-fixdate takes a calendar computation; the field
//! changes once a second. So each worker thread keeps the whole last line
//! of a head, `date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n` (the date is
//! the last field the writer writes, and the empty line follows it), and
//! an answer's head copies those 39 bytes.
//!
//! **When the clock is read**: in [`tick`], which the connection calls
//! once per batch of answers (before writing the first answer of a batch
//! of pipelined requests), not per answer: a batch of 16 pipelined
//! answers reads the clock once. A date is so at most one batch old, and
//! a batch never waits for a slow handler (the connection flushes when a
//! handler is pending), so the date is the second its batch began. The
//! cache is reformatted only when the second changed. A thread that never
//! ticked formats the date on first use ([`line()`]), so an answer never
//! carries a blank date.

use std::{
    cell::Cell,
    io::Write as _,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

/// `date: ` + IMF-fixdate (29 bytes) + the end of the field + the empty
/// line that ends the head.
pub(super) const LINE_LEN: usize = 6 + 29 + 4;

/// The last second `httpdate` can write (9999-12-31T23:59:59Z); later
/// clocks are written as this second rather than panicking.
const MAX_SECS: u64 = 253_402_300_799;

/// A second's line, and the second it is of.
#[derive(Clone, Copy)]
struct Cached {
    /// Seconds since the epoch, plus one (0: never formatted).
    second: u64,
    line: [u8; LINE_LEN],
}

thread_local! {
    static CACHE: Cell<Cached> = const {
        Cell::new(Cached { second: 0, line: [0; LINE_LEN] })
    };
}

/// Reads the clock and reformats this thread's date if the second
/// changed. Called by the connection at the start of each batch.
pub(crate) fn tick() {
    refresh(SystemTime::now());
}

/// The cached last line of a head: `date: ...\r\n\r\n`.
#[inline]
pub(super) fn line() -> [u8; LINE_LEN] {
    // A thread being torn down has no cache: the clock is read and the
    // line formatted on the stack instead.
    let cached = CACHE.try_with(Cell::get).ok();
    match cached {
        Some(c) if c.second != 0 => c.line,
        _ => refresh(SystemTime::now()),
    }
}

/// Makes the cache hold `now`'s second and returns its line.
fn refresh(now: SystemTime) -> [u8; LINE_LEN] {
    // A clock before 1970 is written as the epoch, one past year 9999 as
    // its last second: `httpdate` panics on either, an answer must not.
    let second = now
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .min(MAX_SECS);
    let key = second + 1;
    if let Ok(Some(line)) = CACHE.try_with(|c| {
        let cached = c.get();
        (cached.second == key).then_some(cached.line)
    }) {
        return line;
    }
    let line = format(second);
    let _ = CACHE.try_with(|c| c.set(Cached { second: key, line }));
    line
}

/// The line of one second since the epoch (at most [`MAX_SECS`]).
fn format(second: u64) -> [u8; LINE_LEN] {
    let mut line = [0; LINE_LEN];
    let date = httpdate::HttpDate::from(UNIX_EPOCH + Duration::from_secs(second));
    let mut at = &mut line[..];
    // Exactly LINE_LEN bytes: an IMF-fixdate is always 29 bytes long
    // (two-digit day, four-digit year, as httpdate writes it).
    let written = write!(at, "date: {date}\r\n\r\n");
    debug_assert!(written.is_ok() && at.is_empty());
    line
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The naive reference: httpdate's own formatting of the time.
    fn reference(t: SystemTime) -> String {
        format!("date: {}\r\n\r\n", httpdate::fmt_http_date(t))
    }

    #[test]
    fn the_line_is_httpdates_imf_fixdate() {
        tick();
        let before = SystemTime::now();
        let got = line();
        let after = SystemTime::now();
        let got = std::str::from_utf8(&got).unwrap();
        assert!(
            got == reference(before) || got == reference(after),
            "{got:?} is neither {:?} nor {:?}",
            reference(before),
            reference(after)
        );
    }

    #[test]
    fn the_cache_changes_with_the_second_and_only_then() {
        let t = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(&refresh(t)[..], reference(t).as_bytes());
        // Within the same second the cached line is returned: a different
        // time of that second must not change it.
        let later_same_second = t + Duration::from_millis(999);
        assert_eq!(&refresh(later_same_second)[..], reference(t).as_bytes());
        assert_eq!(&line()[..], reference(t).as_bytes());
        let next = t + Duration::from_secs(1);
        assert_eq!(&refresh(next)[..], reference(next).as_bytes());
        assert_eq!(&line()[..], reference(next).as_bytes());
        assert_ne!(reference(t), reference(next));
    }

    #[test]
    fn a_thread_that_never_ticked_gets_the_current_date() {
        std::thread::spawn(|| {
            let before = SystemTime::now();
            let got = line();
            let after = SystemTime::now();
            assert!(
                got[..] == *reference(before).as_bytes() || got[..] == *reference(after).as_bytes()
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn clocks_out_of_httpdates_range_do_not_panic() {
        let before_epoch = UNIX_EPOCH - Duration::from_secs(10);
        assert_eq!(&refresh(before_epoch)[..], reference(UNIX_EPOCH).as_bytes());
        let far = UNIX_EPOCH + Duration::from_secs(MAX_SECS + 1_000_000);
        let last = UNIX_EPOCH + Duration::from_secs(MAX_SECS);
        assert_eq!(&refresh(far)[..], reference(last).as_bytes());
        assert!(reference(last).contains("9999"));
    }

    #[test]
    fn every_line_is_line_len_bytes() {
        for s in [0, 86_399, 951_782_400, 4_102_444_800, MAX_SECS] {
            let t = UNIX_EPOCH + Duration::from_secs(s);
            assert_eq!(reference(t).len(), LINE_LEN, "{s}");
            assert_eq!(&format(s)[..], reference(t).as_bytes(), "{s}");
        }
    }
}
