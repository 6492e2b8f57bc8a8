//! [`BuildError`]: why an app could not be built.

use std::fmt;

/// An app that cannot be built: a conflicting or invalid route, a method
/// registered twice. The message names the routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    message: String,
    /// The app's own settings ([`App::settings`](crate::App::settings)) could not be loaded.
    config: Option<crate::config::ConfigError>,
}

impl BuildError {
    pub(crate) fn new(message: String) -> Self {
        BuildError {
            message,
            config: None,
        }
    }

    pub(super) fn config(e: crate::config::ConfigError) -> Self {
        BuildError {
            message: e.to_string(),
            config: Some(e),
        }
    }

    /// The setting at fault when the app's own settings
    /// ([`App::settings`](crate::App::settings)) could not be loaded (`BOOKMARKS_API_TOKEN`).
    pub fn setting(&self) -> Option<&str> {
        self.config.as_ref().map(|e| e.setting())
    }

    pub(crate) fn into_config(self) -> Result<crate::config::ConfigError, Self> {
        match self.config {
            Some(e) => Ok(e),
            None => Err(self),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}
