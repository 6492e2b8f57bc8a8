//! The app's command line: an app binary is its own management tool
//! (the `cli` feature, on by default).
//!
//! [`run`](crate::run) reads the process's arguments (with [`clap`])
//! before it serves; from `#[tokio::main]`, [`serve`] with
//! `std::env::args_os()` does the same on the caller's runtime
//! ([`crate::serve`] reads no arguments: it only serves):
//!
//! | command | what it does |
//! |---|---|
//! | `serve` (the default) | serves the app; `--addr` overrides `TERN_ADDR` |
//! | `routes` | a table of every route: method, pattern, name, handler (its full path, `my_app::articles::list`), middleware |
//! | `check` | the production checklist; exits non-zero when a line fails |
//! | `help`, `--help` | what each command does and takes |
//!
//! Batteries and apps add their own with [`App::command`](crate::App::command)
//! (`tern-data` adds `migrate`, `tern-auth` `createsuperuser`), work to do
//! once before serving with [`App::on_start`](crate::App::on_start), and
//! lines to the checklist with [`App::check`](crate::App::check).
//!
//! ```no_run
//! use tern::command::{clap, Command};
//!
//! let hello = Command::new(
//!     clap::Command::new("hello")
//!         .about("Says hello")
//!         .arg(clap::Arg::new("name").required(true)),
//!     |call| async move {
//!         let name: &String = call.args().get_one("name").expect("required");
//!         println!("hello, {name} (from {})", call.config().addr);
//!         Ok(())
//!     },
//! );
//! let app = tern::App::new()
//!     .route("/", tern::routing::get(|| async { "hi" }))
//!     .command(hello);
//! // `my-app` serves, `my-app routes` lists `/`, `my-app hello ada` says hello.
//! tern::run(app).unwrap();
//! ```
//!
//! A command gets the app built with the process's configuration (not
//! validated for production, so `check` can say what is wrong) and runs
//! on a tokio runtime of its own. The app's settings
//! ([`App::settings`](crate::App::settings)) are loaded already:
//! [`Invocation::settings`].

use std::{ffi::OsString, fmt, future::Future, sync::Arc};

pub use clap;

use crate::{
    app::App,
    config::Config,
    server::Error,
    start::{build_to_serve, configuration, run_hooks, BoxFuture},
    AppService, Server,
};

pub(crate) mod check;
mod routes;

pub use check::{Finding, Verdict};

/// The error a command, a start hook or a check returns.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

pub(crate) type CheckHook = Arc<dyn Fn(AppService) -> BoxFuture<Vec<Finding>> + Send + Sync>;
type Runner = Arc<dyn Fn(Invocation) -> BoxFuture<Result<(), BoxError>> + Send + Sync>;

/// A command of the app's command line; added with
/// [`App::command`](crate::App::command).
#[derive(Clone)]
pub struct Command {
    cli: clap::Command,
    run: Runner,
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Command")
            .field("name", &self.cli.get_name())
            .finish_non_exhaustive()
    }
}

impl Command {
    /// A command: its name, help and arguments as a [`clap::Command`],
    /// and what it does. `--help` is clap's, from `cli`.
    pub fn new<F, Fut>(cli: clap::Command, run: F) -> Self
    where
        F: Fn(Invocation) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), BoxError>> + Send + 'static,
    {
        Command {
            cli,
            run: Arc::new(move |call| Box::pin(run(call))),
        }
    }

    /// The command's name.
    pub fn name(&self) -> &str {
        self.cli.get_name()
    }
}

/// One run of a [`Command`]: the app and the arguments.
#[derive(Debug)]
pub struct Invocation {
    app: AppService,
    args: clap::ArgMatches,
}

impl Invocation {
    /// The app, built with the process's configuration.
    pub fn app(&self) -> &AppService {
        &self.app
    }

    /// The configuration (`TERN_*`, `tern.toml`).
    pub fn config(&self) -> &Config {
        self.app.config()
    }

    /// The command's arguments, as its [`clap::Command`] parsed them.
    pub fn args(&self) -> &clap::ArgMatches {
        &self.args
    }

    /// The settings `T` the app registered with
    /// [`App::settings`](crate::App::settings), or an error saying the
    /// app does not register them.
    pub fn settings<T: Send + Sync + 'static>(&self) -> Result<Arc<T>, BoxError> {
        self.app.settings::<T>().ok_or_else(|| {
            format!(
                "this app does not load the settings `{}`: add `.settings::<{0}>(\"prefix\")` to the app",
                std::any::type_name::<T>()
            )
            .into()
        })
    }
}

/// What an app carries for its command line (its start hooks are not
/// the command line's: `tern::serve` runs them too).
#[derive(Default)]
pub(crate) struct Extensions {
    pub(crate) commands: Vec<Command>,
    pub(crate) checks: Vec<CheckHook>,
}

/// What the arguments asked for.
enum Parsed {
    Serve { addr: Option<std::net::SocketAddr> },
    Routes,
    Check,
    SecretKey,
    Other(Runner, clap::ArgMatches),
}

fn cli(name: &OsString, commands: &[Command]) -> clap::Command {
    let name = std::path::Path::new(name)
        .file_name()
        .map_or_else(|| "app".to_owned(), |n| n.to_string_lossy().into_owned());
    let mut cli = clap::Command::new(name)
        .about("A Tern app. Without a command, it serves (`serve`).")
        .subcommand(
            clap::Command::new("serve")
                .about("Serves the app until SIGINT or SIGTERM (the default command)")
                .arg(
                    clap::Arg::new("addr")
                        .long("addr")
                        .value_name("ADDR")
                        .value_parser(clap::value_parser!(std::net::SocketAddr))
                        .help("The address to listen on, instead of TERN_ADDR (127.0.0.1:3000)"),
                ),
        )
        .subcommand(
            clap::Command::new("routes")
                .about("Lists every route: method, pattern, name, handler and middleware"),
        )
        .subcommand(clap::Command::new("secret-key").about(
            "Prints a new SECRET_KEY: 32 random bytes from the operating system, in hex \
             (reads no configuration, so it works before one exists)",
        ))
        .subcommand(clap::Command::new("check").about(
            "Checks the configuration for production: secrets, hosts, proxy, headers, TLS and \
             what the app's batteries add (the database). Exits with 1 if a line fails; each \
             failing line says what to set",
        ));
    for command in commands {
        cli = cli.subcommand(command.cli.clone());
    }
    cli
}

/// The arguments parsed, or `None` once `--help` is printed.
fn parse(commands: &[Command], args: Vec<OsString>) -> Result<Option<Parsed>, Error> {
    let name = args.first().cloned().unwrap_or_default();
    let matches = match cli(&name, commands).try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(e) if !e.use_stderr() => {
            // `--help`: printed on standard output, not a failure.
            let _ = e.print();
            return Ok(None);
        }
        Err(e) => {
            let message = e.render().to_string();
            let message = message.strip_prefix("error: ").unwrap_or(&message);
            return Err(Error::usage(message.to_owned()));
        }
    };
    Ok(Some(match matches.subcommand() {
        None => Parsed::Serve { addr: None },
        Some(("serve", m)) => Parsed::Serve {
            addr: m.get_one::<std::net::SocketAddr>("addr").copied(),
        },
        Some(("routes", _)) => Parsed::Routes,
        Some(("check", _)) => Parsed::Check,
        Some(("secret-key", _)) => Parsed::SecretKey,
        Some((name, m)) => {
            let command = commands
                .iter()
                .find(|c| c.name() == name)
                .map(|c| Arc::clone(&c.run));
            match command {
                Some(run) => Parsed::Other(run, m.clone()),
                // clap only parses the subcommands it was given.
                None => Parsed::Serve { addr: None },
            }
        }
    }))
}

/// What [`run`](crate::run) does with the process's arguments, with
/// `args` instead (the first is the program's name): serves on the
/// runtimes the configuration asks for, or runs a command on a runtime of
/// its own. For tests of an app's commands.
///
/// ```
/// let app = tern::App::new().route("/", tern::routing::get(|| async { "hi" }));
/// tern::command::run(app, ["my-app", "routes"]).unwrap();
/// ```
pub fn run<S, I, T>(mut app: App<S>, args: I) -> Result<(), Error>
where
    S: Clone + Send + Sync + 'static,
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let extensions = app.take_commands();
    let hooks = app.take_start_hooks();
    let args = args.into_iter().map(Into::into).collect();
    let Some(parsed) = parse(&extensions.commands, args)? else {
        return Ok(());
    };
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(Error::io)
    };
    match parsed {
        Parsed::Serve { addr } => {
            let service = build_to_serve(app, addr)?;
            // On the runtime that then serves: what the hooks open (a
            // database pool's connections) belongs to a runtime, and one
            // of its own would be gone by the first request.
            let started = service.clone();
            Server::new(service).run_after(async move { run_hooks(&hooks, &started).await })
        }
        other => runtime()?.block_on(not_serve(app, other, &extensions.checks)),
    }
}

/// What [`run`](crate::run) does with the process's arguments, with
/// `args` instead, on the caller's runtime: the app's command line for
/// `#[tokio::main] async fn main`. Serves (the default command) until
/// `SIGINT`/`SIGTERM`, or runs the command `args` name. The
/// configuration's runtime settings (`TERN_RUNTIME`, `TERN_WORKERS`) are
/// the caller's runtime's business and are not applied.
///
/// ```no_run
/// #[tokio::main]
/// async fn main() -> Result<(), tern::Error> {
///     let app = tern::App::new().route("/", tern::routing::get(|| async { "hi" }));
///     // `my-app` serves, `my-app routes` lists the routes, ...
///     tern::command::serve(app, std::env::args_os()).await
/// }
/// ```
///
/// [`tern::serve`](crate::serve) is the same without the command line:
/// it serves whatever the process's arguments are.
pub async fn serve<S, I, T>(mut app: App<S>, args: I) -> Result<(), Error>
where
    S: Clone + Send + Sync + 'static,
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let extensions = app.take_commands();
    let hooks = app.take_start_hooks();
    let args = args.into_iter().map(Into::into).collect();
    let Some(parsed) = parse(&extensions.commands, args)? else {
        return Ok(());
    };
    match parsed {
        Parsed::Serve { addr } => {
            let service = build_to_serve(app, addr)?;
            run_hooks(&hooks, &service).await?;
            Server::new(service).serve().await
        }
        other => not_serve(app, other, &extensions.checks).await,
    }
}

/// `check`, `routes` and the app's own commands, on the caller's runtime.
async fn not_serve<S>(app: App<S>, parsed: Parsed, checks: &[CheckHook]) -> Result<(), Error>
where
    S: Clone + Send + Sync + 'static,
{
    match parsed {
        Parsed::Serve { .. } => Err(Error::usage("`serve` is run by the caller".to_owned())),
        Parsed::Check => check::run(app, checks).await,
        Parsed::SecretKey => {
            println!("{}", secret_key()?);
            Ok(())
        }
        Parsed::Routes => {
            let service = build_for_command(app)?;
            print!("{}", routes::table(&service));
            Ok(())
        }
        Parsed::Other(command, args) => {
            let app = build_for_command(app)?;
            command(Invocation { app, args })
                .await
                .map_err(Error::command)
        }
    }
}

/// A new `SECRET_KEY`: 32 bytes of the operating system's randomness, as
/// 64 hex digits; an error when the system has none to give.
fn secret_key() -> Result<String, Error> {
    use std::fmt::Write as _;
    let mut key = [0u8; 32];
    getrandom::getrandom(&mut key).map_err(|e| {
        Error::io(std::io::Error::other(format!(
            "no randomness from the operating system for the key: {e}"
        )))
    })?;
    Ok(key.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    }))
}

fn build_for_command<S>(app: App<S>) -> Result<AppService, Error>
where
    S: Clone + Send + Sync + 'static,
{
    let config = configuration(&app)?;
    app.build_with(config).map_err(Error::build)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn secret_keys_are_64_hex_digits_and_new_each_time() {
        let (a, b) = (super::secret_key().unwrap(), super::secret_key().unwrap());
        for key in [&a, &b] {
            assert_eq!(key.len(), 64, "{key}");
            assert!(key.bytes().all(|c| c.is_ascii_hexdigit()), "{key}");
            // Accepted where it goes: a production SECRET_KEY.
            assert!(crate::Config::from_settings([
                ("TERN_ENV", "production"),
                ("SECRET_KEY", key.as_str()),
                ("ALLOWED_HOSTS", "example.com"),
            ])
            .unwrap()
            .validate()
            .is_ok());
        }
        assert_ne!(a, b);
    }
}
