//! Typed configuration, from the environment and an optional `tern.toml`.
//!
//! [`Config`] holds every setting of Tern's; [`Config::from_env`] reads
//! them (the variables of docs/configuration.md, then `tern.toml`) and
//! [`Config::validate`] checks them before the server starts. A wrong
//! value is a [`ConfigError`] that names the setting and says what to set:
//!
//! ```
//! let err = tern::Config::from_settings([("TERN_REQUEST_TIMEOUT", "soon")]).unwrap_err();
//! assert_eq!(err.setting(), "TERN_REQUEST_TIMEOUT");
//! assert_eq!(err.message(), "`soon` is not a duration like 30s, 500ms, 2m, 12h or 14d");
//! ```
//!
//! The module, by concept:
//! - `types`: the configuration's types and their defaults;
//! - `load`: reading `NAME = value` settings into a `Config`, through
//!   serde as the app's own settings are read ([`crate::settings`]);
//! - `file`: `tern.toml`, its keys and tables;
//! - `validate`: what a usable configuration is (production's secret and
//!   hosts, limits), with `strength`, the estimate of how guessable a
//!   `SECRET_KEY` is;
//! - `error`: [`ConfigError`].

mod error;
mod file;
mod load;
mod strength;
mod types;
mod validate;

pub use error::ConfigError;
pub use types::{
    Config, Cors, CorsList, Environment, HostPattern, Http1Engine, InvalidResponses, Limits,
    LogFormat, MetricsToken, RuntimeMode, SecretKey, Timeouts, TlsFiles,
};

pub(crate) use file::edit_distance;
pub(crate) use load::parse_duration_text;
pub(crate) use types::{FileTables, Sources};
pub(crate) use validate::EXAMPLE_SECRETS;
#[cfg(feature = "cli")]
pub(crate) use validate::{check_secret, GENERATE_HINT};
