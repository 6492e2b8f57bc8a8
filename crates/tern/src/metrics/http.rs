//! The server's own metrics: requests per route, latency, requests in
//! flight, connections, refusals by reason.
//!
//! A request's cells are found by index (the route's id, the method's,
//! the status class's), never by a label lookup, and live in one shard
//! per worker thread (summed when `/metrics` is read), so that two cores
//! answering the same route do not share a cache line.

use std::{
    borrow::Cow,
    cell::Cell,
    sync::{
        atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering},
        Arc,
    },
};

use http::Method;

use super::{cells::HistogramCells, Connections, Counter, Metrics, Sample, BUCKETS};

/// Why a request or connection was refused before a handler answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// `TERN_MAX_CONNECTIONS` reached: the connection was closed at once.
    MaxConnections,
    /// The head took longer than `TERN_HEADER_READ_TIMEOUT`.
    HeaderTimeout,
    /// The client stopped reading its answer (`TERN_WRITE_TIMEOUT`).
    SlowReader,
    /// Not a valid HTTP/1.1 request head (400 from the parser).
    Parse,
    /// A request target too long (414).
    UriTooLong,
    /// A head over `TERN_MAX_HEAD_BYTES` or `TERN_MAX_HEADERS` (431).
    HeadTooLarge,
    /// Framing refused (two lengths, a bad `Transfer-Encoding`, ...).
    Framing,
    /// A body over `TERN_MAX_BODY_BYTES` (413).
    BodyTooLarge,
    /// A `Content-Encoding` the server does not take (415, 501).
    ContentCoding,
    /// A junk `Host`, or one not in `ALLOWED_HOSTS`.
    Host,
    /// No answer within `TERN_REQUEST_TIMEOUT` (503).
    RequestTimeout,
    /// A handler panicked (500).
    Panic,
}

impl Reason {
    pub(crate) const ALL: [Reason; 12] = [
        Reason::MaxConnections,
        Reason::HeaderTimeout,
        Reason::SlowReader,
        Reason::Parse,
        Reason::UriTooLong,
        Reason::HeadTooLarge,
        Reason::Framing,
        Reason::BodyTooLarge,
        Reason::ContentCoding,
        Reason::Host,
        Reason::RequestTimeout,
        Reason::Panic,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Reason::MaxConnections => "max_connections",
            Reason::HeaderTimeout => "header_timeout",
            Reason::SlowReader => "slow_reader",
            Reason::Parse => "parse",
            Reason::UriTooLong => "uri_too_long",
            Reason::HeadTooLarge => "head_too_large",
            Reason::Framing => "framing",
            Reason::BodyTooLarge => "body_too_large",
            Reason::ContentCoding => "content_coding",
            Reason::Host => "host",
            Reason::RequestTimeout => "request_timeout",
            Reason::Panic => "panic",
        }
    }
}

/// The protocol of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http1 = 0,
    Http2 = 1,
}

const METHODS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other",
];
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// The index of `method` in `METHODS`.
pub(crate) fn method_index(method: &Method) -> u8 {
    match *method {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::POST => 2,
        Method::PUT => 3,
        Method::PATCH => 4,
        Method::DELETE => 5,
        Method::OPTIONS => 6,
        _ => 7,
    }
}

#[derive(Default)]
struct RouteCells {
    requests: [[AtomicU64; 5]; 8],
    latency: HistogramCells,
    request_bytes: AtomicU64,
    response_bytes: AtomicU64,
}

#[repr(align(64))]
struct Shard {
    in_flight: AtomicI64,
    routes: Box<[RouteCells]>,
}

/// The cells of one built app.
pub(crate) struct HttpMetrics {
    routes: Box<[std::sync::Arc<str>]>,
    shards: Box<[Shard]>,
    rejections: Vec<Counter>,
    connections: [Connections; 2],
}

static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn shard_index(shards: usize) -> usize {
    SHARD.with(|s| {
        let mut i = s.get();
        if i == usize::MAX {
            i = NEXT_SHARD.fetch_add(1, Ordering::Relaxed);
            s.set(i);
        }
        i % shards
    })
}

impl HttpMetrics {
    /// Cells for `routes` (labels in id order, the special ones first),
    /// registered in `metrics` as a source.
    pub(crate) fn install(
        metrics: &Metrics,
        routes: Vec<std::sync::Arc<str>>,
        workers: usize,
    ) -> Arc<Self> {
        let shards = workers.clamp(1, 8);
        let http = Arc::new(HttpMetrics {
            shards: (0..shards)
                .map(|_| Shard {
                    in_flight: AtomicI64::new(0),
                    routes: routes.iter().map(|_| RouteCells::default()).collect(),
                })
                .collect(),
            routes: routes.into_boxed_slice(),
            rejections: Reason::ALL
                .iter()
                .map(|r| metrics.rejection(r.label()))
                .collect(),
            connections: ["http1", "http2"].map(|p| metrics.connections(p)),
        });
        let source = Arc::clone(&http);
        metrics.source(move |sample| source.sample(sample));
        super::process::install(metrics);
        metrics
            .gauge(
                "tern_info",
                "Tern's version (the value is always 1)",
                &[("version", env!("CARGO_PKG_VERSION"))],
            )
            .set(1);
        http
    }

    fn shard(&self) -> &Shard {
        &self.shards[shard_index(self.shards.len())]
    }

    /// A request has come in.
    pub(crate) fn started(&self) {
        self.shard().in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A request that `started` was dropped before its answer.
    pub(crate) fn abandoned(&self) {
        self.shard().in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// A request that `started` is answered.
    pub(crate) fn finished(&self, answer: &Answer) {
        let shard = self.shard();
        shard.in_flight.fetch_sub(1, Ordering::Relaxed);
        let Some(cells) = shard.routes.get(answer.route as usize) else {
            return;
        };
        let class = match answer.status {
            100..=199 => 0,
            200..=299 => 1,
            300..=399 => 2,
            400..=499 => 3,
            _ => 4,
        };
        cells.requests[usize::from(answer.method & 7)][class].fetch_add(1, Ordering::Relaxed);
        cells.latency.observe_us(answer.micros);
        if answer.request_bytes > 0 {
            cells
                .request_bytes
                .fetch_add(answer.request_bytes, Ordering::Relaxed);
        }
        if answer.response_bytes > 0 {
            cells
                .response_bytes
                .fetch_add(answer.response_bytes, Ordering::Relaxed);
        }
    }

    /// A request answered without being counted as started (refused by
    /// the server before the app).
    pub(crate) fn refused(&self, reason: Reason, method: u8, status: u16) {
        self.reject(reason);
        self.started();
        self.finished(&Answer {
            route: super::route::REFUSED,
            method,
            status,
            micros: 0,
            request_bytes: 0,
            response_bytes: 0,
        });
    }

    /// Counts a refusal.
    pub(crate) fn reject(&self, reason: Reason) {
        if let Some(counter) = Reason::ALL
            .iter()
            .position(|r| *r == reason)
            .and_then(|i| self.rejections.get(i))
        {
            counter.inc();
        }
    }

    pub(crate) fn connection_opened(&self, protocol: Protocol) {
        self.connections[protocol as usize].opened();
    }

    pub(crate) fn connection_closed(&self, protocol: Protocol) {
        self.connections[protocol as usize].closed();
    }

    fn sample(&self, out: &mut Sample<'_>) {
        let in_flight: i64 = self
            .shards
            .iter()
            .map(|s| s.in_flight.load(Ordering::Relaxed))
            .sum();
        out.gauge(
            "tern_http_requests_in_flight",
            "Requests being answered now",
            &[],
            in_flight as f64,
        );
        for (id, label) in self.routes.iter().enumerate() {
            let label: &str = label;
            for (m, method) in METHODS.iter().enumerate() {
                for (c, class) in CLASSES.iter().enumerate() {
                    let n: u64 = self
                        .shards
                        .iter()
                        .map(|s| s.routes[id].requests[m][c].load(Ordering::Relaxed))
                        .sum();
                    if n > 0 {
                        out.counter(
                            "tern_http_requests",
                            "Requests answered, by route pattern, method and status class",
                            &[("route", label), ("method", method), ("status", class)],
                            n,
                        );
                    }
                }
            }
        }
        for (id, label) in self.routes.iter().enumerate() {
            let mut buckets = [0; BUCKETS];
            let mut sum_us = 0;
            for shard in self.shards.iter() {
                sum_us += shard.routes[id].latency.add_into(&mut buckets);
            }
            if buckets.iter().any(|&b| b > 0) {
                out.histogram(
                    "tern_http_request_duration_seconds",
                    "Time from a request's head to its answer's head, by route pattern",
                    vec![(Cow::Borrowed("route"), Cow::Owned(label.to_string()))],
                    buckets,
                    sum_us as f64 / 1e6,
                );
            }
        }
        for (name, help, read) in [
            (
                "tern_http_request_body_bytes",
                "Request body bytes declared by Content-Length, by route pattern",
                (|c: &RouteCells| c.request_bytes.load(Ordering::Relaxed))
                    as fn(&RouteCells) -> u64,
            ),
            (
                "tern_http_response_body_bytes",
                "Answer body bytes of known length, by route pattern",
                |c: &RouteCells| c.response_bytes.load(Ordering::Relaxed),
            ),
        ] {
            for (id, label) in self.routes.iter().enumerate() {
                let n: u64 = self.shards.iter().map(|s| read(&s.routes[id])).sum();
                if n > 0 {
                    out.counter(name, help, &[("route", label)], n);
                }
            }
        }
    }
}

/// What is counted of one answer.
pub(crate) struct Answer {
    pub(crate) route: u32,
    pub(crate) method: u8,
    pub(crate) status: u16,
    pub(crate) micros: u64,
    pub(crate) request_bytes: u64,
    pub(crate) response_bytes: u64,
}
