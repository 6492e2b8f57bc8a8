//! Metrics: what the server counts, served in Prometheus's text format.
//!
//! With `TERN_METRICS=on`, `GET /metrics` (`TERN_METRICS_PATH`) answers
//! the metrics of the process: requests by route pattern, method and
//! status class, their latency, requests in flight, connections by
//! protocol, refusals by reason, body bytes, and the process's CPU,
//! memory and file descriptors. In production it needs
//! `Authorization: Bearer <METRICS_TOKEN>`. Every label value comes from
//! the app (a route's pattern, a fixed word), never from a request, so a
//! scan of random paths adds no series (`docs/operations.md` lists them).
//!
//! Batteries and apps add their own at install, through the app's
//! [`Metrics`]: a counter, gauge or histogram is a handle to a few
//! atomics, cheap to update from any thread, or values read when
//! `/metrics` is asked ([`Metrics::source`]).
//!
//! ```
//! use tern::App;
//!
//! let app = App::new();
//! let sent = app.metrics().counter("shop_emails_sent", "Emails sent", &[("kind", "receipt")]);
//! sent.inc();
//! assert_eq!(sent.get(), 1);
//! let text = app.metrics().render();
//! assert!(text.contains("shop_emails_sent_total{kind=\"receipt\"} 1"));
//! ```

mod cells;
pub(crate) mod clock;
pub(crate) mod endpoint;
pub(crate) mod http;
mod process;
pub(crate) mod route;

use std::{
    borrow::Cow,
    fmt,
    sync::{Arc, Mutex},
};

use prometheus_client::{collector::Collector, encoding::DescriptorEncoder, metrics::MetricType};

pub use cells::{Counter, Gauge, Histogram};
pub(crate) use cells::{BOUNDS_SECONDS, BUCKETS};

type Labels = Vec<(Cow<'static, str>, Cow<'static, str>)>;

/// The metrics of one app: the registry batteries add to at install and
/// `/metrics` reads.
///
/// Cloning is a reference count. Registering the same name and labels
/// twice gives the same cells, so a battery installed twice counts once.
#[derive(Clone, Default)]
pub struct Metrics {
    inner: Arc<Registry>,
}

#[derive(Default)]
struct Registry {
    families: Mutex<Vec<Family>>,
    sources: Mutex<Vec<Source>>,
}

type Source = Arc<dyn Fn(&mut Sample<'_>) + Send + Sync>;

struct Family {
    name: Cow<'static, str>,
    help: Cow<'static, str>,
    kind: Kind,
    series: Vec<(Labels, Cell)>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

#[derive(Clone)]
enum Cell {
    Counter(Counter),
    Gauge(Gauge),
    Histogram(Histogram),
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let families = self.inner.families.lock().map_or(0, |f| f.len());
        f.debug_struct("Metrics")
            .field("families", &families)
            .finish_non_exhaustive()
    }
}

fn owned_labels(labels: &[(&str, &str)]) -> Labels {
    labels
        .iter()
        .map(|(k, v)| (Cow::Owned((*k).to_owned()), Cow::Owned((*v).to_owned())))
        .collect()
}

impl Metrics {
    /// A counter (a total that only goes up), named without `_total`:
    /// `/metrics` shows `{name}_total`.
    ///
    /// # Panics
    /// If `name` is already registered as a gauge or histogram (a mistake
    /// in the code that registers it, found at install).
    pub fn counter(
        &self,
        name: impl Into<Cow<'static, str>>,
        help: impl Into<Cow<'static, str>>,
        labels: &[(&str, &str)],
    ) -> Counter {
        match self.cell(name.into(), help.into(), Kind::Counter, labels) {
            Cell::Counter(c) => c,
            _ => unreachable!("kind checked in `cell`"),
        }
    }

    /// A gauge: a value that goes up and down.
    ///
    /// # Panics
    /// If `name` is already registered as another kind.
    pub fn gauge(
        &self,
        name: impl Into<Cow<'static, str>>,
        help: impl Into<Cow<'static, str>>,
        labels: &[(&str, &str)],
    ) -> Gauge {
        match self.cell(name.into(), help.into(), Kind::Gauge, labels) {
            Cell::Gauge(g) => g,
            _ => unreachable!("kind checked in `cell`"),
        }
    }

    /// A histogram of durations in seconds, with Tern's buckets
    /// (0.5 ms to 10 s, the same as the request latency's).
    ///
    /// # Panics
    /// If `name` is already registered as another kind.
    pub fn histogram(
        &self,
        name: impl Into<Cow<'static, str>>,
        help: impl Into<Cow<'static, str>>,
        labels: &[(&str, &str)],
    ) -> Histogram {
        match self.cell(name.into(), help.into(), Kind::Histogram, labels) {
            Cell::Histogram(h) => h,
            _ => unreachable!("kind checked in `cell`"),
        }
    }

    /// The counter of refusals for `reason` (`tern_rejections_total`,
    /// beside the server's own reasons: a battery's `csrf`,
    /// `rate_limit`, `throttle`).
    pub fn rejection(&self, reason: &str) -> Counter {
        self.counter(REJECTIONS.0, REJECTIONS.1, &[("reason", reason)])
    }

    /// The connection counts of `protocol` (`tern_connections_open` and
    /// `tern_connections_total`, beside the server's `http1` and `http2`:
    /// a battery's `websocket`, `sse`).
    pub fn connections(&self, protocol: &str) -> Connections {
        Connections {
            open: self.gauge(
                CONNECTIONS_OPEN.0,
                CONNECTIONS_OPEN.1,
                &[("protocol", protocol)],
            ),
            opened: self.counter(
                CONNECTIONS_OPENED.0,
                CONNECTIONS_OPENED.1,
                &[("protocol", protocol)],
            ),
        }
    }

    /// Values read each time `/metrics` is asked (a pool's size, a queue's
    /// length): `read` writes them into the [`Sample`].
    pub fn source(&self, read: impl Fn(&mut Sample<'_>) + Send + Sync + 'static) {
        if let Ok(mut sources) = self.inner.sources.lock() {
            sources.push(Arc::new(read));
        }
    }

    fn cell(
        &self,
        name: Cow<'static, str>,
        help: Cow<'static, str>,
        kind: Kind,
        labels: &[(&str, &str)],
    ) -> Cell {
        let mut families = self
            .inner
            .families
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let family = match families.iter().position(|f| f.name == name) {
            Some(i) => {
                let family = &mut families[i];
                assert!(
                    family.kind == kind,
                    "the metric `{name}` is registered as a {:?} and a {kind:?}",
                    family.kind
                );
                family
            }
            None => {
                families.push(Family {
                    name,
                    help,
                    kind,
                    series: Vec::new(),
                });
                families.last_mut().expect("just pushed")
            }
        };
        let labels = owned_labels(labels);
        if let Some((_, cell)) = family.series.iter().find(|(l, _)| *l == labels) {
            return cell.clone();
        }
        let cell = match kind {
            Kind::Counter => Cell::Counter(Counter::default()),
            Kind::Gauge => Cell::Gauge(Gauge::default()),
            Kind::Histogram => Cell::Histogram(Histogram::default()),
        };
        family.series.push((labels, cell.clone()));
        cell
    }

    /// The metrics in Prometheus's text format (version 0.0.4), as
    /// `/metrics` answers them.
    pub fn render(&self) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(Encode(self.clone())));
        let mut out = String::with_capacity(4096);
        // Writing into a `String` cannot fail.
        let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
        out
    }

    /// The metrics in the OpenMetrics text format (for a scraper that asks
    /// for `application/openmetrics-text`).
    pub fn render_openmetrics(&self) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(Encode(self.clone())));
        let mut out = String::with_capacity(4096);
        let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
        out
    }
}

pub(crate) const REJECTIONS: (&str, &str) = (
    "tern_rejections",
    "Requests and connections refused before a handler answered, by reason",
);
pub(crate) const CONNECTIONS_OPEN: (&str, &str) =
    ("tern_connections_open", "Connections open now, by protocol");
pub(crate) const CONNECTIONS_OPENED: (&str, &str) =
    ("tern_connections", "Connections opened, by protocol");

/// The open and opened counts of one protocol's connections: see
/// [`Metrics::connections`].
#[derive(Clone, Debug)]
pub struct Connections {
    open: Gauge,
    opened: Counter,
}

impl Connections {
    /// Counts a connection opened; it is counted closed when the guard
    /// drops.
    pub fn open(&self) -> ConnectionGuard {
        self.opened.inc();
        self.open.inc();
        ConnectionGuard(self.open.clone())
    }

    pub(crate) fn opened(&self) {
        self.opened.inc();
        self.open.inc();
    }

    pub(crate) fn closed(&self) {
        self.open.dec();
    }
}

/// One open connection in [`Connections`]; closed when dropped.
#[derive(Debug)]
pub struct ConnectionGuard(Gauge);

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The values of sources, written at each scrape: see [`Metrics::source`].
pub struct Sample<'a> {
    out: Vec<SampleFamily>,
    _marker: std::marker::PhantomData<&'a ()>,
}

struct SampleFamily {
    name: Cow<'static, str>,
    help: Cow<'static, str>,
    kind: Kind,
    series: Vec<(Labels, SampleValue)>,
}

enum SampleValue {
    Int(i64),
    Float(f64),
    Histogram {
        buckets: [u64; BUCKETS],
        sum: f64,
        count: u64,
    },
}

impl fmt::Debug for Sample<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sample").finish_non_exhaustive()
    }
}

impl Sample<'_> {
    fn family(
        &mut self,
        name: Cow<'static, str>,
        help: Cow<'static, str>,
        kind: Kind,
    ) -> &mut SampleFamily {
        match self.out.iter().position(|f| f.name == name) {
            Some(i) => &mut self.out[i],
            None => {
                self.out.push(SampleFamily {
                    name,
                    help,
                    kind,
                    series: Vec::new(),
                });
                self.out.last_mut().expect("just pushed")
            }
        }
    }

    /// A counter's current total (named without `_total`).
    pub fn counter(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        help: impl Into<Cow<'static, str>>,
        labels: &[(&str, &str)],
        value: u64,
    ) {
        let value = SampleValue::Int(i64::try_from(value).unwrap_or(i64::MAX));
        self.family(name.into(), help.into(), Kind::Counter)
            .series
            .push((owned_labels(labels), value));
    }

    /// A counter in seconds (a CPU time).
    pub(crate) fn counter_seconds(&mut self, name: &'static str, help: &'static str, value: f64) {
        self.family(Cow::Borrowed(name), Cow::Borrowed(help), Kind::Counter)
            .series
            .push((Vec::new(), SampleValue::Float(value)));
    }

    /// A gauge's current value.
    pub fn gauge(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        help: impl Into<Cow<'static, str>>,
        labels: &[(&str, &str)],
        value: f64,
    ) {
        self.family(name.into(), help.into(), Kind::Gauge)
            .series
            .push((owned_labels(labels), SampleValue::Float(value)));
    }

    pub(crate) fn histogram(
        &mut self,
        name: &'static str,
        help: &'static str,
        labels: Labels,
        buckets: [u64; BUCKETS],
        sum: f64,
    ) {
        let count = buckets.iter().sum();
        self.family(Cow::Borrowed(name), Cow::Borrowed(help), Kind::Histogram)
            .series
            .push((
                labels,
                SampleValue::Histogram {
                    buckets,
                    sum,
                    count,
                },
            ));
    }
}

/// The registry as prometheus-client's encoder reads it.
struct Encode(Metrics);

impl fmt::Debug for Encode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

fn metric_type(kind: Kind) -> MetricType {
    match kind {
        Kind::Counter => MetricType::Counter,
        Kind::Gauge => MetricType::Gauge,
        Kind::Histogram => MetricType::Histogram,
    }
}

fn histogram_pairs(buckets: &[u64; BUCKETS]) -> [(f64, u64); BUCKETS] {
    let mut pairs = [(f64::INFINITY, 0); BUCKETS];
    for (i, count) in buckets.iter().enumerate() {
        pairs[i] = (
            BOUNDS_SECONDS.get(i).copied().unwrap_or(f64::INFINITY),
            *count,
        );
    }
    pairs
}

impl Collector for Encode {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), fmt::Error> {
        let registry = &self.0.inner;
        let sources: Vec<Source> = registry
            .sources
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default();
        let mut sample = Sample {
            out: Vec::new(),
            _marker: std::marker::PhantomData,
        };
        for read in &sources {
            read(&mut sample);
        }
        let families = registry
            .families
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for family in families.iter() {
            let mut metric = encoder.encode_descriptor(
                &family.name,
                &family.help,
                None,
                metric_type(family.kind),
            )?;
            for (labels, cell) in &family.series {
                let mut series = metric.encode_family(labels)?;
                match cell {
                    Cell::Counter(c) => c.get().encode_counter(&mut series)?,
                    Cell::Gauge(g) => series.encode_gauge(&g.get())?,
                    Cell::Histogram(h) => {
                        let (buckets, sum) = h.snapshot();
                        let count = buckets.iter().sum();
                        series.encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                            sum,
                            count,
                            &histogram_pairs(&buckets),
                            None,
                        )?;
                    }
                }
            }
        }
        for family in &sample.out {
            let mut metric = encoder.encode_descriptor(
                &family.name,
                &family.help,
                None,
                metric_type(family.kind),
            )?;
            for (labels, value) in &family.series {
                let mut series = metric.encode_family(labels)?;
                match value {
                    SampleValue::Int(v) if family.kind == Kind::Counter => {
                        series.encode_counter::<prometheus_client::encoding::NoLabelSet, _, u64>(
                            &u64::try_from(*v).unwrap_or(0),
                            None,
                        )?;
                    }
                    SampleValue::Int(v) => series.encode_gauge(v)?,
                    SampleValue::Float(v) if family.kind == Kind::Counter => {
                        series.encode_counter::<prometheus_client::encoding::NoLabelSet, _, u64>(
                            v, None,
                        )?;
                    }
                    SampleValue::Float(v) => series.encode_gauge(v)?,
                    SampleValue::Histogram {
                        buckets,
                        sum,
                        count,
                    } => series.encode_histogram::<prometheus_client::encoding::NoLabelSet>(
                        *sum,
                        *count,
                        &histogram_pairs(buckets),
                        None,
                    )?,
                }
            }
        }
        Ok(())
    }
}

/// A counter's value, encoded (a small trait so `u64` reads as a call).
trait EncodeCounter {
    fn encode_counter(
        self,
        series: &mut prometheus_client::encoding::MetricEncoder<'_>,
    ) -> Result<(), fmt::Error>;
}

impl EncodeCounter for u64 {
    fn encode_counter(
        self,
        series: &mut prometheus_client::encoding::MetricEncoder<'_>,
    ) -> Result<(), fmt::Error> {
        series.encode_counter::<prometheus_client::encoding::NoLabelSet, _, u64>(&self, None)
    }
}
