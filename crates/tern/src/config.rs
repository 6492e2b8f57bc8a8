//! Typed configuration, from the environment and an optional `tern.toml`.

use std::{
    collections::BTreeMap,
    fmt,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use http::HeaderName;

use crate::net::IpNet;

mod strength;

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
pub struct SecretKey(Vec<u8>);

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

/// A host pattern from `ALLOWED_HOSTS`: `example.com`, `.example.com`
/// (the domain and every subdomain) or `*` (any host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern(String);

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
    /// `TERN_ACCESS_LOG`: log one line per request (default off).
    pub access_log: bool,
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
            secret_key: None,
            allowed_hosts: Vec::new(),
            trusted_proxy_header: None,
            trusted_proxies: vec![IpNet::loopback_v4(), IpNet::loopback_v6()],
            request_id_header: HeaderName::from_static("x-request-id"),
            security_headers: false,
            health_path: Some("/health".to_owned()),
            access_log: false,
            invalid_responses: InvalidResponses::LogAndSend,
            openapi: None,
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            tls: None,
            sources: Sources::default(),
        }
    }
}

/// A configuration that cannot be used; says which setting and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    setting: String,
    message: String,
}

impl ConfigError {
    pub(crate) fn new(setting: &str, message: impl Into<String>) -> Self {
        ConfigError {
            setting: setting.to_owned(),
            message: message.into(),
        }
    }

    /// The name of the setting that is wrong (e.g. `SECRET_KEY`).
    pub fn setting(&self) -> &str {
        &self.setting
    }

    /// What is wrong with it, and what to set.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.setting, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Values that appear in tutorials and templates: never a real secret.
pub(crate) const EXAMPLE_SECRETS: &[&str] = &[
    "changeme",
    "change-me",
    "change_me",
    "secret",
    "secret-key",
    "secret_key",
    "secretkey",
    "your-secret-key",
    "your_secret_key",
    "yoursecretkey",
    "mysecret",
    "my-secret-key",
    "development",
    "insecure",
    "password",
    "example",
    "test",
    "tern",
    "key",
    "your",
    "my",
    "replace-me",
    "please-change-me",
    "0123456789",
    "1234567890",
    "abcdefghijklmnopqrstuvwxyz",
];

pub(crate) const GENERATE_HINT: &str =
    "generate one with the app's `secret-key` command (`<app> secret-key`), or \
     `openssl rand -base64 48`";

impl Config {
    /// Reads the configuration: `tern.toml` in the working directory (or
    /// the file named by `TERN_CONFIG`) if present, then environment
    /// variables, which win. Does not [`validate`](Config::validate).
    pub fn from_env() -> Result<Config, ConfigError> {
        let vars: BTreeMap<String, String> = std::env::vars().collect();
        let path = vars.get("TERN_CONFIG").cloned();
        let file = match &path {
            Some(path) => Some(read_toml(Path::new(path), "TERN_CONFIG")?),
            None if Path::new("tern.toml").exists() => {
                Some(read_toml(Path::new("tern.toml"), "tern.toml")?)
            }
            None => None,
        };
        let (mut settings, tables) = file.unwrap_or_default();
        settings.extend(vars.clone());
        let mut config = Config::from_settings(&settings)?;
        config.sources = Sources {
            vars: Arc::new(vars),
            file: (!tables.tables.is_empty()).then(|| Arc::new(tables)),
        };
        Ok(config)
    }

    /// Builds a configuration from `NAME = value` settings, named as the
    /// environment variables are. Unknown names starting with `TERN_` are
    /// an error (a typo would otherwise be ignored silently). The app's own
    /// settings ([`App::settings`](crate::App::settings)) are read from the
    /// same names.
    ///
    /// ```
    /// let config = tern::Config::from_settings([
    ///     ("TERN_ADDR", "127.0.0.1:8080"),
    ///     ("BOOKMARKS_API_TOKEN", "a-token-for-tests"),
    /// ]).unwrap();
    /// assert_eq!(config.addr.port(), 8080);
    /// ```
    pub fn from_settings<I, K, V>(settings: I) -> Result<Config, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let settings: BTreeMap<String, String> = settings
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let settings = &settings;
        let mut c = Config::default();
        let get = |name: &str| {
            settings
                .get(name)
                .map(|v| v.trim())
                .filter(|v| !v.is_empty())
        };
        for name in settings.keys() {
            if name.starts_with("TERN_") && !KNOWN.contains(&name.as_str()) {
                return Err(ConfigError::new(
                    name,
                    format!(
                        "unknown setting; the TERN_ settings are {} (the app's own \
                         settings take a prefix of their own: see `App::settings`)",
                        KNOWN.join(", ")
                    ),
                ));
            }
        }
        if let Some(v) = get("TERN_ADDR") {
            c.addr = v.parse().map_err(|_| {
                ConfigError::new(
                    "TERN_ADDR",
                    format!("`{v}` is not an address like 127.0.0.1:3000"),
                )
            })?;
        }
        if let Some(v) = get("TERN_ENV") {
            c.env = match v.to_ascii_lowercase().as_str() {
                "development" | "dev" => Environment::Development,
                "production" | "prod" => Environment::Production,
                _ => {
                    return Err(ConfigError::new(
                        "TERN_ENV",
                        format!("`{v}` is neither `development` nor `production`"),
                    ))
                }
            };
        }
        c.security_headers = c.env == Environment::Production;
        if let Some(v) = get("TERN_WORKERS") {
            c.workers = parse_num("TERN_WORKERS", v)?;
            if c.workers == 0 {
                return Err(ConfigError::new("TERN_WORKERS", "must be at least 1"));
            }
        }
        if let Some(v) = get("TERN_RUNTIME") {
            c.runtime = match v {
                "multi-thread" | "multi" => RuntimeMode::MultiThread,
                "per-core" => RuntimeMode::PerCore,
                _ => {
                    return Err(ConfigError::new(
                        "TERN_RUNTIME",
                        format!("`{v}` is neither `multi-thread` nor `per-core`"),
                    ))
                }
            };
        }
        if let Some(v) = get("TERN_INVALID_RESPONSES") {
            c.invalid_responses = match v {
                "send" => InvalidResponses::LogAndSend,
                "fail" => InvalidResponses::Fail,
                _ => {
                    return Err(ConfigError::new(
                        "TERN_INVALID_RESPONSES",
                        format!("`{v}` is neither `send` nor `fail`"),
                    ))
                }
            };
        }
        if let Some(v) = get("TERN_OPENAPI") {
            c.openapi = Some(parse_bool("TERN_OPENAPI", v)?);
        }
        if let Some(v) = get("TERN_REUSE_PORT") {
            c.reuse_port = parse_bool("TERN_REUSE_PORT", v)?;
        }
        if let Some(v) = settings.get("SECRET_KEY") {
            c.secret_key = Some(SecretKey(v.as_bytes().to_vec()));
        }
        if let Some(v) = get("ALLOWED_HOSTS") {
            c.allowed_hosts = v
                .split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(|h| HostPattern(h.to_ascii_lowercase()))
                .collect();
        }
        if let Some(v) = get("TRUSTED_PROXY_HEADER") {
            c.trusted_proxy_header = Some(HeaderName::try_from(v).map_err(|_| {
                ConfigError::new(
                    "TRUSTED_PROXY_HEADER",
                    format!("`{v}` is not a header name"),
                )
            })?);
        }
        if let Some(v) = get("TRUSTED_PROXIES") {
            c.trusted_proxies = v
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse().map_err(|_| {
                        ConfigError::new(
                            "TRUSTED_PROXIES",
                            format!("`{s}` is not an IP address or CIDR block like 10.0.0.0/8"),
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
        }
        if let Some(v) = get("TERN_REQUEST_ID_HEADER") {
            c.request_id_header = HeaderName::try_from(v).map_err(|_| {
                ConfigError::new(
                    "TERN_REQUEST_ID_HEADER",
                    format!("`{v}` is not a header name"),
                )
            })?;
        }
        if let Some(v) = get("TERN_SECURITY_HEADERS") {
            c.security_headers = parse_bool("TERN_SECURITY_HEADERS", v)?;
        }
        if let Some(v) = get("TERN_HEALTH_PATH") {
            c.health_path = match v {
                "off" | "false" | "none" => None,
                p if p.starts_with('/') => Some(p.to_owned()),
                p => {
                    return Err(ConfigError::new(
                        "TERN_HEALTH_PATH",
                        format!("`{p}` must start with `/` (or be `off`)"),
                    ))
                }
            };
        }
        if let Some(v) = get("TERN_ACCESS_LOG") {
            c.access_log = parse_bool("TERN_ACCESS_LOG", v)?;
        }
        let l = &mut c.limits;
        if let Some(v) = get("TERN_MAX_HEAD_BYTES") {
            l.max_head_bytes = parse_num("TERN_MAX_HEAD_BYTES", v)?;
            if l.max_head_bytes < 8192 {
                return Err(ConfigError::new(
                    "TERN_MAX_HEAD_BYTES",
                    "must be at least 8192 (hyper's smallest read buffer)",
                ));
            }
        }
        if let Some(v) = get("TERN_MAX_HEADERS") {
            l.max_headers = parse_num("TERN_MAX_HEADERS", v)?;
        }
        if let Some(v) = get("TERN_MAX_BODY_BYTES") {
            l.max_body_bytes = parse_num("TERN_MAX_BODY_BYTES", v)?;
        }
        if let Some(v) = get("TERN_MAX_MULTIPART_FIELD_BYTES") {
            l.max_multipart_field_bytes = parse_num("TERN_MAX_MULTIPART_FIELD_BYTES", v)?;
        }
        if let Some(v) = get("TERN_MAX_MULTIPART_PARTS") {
            l.max_multipart_parts = parse_num("TERN_MAX_MULTIPART_PARTS", v)?;
        }
        if let Some(v) = get("TERN_MAX_FORM_FIELDS") {
            l.max_form_fields = parse_num("TERN_MAX_FORM_FIELDS", v)?;
        }
        if let Some(v) = get("TERN_MAX_FORM_DEPTH") {
            l.max_form_depth = parse_num("TERN_MAX_FORM_DEPTH", v)?;
            if l.max_form_depth > 256 {
                return Err(ConfigError::new(
                    "TERN_MAX_FORM_DEPTH",
                    "must be at most 256 (each level is a level of recursion when the form is read)",
                ));
            }
        }
        if let Some(v) = get("TERN_MAX_CONNECTIONS") {
            l.max_connections = parse_num("TERN_MAX_CONNECTIONS", v)?;
        }
        if let Some(v) = get("TERN_MAX_H2_STREAMS") {
            l.max_h2_streams = parse_num("TERN_MAX_H2_STREAMS", v)?;
        }
        match (get("TERN_TLS_CERT"), get("TERN_TLS_KEY")) {
            (Some(cert), Some(key)) => {
                c.tls = Some(TlsFiles {
                    cert: cert.into(),
                    key: key.into(),
                })
            }
            (None, None) => {}
            (Some(_), None) => {
                return Err(ConfigError::new(
                    "TERN_TLS_KEY",
                    "is not set, but TERN_TLS_CERT is: HTTPS needs both",
                ))
            }
            (None, Some(_)) => {
                return Err(ConfigError::new(
                    "TERN_TLS_CERT",
                    "is not set, but TERN_TLS_KEY is: HTTPS needs both",
                ))
            }
        }
        let t = &mut c.timeouts;
        for (name, slot) in [
            ("TERN_HEADER_READ_TIMEOUT", &mut t.header_read),
            ("TERN_KEEP_ALIVE_TIMEOUT", &mut t.keep_alive),
            ("TERN_REQUEST_TIMEOUT", &mut t.request),
            ("TERN_WRITE_TIMEOUT", &mut t.write),
            ("TERN_SHUTDOWN_TIMEOUT", &mut t.shutdown),
        ] {
            if let Some(v) = get(name) {
                *slot = parse_duration(name, v)?;
            }
        }
        c.sources.vars = Arc::new(settings.clone());
        Ok(c)
    }

    /// Checks the configuration before the server starts.
    ///
    /// In production: `SECRET_KEY` must be set, at least 32 bytes and not
    /// guessable (an estimated 128 bits: words, sequences and repeats
    /// count for little, see docs/configuration.md); `ALLOWED_HOSTS` must be
    /// set. In every environment, limits must be usable.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.env == Environment::Production {
            let Some(key) = &self.secret_key else {
                return Err(ConfigError::new(
                    "SECRET_KEY",
                    format!(
                        "is not set; production needs at least 32 random bytes: {GENERATE_HINT}"
                    ),
                ));
            };
            check_secret(key.as_bytes())?;
            if self.allowed_hosts.is_empty() {
                return Err(ConfigError::new(
                    "ALLOWED_HOSTS",
                    "is not set; in production list the host names this server answers (e.g. `example.com,.example.com`), or `*` to allow any",
                ));
            }
        } else if let Some(key) = &self.secret_key {
            if key.as_bytes().len() < 32 {
                return Err(ConfigError::new(
                    "SECRET_KEY",
                    format!(
                        "is {} bytes; it must be at least 32: {GENERATE_HINT}",
                        key.as_bytes().len()
                    ),
                ));
            }
        }
        if let Some(files) = &self.tls {
            #[cfg(feature = "tls")]
            crate::tls::acceptor(files)?;
            #[cfg(not(feature = "tls"))]
            return Err(ConfigError::new(
                "TERN_TLS_CERT",
                format!(
                    "is set ({}), but this build of Tern has no TLS: enable the `tls` feature of the `tern` crate",
                    files.cert.display()
                ),
            ));
        }
        if self.limits.max_connections == 0 {
            return Err(ConfigError::new(
                "TERN_MAX_CONNECTIONS",
                "must be at least 1",
            ));
        }
        if self.limits.max_head_bytes < 8192 {
            return Err(ConfigError::new(
                "TERN_MAX_HEAD_BYTES",
                "must be at least 8192",
            ));
        }
        Ok(())
    }

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

pub(crate) fn check_secret(key: &[u8]) -> Result<(), ConfigError> {
    if key.len() < 32 {
        return Err(ConfigError::new(
            "SECRET_KEY",
            format!(
                "is {} bytes; production needs at least 32: {GENERATE_HINT}",
                key.len()
            ),
        ));
    }
    // Not only length and a deny-list: an estimate of the guesses the key
    // would take (words, sequences, repeats; see `strength`).
    let bits = strength::estimate_bits(key);
    if bits < strength::MIN_BITS {
        return Err(ConfigError::new(
            "SECRET_KEY",
            format!(
                "is guessable: about {bits:.0} bits by Tern's estimate (words, sequences, repeats), \
                 production needs {:.0}; use 32 random bytes: {GENERATE_HINT}",
                strength::MIN_BITS
            ),
        ));
    }
    Ok(())
}

const KNOWN: &[&str] = &[
    "TERN_ADDR",
    "TERN_ENV",
    "TERN_WORKERS",
    "TERN_RUNTIME",
    "TERN_REUSE_PORT",
    "TERN_CONFIG",
    "TERN_REQUEST_ID_HEADER",
    "TERN_SECURITY_HEADERS",
    "TERN_HEALTH_PATH",
    "TERN_ACCESS_LOG",
    "TERN_INVALID_RESPONSES",
    "TERN_OPENAPI",
    "TERN_MAX_HEAD_BYTES",
    "TERN_MAX_HEADERS",
    "TERN_MAX_BODY_BYTES",
    "TERN_MAX_MULTIPART_FIELD_BYTES",
    "TERN_MAX_MULTIPART_PARTS",
    "TERN_MAX_FORM_FIELDS",
    "TERN_MAX_FORM_DEPTH",
    "TERN_MAX_CONNECTIONS",
    "TERN_MAX_H2_STREAMS",
    "TERN_HEADER_READ_TIMEOUT",
    "TERN_KEEP_ALIVE_TIMEOUT",
    "TERN_REQUEST_TIMEOUT",
    "TERN_WRITE_TIMEOUT",
    "TERN_SHUTDOWN_TIMEOUT",
    "TERN_TLS_CERT",
    "TERN_TLS_KEY",
];

/// Settings named without the `TERN_` prefix, as their variables are.
const UNPREFIXED: &[&str] = &[
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "TRUSTED_PROXY_HEADER",
    "TRUSTED_PROXIES",
];

/// The setting a `tern.toml` key names, in any case: `addr`, `tern_addr`
/// and `TERN_ADDR` are `TERN_ADDR`; `secret_key` is `SECRET_KEY`.
/// `TERN_CONFIG` names the file and means nothing inside it.
fn file_setting(key: &str) -> Option<String> {
    let upper = key.to_ascii_uppercase();
    let name = if KNOWN.contains(&upper.as_str()) || UNPREFIXED.contains(&upper.as_str()) {
        upper
    } else {
        format!("TERN_{upper}")
    };
    let known = KNOWN.contains(&name.as_str()) || UNPREFIXED.contains(&name.as_str());
    (known && name != "TERN_CONFIG").then_some(name)
}

/// The known key nearest to `key` (at most 3 edits, and fewer than a
/// third of its length), written in `key`'s style: lower or upper case,
/// with or without `TERN_`.
fn closest_file_key(key: &str) -> Option<String> {
    let upper = key.to_ascii_uppercase();
    let (prefixed, short) = match upper.strip_prefix("TERN_") {
        Some(short) => (true, short),
        None => (false, upper.as_str()),
    };
    let (best_prefixed, best, distance) = KNOWN
        .iter()
        .filter(|n| **n != "TERN_CONFIG")
        .map(|n| (true, &n["TERN_".len()..]))
        .chain(UNPREFIXED.iter().map(|n| (false, *n)))
        .map(|(p, candidate)| (p, candidate, edit_distance(short, candidate)))
        .min_by_key(|(_, _, d)| *d)?;
    if distance > 3 || distance * 3 >= best.len() {
        return None;
    }
    let written = if best_prefixed && prefixed {
        format!("TERN_{best}")
    } else {
        best.to_owned()
    };
    Some(if key.bytes().any(|b| b.is_ascii_lowercase()) {
        written.to_ascii_lowercase()
    } else {
        written
    })
}

/// Levenshtein distance (insertions, deletions, substitutions), in bytes.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Reads a `tern.toml`: Tern's settings, and the tables (`[bookmarks]`)
/// that hold the app's own settings.
fn read_toml(
    path: &Path,
    setting: &str,
) -> Result<(BTreeMap<String, String>, FileTables), ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(setting, format!("cannot read {}: {e}", path.display())))?;
    let table: toml::Table = text.parse().map_err(|e| {
        ConfigError::new(
            setting,
            format!("{} is not valid TOML: {e}", path.display()),
        )
    })?;
    let mut out = BTreeMap::new();
    // Setting → the key that set it, to refuse a second key for it.
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    let mut tables = FileTables {
        path: path.to_owned(),
        tables: BTreeMap::new(),
    };
    for (key, value) in table {
        // A table that is not one of Tern's settings holds the app's own
        // settings; the app checks its name when it is built.
        let value = match value {
            toml::Value::Table(t) if file_setting(&key).is_none() => {
                tables.tables.insert(key, t);
                continue;
            }
            value => value,
        };
        // An unknown key is a typo (or a setting of another tool): ignoring
        // it would leave the setting at its default without a word.
        let Some(name) = file_setting(&key) else {
            let hint = match closest_file_key(&key) {
                Some(known) => format!("did you mean `{known}`?"),
                None => format!(
                    "the keys are the settings of docs/configuration.md, in lower case \
                     without `TERN_` if you like: {}",
                    KNOWN
                        .iter()
                        .filter(|n| **n != "TERN_CONFIG")
                        .map(|n| n["TERN_".len()..].to_ascii_lowercase())
                        .chain(UNPREFIXED.iter().map(|n| n.to_ascii_lowercase()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            return Err(ConfigError::new(
                setting,
                format!("unknown key `{key}` in {}; {hint}", path.display()),
            ));
        };
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| i.to_string())
                })
                .collect::<Vec<_>>()
                .join(","),
            other => {
                return Err(ConfigError::new(
                    &name,
                    format!(
                        "in {}: `{other}` is not a string, number, boolean or list",
                        path.display()
                    ),
                ))
            }
        };
        if let Some(first) = keys.insert(name.clone(), key.clone()) {
            return Err(ConfigError::new(
                &name,
                format!(
                    "is set twice in {}, by `{first}` and by `{key}`",
                    path.display()
                ),
            ));
        }
        out.insert(name, value);
    }
    Ok((out, tables))
}

fn parse_num<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, ConfigError> {
    v.replace('_', "")
        .parse()
        .map_err(|_| ConfigError::new(name, format!("`{v}` is not a whole number")))
}

fn parse_bool(name: &str, v: &str) -> Result<bool, ConfigError> {
    match v.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::new(
            name,
            format!("`{v}` is not true or false"),
        )),
    }
}

/// `30`, `30s`, `500ms`, `2m`, `12h`, `14d`, for an app's settings (the
/// message only).
pub(crate) fn parse_duration_text(v: &str) -> Result<Duration, String> {
    parse_duration("", v).map_err(|e| e.message)
}

/// `30`, `30s`, `500ms`, `2m`, `12h`, `14d`.
fn parse_duration(name: &str, v: &str) -> Result<Duration, ConfigError> {
    let err = || {
        ConfigError::new(
            name,
            format!("`{v}` is not a duration like 30s, 500ms, 2m, 12h or 14d"),
        )
    };
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => v.split_at(i),
        None => (v, "s"),
    };
    let n: u64 = num.parse().map_err(|_| err())?;
    match unit.trim() {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => n.checked_mul(60).map(Duration::from_secs).ok_or_else(err),
        "h" => n.checked_mul(3600).map(Duration::from_secs).ok_or_else(err),
        "d" => n
            .checked_mul(86_400)
            .map(Duration::from_secs)
            .ok_or_else(err),
        _ => Err(err()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn prod(secret: &str) -> Result<(), ConfigError> {
        Config::from_settings(&settings(&[
            ("TERN_ENV", "production"),
            ("SECRET_KEY", secret),
            ("ALLOWED_HOSTS", "example.com"),
        ]))?
        .validate()
    }

    #[test]
    fn production_secrets() {
        let strong = "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ";
        assert!(prod(strong).is_ok());
        for weak in [
            "short",
            "changemechangemechangemechangeme",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "your-secret-key-your-secret-key-yes",
            "01010101010101010101010101010101",
            // Attempts around the rules: a repeated pattern with enough
            // distinct bytes, an example phrase padded or in other case,
            // a sequence.
            "abcdefghabcdefghabcdefghabcdefgh",
            "0123456789abcdef0123456789abcdef",
            "CHANGEME-changeme-ChangeMe-12345678",
            "  secret  secret  secret  secret  secret ",
            "Kx9!Kx9!Kx9!Kx9!Kx9!Kx9!Kx9!Kx9!",
        ] {
            let err = prod(weak).expect_err(weak);
            assert_eq!(err.setting(), "SECRET_KEY", "{weak}");
        }
        let missing = Config::from_settings(&settings(&[("TERN_ENV", "production")]))
            .and_then(|c| c.validate())
            .expect_err("missing");
        assert_eq!(missing.setting(), "SECRET_KEY");
        assert!(missing.to_string().contains("openssl rand"));
    }

    #[test]
    fn production_needs_allowed_hosts() {
        let err = Config::from_settings(&settings(&[
            ("TERN_ENV", "production"),
            ("SECRET_KEY", "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ"),
        ]))
        .and_then(|c| c.validate())
        .expect_err("no hosts");
        assert_eq!(err.setting(), "ALLOWED_HOSTS");
    }

    #[test]
    fn bad_values_name_the_setting() {
        for (name, value) in [
            ("TERN_ADDR", "nowhere"),
            ("TERN_ENV", "staging"),
            ("TERN_WORKERS", "many"),
            ("TERN_WORKERS", "0"),
            ("TERN_MAX_BODY_BYTES", "-1"),
            ("TERN_REQUEST_TIMEOUT", "soon"),
            ("TERN_MAX_HEAD_BYTES", "100"),
            ("TRUSTED_PROXIES", "10.0.0.0/99"),
            ("TERN_TYPO", "1"),
        ] {
            let err = Config::from_settings(&settings(&[(name, value)])).expect_err(name);
            assert_eq!(err.setting(), name);
        }
    }

    #[test]
    fn durations_and_numbers() {
        let c = Config::from_settings(&settings(&[
            ("TERN_REQUEST_TIMEOUT", "500ms"),
            ("TERN_KEEP_ALIVE_TIMEOUT", "2m"),
            ("TERN_HEADER_READ_TIMEOUT", "7"),
            ("TERN_MAX_BODY_BYTES", "1_000_000"),
            ("TERN_HEALTH_PATH", "off"),
        ]))
        .expect("valid");
        assert_eq!(c.timeouts.request, Duration::from_millis(500));
        assert_eq!(c.timeouts.keep_alive, Duration::from_secs(120));
        assert_eq!(c.timeouts.header_read, Duration::from_secs(7));
        assert_eq!(c.limits.max_body_bytes, 1_000_000);
        assert_eq!(c.health_path, None);
    }

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

    #[test]
    fn toml_file() {
        let dir = std::env::temp_dir().join(format!("tern-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let path = dir.join("tern.toml");
        std::fs::write(
            &path,
            "addr = \"0.0.0.0:8080\"\nworkers = 3\nALLOWED_HOSTS = [\"a.com\", \".b.com\"]\n",
        )
        .expect("write");
        let c = Config::from_settings(&read_toml(&path, "TERN_CONFIG").expect("toml").0)
            .expect("config");
        assert_eq!(c.addr.port(), 8080);
        assert_eq!(c.workers, 3);
        assert_eq!(c.allowed_hosts.len(), 2);
    }

    /// Writes `text` to a file of its own and reads it as `tern.toml`.
    fn toml_text(name: &str, text: &str) -> Result<Config, ConfigError> {
        let dir = std::env::temp_dir().join(format!("tern-config-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let path = dir.join("tern.toml");
        std::fs::write(&path, text).expect("write");
        let result = read_toml(&path, "tern.toml").and_then(|(s, _)| Config::from_settings(&s));
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    #[test]
    fn toml_keys_in_every_spelling_load() {
        let c = toml_text(
            "spellings",
            "access_log = true\nmax_body_bytes = 10\nTERN_WORKERS = 2\ntern_runtime = \"per-core\"\n\
             reuse_port = true\nsecret_key = \"q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ\"\n\
             TRUSTED_PROXIES = [\"10.0.0.0/8\"]\n",
        )
        .expect("a correct file loads");
        assert!(c.access_log);
        assert_eq!(c.limits.max_body_bytes, 10);
        assert_eq!(c.workers, 2);
        assert_eq!(c.runtime, RuntimeMode::PerCore);
        assert!(c.reuse_port);
        assert!(c.secret_key.is_some());
        assert_eq!(c.trusted_proxies.len(), 1);
    }

    #[test]
    fn toml_unknown_keys_are_refused_naming_the_closest() {
        for (text, message) in [
            ("acces_log = true\n", "unknown key `acces_log` in "),
            ("acces_log = true\n", "did you mean `access_log`?"),
            ("max_body_byts = 10\n", "did you mean `max_body_bytes`?"),
            (
                "ALOWED_HOSTS = \"a.com\"\n",
                "did you mean `ALLOWED_HOSTS`?",
            ),
            ("TERN_WORKRES = 2\n", "did you mean `TERN_WORKERS`?"),
            ("tern_secret_key = \"x\"\n", "did you mean `secret_key`?"),
            // Nothing close: the known keys are listed.
            ("colour = \"blue\"\n", "the keys are the settings"),
            ("config = \"other.toml\"\n", "unknown key `config`"),
        ] {
            let err = toml_text("unknown", text).expect_err(text);
            assert_eq!(err.setting(), "tern.toml", "{text}");
            assert!(err.to_string().contains(message), "{text}: {err}");
        }
        // Two spellings of one setting: which one wins would be a guess.
        let err = toml_text(
            "twice",
            "addr = \"127.0.0.1:1\"\nTERN_ADDR = \"127.0.0.1:2\"\n",
        )
        .expect_err("twice");
        assert_eq!(err.setting(), "TERN_ADDR");
        assert!(err.to_string().contains("set twice"), "{err}");
        // A known key with a value of the wrong kind names the setting.
        let err = toml_text("kind", "workers = 1.5\n").expect_err("float");
        assert_eq!(err.setting(), "TERN_WORKERS");
    }

    #[test]
    fn edit_distances() {
        for (a, b, d) in [
            ("", "", 0),
            ("abc", "", 3),
            ("", "abc", 3),
            ("ACCES_LOG", "ACCESS_LOG", 1),
            ("kitten", "sitting", 3),
            ("WORKRES", "WORKERS", 2),
        ] {
            assert_eq!(edit_distance(a, b), d, "{a} {b}");
            assert_eq!(edit_distance(b, a), d, "{b} {a}");
        }
    }
}
