//! The one error of a configuration that cannot be used: which setting,
//! and why.

use std::fmt;

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
