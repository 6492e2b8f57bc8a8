//! Why the server could not start or stopped.

use std::{fmt, io, net::SocketAddr};

use crate::{app::BuildError, config::ConfigError};

/// The server could not start or failed: a configuration, route, bind or
/// I/O error. The message names the setting or route at fault.
pub struct Error {
    kind: ErrorKind,
}

enum ErrorKind {
    Config(ConfigError),
    Build(BuildError),
    Bind(SocketAddr, io::Error),
    Io(io::Error),
    /// `tern::run` called inside a tokio runtime.
    #[cfg(feature = "cli")]
    InRuntime,
    /// A command of the app's command line failed.
    #[cfg(feature = "cli")]
    Command(tern_core::BoxError),
    /// A start hook (`App::on_start`) failed.
    Start(tern_core::BoxError),
    /// `check` found this many failing lines.
    #[cfg(feature = "cli")]
    Check(usize),
    /// The command line could not be parsed (clap's message).
    #[cfg(feature = "cli")]
    Usage(String),
}

impl Error {
    #[cfg(feature = "cli")]
    pub(super) fn in_runtime() -> Self {
        Error {
            kind: ErrorKind::InRuntime,
        }
    }

    #[cfg(feature = "cli")]
    pub(crate) fn command(e: tern_core::BoxError) -> Self {
        Error {
            kind: ErrorKind::Command(e),
        }
    }

    pub(crate) fn start(e: tern_core::BoxError) -> Self {
        Error {
            kind: ErrorKind::Start(e),
        }
    }

    #[cfg(feature = "cli")]
    pub(crate) fn usage(message: String) -> Self {
        Error {
            kind: ErrorKind::Usage(message),
        }
    }

    #[cfg(feature = "cli")]
    pub(crate) fn check(failed: usize) -> Self {
        Error {
            kind: ErrorKind::Check(failed),
        }
    }

    pub(crate) fn config(e: ConfigError) -> Self {
        Error {
            kind: ErrorKind::Config(e),
        }
    }

    pub(crate) fn build(e: BuildError) -> Self {
        // The app's own settings failed: a configuration error, naming
        // the setting, like Tern's own.
        let e = match e.into_config() {
            Ok(config) => return Error::config(config),
            Err(e) => e,
        };
        Error {
            kind: ErrorKind::Build(e),
        }
    }

    pub(super) fn bind(addr: SocketAddr, e: io::Error) -> Self {
        Error {
            kind: ErrorKind::Bind(addr, e),
        }
    }

    pub(crate) fn io(e: io::Error) -> Self {
        Error {
            kind: ErrorKind::Io(e),
        }
    }

    /// A setting is missing or wrong.
    pub fn is_config(&self) -> bool {
        matches!(self.kind, ErrorKind::Config(_))
    }

    /// The routes do not build (a conflict, an invalid pattern).
    pub fn is_build(&self) -> bool {
        matches!(self.kind, ErrorKind::Build(_))
    }

    /// The address could not be bound (already in use, not local, no
    /// permission): [`setting`](Error::setting) is `TERN_ADDR`.
    pub fn is_bind(&self) -> bool {
        matches!(self.kind, ErrorKind::Bind(..))
    }

    /// The name of the wrong setting, for a configuration error.
    pub fn setting(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Config(e) => Some(e.setting()),
            ErrorKind::Bind(..) => Some("TERN_ADDR"),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Config(e) => write!(f, "tern cannot start: {e}"),
            ErrorKind::Build(e) => write!(f, "tern cannot start: the routes do not build: {e}"),
            ErrorKind::Bind(addr, e) if e.kind() == io::ErrorKind::AddrInUse => write!(
                f,
                "tern cannot start: TERN_ADDR: {addr} is already in use ({e}): another \
                 server listens on it. Stop it or choose another address; to share the port \
                 on purpose (a restart without downtime), set TERN_REUSE_PORT=true in every \
                 process that shares it"
            ),
            ErrorKind::Bind(addr, e) => write!(
                f,
                "tern cannot start: TERN_ADDR: cannot listen on {addr}: {e}"
            ),
            ErrorKind::Io(e) => write!(f, "tern failed: {e}"),
            #[cfg(feature = "cli")]
            ErrorKind::InRuntime => f.write_str(
                "tern cannot start: tern::run builds its own tokio runtime and was called \
                 inside one (`#[tokio::main]`?); there, use `tern::serve(app).await` (or \
                 `tern::command::serve(app, std::env::args_os()).await` for the app's commands)",
            ),
            #[cfg(feature = "cli")]
            ErrorKind::Command(e) => write!(f, "the command failed: {e}"),
            ErrorKind::Start(e) => write!(f, "tern cannot start: {e}"),
            #[cfg(feature = "cli")]
            ErrorKind::Usage(message) => f.write_str(message.trim_end()),
            #[cfg(feature = "cli")]
            ErrorKind::Check(n) => write!(f, "the production checklist has {n} failing line(s)"),
        }
    }
}

// `fn main() -> Result<(), tern::Error>` prints the Debug form: keep it
// the readable message.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for Error {}
