//! Starting an app to serve it, with or without the command line: its
//! configuration (the app's own or the process's), the build checked for
//! production, and the start hooks of [`App::on_start`](crate::App::on_start).
//! [`crate::serve`] is this and the server; the `cli` feature's `serve`
//! command is the same start.

use std::{future::Future, net::SocketAddr, pin::Pin, sync::Arc};

use tern_core::BoxError;

use crate::{app::App, config::Config, server::Error, AppService, Server};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A hook added with [`App::on_start`](crate::App::on_start).
pub(crate) type StartHook =
    Arc<dyn Fn(AppService) -> BoxFuture<Result<(), BoxError>> + Send + Sync>;

/// What [`crate::serve`] does: builds the app to serve (validated, start
/// hooks run) and serves it on the caller's runtime. No command line: the
/// process's arguments are the binary's own business.
pub(crate) async fn serve<S>(mut app: App<S>) -> Result<(), Error>
where
    S: Clone + Send + Sync + 'static,
{
    let hooks = app.take_start_hooks();
    let service = build_to_serve(app, None)?;
    run_hooks(&hooks, &service).await?;
    Server::new(service).serve().await
}

/// The app's configuration ([`App::config`](crate::App::config)), or
/// the process's ([`Config::from_env`]) when it has none.
pub(crate) fn configuration<S>(app: &App<S>) -> Result<Config, Error>
where
    S: Clone + Send + Sync + 'static,
{
    match app.configured() {
        Some(config) => Ok(config.clone()),
        None => Config::from_env().map_err(Error::config),
    }
}

/// The app built to serve: its configuration (listening on `addr`
/// instead of `TERN_ADDR` when given), validated first, so that
/// production refuses to start with a weak secret.
pub(crate) fn build_to_serve<S>(app: App<S>, addr: Option<SocketAddr>) -> Result<AppService, Error>
where
    S: Clone + Send + Sync + 'static,
{
    let mut config = configuration(&app)?;
    if let Some(addr) = addr {
        config.addr = addr;
    }
    config.validate().map_err(Error::config)?;
    #[cfg(feature = "cli")]
    crate::command::check::at_start(&config, app.metrics());
    app.build_with(config).map_err(Error::build)
}

/// Runs the start hooks in the order added; the first error stops the
/// start.
pub(crate) async fn run_hooks(hooks: &[StartHook], service: &AppService) -> Result<(), Error> {
    for hook in hooks {
        hook(service.clone()).await.map_err(Error::start)?;
    }
    Ok(())
}
