//! [`Requested`]: what a problem renderer knows of the request it answers.

use http::HeaderValue;

/// What a [problem renderer](App::problem_renderer) knows of the request
/// it answers.
#[derive(Debug, Clone, Default)]
pub struct Requested {
    accept: Option<HeaderValue>,
}

impl Requested {
    pub(super) fn new(accept: Option<HeaderValue>) -> Self {
        Requested { accept }
    }

    /// The request's `Accept` header, if it had a readable one.
    pub fn accept(&self) -> Option<&str> {
        self.accept.as_ref().and_then(|v| v.to_str().ok())
    }

    /// Whether the client prefers an HTML page: its `Accept` names
    /// `text/html` (or `application/xhtml+xml`) with a quality at least
    /// that of JSON and `problem+json`. Browsers do; `curl` (`*/*`), API
    /// clients and fetch calls asking for JSON do not.
    ///
    /// ```
    /// use tern::Requested;
    /// assert!(Requested::with_accept("text/html,application/xhtml+xml,*/*;q=0.8").prefers_html());
    /// assert!(!Requested::with_accept("*/*").prefers_html());
    /// assert!(!Requested::with_accept("application/json, text/html;q=0.5").prefers_html());
    /// ```
    pub fn prefers_html(&self) -> bool {
        let Some(accept) = self.accept() else {
            return false;
        };
        let mut html = 0u16;
        let mut json = 0u16;
        for item in accept.split(',') {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or("").trim();
            let q = parts
                .find_map(|p| {
                    let (k, v) = p.split_once('=')?;
                    k.trim()
                        .eq_ignore_ascii_case("q")
                        .then(|| quality(v.trim()))
                })
                .unwrap_or(1000);
            if media.eq_ignore_ascii_case("text/html")
                || media.eq_ignore_ascii_case("application/xhtml+xml")
            {
                html = html.max(q);
            } else if media.eq_ignore_ascii_case("application/json")
                || media.eq_ignore_ascii_case("application/problem+json")
            {
                json = json.max(q);
            }
        }
        html > 0 && html >= json
    }

    /// A `Requested` with this `Accept` (for tests of renderers).
    pub fn with_accept(accept: &str) -> Self {
        Requested {
            accept: HeaderValue::from_str(accept).ok(),
        }
    }
}

/// A q-value (`0.8`) in thousandths; 0 when malformed.
fn quality(v: &str) -> u16 {
    let (int, frac) = v.split_once('.').unwrap_or((v, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return 0;
    }
    let mut q: u16 = match int {
        "0" => 0,
        "1" => 1000,
        _ => return 0,
    };
    for (i, b) in frac.bytes().enumerate() {
        q += u16::from(b - b'0') * [100, 10, 1][i];
    }
    q.min(1000)
}
