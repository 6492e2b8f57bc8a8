//! What a lab writes to the terminal while it runs, and the number format
//! its summaries share.

use std::io::Write as _;

/// Replaces the progress line on stderr with `msg`.
pub(crate) fn progress(msg: &str) {
    eprint!("\r\x1b[2K{msg}");
    let _ = std::io::stderr().flush();
}

/// Clears the progress line and ends it, before the summary.
pub(crate) fn progress_end() {
    progress("");
    eprintln!();
}

/// `digits` (an integer's, no sign) grouped by thousands with commas,
/// after a `-` when `negative`: `1234567` is `1,234,567`.
pub(crate) fn group_thousands(digits: &str, negative: bool) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if negative {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        for (digits, negative, grouped) in [
            ("0", false, "0"),
            ("999", false, "999"),
            ("1000", false, "1,000"),
            ("1234567", false, "1,234,567"),
            ("123456", true, "-123,456"),
        ] {
            assert_eq!(group_thousands(digits, negative), grouped, "{digits}");
        }
    }
}
