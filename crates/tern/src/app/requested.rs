//! [`Requested`]: what a problem renderer knows of the request it answers.

use http::HeaderValue;
use tern_core::accept;

/// What a [problem renderer](crate::App::problem_renderer) knows of the request
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
    /// that of JSON and `problem+json` (which wildcards give them too).
    /// Browsers do; `curl` (`*/*`), API clients and fetch calls asking for
    /// JSON do not. The header is read as every Tern crate reads it
    /// ([`tern_core::accept`]): `Q=0.5` is a weight, a malformed weight
    /// drops its range.
    ///
    /// ```
    /// use tern::Requested;
    /// assert!(Requested::with_accept("text/html,application/xhtml+xml,*/*;q=0.8").prefers_html());
    /// assert!(!Requested::with_accept("*/*").prefers_html());
    /// assert!(!Requested::with_accept("application/json, text/html;q=0.5").prefers_html());
    /// assert!(!Requested::with_accept("text/html;Q=0.5, */*").prefers_html());
    /// ```
    pub fn prefers_html(&self) -> bool {
        let Some(accept) = self.accept() else {
            return false;
        };
        const HTML: [&str; 2] = ["text/html", "application/xhtml+xml"];
        const JSON: [&str; 2] = ["application/json", "application/problem+json"];
        // A wildcard accepts HTML but does not ask for it (`*/*` is what
        // API clients send): only the ranges naming an HTML type count,
        // the first of each, as the most specific range of its type.
        let mut named = [None; 2];
        for element in accept::elements(accept) {
            for (slot, ty) in named.iter_mut().zip(HTML) {
                if slot.is_none() && element.value().eq_ignore_ascii_case(ty) {
                    *slot = Some(element.quality());
                }
            }
        }
        let Some(html) = named.into_iter().flatten().max() else {
            return false;
        };
        let json = JSON
            .iter()
            .map(|t| accept::media_quality(accept, t))
            .max()
            .unwrap_or(accept::Quality::ZERO);
        html.is_acceptable() && html >= json
    }

    /// A `Requested` with this `Accept` (for tests of renderers).
    pub fn with_accept(accept: &str) -> Self {
        Requested {
            accept: HeaderValue::from_str(accept).ok(),
        }
    }
}
