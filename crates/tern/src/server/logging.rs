//! The log output `tern::run` and `tern::serve` set up when the app has
//! none.
//!
//! Tern logs through `tracing` (the start, a span per request, the access
//! log, errors). A `tracing` event goes nowhere until a subscriber is
//! installed, so an app that installs none would start silently and its
//! access log (`TERN_ACCESS_LOG`) would print nothing. `run` and `serve`
//! therefore install one unless the app installed its own first:
//!
//! - lines on standard output, human-readable or one JSON object per line
//!   (`TERN_LOG_FORMAT=json`), each with the fields of the request it
//!   belongs to (method, route, request ID, ...: `crate::log`);
//! - filtered by `RUST_LOG` read as `tracing-subscriber`'s `Targets`: a
//!   level (`info`, the default), target=level pairs, or both
//!   (`info,tern::access=off,sqlx=warn`). A value it cannot read (a level
//!   it does not know) is said on standard error, and `info` is used.
//!
//! - with the feature `otel` and `OTEL_EXPORTER_OTLP_ENDPOINT` set, the
//!   same spans (those `RUST_LOG` lets through) exported over OTLP as
//!   well (`crate::otel`).
//!
//! All are read from the environment when the output starts (before
//! `tern.toml`). Span-field filters and other formats: install your own
//! `tracing-subscriber` before calling `run`.

use tracing_subscriber::{filter::Targets, layer::SubscriberExt, util::SubscriberInitExt};

/// The filter `RUST_LOG` names, or why it names none.
pub(crate) fn filter(rust_log: Option<&str>) -> Result<Targets, String> {
    let Some(v) = rust_log.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Targets::new().with_default(tracing::Level::INFO));
    };
    v.parse::<Targets>().map_err(|e| {
        format!(
            "RUST_LOG `{v}` is not a filter Tern's log output reads ({e}); it takes a level \
             (`info`), target=level pairs, or both (`info,tern::access=off,sqlx=warn`); \
             writing `info`"
        )
    })
}

/// Installs the default subscriber if none is installed yet.
pub(super) fn install_default() {
    if tracing::dispatcher::has_been_set() {
        return;
    }
    let mut targets = filter(std::env::var("RUST_LOG").ok().as_deref()).unwrap_or_else(|why| {
        eprintln!("{why}");
        Targets::new().with_default(tracing::Level::INFO)
    });
    let otel = otel::<tracing_subscriber::Registry>();
    if otel.is_none() {
        // The lines take the request's fields from Tern's context: the
        // request's span is made only for OpenTelemetry (`crate::log`).
        targets = targets.with_target(
            crate::log::REQUEST_TARGET,
            tracing::level_filters::LevelFilter::OFF,
        );
    }
    // Fails only if another thread installed one meanwhile: that one wins.
    let _ = tracing_subscriber::registry()
        .with(otel)
        .with(crate::log::layer(crate::log::Format::from_env()))
        .with(targets)
        .try_init();
}

/// The OpenTelemetry export, when the feature is on and
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
#[cfg(feature = "otel")]
fn otel<S>() -> Option<impl tracing_subscriber::Layer<S>>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    crate::otel::layer_from_env()
}

// Generic like the `otel` one, so that the call reads the same.
#[cfg(not(feature = "otel"))]
#[allow(clippy::extra_unused_type_parameters)]
fn otel<S>() -> Option<tracing_subscriber::layer::Identity> {
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::filter;

    #[test]
    fn rust_log_as_targets() {
        assert!(filter(None).is_ok());
        assert!(filter(Some("debug")).is_ok());
        assert!(filter(Some("info,tern::access=off,sqlx=warn")).is_ok());
        let err = filter(Some("info,sqlx=loud")).unwrap_err();
        assert!(err.contains("RUST_LOG `info,sqlx=loud`"), "{err}");
    }
}
