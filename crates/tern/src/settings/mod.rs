//! The app's own settings: a typed struct read from the same sources as
//! Tern's [`Config`], with the same rules.
//!
//! An app names a prefix, say `bookmarks`, and a `Deserialize` struct:
//!
//! ```
//! use serde::Deserialize;
//! use tern::{settings::{Secret, Settings}, App, routing::get};
//!
//! #[derive(Deserialize)]
//! struct Bookmarks {
//!     api_token: Secret,
//!     #[serde(default = "default_page_size")]
//!     page_size: u32,
//!     #[serde(default)]
//!     tags: Vec<String>,
//! }
//! fn default_page_size() -> u32 { 20 }
//!
//! async fn info(Settings(s): Settings<Bookmarks>) -> String {
//!     format!("{} per page, tags {:?}", s.page_size, s.tags)
//! }
//!
//! let config = tern::Config::from_settings([
//!     ("BOOKMARKS_API_TOKEN", "s3cr3t-t0ken-f0r-tests"),
//!     ("BOOKMARKS_TAGS", "rust, web"),
//! ]).unwrap();
//! let app = App::new()
//!     .settings::<Bookmarks>("bookmarks")
//!     .route("/info", get(info))
//!     .build_with(config)
//!     .unwrap();
//! let s = app.settings::<Bookmarks>().unwrap();
//! assert!(s.api_token.matches("s3cr3t-t0ken-f0r-tests"));
//! assert_eq!(s.tags, ["rust", "web"]);
//! assert_eq!(format!("{:?}", s.api_token), "Secret(***)");
//! ```
//!
//! - **Sources**: the `[bookmarks]` table of `tern.toml`, then the
//!   variables `BOOKMARKS_<FIELD>` (`BOOKMARKS_PAGE_SIZE=50`), which win,
//!   as for Tern's own settings. A list field takes a TOML array or a
//!   comma-separated variable.
//! - **Checked at startup**: a variable with the prefix or a key of the
//!   table that names no field is refused (with the closest field), as is
//!   a table of `tern.toml` that no `App::settings` claims; a missing or
//!   malformed value stops the start with an error naming the variable.
//!   Nothing is read per request.
//! - **Secrets**: a [`Secret`] field never prints its value (not in
//!   `Debug`, not in errors), compares in constant time
//!   ([`Secret::matches`]), and in production refuses example values and
//!   secrets shorter than 16 bytes.
//! - **Where**: handlers take [`Settings<T>`]; `main` can read them before
//!   the app exists with [`load`], or after it is built with
//!   [`AppService::settings`](crate::AppService::settings).

use std::{
    any::{type_name, Any, TypeId},
    borrow::Cow,
    cell::Cell,
    collections::{BTreeMap, HashMap},
    fmt,
    sync::Arc,
};

use http::request::Parts;
use serde::{de::DeserializeOwned, Deserialize, Deserializer};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tern_core::extract::{FromRequestParts, Rejection, RouteCheck};

use crate::{
    config::{edit_distance, ConfigError, EXAMPLE_SECRETS},
    extract::{
        de::{Map, Node, NodeDe},
        probe::{self, Shape},
    },
    Config,
};

/// Reads a duration field of an app's settings as Tern's own durations
/// are written: `30` (seconds), `30s`, `500ms`, `2m`, `12h`, `14d` (a
/// TOML integer is seconds):
///
/// ```
/// # use std::time::Duration;
/// #[derive(serde::Deserialize)]
/// struct Cache {
///     #[serde(deserialize_with = "tern::settings::duration")]
///     ttl: Duration,
/// }
/// let config = tern::Config::from_settings([("CACHE_TTL", "500ms")]).unwrap();
/// let cache: Cache = tern::settings::load("cache", &config).unwrap();
/// assert_eq!(cache.ttl, Duration::from_millis(500));
/// ```
pub fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<std::time::Duration, D::Error> {
    struct Visitor;
    impl serde::de::Visitor<'_> for Visitor {
        type Value = std::time::Duration;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a duration like 30s, 500ms, 2m, 12h or 14d")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(std::time::Duration::from_secs(v))
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
            u64::try_from(v)
                .map(std::time::Duration::from_secs)
                .map_err(|_| E::custom("a duration cannot be negative"))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            crate::config::parse_duration_text(v.trim()).map_err(E::custom)
        }
    }
    d.deserialize_any(Visitor)
}

/// The app's settings of type `T`, loaded at startup by
/// [`App::settings`](crate::App::settings); see the [module](self).
///
/// A handler that takes `Settings<T>` in an app that loads no `T` stops
/// the app's build with an error naming the route and `T`.
#[derive(Debug)]
pub struct Settings<T>(pub Arc<T>);

impl<T> Clone for Settings<T> {
    fn clone(&self) -> Self {
        Settings(Arc::clone(&self.0))
    }
}

impl<T: Send + Sync + 'static> Settings<T> {
    /// The settings `T` of the app serving `req`, for middleware (which
    /// gets the request rather than extractors); `None` if the app loads
    /// no `T` or `req` is not served by a Tern app.
    ///
    /// ```
    /// use tern::{middleware::Next, settings::{Secret, Settings}, Request, Response};
    /// use tern::{IntoResponse, Problem, StatusCode};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Api { token: Secret }
    ///
    /// async fn bearer(req: Request, next: Next) -> Response {
    ///     let sent = req.headers().get("authorization")
    ///         .and_then(|v| v.to_str().ok())
    ///         .and_then(|v| v.strip_prefix("Bearer "));
    ///     match (Settings::<Api>::of(&req), sent) {
    ///         (Some(api), Some(token)) if api.token.matches(token) => next.run(req).await,
    ///         _ => Problem::new(StatusCode::UNAUTHORIZED)
    ///             .with_detail("send `Authorization: Bearer <token>`")
    ///             .into_response(),
    ///     }
    /// }
    /// ```
    pub fn of(req: &tern_core::Request) -> Option<Self> {
        crate::context::with(req.extensions(), |c| c.shared.settings.get::<T>())
            .flatten()
            .map(Settings)
    }
}

impl<T> std::ops::Deref for Settings<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<S, T> FromRequestParts<S> for Settings<T>
where
    S: Send + Sync,
    T: Send + Sync + 'static,
{
    type Rejection = Rejection;

    /// The app must load a `T`: checked when it is built, so that a
    /// forgotten `.settings::<T>(..)` is a startup error, not a 500 on
    /// every request.
    fn check_route(route: &RouteCheck<'_>) -> Result<(), String> {
        if route.provides::<T>() {
            Ok(())
        } else {
            Err(missing::<T>())
        }
    }

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        crate::context::with(&parts.extensions, |c| c.shared.settings.get::<T>())
            .flatten()
            .map(Settings)
            // Only outside a Tern app (a hand-made request); an app
            // without `T` does not build.
            .ok_or_else(|| Rejection::internal(missing::<T>()))
    }
}

fn missing<T>() -> String {
    format!(
        "the handler takes `Settings<{0}>` but the app loads no `{0}`: add \
         `.settings::<{0}>(\"prefix\")` to the `App`",
        short_type_name::<T>()
    )
}

fn short_type_name<T>() -> &'static str {
    let name = type_name::<T>();
    name.rsplit("::").next().unwrap_or(name)
}

/// A secret setting (a token, a password): never printed, compared in
/// constant time; see the [module](self).
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// A secret with this value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the code that must use it (a client's
    /// credentials, a connection URL). Do not log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` equals the secret, in time that depends on
    /// neither value (both are hashed with SHA-256 and the digests compared
    /// in constant time, so not even the length leaks).
    pub fn matches(&self, candidate: impl AsRef<[u8]>) -> bool {
        let a = Sha256::digest(self.0.as_bytes());
        let b = Sha256::digest(candidate.as_ref());
        a.ct_eq(&b).into()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

thread_local! {
    /// Set while settings are loaded for a production app. Safe as a
    /// thread-local: [`load`] sets it around one synchronous call
    /// (`T::deserialize`) and puts back what it found when that call ends
    /// (a guard, so also when a `Deserialize` panics), and the readers
    /// ([`loading_for_production`], `Secret`'s `Deserialize`) run inside
    /// that call. No request reads it, and a load on another thread has
    /// its own.
    static PRODUCTION: Cell<bool> = const { Cell::new(false) };
}

/// While alive, [`PRODUCTION`] is as set by [`LoadingFor::enter`];
/// dropping it puts back the value it found.
struct LoadingFor {
    was: bool,
}

impl LoadingFor {
    fn enter(production: bool) -> Self {
        LoadingFor {
            was: PRODUCTION.with(|p| p.replace(production)),
        }
    }
}

impl Drop for LoadingFor {
    fn drop(&mut self) {
        PRODUCTION.with(|p| p.set(self.was));
    }
}

/// Whether the settings being loaded on this thread are a production
/// app's: for a settings type whose `Deserialize` must refuse in
/// production what development allows (a missing key, say). `false`
/// outside a load.
pub fn loading_for_production() -> bool {
    PRODUCTION.with(Cell::get)
}

/// Shortest secret production accepts, in bytes.
const MIN_SECRET: usize = 16;

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        if PRODUCTION.with(Cell::get) {
            let lower = value.trim().to_ascii_lowercase();
            if value.len() < MIN_SECRET || EXAMPLE_SECRETS.contains(&lower.as_str()) {
                return Err(serde::de::Error::custom(format!(
                    "is an example value or shorter than {MIN_SECRET} bytes; production needs \
                     a real secret (generate one with `openssl rand -base64 32`)"
                )));
            }
        }
        Ok(Secret(value))
    }
}

/// Reads the settings `T` of `prefix` from `config`'s sources (the
/// `[prefix]` table of `tern.toml`, then the variables `PREFIX_<FIELD>`);
/// see the [module](self). The error names the variable at fault.
///
/// For `main` code that needs a setting before the app is built (a
/// database URL for the state, say); register the same type with
/// [`App::settings`](crate::App::settings) for handlers to take it.
pub fn load<T: DeserializeOwned>(prefix: &str, config: &Config) -> Result<T, ConfigError> {
    let table = checked_prefix(prefix)?;
    let env_prefix = format!("{}_", table.to_ascii_uppercase());
    let fields = probe::field_shapes::<T>();
    let shape = |key: &str| {
        fields
            .iter()
            .flatten()
            .find(|(f, _)| *f == key)
            .map(|(_, s)| *s)
    };
    let mut map = Map::new();
    // Where each key was set, for errors.
    let mut origins: BTreeMap<String, String> = BTreeMap::new();
    if let Some(file) = &config.sources.file {
        if let Some(values) = file.tables.get(&table) {
            for (key, value) in values {
                map.insert(Cow::Owned(key.clone()), toml_node(value));
                origins.insert(
                    key.clone(),
                    format!("`{key}` in [{table}] of {}", file.path.display()),
                );
            }
        }
    }
    for (name, value) in config.sources.vars.range(env_prefix.clone()..) {
        let Some(key) = name.strip_prefix(&env_prefix) else {
            break;
        };
        let key = key.to_ascii_lowercase();
        let node = match shape(&key) {
            Some(Shape::Seq) => Node::Seq(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(|v| Node::Value(Cow::Owned(v.to_owned())))
                    .collect(),
            ),
            _ => Node::Value(Cow::Owned(value.trim().to_owned())),
        };
        map.insert(Cow::Owned(key.clone()), node);
        origins.insert(key, name.clone());
    }
    if let Some(fields) = &fields {
        for key in map.keys() {
            if fields.iter().any(|(f, _)| f == key) {
                continue;
            }
            let closest = fields
                .iter()
                .map(|(f, _)| (f, edit_distance(key, f)))
                .min_by_key(|(_, d)| *d)
                .filter(|(f, d)| *d <= 3 && *d * 3 < f.len());
            let hint = match closest {
                Some((f, _)) => format!("did you mean `{f}` ({env_prefix}{})?", f.to_uppercase()),
                None => format!(
                    "its fields are {}",
                    fields
                        .iter()
                        .map(|(f, _)| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            return Err(ConfigError::new(
                &origins[key.as_ref()],
                format!(
                    "is not a setting of the app's `{}` ([{table}]); {hint}",
                    short_type_name::<T>()
                ),
            ));
        }
    }
    let loading = LoadingFor::enter(config.is_production());
    let result = T::deserialize(NodeDe {
        node: &Node::Map(map),
        path_mode: false,
    });
    drop(loading);
    result.map_err(|e| {
        let key = e.path.split('[').next().unwrap_or_default();
        if key.is_empty() {
            if let Some(field) = e
                .message
                .strip_prefix("missing field `")
                .and_then(|m| m.strip_suffix('`'))
            {
                return ConfigError::new(
                    &format!("{env_prefix}{}", field.to_ascii_uppercase()),
                    format!(
                        "is not set; set the variable, or `{field}` under [{table}] in tern.toml"
                    ),
                );
            }
            return ConfigError::new(&format!("[{table}]"), e.0.message);
        }
        let setting = origins
            .get(key)
            .cloned()
            .unwrap_or_else(|| format!("{env_prefix}{}", key.to_ascii_uppercase()));
        let inner = e.path[key.len()..].to_owned();
        let message = if inner.is_empty() {
            e.0.message
        } else {
            format!("at `{inner}`: {}", e.message)
        };
        ConfigError::new(&setting, message)
    })
}

/// `config` with the app's [`setting_default`](crate::App::setting_default)s
/// added where neither a variable nor `tern.toml` sets the name; a name
/// that no registered prefix claims is an error.
pub(crate) fn with_defaults(
    config: &Config,
    defaults: &[(String, String)],
    list: &[Registration],
) -> Result<Config, ConfigError> {
    if defaults.is_empty() {
        return Ok(config.clone());
    }
    let mut vars = (*config.sources.vars).clone();
    for (name, value) in defaults {
        let claimed = list.iter().find_map(|r| {
            let table = checked_prefix(&r.prefix).ok()?;
            let key = name.strip_prefix(&format!("{}_", table.to_ascii_uppercase()))?;
            (!key.is_empty()).then(|| (table, key.to_ascii_lowercase()))
        });
        let Some((table, key)) = claimed else {
            return Err(ConfigError::new(
                name,
                "is given a default with `App::setting_default` but is not a setting of \
                 any prefix registered with `App::settings`",
            ));
        };
        let in_file = config
            .sources
            .file
            .as_ref()
            .and_then(|f| f.tables.get(&table))
            .is_some_and(|t| t.contains_key(&key));
        if !in_file {
            vars.entry(name.clone()).or_insert_with(|| value.clone());
        }
    }
    let mut config = config.clone();
    config.sources.vars = Arc::new(vars);
    Ok(config)
}

/// `bookmarks` → `bookmarks`: letters, digits and `_`, starting with a
/// letter; `tern` is Tern's own.
fn checked_prefix(prefix: &str) -> Result<String, ConfigError> {
    let table = prefix.to_ascii_lowercase();
    let valid = table.starts_with(|c: char| c.is_ascii_alphabetic())
        && table
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !table.ends_with('_');
    if !valid || table == "tern" {
        return Err(ConfigError::new(
            "App::settings",
            format!(
                "`{prefix}` cannot be a settings prefix: use letters, digits and `_`, starting \
                 with a letter (`TERN` is Tern's own)"
            ),
        ));
    }
    Ok(table)
}

fn toml_node(value: &toml::Value) -> Node<'static> {
    match value {
        toml::Value::String(s) => Node::Value(Cow::Owned(s.clone())),
        toml::Value::Array(items) => Node::Seq(items.iter().map(toml_node).collect()),
        toml::Value::Table(t) => Node::Map(
            t.iter()
                .map(|(k, v)| (Cow::Owned(k.clone()), toml_node(v)))
                .collect(),
        ),
        other => Node::Value(Cow::Owned(other.to_string())),
    }
}

/// Settings loaded and type-erased, to be found by type.
type Loaded = Arc<dyn Any + Send + Sync>;

/// One registration of [`App::settings`](crate::App::settings).
pub(crate) struct Registration {
    pub(crate) prefix: String,
    type_id: TypeId,
    type_name: &'static str,
    load: fn(&str, &Config) -> Result<Loaded, ConfigError>,
}

impl Registration {
    pub(crate) fn of<T: DeserializeOwned + Send + Sync + 'static>(prefix: &str) -> Self {
        Registration {
            prefix: prefix.to_owned(),
            type_id: TypeId::of::<T>(),
            type_name: short_type_name::<T>(),
            load: |prefix, config| Ok(Arc::new(load::<T>(prefix, config)?)),
        }
    }
}

/// The settings an app loaded, by type.
#[derive(Default)]
pub(crate) struct AppSettings(HashMap<TypeId, Loaded>);

impl AppSettings {
    /// Loads every registration; a table of `tern.toml` that none claims
    /// is refused.
    pub(crate) fn load(list: &[Registration], config: &Config) -> Result<Self, ConfigError> {
        let mut prefixes: Vec<String> = Vec::new();
        for r in list {
            let table = checked_prefix(&r.prefix)?;
            if prefixes.contains(&table) {
                return Err(ConfigError::new(
                    "App::settings",
                    format!("the prefix `{}` is registered twice", r.prefix),
                ));
            }
            prefixes.push(table);
        }
        if let Some(file) = &config.sources.file {
            if let Some(name) = file.tables.keys().find(|t| !prefixes.contains(t)) {
                let claimed = if prefixes.is_empty() {
                    "the app registers no settings".to_owned()
                } else {
                    format!(
                        "the app's settings tables are {}",
                        prefixes
                            .iter()
                            .map(|p| format!("[{p}]"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let hint = prefixes
                    .iter()
                    .map(|p| (p, edit_distance(name, p)))
                    .min_by_key(|(_, d)| *d)
                    .filter(|(p, d)| *d <= 3 && *d * 3 < p.len())
                    .map(|(p, _)| format!("did you mean [{p}]? "))
                    .unwrap_or_default();
                return Err(ConfigError::new(
                    "tern.toml",
                    format!(
                        "unknown table [{name}] in {}: {hint}{claimed} (with `App::settings`); \
                         Tern's own settings go at the top of the file, outside any table",
                        file.path.display()
                    ),
                ));
            }
        }
        // Tables first: a misspelt table would otherwise show as a
        // missing value.
        let mut loaded = AppSettings::default();
        for r in list {
            let value = (r.load)(&r.prefix, config)?;
            if loaded.0.insert(r.type_id, value).is_some() {
                return Err(ConfigError::new(
                    "App::settings",
                    format!(
                        "`{}` is registered twice; each settings type has one prefix",
                        r.type_name
                    ),
                ));
            }
        }
        Ok(loaded)
    }

    /// Each registration loaded on its own: every error, not the first
    /// (for the `check` command).
    #[cfg(feature = "cli")]
    pub(crate) fn errors(list: &[Registration], config: &Config) -> Vec<ConfigError> {
        let mut errors: Vec<ConfigError> = list
            .iter()
            .filter_map(|r| (r.load)(&r.prefix, config).err())
            .collect();
        if let Err(e) = AppSettings::load(list, config) {
            if !errors
                .iter()
                .any(|known| known.to_string() == e.to_string())
            {
                errors.push(e);
            }
        }
        errors
    }

    /// Whether settings of this type are loaded (the build-time check of
    /// `Settings<T>`).
    pub(crate) fn provides(&self, id: TypeId) -> bool {
        self.0.contains_key(&id)
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.0
            .get(&TypeId::of::<T>())
            .and_then(|v| Arc::clone(v).downcast::<T>().ok())
    }
}

#[cfg(test)]
mod tests;
