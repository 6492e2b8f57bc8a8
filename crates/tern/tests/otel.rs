//! OpenTelemetry export (feature `otel`), against an OTLP receiver in the
//! test: one server span per request with its HTTP attributes and its
//! children, a trusted `traceparent` as its parent (an untrusted one
//! ignored), `RequestContext::traceparent` naming the exported span, and
//! the app's metrics on `/v1/metrics`.
//!
//! No OpenTelemetry collector installs from the registries this project
//! uses, so the receiver is a plain hyper server on 127.0.0.1:0 that
//! decodes each export with the protocol's generated types
//! (opentelemetry-proto). Each test installs the export layer as its
//! thread's subscriber (`set_default`, on a current-thread runtime, as
//! tests/span.rs does); the exporters are process-wide and send to one
//! receiver, so each test finds its own spans by request ID or trace ID.
//! One test runs this binary again as a child process, serving with
//! `tern::serve` and `OTEL_EXPORTER_OTLP_ENDPOINT` set: the default log
//! output's own export, flushed when `SIGTERM` stops the server.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex, OnceLock},
    time::{Duration, Instant},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, service::service_fn, Request, Response};
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::{
    collector::{metrics::v1::ExportMetricsServiceRequest, trace::v1::ExportTraceServiceRequest},
    common::v1::{any_value, AnyValue, KeyValue},
    metrics::v1::{metric, number_data_point},
    trace::v1::{span::SpanKind, Span},
};
use prost::Message;
use tern::{routing::get, App, RequestContext};
use tracing_subscriber::layer::SubscriberExt;

/// What the receiver was sent.
#[derive(Default)]
struct Received {
    traces: Vec<ExportTraceServiceRequest>,
    metrics: Vec<ExportMetricsServiceRequest>,
}

struct Receiver {
    addr: SocketAddr,
    received: Arc<Mutex<Received>>,
}

/// The receiver, on a thread and runtime of its own (so that its work is
/// not traced by the tests' subscribers).
fn receiver() -> &'static Receiver {
    static RECEIVER: OnceLock<Receiver> = OnceLock::new();
    RECEIVER.get_or_init(|| {
        let received = Arc::new(Mutex::new(Received::default()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let store = Arc::clone(&received);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    let store = Arc::clone(&store);
                    tokio::spawn(async move {
                        let service = service_fn(move |req| receive(Arc::clone(&store), req));
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        });
        Receiver { addr, received }
    })
}

/// One OTLP/HTTP export: decoded and kept, answered with an empty
/// (protobuf) success.
async fn receive(
    store: Arc<Mutex<Received>>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let ok = req.method() == http::Method::POST
        && req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|v| v == "application/x-protobuf");
    let path = req.uri().path().to_owned();
    let body = req.into_body().collect().await?.to_bytes();
    let status = match (ok, path.as_str()) {
        (true, "/v1/traces") => {
            let decoded = ExportTraceServiceRequest::decode(body).unwrap();
            store.lock().unwrap().traces.push(decoded);
            200
        }
        (true, "/v1/metrics") => {
            let decoded = ExportMetricsServiceRequest::decode(body).unwrap();
            store.lock().unwrap().metrics.push(decoded);
            200
        }
        _ => 404,
    };
    Ok(Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/x-protobuf")
        .body(Full::default())
        .unwrap())
}

/// The subscriber of a test: the export layer only, at `info`.
fn subscriber() -> impl tracing::Subscriber + Send + Sync {
    let endpoint = format!("http://{}", receiver().addr);
    tracing_subscriber::registry()
        .with(tern::otel::__test_layer(
            &endpoint,
            Duration::from_secs(3600),
        ))
        .with(
            "info"
                .parse::<tracing_subscriber::filter::Targets>()
                .unwrap(),
        )
}

/// The spans received so far, with their service's name.
fn spans() -> Vec<(String, Span)> {
    let received = receiver().received.lock().unwrap();
    let mut out = Vec::new();
    for export in &received.traces {
        for rs in &export.resource_spans {
            let service = rs
                .resource
                .as_ref()
                .and_then(|r| text(&r.attributes, "service.name"))
                .unwrap_or_default();
            for ss in &rs.scope_spans {
                for span in &ss.spans {
                    out.push((service.clone(), span.clone()));
                }
            }
        }
    }
    out
}

fn attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v: &AnyValue| v.value.as_ref())
}

fn text(attrs: &[KeyValue], key: &str) -> Option<String> {
    match attr(attrs, key)? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        _ => None,
    }
}

fn int(attrs: &[KeyValue], key: &str) -> Option<i64> {
    match attr(attrs, key)? {
        any_value::Value::IntValue(i) => Some(*i),
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The exported request span of the request with ID `request_id`.
fn server_span(request_id: &str) -> Span {
    let found: Vec<(String, Span)> = spans()
        .into_iter()
        .filter(|(_, s)| text(&s.attributes, "request_id").as_deref() == Some(request_id))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one span for request {request_id}: {found:#?}"
    );
    let (service, span) = found.into_iter().next().unwrap();
    assert_eq!(service, "tern-test");
    span
}

/// Answers with the `traceparent` for a call of its own, in a child span.
async fn handler(ctx: RequestContext) -> String {
    let child = tracing::info_span!("load_user");
    let _in = child.enter();
    tracing::info!("loading");
    ctx.traceparent().to_str().unwrap().to_owned()
}

fn app() -> App {
    App::new().route("/users/{id:u64}", get(handler))
}

async fn ask(server: &common::TestServer, path: &str, headers: &[(&str, &str)]) -> common::Resp {
    let mut req = common::request("GET", &server.url(path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    common::send(&common::client(), req.body(Full::default()).unwrap()).await
}

const INCOMING: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn a_request_is_one_server_span_with_its_children() {
    let _default = tracing::subscriber::set_default(subscriber());
    let server = common::spawn_with(app(), common::config()).await;
    let res = ask(&server, "/users/42", &[]).await;
    assert_eq!(res.status, 200);
    let id = res.header("x-request-id").unwrap().to_owned();
    let missing = ask(&server, "/nowhere", &[]).await;
    assert_eq!(missing.status, 404);
    let missing_id = missing.header("x-request-id").unwrap().to_owned();
    // Stopping flushes the exporters.
    server.shutdown().await;

    let span = server_span(&id);
    assert_eq!(span.name, "GET /users/{id:u64}");
    assert_eq!(span.kind, SpanKind::Server as i32);
    let a = &span.attributes;
    assert_eq!(text(a, "http.request.method").as_deref(), Some("GET"));
    assert_eq!(text(a, "http.route").as_deref(), Some("/users/{id:u64}"));
    assert_eq!(int(a, "http.response.status_code"), Some(200));
    assert_eq!(text(a, "url.path").as_deref(), Some("/users/42"));
    // Tern's own fields, as the log lines have them.
    assert_eq!(text(a, "method").as_deref(), Some("GET"));
    assert_eq!(text(a, "route").as_deref(), Some("/users/{id:u64}"));
    // (`tracing-opentelemetry` writes a `u64` field as text.)
    assert_eq!(text(a, "status").as_deref(), Some("200"));
    assert_eq!(text(a, "client").as_deref(), Some("127.0.0.1"));
    assert!(text(a, "latency_us").is_some(), "{a:?}");
    // No incoming trace: a root span.
    assert!(span.parent_span_id.is_empty(), "{span:?}");

    // The handler's span is its child, in its trace.
    let children: Vec<Span> = spans()
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.name == "load_user" && s.parent_span_id == span.span_id)
        .collect();
    assert_eq!(children.len(), 1, "{children:#?}");
    assert_eq!(children[0].trace_id, span.trace_id);
    assert_eq!(children[0].kind, SpanKind::Internal as i32);

    // An unrouted request: named by its method only, no route.
    let span = server_span(&missing_id);
    assert_eq!(span.name, "GET");
    assert_eq!(
        int(&span.attributes, "http.response.status_code"),
        Some(404)
    );
    assert!(text(&span.attributes, "http.route").is_none());
}

#[tokio::test]
async fn a_trusted_traceparent_is_the_parent_and_passed_on() {
    let _default = tracing::subscriber::set_default(subscriber());
    let server = common::spawn_with(app(), common::config()).await;
    let res = ask(
        &server,
        "/users/7",
        &[
            ("traceparent", INCOMING),
            ("x-request-id", "otel-trusted-1"),
        ],
    )
    .await;
    assert_eq!(res.status, 200);
    let outgoing = res.text();
    server.shutdown().await;

    let span = server_span("otel-trusted-1");
    assert_eq!(hex(&span.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(hex(&span.parent_span_id), "00f067aa0ba902b7");
    // The call the handler makes is a child of the exported span.
    assert_eq!(
        outgoing,
        format!(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-{}-01",
            hex(&span.span_id)
        )
    );
}

#[tokio::test]
async fn an_untrusted_traceparent_is_not_the_parent() {
    let _default = tracing::subscriber::set_default(subscriber());
    let mut config = common::config();
    config.trusted_proxies = Vec::new();
    let server = common::spawn_with(app(), config).await;
    let res = ask(&server, "/users/8", &[("traceparent", INCOMING)]).await;
    assert_eq!(res.status, 200);
    let id = res.header("x-request-id").unwrap().to_owned();
    let outgoing = res.text();
    server.shutdown().await;

    let span = server_span(&id);
    assert_ne!(hex(&span.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert!(span.parent_span_id.is_empty(), "{span:?}");
    assert_eq!(
        outgoing,
        format!("00-{}-{}-01", hex(&span.trace_id), hex(&span.span_id))
    );
}

#[tokio::test]
async fn the_metrics_are_exported() {
    let _default = tracing::subscriber::set_default(subscriber());
    let mut config = common::config();
    config.metrics = true;
    let app = App::new().route("/metered", get(|| async { "counted" }));
    let jobs = app
        .metrics()
        .counter("otel_test_jobs", "Jobs done", &[("queue", "mail")]);
    jobs.add(5);
    let server = common::spawn_with(app, config).await;
    for _ in 0..3 {
        assert_eq!(ask(&server, "/metered", &[]).await.status, 200);
    }
    server.shutdown().await;

    // The flush at stop sent a collection; find this app's series in it.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (requests, jobs, buckets) = metric_values();
        if requests >= 3.0 && jobs == 5.0 && buckets >= 3.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "requests {requests}, jobs {jobs}, +Inf bucket {buckets}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The largest values any metrics export had of: `tern_http_requests`
/// of route `/metered` (summed over methods and statuses),
/// `otel_test_jobs{queue="mail"}`, and the `+Inf` bucket of `/metered`'s
/// latency. (Other tests' servers flush too, and this one's app is gone
/// from the exports after its own flush.)
fn metric_values() -> (f64, f64, f64) {
    let received = receiver().received.lock().unwrap();
    let mut max = (0.0_f64, 0.0_f64, 0.0_f64);
    for export in &received.metrics {
        let (r, j, b) = values(export);
        max = (max.0.max(r), max.1.max(j), max.2.max(b));
    }
    max
}

fn values(export: &ExportMetricsServiceRequest) -> (f64, f64, f64) {
    let (mut requests, mut jobs, mut buckets) = (0.0, 0.0, 0.0);
    for rm in &export.resource_metrics {
        for sm in &rm.scope_metrics {
            for m in &sm.metrics {
                let Some(metric::Data::Sum(sum)) = &m.data else {
                    continue;
                };
                assert!(sum.is_monotonic, "{}", m.name);
                for p in &sum.data_points {
                    let value = match p.value {
                        Some(number_data_point::Value::AsDouble(v)) => v,
                        Some(number_data_point::Value::AsInt(v)) => v as f64,
                        None => continue,
                    };
                    let route = text(&p.attributes, "route");
                    match m.name.as_str() {
                        "tern_http_requests" if route.as_deref() == Some("/metered") => {
                            requests += value;
                        }
                        "otel_test_jobs"
                            if text(&p.attributes, "queue").as_deref() == Some("mail") =>
                        {
                            jobs += value;
                        }
                        "tern_http_request_duration_seconds_bucket"
                            if route.as_deref() == Some("/metered")
                                && text(&p.attributes, "le").as_deref() == Some("+Inf") =>
                        {
                            buckets += value;
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    (requests, jobs, buckets)
}

/// Set in the child process of the test below.
const CHILD: &str = "OTEL_TEST_CHILD_PROCESS";

#[test]
fn the_default_output_exports_when_the_endpoint_is_set() {
    if std::env::var_os(CHILD).is_some() {
        // The child: serves until SIGTERM with Tern's default output.
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(tern::serve(app())).unwrap();
        return;
    }
    use std::io::{BufRead, Read, Write};
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_default_output_exports_when_the_endpoint_is_set",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://{}", receiver().addr),
        )
        .env("OTEL_SERVICE_NAME", "otel-child")
        .env("TERN_ADDR", "127.0.0.1:0")
        .env_remove("RUST_LOG")
        .env_remove("TERN_LOG_FORMAT")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("the child said where it listens")
            .unwrap();
        if line.contains("tern listening") {
            let addr = line.split("addr=").nth(1).unwrap();
            break addr.split_whitespace().next().unwrap().to_owned();
        }
    };
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "GET /users/9 HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let id = answer
        .lines()
        .find_map(|l| l.strip_prefix("x-request-id: "))
        .unwrap()
        .to_owned();
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    // The rest of its output, then its exit: the flush came before.
    for _ in lines.by_ref() {}
    assert!(child.wait().unwrap().success());

    let found: Vec<(String, Span)> = spans()
        .into_iter()
        .filter(|(_, s)| text(&s.attributes, "request_id").as_deref() == Some(id.as_str()))
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    let (service, span) = &found[0];
    assert_eq!(service, "otel-child");
    assert_eq!(span.name, "GET /users/{id:u64}");
    assert_eq!(span.kind, SpanKind::Server as i32);
}
