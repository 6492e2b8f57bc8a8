//! Topic and event names: what the hub accepts.

use std::fmt;

/// The longest topic name, in bytes.
pub const MAX_TOPIC_BYTES: usize = 200;

/// A bad topic or event name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError(String);

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NameError {}

/// Checks a topic or event name: 1 to 200 bytes, no control characters.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), NameError> {
    if name.is_empty() || name.len() > MAX_TOPIC_BYTES || name.chars().any(char::is_control) {
        return Err(NameError(format!(
            "a {what} name has 1 to {MAX_TOPIC_BYTES} bytes and no control characters"
        )));
    }
    Ok(())
}
