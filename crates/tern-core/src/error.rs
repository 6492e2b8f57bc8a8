//! The opaque error type of Tern's bodies and services.

use std::fmt;

/// A boxed error of any kind, as used by tower and hyper.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An error from reading a body or running a service.
///
/// Opaque on purpose: ask it what it is with the `is_*` predicates.
pub struct BodyError {
    inner: Inner,
}

enum Inner {
    /// The limit the body was read with.
    LengthLimit(u64),
    Other(BoxError),
}

impl BodyError {
    /// Wraps any error.
    pub fn new(error: impl Into<BoxError>) -> Self {
        let error = error.into();
        match error.downcast::<BodyError>() {
            Ok(error) => *error,
            Err(other) => BodyError {
                inner: Inner::Other(other),
            },
        }
    }

    pub(crate) fn length_limit(limit: u64) -> Self {
        BodyError {
            inner: Inner::LengthLimit(limit),
        }
    }

    /// The limit a body was longer than, when [`BodyError::is_length_limit`].
    pub fn length_limit_bytes(&self) -> Option<u64> {
        match self.inner {
            Inner::LengthLimit(limit) => Some(limit),
            Inner::Other(_) => None,
        }
    }

    /// True when a body was longer than the limit it was read with.
    pub fn is_length_limit(&self) -> bool {
        matches!(self.inner, Inner::LengthLimit(_))
    }

    /// True when the underlying cause is a timeout.
    pub fn is_timeout(&self) -> bool {
        let mut source: Option<&(dyn std::error::Error + 'static)> = match &self.inner {
            Inner::Other(e) => Some(e.as_ref()),
            Inner::LengthLimit(_) => None,
        };
        while let Some(err) = source {
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::TimedOut {
                    return true;
                }
            }
            if let Some(h) = err.downcast_ref::<hyper::Error>() {
                if h.is_timeout() {
                    return true;
                }
            }
            source = err.source();
        }
        false
    }
}

impl fmt::Debug for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            Inner::LengthLimit(limit) => write!(f, "BodyError(LengthLimit({limit}))"),
            Inner::Other(e) => f.debug_tuple("BodyError").field(e).finish(),
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            Inner::LengthLimit(limit) => {
                write!(f, "the body is longer than the limit of {limit} bytes")
            }
            Inner::Other(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.inner {
            Inner::LengthLimit(_) => None,
            Inner::Other(e) => Some(e.as_ref()),
        }
    }
}
