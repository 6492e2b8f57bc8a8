//! OpenTelemetry (feature `otel`): the request spans and the app's
//! metrics, exported over OTLP (HTTP/protobuf) when
//! `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
//!
//! - Traces: the default log output (`server/logging.rs`) adds a
//!   `tracing-opentelemetry` layer, so every `tracing` span that passes
//!   `RUST_LOG` (the request span `tern::request` and the spans inside it)
//!   becomes an OpenTelemetry span, and the events inside them its span
//!   events. A trusted incoming `traceparent` is the request span's remote
//!   parent (`request`); the request span is exported as a server span
//!   named `{method} {route}` with the HTTP semantic-convention attributes
//!   (`Conventions`).
//! - Metrics: while a server runs (`serving`), the app's
//!   [`Metrics`](crate::metrics::Metrics) are read by observable
//!   instruments when the SDK's periodic reader collects (every
//!   `OTEL_METRIC_EXPORT_INTERVAL`, default 60 s): nothing is added to the
//!   request path. The SDK takes no pre-aggregated histograms, so a
//!   histogram goes out as the counters Prometheus shows for it (`_bucket`
//!   with `le`, `_sum`, `_count`).
//! - Export runs on the SDK's own threads (the batch span processor, the
//!   periodic reader), each HTTP request on a one-thread Tokio runtime of
//!   this module: no runtime is needed when the output is installed (before
//!   `run` builds its own), and a per-core server's runtimes are not used.
//!
//! The exporters are process-wide, as the subscriber they feed is.

use std::{
    borrow::Cow,
    collections::{HashMap, HashSet},
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex, OnceLock, PoisonError},
    time::{Duration, Instant},
};

use opentelemetry::{
    metrics::{Meter, MeterProvider as _},
    propagation::{Extractor, TextMapPropagator as _},
    trace::{SpanKind, Status, TraceContextExt as _, TracerProvider as _},
    Context, KeyValue, Value,
};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::{
    error::OTelSdkResult,
    metrics::{PeriodicReader, SdkMeterProvider},
    propagation::TraceContextPropagator,
    trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider, Span, SpanData, SpanProcessor},
    Resource,
};
use tracing_opentelemetry::{OpenTelemetryLayer, OpenTelemetrySpanExt as _};
use tracing_subscriber::registry::LookupSpan;

use crate::{context::Ctx, metrics::Metrics, AppService};

/// The process's exporters, once the output is installed with an
/// endpoint.
static EXPORT: OnceLock<Exporters> = OnceLock::new();

struct Exporters {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    bridge: Arc<Bridge>,
}

/// Where the exporters send, and what they call the service.
struct Settings {
    /// The collector's base URL; `None`: the exporter reads
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` (and the per-signal variables) itself.
    endpoint: Option<String>,
    service_name: String,
    /// `None`: the SDK reads `OTEL_METRIC_EXPORT_INTERVAL`.
    metric_interval: Option<Duration>,
}

/// The layer that exports spans, if `OTEL_EXPORTER_OTLP_ENDPOINT` is set;
/// what went wrong is said on standard error (the output starts without
/// export then, as with an unreadable `RUST_LOG`).
pub(crate) fn layer_from_env<S>() -> Option<OpenTelemetryLayer<S, SdkTracer>>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())?;
    let service_name = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(binary_name);
    let settings = Settings {
        endpoint: None,
        service_name,
        metric_interval: None,
    };
    match exporters(settings) {
        Ok(export) => Some(span_layer(export)),
        Err(why) => {
            eprintln!("OpenTelemetry export is off: {why}");
            None
        }
    }
}

/// For tests/otel.rs only: the span layer exporting to `endpoint` (a base
/// URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes), metrics every
/// `metric_interval`, the service named `tern-test`. The exporters are
/// process-wide: the first call's endpoint stays.
///
/// # Panics
/// If the exporters cannot be built (an endpoint that is not a URL).
#[doc(hidden)]
pub fn __test_layer<S>(
    endpoint: &str,
    metric_interval: Duration,
) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    let settings = Settings {
        endpoint: Some(endpoint.trim_end_matches('/').to_owned()),
        service_name: "tern-test".to_owned(),
        metric_interval: Some(metric_interval),
    };
    span_layer(exporters(settings).expect("the OTLP exporters for the test"))
}

fn span_layer<S>(export: &Exporters) -> OpenTelemetryLayer<S, SdkTracer>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    tracing_opentelemetry::layer()
        .with_tracer(export.tracer.tracer("tern"))
        // Thread IDs and names say nothing about a request on a
        // work-stealing runtime.
        .with_threads(false)
}

/// The binary's file name, the service's name by default.
fn binary_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "tern".to_owned())
}

/// The process's exporters, built by the first call.
fn exporters(settings: Settings) -> Result<&'static Exporters, String> {
    if let Some(export) = EXPORT.get() {
        return Ok(export);
    }
    let client = Client::new().map_err(|e| format!("no thread for the exporter: {e}"))?;
    let resource = Resource::builder()
        .with_service_name(settings.service_name)
        .build();
    let endpoint = |path: &str| settings.endpoint.as_ref().map(|e| format!("{e}{path}"));

    let mut spans = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_http_client(client.clone());
    if let Some(url) = endpoint("/v1/traces") {
        spans = spans.with_endpoint(url);
    }
    let spans = spans.build().map_err(|e| e.to_string())?;
    let tracer = SdkTracerProvider::builder()
        .with_span_processor(Conventions(BatchSpanProcessor::builder(spans).build()))
        .with_resource(resource.clone())
        .build();

    let mut metrics = opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_http_client(client.clone());
    if let Some(url) = endpoint("/v1/metrics") {
        metrics = metrics.with_endpoint(url);
    }
    let metrics = metrics.build().map_err(|e| e.to_string())?;
    let mut reader = PeriodicReader::builder(metrics);
    if let Some(interval) = settings.metric_interval {
        reader = reader.with_interval(interval);
    }
    let meter = SdkMeterProvider::builder()
        .with_reader(reader.build())
        .with_resource(resource)
        .build();
    let bridge = Arc::new(Bridge {
        meter: meter.meter("tern"),
        state: Mutex::default(),
    });
    let every = Arc::downgrade(&bridge);
    client.runtime.spawn(async move {
        let mut tick = tokio::time::interval(DISCOVER_EVERY);
        loop {
            tick.tick().await;
            match every.upgrade() {
                Some(bridge) => bridge.discover(),
                None => break,
            }
        }
    });
    let built = Exporters {
        tracer,
        meter,
        bridge,
    };
    // Another thread may have built its own meanwhile: that one is used,
    // and this one's providers shut down as they drop (its client's
    // runtime thread stays, idle).
    let _ = EXPORT.set(built);
    EXPORT.get().ok_or_else(|| "not built".to_owned())
}

/// The exporters' HTTP client: opentelemetry-http's hyper client, each
/// request run on a one-thread Tokio runtime of its own, since the SDK
/// calls it from its own threads, outside any runtime. Plain HTTP only
/// (hyper's `HttpConnector`): a collector on the host or the pod.
#[derive(Debug, Clone)]
struct Client {
    hyper: opentelemetry_http::hyper::HyperClient,
    runtime: tokio::runtime::Handle,
}

/// What the collector has to answer a request in, as the OTLP exporter's
/// own default.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

impl Client {
    fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        // Lives as long as the process, as the exporters do.
        std::thread::Builder::new()
            .name("tern-otel".to_owned())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))?;
        Ok(Client {
            hyper: opentelemetry_http::hyper::HyperClient::with_default_connector(
                EXPORT_TIMEOUT,
                None,
            ),
            runtime: handle,
        })
    }
}

impl HttpClient for Client {
    fn send_bytes<'a, 'f>(
        &'a self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'f>>
    where
        'a: 'f,
        Self: 'f,
    {
        let hyper = self.hyper.clone();
        let task = self
            .runtime
            .spawn(async move { hyper.send_bytes(request).await });
        Box::pin(async move { task.await? })
    }
}

/// The request span's OpenTelemetry parent and attributes: called by
/// `request_span` as the span is made, before it is entered.
pub(crate) fn request(span: &tracing::Span, req: &tern_core::Request, ctx: &Ctx) {
    if span.is_disabled() {
        return;
    }
    // Believed only from a trusted proxy: `ctx.traceparent` is set by the
    // same rule as the request ID.
    if let Some(traceparent) = &ctx.traceparent {
        let parent = TraceContextPropagator::new().extract(&Incoming(traceparent));
        // Fails only without an OpenTelemetry layer, when there is nothing
        // to export.
        let _ = span.set_parent(parent);
    }
    // A copy of the path per request: only when Tern's own exporter is
    // on (the method, route and status are the span's fields already).
    if EXPORT.get().is_some() {
        span.set_attribute("url.path", req.uri().path().to_owned());
    }
}

/// A trusted `traceparent`, as the W3C propagator reads a carrier.
struct Incoming<'a>(&'a http::HeaderValue);

impl Extractor for Incoming<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        (key == "traceparent")
            .then(|| self.0.to_str().ok())
            .flatten()
    }

    fn keys(&self) -> Vec<&str> {
        vec!["traceparent"]
    }
}

/// The `traceparent` of `span`'s OpenTelemetry span (its trace, itself as
/// the parent), or `None` if no OpenTelemetry layer records it.
pub(crate) fn traceparent(span: &tracing::Span) -> Option<http::HeaderValue> {
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    if !sc.is_valid() {
        return None;
    }
    let value = format!(
        "00-{}-{}-{:02x}",
        sc.trace_id(),
        sc.span_id(),
        sc.trace_flags().to_u8()
    );
    http::HeaderValue::try_from(value).ok()
}

/// The request span (`tern::request`) as the HTTP semantic conventions
/// name a server span: kind `server`, named `{method} {route}`, with
/// `http.request.method`, `http.route` and `http.response.status_code`
/// beside Tern's own fields, and an error status for a 5xx answer. Other
/// spans pass unchanged.
#[derive(Debug)]
struct Conventions<P>(P);

impl<P: SpanProcessor> SpanProcessor for Conventions<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.0.on_start(span, cx);
    }

    fn on_end(&self, mut span: SpanData) {
        if span.name == "request" {
            server_span(&mut span);
        }
        self.0.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.0.set_resource(resource);
    }
}

fn server_span(span: &mut SpanData) {
    let attr = |key: &str| {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.clone())
    };
    let target = attr("target").map(|t| t.as_str().into_owned());
    let (Some("tern::request"), Some(method)) = (target.as_deref(), attr("method")) else {
        return;
    };
    let route = attr("route").map(|r| r.as_str().into_owned());
    // `tracing-opentelemetry` records a `u64` field as its text.
    let status = match attr("status") {
        Some(Value::I64(s)) => Some(s),
        Some(other) => other.as_str().parse().ok(),
        None => None,
    };
    span.attributes
        .push(KeyValue::new("http.request.method", method.clone()));
    span.span_kind = SpanKind::Server;
    // `(unmatched)`, `(redirect)`, ...: no route, by the convention.
    match route.filter(|r| !r.starts_with('(')) {
        Some(route) => {
            span.name = Cow::Owned(format!("{} {route}", method.as_str()));
            span.attributes.push(KeyValue::new("http.route", route));
        }
        None => span.name = Cow::Owned(method.as_str().into_owned()),
    }
    if let Some(status) = status {
        span.attributes
            .push(KeyValue::new("http.response.status_code", status));
        if status >= 500 {
            span.status = Status::error(format!("status {status}"));
        }
    }
}

/// A server's hold on the exporters, from its start to its stop: its
/// app's metrics are exported while it lasts, and dropping it exports
/// every span and the metrics once more.
#[derive(Debug)]
pub(crate) struct Serving {
    key: usize,
}

/// Called when a server starts serving `app`; the guard flushes the
/// exporters when the server stops. `None` when nothing is exported.
pub(crate) fn serving(app: &AppService) -> Option<Serving> {
    let export = EXPORT.get()?;
    let metrics = app.metrics();
    // Clones of one app (the workers of a per-core server) share one
    // `Metrics` in place: its address names the app while a server holds
    // it.
    let key = std::ptr::from_ref(metrics) as usize;
    export.bridge.add(key, metrics);
    Some(Serving { key })
}

impl Drop for Serving {
    fn drop(&mut self) {
        let Some(export) = EXPORT.get() else {
            return;
        };
        export.bridge.discover();
        // Blocks this thread until the exports are sent (or time out):
        // the server has stopped, and what it did should reach the
        // collector before the process ends.
        if let Err(e) = export.tracer.force_flush() {
            tracing::warn!(error = %e, "OpenTelemetry: the last spans were not exported");
        }
        if let Err(e) = export.meter.force_flush() {
            tracing::warn!(error = %e, "OpenTelemetry: the last metrics were not exported");
        }
        export.bridge.remove(self.key);
    }
}

/// Tern's metrics as observable instruments.
struct Bridge {
    meter: Meter,
    state: Mutex<BridgeState>,
}

#[derive(Default)]
struct BridgeState {
    /// The apps served now: (key, registry, servers holding it).
    apps: Vec<(usize, Metrics, usize)>,
    /// Instruments made so far, by name (they live as long as the meter).
    made: HashSet<String>,
    /// The last reading of every app's registry, shared by the callbacks
    /// of one collection.
    reading: Option<(Instant, Arc<Reading>)>,
}

/// Series by instrument name.
type Reading = HashMap<String, Vec<(Vec<KeyValue>, f64)>>;

/// How often the app's registry is read for families that have no
/// instrument yet.
const DISCOVER_EVERY: Duration = Duration::from_secs(10);

/// A collection calls every instrument's callback within milliseconds;
/// one reading serves them all.
const READING_LASTS: Duration = Duration::from_millis(100);

impl Bridge {
    fn lock(&self) -> std::sync::MutexGuard<'_, BridgeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(self: &Arc<Self>, key: usize, metrics: &Metrics) {
        {
            let mut state = self.lock();
            match state.apps.iter_mut().find(|(k, _, _)| *k == key) {
                Some((_, _, servers)) => *servers += 1,
                None => state.apps.push((key, metrics.clone(), 1)),
            }
            state.reading = None;
        }
        self.discover();
    }

    /// Makes an instrument for each family that has none yet (a family
    /// shows once it has a series: the request counters after the first
    /// request).
    fn discover(self: &Arc<Self>) {
        let apps: Vec<Metrics> = self.lock().apps.iter().map(|(_, m, _)| m.clone()).collect();
        let mut found = Vec::new();
        for metrics in apps {
            for family in parse(&metrics.render()) {
                for (name, kind) in family.instruments() {
                    found.push((name, family.help.clone(), kind));
                }
            }
        }
        let new: Vec<_> = {
            let mut state = self.lock();
            // The next collection (the last one, at a stop) reads afresh.
            state.reading = None;
            found
                .into_iter()
                .filter(|(name, _, _)| state.made.insert(name.clone()))
                .collect()
        };
        // Not under the lock: the SDK holds its own while it calls the
        // callbacks, which take this one.
        for (name, help, kind) in new {
            self.make(name, help, kind);
        }
    }

    fn remove(&self, key: usize) {
        let mut state = self.lock();
        if let Some(i) = state.apps.iter().position(|(k, _, _)| *k == key) {
            state.apps[i].2 -= 1;
            if state.apps[i].2 == 0 {
                state.apps.remove(i);
            }
        }
        state.reading = None;
    }

    /// An instrument whose callback reports the series named `name` of
    /// the current reading.
    fn make(self: &Arc<Self>, name: String, help: String, kind: Kind) {
        let bridge = Arc::downgrade(self);
        let key = name.clone();
        let read = move || bridge.upgrade().map(|b| b.reading()).unwrap_or_default();
        match kind {
            Kind::Gauge => {
                self.meter
                    .f64_observable_gauge(name)
                    .with_description(help)
                    .with_callback(move |o| {
                        for (attrs, v) in read().get(&key).into_iter().flatten() {
                            o.observe(*v, attrs);
                        }
                    })
                    .build();
            }
            Kind::Counter => {
                self.meter
                    .f64_observable_counter(name)
                    .with_description(help)
                    .with_callback(move |o| {
                        for (attrs, v) in read().get(&key).into_iter().flatten() {
                            o.observe(*v, attrs);
                        }
                    })
                    .build();
            }
        }
    }

    /// Every served app's series, read at most once per collection.
    fn reading(&self) -> Arc<Reading> {
        let apps: Vec<Metrics> = {
            let state = self.lock();
            if let Some((at, reading)) = &state.reading {
                if at.elapsed() < READING_LASTS {
                    return Arc::clone(reading);
                }
            }
            state.apps.iter().map(|(_, m, _)| m.clone()).collect()
        };
        // Rendered outside the lock: a source may take a while.
        let mut reading = Reading::new();
        for metrics in apps {
            for family in parse(&metrics.render()) {
                for (name, attrs, value) in family.series {
                    reading.entry(name).or_default().push((attrs, value));
                }
            }
        }
        let reading = Arc::new(reading);
        self.lock().reading = Some((Instant::now(), Arc::clone(&reading)));
        reading
    }
}

/// What an instrument reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Counter,
    Gauge,
}

/// One family of the Prometheus text `Metrics::render` writes.
#[derive(Debug)]
struct Family {
    name: String,
    help: String,
    /// `counter`, `gauge`, `histogram`, ...
    kind: String,
    /// (instrument name, attributes, value).
    series: Vec<(String, Vec<KeyValue>, f64)>,
}

impl Family {
    /// The instruments the family is exported as.
    fn instruments(&self) -> Vec<(String, Kind)> {
        let name = &self.name;
        match self.kind.as_str() {
            "counter" => vec![(name.clone(), Kind::Counter)],
            "gauge" => vec![(name.clone(), Kind::Gauge)],
            "histogram" => ["_bucket", "_sum", "_count"]
                .iter()
                .map(|s| (format!("{name}{s}"), Kind::Counter))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The families of Prometheus text (version 0.0.4) as `Metrics::render`
/// writes it; a line it cannot read is skipped.
fn parse(text: &str) -> Vec<Family> {
    let mut out: Vec<Family> = Vec::new();
    let mut help = (String::new(), String::new());
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, text) = rest.split_once(' ').unwrap_or((rest, ""));
            help = (name.to_owned(), unescape(text));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let kind = kind.trim();
            // The 0.0.4 format names a counter's family with its `_total`;
            // the instrument goes without (OpenTelemetry's conversion to
            // Prometheus adds it back to a monotonic sum).
            let base = match kind {
                "counter" => name.strip_suffix("_total").unwrap_or(name),
                _ => name,
            };
            out.push(Family {
                name: base.to_owned(),
                help: if help.0 == name {
                    std::mem::take(&mut help.1)
                } else {
                    String::new()
                },
                kind: kind.to_owned(),
                series: Vec::new(),
            });
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (Some(family), Some((sample, attrs, value))) = (out.last_mut(), sample(line)) else {
            continue;
        };
        let name = match family.kind.as_str() {
            // A counter's `_created`, if any, is not a value.
            "counter" if sample.strip_suffix("_total") == Some(&family.name) => family.name.clone(),
            "counter" => continue,
            _ => sample.to_owned(),
        };
        family.series.push((name, attrs, value));
    }
    out
}

/// A `# HELP` text, unescaped (`\\` and `\n`).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some(c) => out.push(c),
            None => out.push('\\'),
        }
    }
    out
}

/// A sample line: `name{k="v",...} value`.
fn sample(line: &str) -> Option<(&str, Vec<KeyValue>, f64)> {
    let end = line.find(['{', ' '])?;
    let name = &line[..end];
    let mut rest = &line[end..];
    let mut attrs = Vec::new();
    if let Some(labels) = rest.strip_prefix('{') {
        let mut chars = labels.char_indices();
        loop {
            let (start, c) = chars.next()?;
            if c == '}' {
                rest = &labels[start + 1..];
                break;
            }
            if c == ',' {
                continue;
            }
            let eq = labels[start..].find("=\"")? + start;
            let key = &labels[start..eq];
            // Skip past `="`.
            while chars.next()?.0 < eq + 1 {}
            let mut value = String::new();
            loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        c => value.push(c),
                    },
                    c => value.push(c),
                }
            }
            attrs.push(KeyValue::new(key.to_owned(), value));
        }
    }
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some((name, attrs, value))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_text_metrics_render_writes() {
        let metrics = Metrics::default();
        metrics
            .counter(
                "shop_sent",
                "Emails \\ sent\nlast",
                &[("kind", "a \"b\"\\c")],
            )
            .add(3);
        metrics.gauge("shop_queue", "Queued", &[]).set(-2);
        metrics
            .histogram("shop_wait_seconds", "Waits", &[("q", "x")])
            .observe(Duration::from_millis(2));
        let text = metrics.render();
        let families = parse(&text);
        let sent = families.iter().find(|f| f.name == "shop_sent").unwrap();
        assert_eq!(sent.kind, "counter");
        assert_eq!(sent.help, "Emails \\ sent\nlast");
        assert_eq!(
            sent.instruments(),
            vec![("shop_sent".to_owned(), Kind::Counter)]
        );
        assert_eq!(
            sent.series,
            vec![(
                "shop_sent".to_owned(),
                vec![KeyValue::new("kind", "a \"b\"\\c")],
                3.0
            )]
        );
        let queue = families.iter().find(|f| f.name == "shop_queue").unwrap();
        assert_eq!(queue.series[0].2, -2.0);
        let wait = families
            .iter()
            .find(|f| f.name == "shop_wait_seconds")
            .unwrap();
        assert_eq!(wait.instruments().len(), 3);
        let count = wait
            .series
            .iter()
            .find(|(n, _, _)| n == "shop_wait_seconds_count")
            .unwrap();
        assert_eq!(count.2, 1.0);
        let inf = wait
            .series
            .iter()
            .find(|(n, a, _)| {
                n == "shop_wait_seconds_bucket" && a.contains(&KeyValue::new("le", "+Inf"))
            })
            .unwrap();
        assert_eq!(inf.2, 1.0);
    }

    #[test]
    fn the_request_span_follows_the_http_conventions() {
        let mut span = SpanData {
            span_context: opentelemetry::trace::SpanContext::empty_context(),
            parent_span_id: opentelemetry::trace::SpanId::INVALID,
            parent_span_is_remote: false,
            span_kind: SpanKind::Internal,
            name: "request".into(),
            start_time: std::time::SystemTime::UNIX_EPOCH,
            end_time: std::time::SystemTime::UNIX_EPOCH,
            attributes: vec![
                KeyValue::new("target", "tern::request"),
                KeyValue::new("method", "GET"),
                KeyValue::new("route", "/users/{id}"),
                KeyValue::new("status", 503_i64),
            ],
            dropped_attributes_count: 0,
            events: opentelemetry_sdk::trace::SpanEvents::default(),
            links: opentelemetry_sdk::trace::SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: opentelemetry::InstrumentationScope::default(),
        };
        server_span(&mut span);
        assert_eq!(span.name, "GET /users/{id}");
        assert_eq!(span.span_kind, SpanKind::Server);
        assert!(span
            .attributes
            .contains(&KeyValue::new("http.request.method", "GET")));
        assert!(span
            .attributes
            .contains(&KeyValue::new("http.route", "/users/{id}")));
        assert!(span
            .attributes
            .contains(&KeyValue::new("http.response.status_code", 503_i64)));
        assert!(matches!(span.status, Status::Error { .. }));
    }
}
