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
/// | `WEBSOCKET_SEND_BUFFER` | `65536` bytes: the kernel's send buffer per socket (`SO_SNDBUF`; `0` leaves Linux's autotuning, up to 4 MiB): what a client that stops reading can pin in the kernel before its queue (`REALTIME_SEND_QUEUE`) fills |
///
/// A browser's handshake from another origin (an `Origin` that is not
/// listed and differs from the request's in scheme, host or port; a port
/// left out is the scheme's default) is refused with `403`, in production
/// and in development: that is cross-site WebSocket hijacking, and
/// `https://` against a plain-HTTP server is another origin too. The
/// request's scheme is tern's [`Scheme`](tern::extract::Scheme): a
/// trusted proxy's (`TRUSTED_PROXIES`) `X-Forwarded-Proto` (or
/// `Forwarded: proto=`), else HTTP/2's `:scheme`, else `https` when Tern
/// serves TLS, else `http`: behind a TLS proxy, have it send
/// `X-Forwarded-Proto`. Clients that send no `Origin` (not browsers) are
/// not subject to it.
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
    #[serde(default = "send_buffer")]
    pub(crate) send_buffer: usize,
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
fn send_buffer() -> usize {
    64 * 1024
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
            send_buffer: send_buffer(),
        }
    }
}

impl WebSockets {
    /// Whether a page of `origin` (an `Origin` header's value) may open a
    /// socket on `host` (the request's host, with its port if it has one)
    /// reached over `scheme` (`http` or `https`): listed, or the same
    /// origin, scheme, host and port compared (a port left out is the
    /// scheme's default).
    pub(crate) fn origin_allowed(&self, origin: &str, scheme: &str, host: &str) -> bool {
        let origin = origin.trim();
        if self
            .origins
            .iter()
            .any(|o| o == "*" || o.trim_end_matches('/').eq_ignore_ascii_case(origin))
        {
            return true;
        }
        let Some((theirs, authority)) = origin.split_once("://") else {
            return false;
        };
        let theirs = theirs.to_ascii_lowercase();
        let scheme = scheme.to_ascii_lowercase();
        if theirs != scheme {
            return false;
        }
        match (endpoint(authority, &theirs), endpoint(host, &scheme)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}

/// `host[:port]` as (the host in lower case, the port or the scheme's
/// default); `None` for anything else (a path, user info, a bad port).
fn endpoint(authority: &str, scheme: &str) -> Option<(String, u16)> {
    let default = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        (&authority[..=end], &authority[end + 1..])
    } else {
        match authority.rfind(':') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, ""),
        }
    };
    let port = match port.strip_prefix(':') {
        None if port.is_empty() => default,
        Some(p) if !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            p.parse().ok()?
        }
        _ => return None,
    };
    let ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b));
    ok.then(|| (host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let s = WebSockets::default();
        let http = |o, h| s.origin_allowed(o, "http", h);
        let https = |o, h| s.origin_allowed(o, "https", h);
        assert!(http("http://localhost:8080", "localhost:8080"));
        assert!(https("https://Example.com", "example.com"));
        assert!(https("https://example.com", "example.com:443"));
        assert!(http("http://example.com:80", "example.com"));
        assert!(!https("https://example.com", "example.com:80"));
        assert!(!https("https://evil.example", "example.com"));
        assert!(!https("https://example.com.evil", "example.com"));
        assert!(!https("null", "example.com"));
        assert!(!http("http://localhost:8081", "localhost:8080"));
        // The scheme counts: the same host and port over the other one is
        // another origin.
        assert!(!http("https://localhost:8080", "localhost:8080"));
        assert!(!https("http://localhost:8080", "localhost:8080"));
        assert!(!http("https://example.com:80", "example.com"));
        assert!(!http("ws://localhost:8080", "localhost:8080"));
        // No path, user info or junk in an origin.
        assert!(!http("http://localhost:8080/", "localhost:8080"));
        assert!(!http("http://a@localhost:8080", "localhost:8080"));
        assert!(!http("http://localhost:8080@evil", "localhost:8080"));
        assert!(!http("http://localhost:", "localhost"));
        assert!(http("http://[::1]:8080", "[::1]:8080"));
        assert!(!http("http://[::1]:8081", "[::1]:8080"));
        let listed = WebSockets {
            origins: vec!["https://app.example.com".to_owned()],
            ..WebSockets::default()
        };
        assert!(listed.origin_allowed("https://app.example.com", "http", "api.example.com"));
        assert!(!listed.origin_allowed("https://other.example.com", "https", "api.example.com"));
        let any = WebSockets {
            origins: vec!["*".to_owned()],
            ..WebSockets::default()
        };
        assert!(any.origin_allowed("https://anywhere.example", "http", "example.com"));
    }
}

/// Topics, presence and fan-out: settings under the prefix `realtime`
/// (load them with `App::settings::<Realtime>("realtime")`; handlers reach
/// the [`Hub`](crate::Hub) through them).
///
/// | variable | default |
/// |---|---|
/// | `REALTIME_BACKEND` | `memory`: one process; `redis` or `nats` carry messages and presence between processes |
/// | `REALTIME_URL` | the Redis (`redis://`) or NATS (`nats://`) server of those backends |
/// | `REALTIME_CHANNEL` | `tern`: the Redis channel or NATS subject the processes share (one per app) |
/// | `REALTIME_SEND_QUEUE` | `256` messages waiting for one slow client at most ... |
/// | `REALTIME_SLOW_CONSUMER` | ... then `close` it (`1008`; an SSE stream ends), or `drop` the messages it cannot take |
///
/// The queue counts messages beyond what the kernel took for the socket:
/// up to `WEBSOCKET_SEND_BUFFER` (doubled by Linux) plus the client's own
/// receive buffer. A client that stopped reading altogether gets its
/// `1008` after the messages it has not read, if it reads again within
/// `WEBSOCKET_CLOSE_TIMEOUT`; the connection is dropped then.
///
/// | variable | default |
/// |---|---|
/// | `REALTIME_REPLAY` | `100` messages per topic kept for SSE clients that resume with `Last-Event-ID` ... |
/// | `REALTIME_REPLAY_BYTES` | ... and `1048576` bytes (their JSON) at most: the oldest go first; a larger message is not kept |
/// | `REALTIME_KEEP_ALIVE` | `15s`: an SSE comment this often keeps proxies from closing a quiet stream |
/// | `REALTIME_PRESENCE_INTERVAL` | `10s`: each process re-announces who it holds; a process silent for 3 intervals is gone |
///
/// The replay buffer holds each message once, shared with every stream
/// that replays it (its SSE form is made once too, beside its JSON: a
/// topic holds about twice `REALTIME_REPLAY_BYTES` at most). A resume
/// goes through the stream's queue, so it counts toward
/// `REALTIME_SEND_QUEUE`; a `Last-Event-ID` that is not in the buffer
/// (unknown, or too old) replays nothing: the stream starts now.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawRealtime")]
pub struct Realtime {
    pub(crate) backend: Backend,
    pub(crate) channel: String,
    pub(crate) send_queue: usize,
    pub(crate) slow_consumer: SlowConsumer,
    pub(crate) replay: usize,
    pub(crate) replay_bytes: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) presence_interval: Duration,
    /// Shared with the metrics' source, which samples it once made.
    pub(crate) hub: std::sync::Arc<std::sync::OnceLock<crate::Hub>>,
    pub(crate) meter: std::sync::OnceLock<crate::metrics::RealtimeMeter>,
}

/// Where messages between processes go (the URL may hold a password:
/// never printed).
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Backend {
    Memory,
    #[cfg(feature = "redis")]
    Redis(String),
    #[cfg(feature = "nats")]
    Nats(String),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Memory => "memory",
            #[cfg(feature = "redis")]
            Backend::Redis(_) => "redis",
            #[cfg(feature = "nats")]
            Backend::Nats(_) => "nats",
        })
    }
}

/// What happens to a client whose queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlowConsumer {
    /// Close it (`1008`, policy violation; an SSE stream ends): it can
    /// reconnect and resume.
    Close,
    /// Drop the messages it cannot take (counted and logged).
    Drop,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRealtime {
    #[serde(default)]
    backend: Option<String>,
    #[serde(default)]
    url: Option<tern::settings::Secret>,
    #[serde(default = "channel")]
    channel: String,
    #[serde(default = "send_queue")]
    send_queue: usize,
    #[serde(default)]
    slow_consumer: Option<String>,
    #[serde(default = "replay")]
    replay: usize,
    #[serde(default = "replay_bytes")]
    replay_bytes: usize,
    #[serde(default = "keep_alive", deserialize_with = "tern::settings::duration")]
    keep_alive: Duration,
    #[serde(default = "presence", deserialize_with = "tern::settings::duration")]
    presence_interval: Duration,
}

fn channel() -> String {
    "tern".to_owned()
}
fn send_queue() -> usize {
    256
}
fn replay() -> usize {
    100
}
fn replay_bytes() -> usize {
    1024 * 1024
}
fn keep_alive() -> Duration {
    Duration::from_secs(15)
}
fn presence() -> Duration {
    Duration::from_secs(10)
}

impl TryFrom<RawRealtime> for Realtime {
    type Error = String;

    fn try_from(raw: RawRealtime) -> Result<Self, String> {
        let url = raw.url.map(|u| u.expose().to_owned());
        let backend = match (raw.backend.as_deref().unwrap_or("memory"), url) {
            ("memory", None) => Backend::Memory,
            ("memory", Some(_)) => {
                return Err(
                    "REALTIME_URL is set but REALTIME_BACKEND is `memory` (the default): \
                            set REALTIME_BACKEND to `redis` or `nats`"
                        .to_owned(),
                )
            }
            ("redis" | "nats", None) => {
                return Err("REALTIME_BACKEND needs REALTIME_URL (the server's address)".to_owned())
            }
            #[cfg(feature = "redis")]
            ("redis", Some(url)) => {
                if !url.starts_with("redis://") && !url.starts_with("rediss://") {
                    return Err(
                        "REALTIME_URL: a Redis URL starts with redis:// or rediss://".to_owned(),
                    );
                }
                Backend::Redis(url)
            }
            #[cfg(feature = "nats")]
            ("nats", Some(url)) => {
                if !url.starts_with("nats://") && !url.starts_with("tls://") {
                    return Err("REALTIME_URL: a NATS URL starts with nats:// or tls://".to_owned());
                }
                Backend::Nats(url)
            }
            #[allow(unreachable_patterns)]
            ("redis" | "nats", Some(_)) => {
                return Err(
                    "REALTIME_BACKEND: tern-realtime was built without this backend's \
                            feature (`redis` or `nats`)"
                        .to_owned(),
                )
            }
            (other, _) => {
                return Err(format!(
                    "REALTIME_BACKEND is `{other}`: it is `memory` (the default), `redis` or `nats`"
                ))
            }
        };
        let slow_consumer = match raw.slow_consumer.as_deref().unwrap_or("close") {
            "close" => SlowConsumer::Close,
            "drop" => SlowConsumer::Drop,
            other => {
                return Err(format!(
                    "REALTIME_SLOW_CONSUMER is `{other}`: it is `close` (the default) or `drop`"
                ))
            }
        };
        if raw.send_queue == 0 {
            return Err("REALTIME_SEND_QUEUE is at least 1".to_owned());
        }
        if raw.channel.is_empty()
            || raw
                .channel
                .chars()
                .any(|c| c.is_whitespace() || c.is_control())
        {
            return Err("REALTIME_CHANNEL is a name without spaces".to_owned());
        }
        Ok(Realtime {
            backend,
            channel: raw.channel,
            send_queue: raw.send_queue,
            slow_consumer,
            replay: raw.replay,
            replay_bytes: raw.replay_bytes,
            keep_alive: raw.keep_alive,
            presence_interval: raw.presence_interval.max(Duration::from_millis(50)),
            hub: std::sync::Arc::default(),
            meter: std::sync::OnceLock::new(),
        })
    }
}

impl Default for Realtime {
    fn default() -> Self {
        Realtime {
            backend: Backend::Memory,
            channel: channel(),
            send_queue: send_queue(),
            slow_consumer: SlowConsumer::Close,
            replay: replay(),
            replay_bytes: replay_bytes(),
            keep_alive: keep_alive(),
            presence_interval: presence(),
            hub: std::sync::Arc::default(),
            meter: std::sync::OnceLock::new(),
        }
    }
}

impl Realtime {
    /// The hub: topics, presence, fan-out. Made on first use (inside the
    /// server's runtime: its backend connects from there).
    pub fn hub(&self) -> &crate::Hub {
        self.hub.get_or_init(|| crate::Hub::new(self))
    }

    /// Records realtime's metrics in `metrics` (the app's, whose
    /// `/metrics` shows them): sockets and event streams open and opened
    /// (`tern_connections_open` and `tern_connections_total`,
    /// `protocol="websocket"` and `"sse"`), and at each scrape the hub's
    /// subscribers, queued messages, counts ([`Hub::stats`](crate::Hub::stats))
    /// and, with a backend, whether it is connected
    /// (`tern_realtime_bus_up`).
    ///
    /// [`install`](crate::install) calls it in every build of the app
    /// (`App::on_build`: however the app is served). The hub is sampled
    /// from when it is made (its first use), so this makes no hub and
    /// needs no runtime. Only the first call counts.
    pub fn record_metrics(&self, metrics: &tern::metrics::Metrics) {
        let mut first = false;
        self.meter.get_or_init(|| {
            first = true;
            crate::metrics::RealtimeMeter::register(metrics)
        });
        if first {
            let hub = std::sync::Arc::clone(&self.hub);
            metrics.source(move |sample| crate::metrics::sample(hub.get(), sample));
        }
    }
}
