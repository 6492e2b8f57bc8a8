//! Loading: `NAME = value` settings (the environment, `tern.toml`) read
//! into a [`Config`].
//!
//! The settings are read as the app's own settings are
//! ([`settings::load`](crate::settings::load)): into a `Deserialize`
//! struct, `Raw`, one field per variable (`addr` for `TERN_ADDR`,
//! `secret_key` for `SECRET_KEY`), by the crate's deserializer of string
//! trees, and an error at a field names its variable. Each field reads its
//! text with a parser of its own (module `read`), so that the messages
//! say what the value should look like (`` `soon` is not a duration like
//! 30s, 500ms, 2m, 12h or 14d ``) rather than name a Rust type.
//!
//! An empty value means unset, except for `SECRET_KEY`, taken as written
//! (an empty key is refused by [`Config::validate`], never ignored). The
//! first wrong setting, in the order of `Raw`'s fields, is the error (the
//! TLS pair, checked once both are read, before the timeouts).

use std::{
    borrow::Cow,
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use http::HeaderName;
use serde::Deserialize;

use super::{
    file::read_toml, validate, Config, ConfigError, Cors, CorsList, Environment, HostPattern,
    Http1Engine, InvalidResponses, Limits, LogFormat, MetricsToken, RuntimeMode, SecretKey,
    Sources, Timeouts,
};
use crate::{
    extract::{
        de::{Map, Node, NodeDe},
        probe,
    },
    net::IpNet,
};

/// The `TERN_` settings, in the order the unknown-setting error lists them.
pub(super) const KNOWN: &[&str] = &[
    "TERN_ADDR",
    "TERN_ENV",
    "TERN_WORKERS",
    "TERN_RUNTIME",
    "TERN_REUSE_PORT",
    "TERN_HTTP1",
    "TERN_CONFIG",
    "TERN_REQUEST_ID_HEADER",
    "TERN_SECURITY_HEADERS",
    "TERN_HEALTH_PATH",
    "TERN_READY_PATH",
    "TERN_ACCESS_LOG",
    "TERN_LOG_FORMAT",
    "TERN_METRICS",
    "TERN_METRICS_PATH",
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
pub(super) const UNPREFIXED: &[&str] = &[
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "TRUSTED_PROXY_HEADER",
    "TRUSTED_PROXIES",
    "CORS_ALLOWED_ORIGINS",
    "CORS_ALLOWED_METHODS",
    "CORS_ALLOWED_HEADERS",
    "CORS_ALLOW_CREDENTIALS",
    "CORS_MAX_AGE",
    "METRICS_TOKEN",
];

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
        let mut config = Raw::read(&settings)?.into_config()?;
        config.sources.vars = Arc::new(settings);
        Ok(config)
    }
}

/// The variable a field of [`Raw`] reads: `addr` → `TERN_ADDR`,
/// `secret_key` → `SECRET_KEY`.
fn variable(field: &str) -> String {
    let upper = field.to_ascii_uppercase();
    if UNPREFIXED.contains(&upper.as_str()) {
        upper
    } else {
        format!("TERN_{upper}")
    }
}

/// Tern's settings as given, each parsed, `None` where unset. The fields
/// are in the order the settings are checked; each is named after its
/// variable (see [`variable`]).
#[derive(Deserialize)]
struct Raw {
    #[serde(default, deserialize_with = "read::addr")]
    addr: Option<SocketAddr>,
    #[serde(default, deserialize_with = "read::env")]
    env: Option<Environment>,
    #[serde(default, deserialize_with = "read::workers")]
    workers: Option<usize>,
    #[serde(default, deserialize_with = "read::runtime")]
    runtime: Option<RuntimeMode>,
    #[serde(default, deserialize_with = "read::invalid_responses")]
    invalid_responses: Option<InvalidResponses>,
    #[serde(default, deserialize_with = "read::flag")]
    openapi: Option<bool>,
    #[serde(default, deserialize_with = "read::flag")]
    reuse_port: Option<bool>,
    #[serde(default, deserialize_with = "read::http1")]
    http1: Option<Http1Engine>,
    #[serde(default, deserialize_with = "read::secret_key")]
    secret_key: Option<SecretKey>,
    #[serde(default, deserialize_with = "read::hosts")]
    allowed_hosts: Option<Vec<HostPattern>>,
    #[serde(default, deserialize_with = "read::header_name")]
    trusted_proxy_header: Option<HeaderName>,
    #[serde(default, deserialize_with = "read::proxies")]
    trusted_proxies: Option<Vec<IpNet>>,
    #[serde(default, deserialize_with = "read::origins")]
    cors_allowed_origins: Option<CorsList<String>>,
    #[serde(default, deserialize_with = "read::methods")]
    cors_allowed_methods: Option<CorsList<http::Method>>,
    #[serde(default, deserialize_with = "read::header_names")]
    cors_allowed_headers: Option<CorsList<HeaderName>>,
    #[serde(default, deserialize_with = "read::flag")]
    cors_allow_credentials: Option<bool>,
    #[serde(default, deserialize_with = "read::duration")]
    cors_max_age: Option<Duration>,
    #[serde(default, deserialize_with = "read::header_name")]
    request_id_header: Option<HeaderName>,
    #[serde(default, deserialize_with = "read::flag")]
    security_headers: Option<bool>,
    #[serde(default, deserialize_with = "read::health_path")]
    health_path: Option<Option<String>>,
    #[serde(default, deserialize_with = "read::health_path")]
    ready_path: Option<Option<String>>,
    #[serde(default, deserialize_with = "read::flag")]
    access_log: Option<bool>,
    #[serde(default, deserialize_with = "read::log_format")]
    log_format: Option<LogFormat>,
    #[serde(default, deserialize_with = "read::flag")]
    metrics: Option<bool>,
    #[serde(default, deserialize_with = "read::metrics_path")]
    metrics_path: Option<String>,
    #[serde(default, deserialize_with = "read::metrics_token")]
    metrics_token: Option<MetricsToken>,
    #[serde(default, deserialize_with = "read::max_head_bytes")]
    max_head_bytes: Option<usize>,
    #[serde(default, deserialize_with = "read::number_usize")]
    max_headers: Option<usize>,
    #[serde(default, deserialize_with = "read::number_u64")]
    max_body_bytes: Option<u64>,
    #[serde(default, deserialize_with = "read::number_u64")]
    max_multipart_field_bytes: Option<u64>,
    #[serde(default, deserialize_with = "read::number_usize")]
    max_multipart_parts: Option<usize>,
    #[serde(default, deserialize_with = "read::number_usize")]
    max_form_fields: Option<usize>,
    #[serde(default, deserialize_with = "read::max_form_depth")]
    max_form_depth: Option<usize>,
    #[serde(default, deserialize_with = "read::number_usize")]
    max_connections: Option<usize>,
    #[serde(default, deserialize_with = "read::number_u32")]
    max_h2_streams: Option<u32>,
    #[serde(default, deserialize_with = "read::path")]
    tls_cert: Option<PathBuf>,
    #[serde(default, deserialize_with = "read::path")]
    tls_key: Option<PathBuf>,
    #[serde(default, deserialize_with = "read::duration")]
    header_read_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "read::duration")]
    keep_alive_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "read::duration")]
    request_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "read::duration")]
    write_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "read::duration")]
    shutdown_timeout: Option<Duration>,
}

impl Raw {
    /// Reads Tern's settings out of `settings` (other names are the app's
    /// and are left alone).
    fn read(settings: &BTreeMap<String, String>) -> Result<Raw, ConfigError> {
        // The fields in declaration order: the tree is built in that
        // order, so the first wrong setting is the first in `Raw`.
        let fields = probe::field_shapes::<Raw>().unwrap_or_default();
        let mut map = Map::new();
        for (field, _) in fields {
            let name = variable(field);
            let Some(value) = settings.get(&name) else {
                continue;
            };
            // SECRET_KEY as written: spaces may be part of a key, and an
            // empty one is refused by `validate`, not taken as unset.
            let value = if name == "SECRET_KEY" {
                value.as_str()
            } else {
                value.trim()
            };
            if value.is_empty() && name != "SECRET_KEY" {
                continue;
            }
            map.insert(Cow::Borrowed(field), Node::Value(Cow::Borrowed(value)));
        }
        let tls = (map.contains_key("tls_cert"), map.contains_key("tls_key"));
        Raw::deserialize(NodeDe {
            node: &Node::Map(map),
            path_mode: false,
        })
        .or_else(|e| {
            // The TLS pair is checked after the limits, before the
            // timeouts: with a timeout wrong too, the pair comes first.
            if e.path.ends_with("_timeout") {
                validate::tls_files(tls.0.then(PathBuf::new), tls.1.then(PathBuf::new))?;
            }
            // Each field reads one value: the path is the field.
            let setting = if e.path.is_empty() {
                "TERN_*".to_owned()
            } else {
                variable(&e.path)
            };
            Err(ConfigError::new(&setting, e.0.message))
        })
    }

    /// The configuration: each setting given, else its default.
    fn into_config(self) -> Result<Config, ConfigError> {
        let d = Config::default();
        let (l, t) = (&d.limits, &d.timeouts);
        let env = self.env.unwrap_or(d.env);
        let cors = self.cors()?;
        Ok(Config {
            addr: self.addr.unwrap_or(d.addr),
            env,
            workers: self.workers.unwrap_or(d.workers),
            runtime: self.runtime.unwrap_or(d.runtime),
            reuse_port: self.reuse_port.unwrap_or(d.reuse_port),
            http1: self.http1.unwrap_or(d.http1),
            secret_key: self.secret_key,
            allowed_hosts: self.allowed_hosts.unwrap_or_default(),
            trusted_proxy_header: self.trusted_proxy_header,
            trusted_proxies: self
                .trusted_proxies
                .unwrap_or_else(|| d.trusted_proxies.clone()),
            request_id_header: self
                .request_id_header
                .unwrap_or_else(|| d.request_id_header.clone()),
            // Production's default.
            security_headers: self
                .security_headers
                .unwrap_or(env == Environment::Production),
            health_path: self.health_path.unwrap_or_else(|| d.health_path.clone()),
            ready_path: self.ready_path.unwrap_or_else(|| d.ready_path.clone()),
            access_log: self.access_log.unwrap_or(d.access_log),
            log_format: self.log_format.unwrap_or(d.log_format),
            metrics: self.metrics.unwrap_or(d.metrics),
            metrics_path: self.metrics_path.unwrap_or_else(|| d.metrics_path.clone()),
            metrics_token: self.metrics_token,
            invalid_responses: self.invalid_responses.unwrap_or(d.invalid_responses),
            openapi: self.openapi,
            limits: Limits {
                max_head_bytes: self.max_head_bytes.unwrap_or(l.max_head_bytes),
                max_headers: self.max_headers.unwrap_or(l.max_headers),
                max_body_bytes: self.max_body_bytes.unwrap_or(l.max_body_bytes),
                max_multipart_field_bytes: self
                    .max_multipart_field_bytes
                    .unwrap_or(l.max_multipart_field_bytes),
                max_multipart_parts: self.max_multipart_parts.unwrap_or(l.max_multipart_parts),
                max_form_fields: self.max_form_fields.unwrap_or(l.max_form_fields),
                max_form_depth: self.max_form_depth.unwrap_or(l.max_form_depth),
                max_connections: self.max_connections.unwrap_or(l.max_connections),
                max_h2_streams: self.max_h2_streams.unwrap_or(l.max_h2_streams),
            },
            timeouts: Timeouts {
                header_read: self.header_read_timeout.unwrap_or(t.header_read),
                keep_alive: self.keep_alive_timeout.unwrap_or(t.keep_alive),
                request: self.request_timeout.unwrap_or(t.request),
                write: self.write_timeout.unwrap_or(t.write),
                shutdown: self.shutdown_timeout.unwrap_or(t.shutdown),
            },
            tls: validate::tls_files(self.tls_cert, self.tls_key)?,
            cors,
            sources: Sources::default(),
        })
    }

    /// The CORS settings: none without `CORS_ALLOWED_ORIGINS`, and then
    /// the others are an error (set for nothing, likely a typo).
    fn cors(&self) -> Result<Option<Cors>, ConfigError> {
        let Some(origins) = self.cors_allowed_origins.clone() else {
            for (set, name) in [
                (self.cors_allowed_methods.is_some(), "CORS_ALLOWED_METHODS"),
                (self.cors_allowed_headers.is_some(), "CORS_ALLOWED_HEADERS"),
                (
                    self.cors_allow_credentials.is_some(),
                    "CORS_ALLOW_CREDENTIALS",
                ),
                (self.cors_max_age.is_some(), "CORS_MAX_AGE"),
            ] {
                if set {
                    return Err(ConfigError::new(
                        name,
                        "is set, but CORS_ALLOWED_ORIGINS is not: without it no CORS header is sent",
                    ));
                }
            }
            return Ok(None);
        };
        let mut cors = Cors::new(origins);
        if let Some(methods) = &self.cors_allowed_methods {
            cors.allowed_methods = methods.clone();
        }
        if let Some(headers) = &self.cors_allowed_headers {
            cors.allowed_headers = headers.clone();
        }
        cors.allow_credentials = self.cors_allow_credentials.unwrap_or(false);
        cors.max_age = self.cors_max_age.unwrap_or(cors.max_age);
        Ok(Some(cors))
    }
}

/// The `deserialize_with` functions of [`Raw`]'s fields: each takes the
/// setting's text and parses it, with a message that says what the value
/// should look like.
mod read {
    use serde::{de::Error as _, Deserialize, Deserializer};

    use super::*;

    macro_rules! fields {
        ($($name:ident: $ty:ty = $parse:expr;)*) => {$(
            pub(super) fn $name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$ty>, D::Error> {
                let text = String::deserialize(d)?;
                let parse: fn(&str) -> Result<$ty, String> = $parse;
                parse(&text).map(Some).map_err(D::Error::custom)
            }
        )*};
    }

    fields! {
        addr: SocketAddr = |v| {
            v.parse().map_err(|_| format!("`{v}` is not an address like 127.0.0.1:3000"))
        };
        env: Environment = |v| match v.to_ascii_lowercase().as_str() {
            "development" | "dev" => Ok(Environment::Development),
            "production" | "prod" => Ok(Environment::Production),
            _ => Err(format!("`{v}` is neither `development` nor `production`")),
        };
        workers: usize = |v| number(v).and_then(validate::workers);
        runtime: RuntimeMode = |v| match v {
            "multi-thread" | "multi" => Ok(RuntimeMode::MultiThread),
            "per-core" => Ok(RuntimeMode::PerCore),
            _ => Err(format!("`{v}` is neither `multi-thread` nor `per-core`")),
        };
        http1: Http1Engine = |v| match v {
            "tern" => Ok(Http1Engine::Tern),
            "hyper" => Ok(Http1Engine::Hyper),
            _ => Err(format!("`{v}` is neither `tern` nor `hyper`")),
        };
        invalid_responses: InvalidResponses = |v| match v {
            "send" => Ok(InvalidResponses::LogAndSend),
            "fail" => Ok(InvalidResponses::Fail),
            _ => Err(format!("`{v}` is neither `send` nor `fail`")),
        };
        flag: bool = |v| match v.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(format!("`{v}` is not true or false")),
        };
        secret_key: SecretKey = |v| Ok(SecretKey(v.as_bytes().to_vec()));
        hosts: Vec<HostPattern> = |v| {
            Ok(v.split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(|h| HostPattern(h.to_ascii_lowercase()))
                .collect())
        };
        header_name: HeaderName = |v| {
            HeaderName::try_from(v).map_err(|_| format!("`{v}` is not a header name"))
        };
        proxies: Vec<IpNet> = |v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    s.parse().map_err(|_| {
                        format!("`{s}` is not an IP address or CIDR block like 10.0.0.0/8")
                    })
                })
                .collect()
        };
        health_path: Option<String> = |v| match v {
            "off" | "false" | "none" => Ok(None),
            p if p.starts_with('/') => Ok(Some(p.to_owned())),
            p => Err(format!("`{p}` must start with `/` (or be `off`)")),
        };
        log_format: LogFormat = |v| match v.to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(format!("`{v}` is neither `text` nor `json`")),
        };
        metrics_path: String = |v| match v {
            p if p.starts_with('/') && p.len() > 1 => Ok(p.to_owned()),
            p => Err(format!("`{p}` must be a path starting with `/`, such as /metrics")),
        };
        metrics_token: MetricsToken = |v| {
            if v.len() < 16 || !v.bytes().all(|b| b.is_ascii_graphic()) {
                Err(format!(
                    "is {} characters; it must be at least 16 printable characters without spaces",
                    v.len()
                ))
            } else {
                Ok(MetricsToken(v.to_owned()))
            }
        };
        origins: CorsList<String> = |v| list(v, origin);
        methods: CorsList<http::Method> = |v| {
            list(v, |m| {
                http::Method::from_bytes(m.to_ascii_uppercase().as_bytes())
                    .map_err(|_| format!("`{m}` is not an HTTP method"))
            })
        };
        header_names: CorsList<HeaderName> = |v| {
            list(v, |h| HeaderName::try_from(h).map_err(|_| format!("`{h}` is not a header name")))
        };
        number_usize: usize = number;
        number_u32: u32 = number;
        number_u64: u64 = number;
        max_head_bytes: usize = |v| number(v).and_then(validate::max_head_bytes);
        max_form_depth: usize = |v| number(v).and_then(validate::max_form_depth);
        path: PathBuf = |v| Ok(PathBuf::from(v));
        duration: Duration = parse_duration_text;
    }

    /// `*`, or comma-separated values each read by `item`.
    fn list<T>(v: &str, item: fn(&str) -> Result<T, String>) -> Result<CorsList<T>, String> {
        let items: Vec<&str> = v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if items == ["*"] {
            return Ok(CorsList::Any);
        }
        if items.contains(&"*") {
            return Err(format!("`{v}`: `*` allows any, alone; not in a list"));
        }
        items
            .into_iter()
            .map(item)
            .collect::<Result<_, _>>()
            .map(CorsList::Only)
    }

    /// `scheme://host[:port]`, as a browser sends it in `Origin` (lower
    /// case, no path, no trailing `/`).
    fn origin(v: &str) -> Result<String, String> {
        let err = || {
            format!(
                "`{v}` is not an origin like https://app.example.com \
                 (scheme://host[:port], no path)"
            )
        };
        let (scheme, rest) = v.split_once("://").ok_or_else(err)?;
        let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok
            || rest.is_empty()
            || rest.ends_with(':')
            || rest.contains(['/', '?', '#', '@'])
        {
            return Err(err());
        }
        let authority: http::uri::Authority = rest.parse().map_err(|_| err())?;
        // What follows the host: nothing, or `:` and a port (http's
        // `Authority::port` is `None` for a port past 65535).
        let port_ok = match rest.get(authority.host().len()..) {
            Some("") => true,
            Some(port) => port
                .strip_prefix(':')
                .is_some_and(|p| p.parse::<u16>().is_ok()),
            None => false,
        };
        if authority.host().is_empty() || !port_ok {
            return Err(err());
        }
        Ok(v.to_ascii_lowercase())
    }

    /// A whole number; `_` may group its digits (`1_000_000`).
    fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
        v.replace('_', "")
            .parse()
            .map_err(|_| format!("`{v}` is not a whole number"))
    }
}

/// `30` (seconds), `30s`, `500ms`, `2m`, `12h`, `14d`: Tern's durations,
/// and an app's ([`settings::duration`](crate::settings::duration)).
pub(crate) fn parse_duration_text(v: &str) -> Result<Duration, String> {
    let err = || format!("`{v}` is not a duration like 30s, 500ms, 2m, 12h or 14d");
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
mod tests;
