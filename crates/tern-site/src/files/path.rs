//! The file a request path names, checked: no way out of the root.

use std::fmt;

/// Why a request path names no file that may be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Outside the mount point.
    NotMounted,
    /// A `%` not followed by two hex digits, or bytes that are not UTF-8.
    BadEscape,
    /// An empty segment (`a//b`, a trailing `/`, an absolute path).
    Empty,
    /// A `.` or `..` segment, in any spelling.
    DotSegment,
    /// A `/` or `\` inside a segment (`%2f`, `%5c`), a NUL, a control
    /// character or a `:` (a drive or a stream on Windows).
    Separator,
    /// A hidden file or directory (a segment starting with `.`).
    Hidden,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::NotMounted => "the path is not under this file service's mount point",
            Refusal::BadEscape => "the path has a bad percent-escape or is not UTF-8",
            Refusal::Empty => "the path has an empty segment (`//`) or ends with `/`",
            Refusal::DotSegment => "the path may not contain `.` or `..` segments",
            Refusal::Separator => {
                "a path segment may not hold `/`, `\\`, `:`, NUL or control characters"
            }
            Refusal::Hidden => "hidden files (names starting with `.`) are not served",
        })
    }
}

/// The relative path (`css/app.css`) that `path` (the request's raw path)
/// names under `mount` (`/static`), each segment percent-decoded once and
/// checked; joined with `/`.
pub(crate) fn relative(path: &str, mount: &str) -> Result<String, Refusal> {
    let rest = path
        .strip_prefix(mount)
        .and_then(|r| r.strip_prefix('/'))
        .ok_or(Refusal::NotMounted)?;
    let mut out = String::with_capacity(rest.len());
    for raw in rest.split('/') {
        if !escapes_ok(raw.as_bytes()) {
            return Err(Refusal::BadEscape);
        }
        let segment = percent_encoding::percent_decode_str(raw)
            .decode_utf8()
            .map_err(|_| Refusal::BadEscape)?;
        check(&segment)?;
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(&segment);
    }
    Ok(out)
}

/// Every `%` is followed by two hex digits.
fn escapes_ok(raw: &[u8]) -> bool {
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            match raw.get(i + 1..i + 3) {
                Some([a, b]) if a.is_ascii_hexdigit() && b.is_ascii_hexdigit() => i += 3,
                _ => return false,
            }
        } else {
            i += 1;
        }
    }
    true
}

fn check(segment: &str) -> Result<(), Refusal> {
    if segment.is_empty() {
        return Err(Refusal::Empty);
    }
    if segment
        .chars()
        .any(|c| c == '/' || c == '\\' || c == ':' || c.is_control())
    {
        return Err(Refusal::Separator);
    }
    // `..`, and what Windows reads as it (`.. `, `...`): trailing dots
    // and spaces are dropped there.
    if segment.trim_end_matches(['.', ' ']).is_empty() {
        return Err(Refusal::DotSegment);
    }
    if segment.starts_with('.') {
        return Err(Refusal::Hidden);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_way_out_is_refused() {
        use Refusal::*;
        let table: &[(&str, Result<&str, Refusal>)] = &[
            ("/static/app.css", Ok("app.css")),
            ("/static/css/app.css", Ok("css/app.css")),
            ("/static/caf%C3%A9.txt", Ok("café.txt")),
            ("/static/a%20b.txt", Ok("a b.txt")),
            ("/static/a..b.txt", Ok("a..b.txt")),
            ("/other/app.css", Err(NotMounted)),
            ("/staticapp.css", Err(NotMounted)),
            ("/static", Err(NotMounted)),
            ("/static/", Err(Empty)),
            ("/static/css/", Err(Empty)),
            ("/static//etc/passwd", Err(Empty)),
            ("/static/../Cargo.toml", Err(DotSegment)),
            ("/static/css/../../Cargo.toml", Err(DotSegment)),
            ("/static/./app.css", Err(DotSegment)),
            ("/static/%2e%2e/Cargo.toml", Err(DotSegment)),
            ("/static/%2E%2E/Cargo.toml", Err(DotSegment)),
            ("/static/.%2e/Cargo.toml", Err(DotSegment)),
            ("/static/%2e./Cargo.toml", Err(DotSegment)),
            ("/static/.../x", Err(DotSegment)),
            ("/static/.. /x", Err(DotSegment)),
            ("/static/..%20/x", Err(DotSegment)),
            ("/static/%252e%252e/x", Ok("%2e%2e/x")),
            ("/static/..%2fCargo.toml", Err(Separator)),
            ("/static/..%2FCargo.toml", Err(Separator)),
            ("/static/%2fetc%2fpasswd", Err(Separator)),
            ("/static/..%5cCargo.toml", Err(Separator)),
            ("/static/..%5CCargo.toml", Err(Separator)),
            ("/static/..\\Cargo.toml", Err(Separator)),
            ("/static/a\\..\\..\\x", Err(Separator)),
            ("/static/app.css%00.png", Err(Separator)),
            ("/static/a%0ab", Err(Separator)),
            ("/static/C:%5cwindows", Err(Separator)),
            ("/static/C:", Err(Separator)),
            ("/static/app.css::$DATA", Err(Separator)),
            ("/static/.env", Err(Hidden)),
            ("/static/.git/config", Err(Hidden)),
            ("/static/%2egit/config", Err(Hidden)),
            ("/static/a%zz", Err(BadEscape)),
            ("/static/a%4", Err(BadEscape)),
            ("/static/a%", Err(BadEscape)),
            ("/static/%ff%fe", Err(BadEscape)),
            ("/static/%c0%ae%c0%ae/x", Err(BadEscape)),
        ];
        for (path, want) in table {
            let got = relative(path, "/static");
            assert_eq!(
                got.as_deref().map_err(|e| *e),
                want.as_ref().map(|s| *s).map_err(|e| *e),
                "{path}"
            );
        }
    }
}
