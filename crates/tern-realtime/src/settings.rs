//! The WebSockets' settings.

use std::time::Duration;

use serde::Deserialize;

/// WebSocket limits and checks: settings under the prefix `websocket`
/// (load them with `App::settings::<WebSockets>("websocket")`; without
/// that, the defaults apply).
///
/// | variable | default |
/// |---|---|
/// | `WEBSOCKET_MAX_MESSAGE` | `65536` bytes: a longer message closes the socket with `1009` |
/// | `WEBSOCKET_MAX_FRAME` | `65536` bytes: the same for one frame |
/// | `WEBSOCKET_PING_INTERVAL` | `30s`: the server pings a quiet client this often |
/// | `WEBSOCKET_IDLE_TIMEOUT` | `75s`: nothing from the client (not even a pong) for this long closes the socket |
/// | `WEBSOCKET_ORIGINS` | none: other sites whose pages may open sockets here (`https://app.example.com`, a list; `*` for any) |
/// | `WEBSOCKET_CLOSE_TIMEOUT` | `5s`: how long a close waits for the client's answer |
///
/// A browser's handshake from another site (an `Origin` that is neither
/// this host nor listed) is refused with `403`, in production and in
/// development: that is cross-site WebSocket hijacking. Clients that send
/// no `Origin` (not browsers) are not subject to it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSockets {
    #[serde(default = "max_message")]
    pub(crate) max_message: usize,
    #[serde(default = "max_message")]
    pub(crate) max_frame: usize,
    #[serde(default = "ping", deserialize_with = "tern::settings::duration")]
    pub(crate) ping_interval: Duration,
    #[serde(default = "idle", deserialize_with = "tern::settings::duration")]
    pub(crate) idle_timeout: Duration,
    #[serde(default)]
    pub(crate) origins: Vec<String>,
    #[serde(default = "close", deserialize_with = "tern::settings::duration")]
    pub(crate) close_timeout: Duration,
}

fn max_message() -> usize {
    64 * 1024
}
fn ping() -> Duration {
    Duration::from_secs(30)
}
fn idle() -> Duration {
    Duration::from_secs(75)
}
fn close() -> Duration {
    Duration::from_secs(5)
}

impl Default for WebSockets {
    fn default() -> Self {
        WebSockets {
            max_message: max_message(),
            max_frame: max_message(),
            ping_interval: ping(),
            idle_timeout: idle(),
            origins: Vec::new(),
            close_timeout: close(),
        }
    }
}

impl WebSockets {
    /// Whether a page of `origin` (an `Origin` header's value) may open a
    /// socket on `host` (the request's host, with its port if it has one).
    pub(crate) fn origin_allowed(&self, origin: &str, host: &str) -> bool {
        let origin = origin.trim();
        if self
            .origins
            .iter()
            .any(|o| o == "*" || o.trim_end_matches('/').eq_ignore_ascii_case(origin))
        {
            return true;
        }
        // Same site: the origin's authority is the host the client asked
        // for (a default port written on one side only still matches).
        let (authority, default_port) = if let Some(a) = origin.strip_prefix("https://") {
            (a, ":443")
        } else if let Some(a) = origin.strip_prefix("http://") {
            (a, ":80")
        } else {
            return false;
        };
        let plain = |s: &'_ str| -> String {
            s.strip_suffix(default_port)
                .unwrap_or(s)
                .to_ascii_lowercase()
        };
        plain(authority) == plain(host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let s = WebSockets::default();
        assert!(s.origin_allowed("http://localhost:8080", "localhost:8080"));
        assert!(s.origin_allowed("https://Example.com", "example.com"));
        assert!(s.origin_allowed("https://example.com", "example.com:443"));
        assert!(s.origin_allowed("http://example.com:80", "example.com"));
        assert!(!s.origin_allowed("https://example.com", "example.com:80"));
        assert!(!s.origin_allowed("https://evil.example", "example.com"));
        assert!(!s.origin_allowed("https://example.com.evil", "example.com"));
        assert!(!s.origin_allowed("null", "example.com"));
        assert!(!s.origin_allowed("http://localhost:8081", "localhost:8080"));
        let listed = WebSockets {
            origins: vec!["https://app.example.com".to_owned()],
            ..WebSockets::default()
        };
        assert!(listed.origin_allowed("https://app.example.com", "api.example.com"));
        assert!(!listed.origin_allowed("https://other.example.com", "api.example.com"));
        let any = WebSockets {
            origins: vec!["*".to_owned()],
            ..WebSockets::default()
        };
        assert!(any.origin_allowed("https://anywhere.example", "example.com"));
    }
}
