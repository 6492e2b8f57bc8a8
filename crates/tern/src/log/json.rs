//! Lines for collectors: one JSON object per line.
//!
//! `{"timestamp":..,"level":..,<the event's fields>,"target":..,"span":{..}}`,
//! the shape of `tracing-subscriber`'s JSON format with flattened events
//! and the current span, so that pipelines written for it read these:
//! `span` is the request's fields (`"name":"request"`) when the line is
//! written for a request, else the innermost span the event is in;
//! within a request, the app's own spans the event is in follow as
//! `spans` (outermost first).

use std::fmt;

use serde::ser::{SerializeMap, Serializer as _};
use tracing::{
    field::{Field, Visit},
    Event, Subscriber,
};
use tracing_subscriber::{
    fmt::{
        format::{JsonFields, Writer},
        time::{FormatTime, SystemTime},
        FmtContext, FormatEvent, FormattedFields,
    },
    registry::{LookupSpan, SpanRef},
};

use super::fields::{self, RequestFields};

/// The JSON format; span fields are kept as `JsonFields` writes them.
pub(crate) struct Json;

impl<S> FormatEvent<S, JsonFields> for Json
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, JsonFields>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut out = Vec::with_capacity(256);
        line(ctx, event, &mut out).map_err(|_| fmt::Error)?;
        w.write_str(std::str::from_utf8(&out).map_err(|_| fmt::Error)?)?;
        writeln!(w)
    }
}

fn line<S>(
    ctx: &FmtContext<'_, S, JsonFields>,
    event: &Event<'_>,
    out: &mut Vec<u8>,
) -> Result<(), serde_json::Error>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let mut ser = serde_json::Serializer::new(out);
    let mut map = ser.serialize_map(None)?;
    let mut time = String::new();
    if SystemTime.format_time(&mut Writer::new(&mut time)).is_ok() {
        map.serialize_entry("timestamp", &time)?;
    }
    let meta = event.metadata();
    map.serialize_entry("level", meta.level().as_str())?;
    let mut visitor = Fields {
        map: &mut map,
        error: None,
    };
    event.record(&mut visitor);
    if let Some(e) = visitor.error {
        return Err(e);
    }
    map.serialize_entry("target", meta.target())?;
    // The app's spans the event is in, outermost first (not the
    // request's own: its fields are the request's).
    let spans: Vec<SpanRef<'_, S>> = ctx
        .event_scope()
        .map(|scope| {
            scope
                .from_root()
                .filter(|s| s.metadata().target() != super::REQUEST_TARGET)
                .collect()
        })
        .unwrap_or_default();
    let in_request = fields::with_current(|r| map.serialize_entry("span", &Request(r)));
    match in_request {
        Some(written) => {
            written?;
            if !spans.is_empty() {
                let list: Vec<serde_json::Value> = spans.iter().map(span_value).collect();
                map.serialize_entry("spans", &list)?;
            }
        }
        None => {
            if let Some(innermost) = spans.last() {
                map.serialize_entry("span", &span_value(innermost))?;
            }
        }
    }
    map.end()
}

/// A span as `{"name":..,<its fields>}`.
fn span_value<S>(span: &SpanRef<'_, S>) -> serde_json::Value
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let ext = span.extensions();
    let mut fields = ext
        .get::<FormattedFields<JsonFields>>()
        .and_then(|f| serde_json::from_str::<serde_json::Value>(f).ok())
        .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new()));
    if let serde_json::Value::Object(map) = &mut fields {
        map.insert("name".to_owned(), span.name().into());
    }
    fields
}

/// The request's fields, as the `span` of its lines.
struct Request<'a>(&'a RequestFields);

impl serde::Serialize for Request<'_> {
    fn serialize<Z: serde::Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        let r = self.0;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("method", r.method.as_str())?;
        if let Some(route) = r.route() {
            map.serialize_entry("route", &*route)?;
        }
        map.serialize_entry("request_id", r.request_id())?;
        if let Some(client) = r.client {
            map.serialize_entry("client", &client.to_string())?;
        }
        if let Some(trace) = r.trace_id() {
            map.serialize_entry("trace_id", trace)?;
        }
        if let Some(status) = r.status {
            map.serialize_entry("status", &status)?;
        }
        if let Some(us) = r.latency_us {
            map.serialize_entry("latency_us", &us)?;
        }
        map.serialize_entry("name", "request")?;
        map.end()
    }
}

/// Writes an event's fields into the line's object.
struct Fields<'a, M> {
    map: &'a mut M,
    error: Option<serde_json::Error>,
}

impl<M: SerializeMap<Error = serde_json::Error>> Fields<'_, M> {
    fn entry<V: serde::Serialize + ?Sized>(&mut self, field: &Field, value: &V) {
        if self.error.is_none() {
            if let Err(e) = self.map.serialize_entry(field.name(), value) {
                self.error = Some(e);
            }
        }
    }
}

impl<M: SerializeMap<Error = serde_json::Error>> Visit for Fields<'_, M> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.entry(field, &value);
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.entry(field, &value);
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.entry(field, &value);
    }
    fn record_i128(&mut self, field: &Field, value: i128) {
        self.entry(field, &value);
    }
    fn record_u128(&mut self, field: &Field, value: u128) {
        self.entry(field, &value);
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.entry(field, &value);
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.entry(field, value);
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.entry(field, &value.to_string());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.entry(field, &format!("{value:?}"));
    }
}
