//! The log output `tern::run` and `tern::serve` set up when the app has
//! none.
//!
//! Tern logs through `tracing` (the start, the access log, errors). A
//! `tracing` event goes nowhere until a subscriber is installed, so an app
//! that installs none would start silently and its access log
//! (`TERN_ACCESS_LOG`) would print nothing. `run` and `serve` therefore
//! install a plain one (lines on standard output, at level `info`, or the
//! level `RUST_LOG` names: `error`, `warn`, `info`, `debug`, `trace`,
//! `off`) unless the app installed its own first. Filters by module, JSON
//! output and the like: install your own `tracing-subscriber` before
//! calling `run`.

use tracing_subscriber::filter::LevelFilter;

/// Installs the default subscriber if none is installed yet.
pub(super) fn install_default() {
    if tracing::dispatcher::has_been_set() {
        return;
    }
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<LevelFilter>().ok())
        .unwrap_or(LevelFilter::INFO);
    // Fails only if another thread installed one meanwhile: that one wins.
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_target(false)
        // Colours for a terminal, plain text for a file or a collector.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .try_init();
}
