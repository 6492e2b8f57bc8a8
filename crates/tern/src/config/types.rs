//! The configuration's types: [`Config`] and the settings it groups
//! ([`Limits`], [`Timeouts`], ...), their defaults, and the builders for a
//! configuration made in code.

use std::{collections::BTreeMap, fmt, net::SocketAddr, path::PathBuf, sync::Arc, time::Duration};

use http::HeaderName;

use crate::net::IpNet;

/// Where Tern runs: `development` (the default) or `production`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Environment {
    /// Helpful errors for loopback clients, no secret required.
    #[default]
    Development,
    /// Refuses weak secrets, requires `ALLOWED_HOSTS`, sends security
    /// headers, never shows internals to clients.
    Production,
}

/// How the server uses the machine's cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RuntimeMode {
    /// One multi-threaded tokio runtime with `workers` threads (default).
    #[default]
    MultiThread,
    /// One current-thread runtime per worker, all accepting from one
    /// listening socket: no work stealing, the lowest overhead per request.
    PerCore,
}

/// Which HTTP/1.1 server serves plain HTTP/1 connections (`TERN_HTTP1`).
/// HTTP/2 is hyper's on both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Http1Engine {
    /// Tern's own HTTP/1.1 connection and codec (`server/h1`, default):
    /// strict by construction, buffers only while there is something to
    /// read or write, pipelined answers in one write.
    #[default]
    Tern,
    /// hyper's HTTP/1 server with Tern's framing follower: the engine
    /// before issue 31, kept for one release as the way back if Tern's
    /// own breaks something an app relies on.
    Hyper,
}

/// The lines of the default log output (`TERN_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines (default).
    #[default]
    Text,
    /// One JSON object per line, with the request's span fields.
    Json,
}

/// What production does with an answer that breaks its contract (a
/// `tern_contract::Valid<T>` response whose value fails `T`'s rules).
/// In development and tests such an answer is always a `500` saying which
/// value broke which rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvalidResponses {
    /// Log it (an `error` event naming the rule) and send it (default,
    /// `send`): the client still gets its answer. (Not named `Send`: a
    /// second item of that name would make the compiler spell the trait
    /// `std::marker::Send` in every error of every app.)
    #[default]
    LogAndSend,
    /// Log it and answer `500` instead.
    Fail,
}

/// Limits on what a client may send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest request head (request line and headers) in bytes; past it
    /// the client gets `431` (hyper's floor is 8,192). `TERN_MAX_HEAD_BYTES`.
    pub max_head_bytes: usize,
    /// Most headers in one request; past it, `431`. `TERN_MAX_HEADERS`.
    pub max_headers: usize,
    /// Largest request body in bytes; past it, `413` (before the body is
    /// read when `Content-Length` says so). `TERN_MAX_BODY_BYTES`.
    pub max_body_bytes: u64,
    /// Largest field of a `multipart/form-data` body in bytes; past it,
    /// `413`. `TERN_MAX_MULTIPART_FIELD_BYTES`.
    pub max_multipart_field_bytes: u64,
    /// Most parts in one `multipart/form-data` body; past it, `413`.
    /// `TERN_MAX_MULTIPART_PARTS`.
    pub max_multipart_parts: usize,
    /// Most `key=value` pairs in one query string or urlencoded form
    /// (`Query`, `Form`); past it, `400` naming the setting.
    /// `TERN_MAX_FORM_FIELDS`.
    pub max_form_fields: usize,
    /// Most bracket levels in one query or form key (`a[b][c]` is 2);
    /// past it, `400` naming the setting. `TERN_MAX_FORM_DEPTH`.
    pub max_form_depth: usize,
    /// Most connections served at once; more are closed at accept.
    /// `TERN_MAX_CONNECTIONS`.
    pub max_connections: usize,
    /// Most concurrent HTTP/2 streams per connection.
    /// `TERN_MAX_H2_STREAMS`.
    pub max_h2_streams: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head_bytes: 16 * 1024,
            max_headers: 100,
            max_body_bytes: 2 * 1024 * 1024,
            max_multipart_field_bytes: 1024 * 1024,
            max_multipart_parts: 100,
            max_form_fields: 1000,
            max_form_depth: 32,
            max_connections: 10_000,
            max_h2_streams: 256,
        }
    }
}

/// Timeouts; each one closes or answers what a slow client or handler holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeouts {
    /// Time a client has to send a whole request head (slowloris);
    /// the connection is closed after it. `TERN_HEADER_READ_TIMEOUT`.
    pub header_read: Duration,
    /// Time an idle keep-alive connection is kept open.
    /// `TERN_KEEP_ALIVE_TIMEOUT`.
    pub keep_alive: Duration,
    /// Time a handler has to produce a response head; after it the client
    /// gets `503`. `TERN_REQUEST_TIMEOUT`.
    pub request: Duration,
    /// Time a response may wait on a client that does not read it (slow
    /// read): the connection is closed after it. Counted only while bytes
    /// are waiting to be sent, so a quiet stream (server-sent events
    /// between events) is not cut. `TERN_WRITE_TIMEOUT`.
    pub write: Duration,
    /// Time in-flight requests get to finish at shutdown.
    /// `TERN_SHUTDOWN_TIMEOUT`.
    pub shutdown: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            header_read: Duration::from_secs(10),
            keep_alive: Duration::from_secs(60),
            request: Duration::from_secs(30),
            write: Duration::from_secs(30),
            shutdown: Duration::from_secs(30),
        }
    }
}

/// The application's secret: signs and encrypts cookies. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey(pub(super) Vec<u8>);

impl SecretKey {
    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey([redacted; {} bytes])", self.0.len())
    }
}

/// `METRICS_TOKEN`: the token a metrics scraper must send. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct MetricsToken(pub(super) String);

impl MetricsToken {
    /// A token (for tests and code-built configurations).
    pub fn new(token: impl Into<String>) -> Self {
        MetricsToken(token.into())
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MetricsToken([redacted; {} bytes])", self.0.len())
    }
}

/// A host pattern from `ALLOWED_HOSTS`: `example.com`, `.example.com`
/// (the domain and every subdomain) or `*` (any host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern(pub(super) String);

impl HostPattern {
    /// The pattern as written (lowercased).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `host` (without port) matches, ignoring ASCII case.
    pub fn matches(&self, host: &str) -> bool {
        let p = self.0.as_str();
        if p == "*" {
            return true;
        }
        if let Some(domain) = p.strip_prefix('.') {
            let host_len = host.len();
            return host.eq_ignore_ascii_case(domain)
                || (host_len > domain.len() + 1
                    && host.as_bytes()[host_len - domain.len() - 1] == b'.'
                    && host[host_len - domain.len()..].eq_ignore_ascii_case(domain));
        }
        host.eq_ignore_ascii_case(p)
    }
}

/// Tern's configuration.
///
/// Read it with [`Config::from_env`] (environment variables, then an
/// optional `tern.toml`), or build it in code from [`Config::default`].
/// Every setting, its variable and its default are listed in
/// `docs/configuration.md`.
///
/// ```
/// let config = tern::Config::default();
/// assert_eq!(config.addr.port(), 3000);
/// assert!(config.validate().is_ok()); // development needs no secret
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Address to listen on. `TERN_ADDR`, default `127.0.0.1:3000`.
    pub addr: SocketAddr,
    /// `TERN_ENV`: `development` (default) or `production`.
    pub env: Environment,
    /// Worker threads (or runtimes). `TERN_WORKERS`, default: the cores.
    pub workers: usize,
    /// `TERN_RUNTIME`: `multi-thread` (default) or `per-core`.
    pub runtime: RuntimeMode,
    /// `TERN_REUSE_PORT`: open the listening socket with `SO_REUSEPORT`
    /// (Unix), so that another process that sets it too can listen on the
    /// same port, for a restart without downtime. Default off: an address
    /// already in use stops the start with an error naming `TERN_ADDR`.
    pub reuse_port: bool,
    /// `TERN_HTTP1`: `tern` (default) or `hyper`, the HTTP/1.1 server
    /// (see [`Http1Engine`]).
    pub http1: Http1Engine,
    /// `SECRET_KEY`: at least 32 bytes; required in production, where it
    /// must also be an estimated 128 bits (not words nor a pattern).
    pub secret_key: Option<SecretKey>,
    /// `ALLOWED_HOSTS`: comma-separated host patterns; a request for any
    /// other host gets `400`, except `GET`/`HEAD` of the built-in health
    /// check. Empty means any host (development only).
    pub allowed_hosts: Vec<HostPattern>,
    /// `TRUSTED_PROXY_HEADER`: the header (`X-Forwarded-For`,
    /// `X-Real-IP`, ...) that names the client when the peer is a trusted
    /// proxy.
    pub trusted_proxy_header: Option<HeaderName>,
    /// `TRUSTED_PROXIES`: comma-separated addresses or CIDR blocks whose
    /// proxy header is believed; default loopback only.
    pub trusted_proxies: Vec<IpNet>,
    /// `TERN_REQUEST_ID_HEADER`: header carrying the request ID
    /// (default `x-request-id`); an incoming one is kept only when the peer
    /// is a trusted proxy.
    pub request_id_header: HeaderName,
    /// `TERN_SECURITY_HEADERS`: send HSTS, CSP, `X-Frame-Options`, ...
    /// Default: on in production, off in development.
    pub security_headers: bool,
    /// `TERN_HEALTH_PATH`: where `GET` answers `200 ok`, for any host
    /// (probes name the pod's address; `ALLOWED_HOSTS` is not checked
    /// there unless the app has its own route at this path); `off`
    /// disables it. Default `/health`.
    pub health_path: Option<String>,
    /// `TERN_READY_PATH`: where `GET` answers `200 ready` when every
    /// readiness check passes ([`App::ready_check`](crate::App::ready_check)),
    /// else `503`; `503` at once while the server drains. Any host, like
    /// the health check; `off` disables it. Default `/ready`.
    pub ready_path: Option<String>,
    /// `TERN_ACCESS_LOG`: log one line per request (default off).
    pub access_log: bool,
    /// `TERN_LOG_FORMAT`: `text` (default) or `json`, for the log output
    /// Tern installs when the app installs none. Read from the
    /// environment when the output starts (before `tern.toml`).
    pub log_format: LogFormat,
    /// `TERN_METRICS`: serve the app's metrics in Prometheus's text
    /// format at [`metrics_path`](Config::metrics_path) and count them
    /// (default off).
    pub metrics: bool,
    /// `TERN_METRICS_PATH`: where the metrics are served (default
    /// `/metrics`).
    pub metrics_path: String,
    /// `METRICS_TOKEN`: the bearer token a scraper sends
    /// (`Authorization: Bearer <token>`); required in production when
    /// `TERN_METRICS` is on. Never printed.
    pub metrics_token: Option<MetricsToken>,
    /// `TERN_INVALID_RESPONSES`: `send` (default) or `fail`, for a
    /// contract response that breaks its rules in production.
    pub invalid_responses: InvalidResponses,
    /// `TERN_OPENAPI`: serve the API document and its docs page
    /// (`tern_contract::openapi::OpenApi::serve`). Unset: on in
    /// development, off in production.
    pub openapi: Option<bool>,
    /// Limits on what clients send.
    pub limits: Limits,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// `TERN_TLS_CERT` and `TERN_TLS_KEY`: serve HTTPS (HTTP/1.1 and HTTP/2
    /// by ALPN) with this PEM certificate chain and private key. Needs the
    /// `tls` feature.
    pub tls: Option<TlsFiles>,
    /// `CORS_ALLOWED_ORIGINS` and the other `CORS_` settings: answer
    /// cross-origin requests (preflights of any path included) from these
    /// origins. `None` (the default): no CORS headers are sent. Needs the
    /// `cors` feature (on by default).
    pub cors: Option<Cors>,
    /// Where the settings came from, for the app's own settings
    /// ([`App::settings`](crate::App::settings)).
    pub(crate) sources: Sources,
}

/// The raw sources a configuration was read from: the variables (of the
/// environment, or given to [`Config::from_settings`]) and the tables of
/// `tern.toml` that are not Tern's settings. The app's own settings are
/// read from them. Values may be secrets: never printed.
#[derive(Clone, Default)]
pub(crate) struct Sources {
    pub(crate) vars: Arc<BTreeMap<String, String>>,
    pub(crate) file: Option<Arc<FileTables>>,
}

/// The `[name]` tables of a `tern.toml`.
#[derive(Default)]
pub(crate) struct FileTables {
    pub(crate) path: PathBuf,
    pub(crate) tables: BTreeMap<String, toml::Table>,
}

impl fmt::Debug for Sources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Names only: values may be secrets.
        f.debug_struct("Sources")
            .field("vars", &self.vars.len())
            .field(
                "tables",
                &self
                    .file
                    .iter()
                    .flat_map(|f| f.tables.keys())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// What a CORS setting allows: anything (`*`) or only the values listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorsList<T> {
    /// `*`: any origin, method or header. With credentials, the request's
    /// own value is sent back instead (development only: production
    /// refuses `*` with `CORS_ALLOW_CREDENTIALS`).
    Any,
    /// Only these.
    Only(Vec<T>),
}

/// Cross-origin resource sharing: which other sites' pages may call the
/// app from a browser ([`Config::cors`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cors {
    /// `CORS_ALLOWED_ORIGINS`: comma-separated origins
    /// (`https://app.example.com`, `http://localhost:5173`), or `*`.
    pub allowed_origins: CorsList<String>,
    /// `CORS_ALLOWED_METHODS`: default `GET, HEAD, POST, PUT, PATCH,
    /// DELETE`.
    pub allowed_methods: CorsList<http::Method>,
    /// `CORS_ALLOWED_HEADERS`: request headers a page may send; default
    /// `content-type, authorization`.
    pub allowed_headers: CorsList<HeaderName>,
    /// `CORS_ALLOW_CREDENTIALS`: let pages send cookies and read the
    /// answer (default off).
    pub allow_credentials: bool,
    /// `CORS_MAX_AGE`: how long a browser may keep a preflight's answer
    /// (default `10m`).
    pub max_age: Duration,
}

impl Cors {
    /// The defaults for these origins: the usual methods, the
    /// `content-type` and `authorization` headers, no credentials, 10
    /// minutes.
    pub fn new(allowed_origins: CorsList<String>) -> Cors {
        use http::Method;
        Cors {
            allowed_origins,
            allowed_methods: CorsList::Only(vec![
                Method::GET,
                Method::HEAD,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ]),
            allowed_headers: CorsList::Only(vec![
                http::header::CONTENT_TYPE,
                http::header::AUTHORIZATION,
            ]),
            allow_credentials: false,
            max_age: Duration::from_secs(600),
        }
    }
}

/// The PEM files of a TLS certificate chain and its private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first (`TERN_TLS_CERT`).
    pub cert: std::path::PathBuf,
    /// The private key: PKCS#8, PKCS#1 or SEC1 (`TERN_TLS_KEY`).
    pub key: std::path::PathBuf,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 3000)),
            env: Environment::Development,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            runtime: RuntimeMode::MultiThread,
            reuse_port: false,
            http1: Http1Engine::default(),
            secret_key: None,
            allowed_hosts: Vec::new(),
            trusted_proxy_header: None,
            trusted_proxies: vec![IpNet::loopback_v4(), IpNet::loopback_v6()],
            request_id_header: HeaderName::from_static("x-request-id"),
            security_headers: false,
            health_path: Some("/health".to_owned()),
            ready_path: Some("/ready".to_owned()),
            access_log: false,
            log_format: LogFormat::Text,
            metrics: false,
            metrics_path: "/metrics".to_owned(),
            metrics_token: None,
            invalid_responses: InvalidResponses::LogAndSend,
            openapi: None,
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            tls: None,
            cors: None,
            sources: Sources::default(),
        }
    }
}

impl Config {
    /// Sets the secret key (for tests and code-built configurations).
    pub fn with_secret_key(mut self, key: impl AsRef<[u8]>) -> Self {
        self.secret_key = Some(SecretKey(key.as_ref().to_vec()));
        self
    }

    /// Sets the allowed hosts (patterns as in `ALLOWED_HOSTS`).
    pub fn with_allowed_hosts<I, H>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = H>,
        H: AsRef<str>,
    {
        self.allowed_hosts = hosts
            .into_iter()
            .map(|h| HostPattern(h.as_ref().to_ascii_lowercase()))
            .collect();
        self
    }

    /// Switches to production: security headers on.
    pub fn production(mut self) -> Self {
        self.env = Environment::Production;
        self.security_headers = true;
        self
    }

    /// Whether the API document and docs page are served (`TERN_OPENAPI`,
    /// else on in development only).
    pub fn openapi_enabled(&self) -> bool {
        self.openapi.unwrap_or(!self.is_production())
    }

    /// Whether this is the production environment.
    pub fn is_production(&self) -> bool {
        self.env == Environment::Production
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        let exact = HostPattern("example.com".into());
        let sub = HostPattern(".example.com".into());
        assert!(exact.matches("EXAMPLE.com"));
        assert!(!exact.matches("www.example.com"));
        assert!(sub.matches("example.com"));
        assert!(sub.matches("a.b.example.com"));
        assert!(!sub.matches("badexample.com"));
        assert!(!sub.matches("example.com.evil.net"));
    }
}
