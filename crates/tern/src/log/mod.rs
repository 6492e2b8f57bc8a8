//! Tern's log output: lines on standard output, as text for people or
//! JSON for collectors, each saying which request it was written for.
//!
//! [`run`](crate::run), [`serve`](crate::serve) and
//! [`init_logging`](crate::init_logging) install it when the app has no
//! `tracing` subscriber of its own, filtered by `RUST_LOG`, in the format
//! `TERN_LOG_FORMAT` names (`text`, the default, or `json`):
//!
//! ```text
//! 2026-12-04T13:02:11.482913Z  INFO request{method=GET route=/items/{id} request_id=01JE.. client=203.0.113.9}: loaded item id=42
//! {"timestamp":"2026-12-04T13:02:11.482913Z","level":"INFO","message":"loaded item","id":42,"target":"showcase::items","span":{"method":"GET","route":"/items/{id}","request_id":"01JE..","client":"203.0.113.9","name":"request"}}
//! ```
//!
//! Every line written while a request is answered (by its handler, the
//! middleware, a task it [`spawn`](crate::RequestContext::spawn)s, the
//! access log) carries the request's method, route pattern, request ID,
//! client (by [`ClientIp`](crate::extract::ClientIp)'s rule) and trace ID
//! (from a trusted `traceparent`); the access log's line adds its status
//! and latency. The app's own spans inside the request follow.
//!
//! # What it costs
//!
//! The request's fields come from Tern's own per-request context, moved
//! into a thread-local slot while the request's future is polled and
//! formatted only when a line is written, not from a `tracing` span: a
//! span costs its fields' formatting and a registry entry on every
//! request, written or not (about 12,000 instructions per request with
//! `tracing-subscriber`'s fmt layer, more than the request itself). So the
//! default output turns the request's span (target `tern::request`) off in
//! its filter, unless OpenTelemetry export is on (feature `otel`), which
//! needs it. An app's own subscriber still gets the span: see
//! [`RequestContext::span`](crate::RequestContext::span).
//!
//! # In an app's own subscriber
//!
//! [`layer`] is the same output as a [`Layer`] to compose with others
//! (an error reporter, an exporter of the app's choice):
//!
//! ```no_run
//! use tracing_subscriber::{filter::Targets, layer::SubscriberExt, util::SubscriberInitExt};
//!
//! tracing_subscriber::registry()
//!     .with(tern::log::layer(tern::log::Format::from_env()))
//!     // The request's fields come from Tern's context: the span is
//!     // needed only by a layer that reads it.
//!     .with(Targets::new().with_default(tracing::Level::INFO).with_target("tern::request", tracing::level_filters::LevelFilter::OFF))
//!     .init();
//! ```

mod fields;
mod json;
mod text;

pub(crate) use fields::{boxed, carry, current, enter, on, recycle, RequestFields};

use tracing::Subscriber;
use tracing_subscriber::{fmt::MakeWriter, registry::LookupSpan, Layer};

/// The target of the request's span.
pub(crate) const REQUEST_TARGET: &str = "tern::request";

/// How lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Format {
    /// For people: `TIME LEVEL request{..}: message fields`.
    #[default]
    Text,
    /// One JSON object per line, in the shape of `tracing-subscriber`'s
    /// JSON format (flattened events, the current span as `span`).
    Json,
}

impl Format {
    /// `TERN_LOG_FORMAT`: `json` (any case) for [`Format::Json`], else
    /// [`Format::Text`].
    pub fn from_env() -> Format {
        match std::env::var("TERN_LOG_FORMAT") {
            Ok(v) if v.trim().eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Text,
        }
    }
}

/// Tern's output as a layer writing to standard output (text in colour
/// when standard output is a terminal).
pub fn layer<S>(format: Format) -> Box<dyn Layer<S> + Send + Sync + 'static>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stdout());
    make(format, std::io::stdout, ansi)
}

/// Tern's output as a layer writing to `writer` (a file, a pipe, a
/// buffer in a test), without colours.
pub fn layer_with_writer<S, W>(
    format: Format,
    writer: W,
) -> Box<dyn Layer<S> + Send + Sync + 'static>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    make(format, writer, false)
}

fn make<S, W>(format: Format, writer: W, ansi: bool) -> Box<dyn Layer<S> + Send + Sync + 'static>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    // From now on requests make their fields.
    fields::set_on();
    match format {
        Format::Text => Box::new(
            tracing_subscriber::fmt::layer()
                .event_format(text::Text)
                .with_ansi(ansi)
                .with_writer(writer),
        ),
        Format::Json => Box::new(
            tracing_subscriber::fmt::layer()
                .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
                .event_format(json::Json)
                .with_ansi(false)
                .with_writer(writer),
        ),
    }
}
