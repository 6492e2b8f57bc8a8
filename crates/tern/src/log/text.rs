//! Lines for people: `TIME LEVEL request{method=.. route=.. ...}: spans: fields`.

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::{
    fmt::{
        format::Writer,
        time::{FormatTime, SystemTime},
        FmtContext, FormatEvent, FormatFields, FormattedFields,
    },
    registry::LookupSpan,
};

use super::fields::{self, RequestFields};

/// The text format: the time, the level, the request's fields (from
/// Tern's per-request context), the spans the event is in (other than
/// the request's own, whose fields are those), the event's fields.
pub(crate) struct Text;

impl<S, N> FormatEvent<S, N> for Text
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let ansi = w.has_ansi_escapes();
        SystemTime.format_time(&mut w)?;
        let level = *event.metadata().level();
        if ansi {
            write!(w, " {}{level:>5}\x1b[0m ", colour(level))?;
        } else {
            write!(w, " {level:>5} ")?;
        }
        fields::with_current(|r| request(&mut w, r, ansi)).unwrap_or(Ok(()))?;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                if span.metadata().target() == super::REQUEST_TARGET {
                    continue;
                }
                bold(&mut w, span.name(), ansi)?;
                let ext = span.extensions();
                if let Some(f) = ext.get::<FormattedFields<N>>() {
                    if !f.is_empty() {
                        write!(w, "{{{f}}}")?;
                    }
                }
                w.write_str(": ")?;
            }
        }
        ctx.format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

/// `request{method=GET route=/users/{id} request_id=.. client=..}: `
fn request(w: &mut Writer<'_>, r: &RequestFields, ansi: bool) -> fmt::Result {
    bold(w, "request", ansi)?;
    write!(w, "{{method={}", r.method)?;
    if let Some(route) = r.route() {
        write!(w, " route={}", &*route)?;
    }
    write!(w, " request_id={}", r.request_id())?;
    if let Some(client) = r.client {
        write!(w, " client={client}")?;
    }
    if let Some(trace) = r.trace_id() {
        write!(w, " trace_id={trace}")?;
    }
    if let Some(status) = r.status {
        write!(w, " status={status}")?;
    }
    if let Some(us) = r.latency_us {
        write!(w, " latency_us={us}")?;
    }
    w.write_str("}: ")
}

fn bold(w: &mut Writer<'_>, s: &str, ansi: bool) -> fmt::Result {
    if ansi {
        write!(w, "\x1b[1m{s}\x1b[0m")
    } else {
        w.write_str(s)
    }
}

/// The colours `tracing-subscriber`'s own text format gives the levels.
fn colour(level: Level) -> &'static str {
    match level {
        Level::ERROR => "\x1b[31m",
        Level::WARN => "\x1b[33m",
        Level::INFO => "\x1b[32m",
        Level::DEBUG => "\x1b[34m",
        Level::TRACE => "\x1b[35m",
    }
}
