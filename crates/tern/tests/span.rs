//! The request's fields in every log line, over a real socket: in every
//! event a handler, a task it spawns and the access log write, in Tern's
//! own output (`tern::log`, text and JSON, the request's span turned off
//! as the default output turns it off) and in an app's own subscriber
//! (through the request's span); under a burst of interleaved requests;
//! `traceparent` read only from a trusted proxy and handed on; `RUST_LOG`
//! targets.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{
    io::Write,
    sync::{Arc, Mutex},
    time::Duration,
};

use http_body_util::Full;
use tern::{routing::get, App, Config, RequestContext};
use tracing_subscriber::{fmt::MakeWriter, layer::SubscriberExt};

/// Log lines written into memory.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Lines {
    type Writer = Lines;
    fn make_writer(&'a self) -> Lines {
        self.clone()
    }
}

impl Lines {
    fn json(&self) -> Vec<serde_json::Value> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    fn find(&self, message: &str) -> serde_json::Value {
        self.json()
            .into_iter()
            .find(|l| l["message"] == message)
            .unwrap_or_else(|| panic!("no `{message}` in {:?}", self.json()))
    }
}

/// Tern's default output as `TERN_LOG_FORMAT` = `format` installs it,
/// writing into `lines`, with `filter` as `RUST_LOG`.
fn tern_subscriber(
    lines: &Lines,
    format: tern::log::Format,
    filter: &str,
) -> impl tracing::Subscriber + Send + Sync {
    tracing_subscriber::registry()
        .with(tern::log::layer_with_writer(format, lines.clone()))
        .with(
            filter
                .parse::<tracing_subscriber::filter::Targets>()
                .unwrap()
                .with_target("tern::request", tracing::level_filters::LevelFilter::OFF),
        )
}

fn json_subscriber(lines: &Lines, filter: &str) -> impl tracing::Subscriber + Send + Sync {
    tern_subscriber(lines, tern::log::Format::Json, filter)
}

/// An app's own subscriber: `tracing-subscriber`'s JSON format, which
/// sees the request's fields through the request's span.
fn app_subscriber(lines: &Lines) -> impl tracing::Subscriber + Send + Sync {
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .json()
                .flatten_event(true)
                .with_current_span(true)
                .with_span_list(false)
                .with_writer(lines.clone()),
        )
        .with(tracing_subscriber::filter::LevelFilter::INFO)
}

async fn handler(ctx: RequestContext) -> String {
    tracing::info!("in handler");
    let task = ctx.spawn(async {
        tracing::info!("in task");
    });
    task.await.unwrap();
    ctx.traceparent().to_str().unwrap().to_owned()
}

/// Logs before and after waiting, so that requests of a burst
/// interleave on the one thread that polls them all; and from the
/// blocking pool and inside a span of the app's own.
async fn burst(ctx: RequestContext, tern::extract::Path(n): tern::extract::Path<u32>) -> String {
    tracing::info!(n, "before");
    tokio::time::sleep(Duration::from_millis(u64::from(n % 7))).await;
    tracing::info!(n, "after");
    ctx.spawn_blocking(move || tracing::info!(n, "blocking"))
        .await
        .unwrap();
    let span = tracing::info_span!("lookup", table = "items");
    tracing::Instrument::instrument(async move { tracing::info!(n, "in app span") }, span).await;
    format!("{}", ctx.span().is_disabled())
}

fn app() -> App {
    App::new()
        .route("/users/{id:u64}", get(handler))
        .route("/burst/{n}", get(burst))
}

fn config() -> Config {
    let mut c = common::config();
    c.access_log = true;
    c.trusted_proxy_header = Some(http::HeaderName::from_static("x-forwarded-for"));
    c
}

async fn ask(server: &common::TestServer, headers: &[(&str, &str)]) -> common::Resp {
    let mut req = common::request("GET", &server.url("/users/42"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    common::send(&common::client(), req.body(Full::default()).unwrap()).await
}

const INCOMING: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn every_line_of_a_request_carries_its_fields() {
    let lines = Lines::default();
    let _default = tracing::subscriber::set_default(json_subscriber(&lines, "info"));
    every_line_of_a_request(&lines).await;
}

#[tokio::test]
async fn an_apps_own_subscriber_gets_the_request_span() {
    let lines = Lines::default();
    let _default = tracing::subscriber::set_default(app_subscriber(&lines));
    every_line_of_a_request(&lines).await;
}

async fn every_line_of_a_request(lines: &Lines) {
    let server = common::spawn_with(app(), config()).await;
    let res = ask(
        &server,
        &[
            ("x-request-id", "req-from-proxy-1"),
            ("x-forwarded-for", "203.0.113.9"),
            ("traceparent", INCOMING),
        ],
    )
    .await;
    assert_eq!(res.status, 200);
    // The handler's traceparent for its own calls: the same trace, this
    // request as the parent.
    let out = res.text();
    assert!(
        out.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"),
        "{out}"
    );
    assert_ne!(out, INCOMING);
    server.shutdown().await;

    for message in ["in handler", "in task"] {
        let line = lines.find(message);
        let span = &line["span"];
        assert_eq!(span["name"], "request", "{line}");
        assert_eq!(span["method"], "GET", "{line}");
        assert_eq!(span["route"], "/users/{id:u64}", "{line}");
        assert_eq!(span["request_id"], "req-from-proxy-1", "{line}");
        assert_eq!(span["client"], "203.0.113.9", "{line}");
        assert_eq!(
            span["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736",
            "{line}"
        );
        assert!(span.get("status").is_none(), "not answered yet: {line}");
    }
    let access = lines
        .json()
        .into_iter()
        .find(|l| l["target"] == "tern::access")
        .unwrap();
    assert_eq!(access["path"], "/users/42", "{access}");
    let span = &access["span"];
    assert_eq!(span["status"], 200, "{access}");
    assert!(span["latency_us"].as_u64().is_some(), "{access}");
    assert_eq!(span["route"], "/users/{id:u64}", "{access}");
}

#[tokio::test]
async fn an_untrusted_peer_chooses_neither_trace_nor_id_nor_client() {
    let lines = Lines::default();
    let _default = tracing::subscriber::set_default(json_subscriber(&lines, "info"));
    let mut config = config();
    config.trusted_proxies = Vec::new();
    let server = common::spawn_with(app(), config).await;
    let res = ask(
        &server,
        &[
            ("x-request-id", "forged"),
            ("x-forwarded-for", "203.0.113.9"),
            ("traceparent", INCOMING),
        ],
    )
    .await;
    let out = res.text();
    assert!(!out.contains("4bf92f3577b34da6a3ce929d0e0e4736"), "{out}");
    assert_eq!(out.len(), 55, "a new trace: {out}");
    let id = res.header("x-request-id").unwrap().to_owned();
    server.shutdown().await;
    let span = &lines.find("in handler")["span"];
    assert_eq!(span["client"], "127.0.0.1");
    assert_eq!(span["request_id"], id.as_str());
    assert!(span.get("trace_id").is_none(), "{span}");
}

#[tokio::test]
async fn rust_log_targets_silence_the_access_log_only() {
    let lines = Lines::default();
    let _default =
        tracing::subscriber::set_default(json_subscriber(&lines, "info,tern::access=off"));
    let server = common::spawn_with(app(), config()).await;
    assert_eq!(ask(&server, &[]).await.status, 200);
    server.shutdown().await;
    lines.find("in handler");
    assert!(
        lines.json().iter().all(|l| l["target"] != "tern::access"),
        "{:?}",
        lines.json()
    );
}

#[tokio::test]
async fn a_route_matched_later_and_an_unmatched_path_are_named() {
    let lines = Lines::default();
    let _default = tracing::subscriber::set_default(json_subscriber(&lines, "info"));
    let server = common::spawn_with(app(), config()).await;
    let res = common::get(&server, "/nowhere").await;
    assert_eq!(res.status, 404);
    tokio::time::sleep(Duration::from_millis(10)).await;
    server.shutdown().await;
    let access = lines
        .json()
        .into_iter()
        .find(|l| l["target"] == "tern::access")
        .unwrap();
    assert_eq!(access["span"]["route"], "(unmatched)", "{access}");
    assert_eq!(access["span"]["status"], 404, "{access}");
}

#[tokio::test]
async fn a_burst_of_interleaved_requests_keeps_each_lines_fields() {
    let lines = Lines::default();
    let _default = tracing::subscriber::set_default(json_subscriber(&lines, "info"));
    let server = common::spawn_with(app(), config()).await;
    let client = common::client();
    let asks = (0..32u32).map(|n| {
        let req = common::request("GET", &server.url(&format!("/burst/{n}")))
            .header("x-request-id", format!("burst-{n}"))
            .body(Full::default())
            .unwrap();
        common::send(&client, req)
    });
    for res in futures_util::future::join_all(asks).await {
        assert_eq!(res.status, 200);
        // Tern's output turns the request's span off.
        assert_eq!(res.text(), "true");
    }
    server.shutdown().await;
    let mut seen = 0;
    for line in lines.json() {
        let Some(n) = line["n"].as_u64() else {
            continue;
        };
        seen += 1;
        let span = &line["span"];
        assert_eq!(span["request_id"], format!("burst-{n}"), "{line}");
        assert_eq!(span["route"], "/burst/{n}", "{line}");
        if line["message"] == "in app span" {
            assert_eq!(line["spans"][0]["name"], "lookup", "{line}");
            assert_eq!(line["spans"][0]["table"], "items", "{line}");
        }
    }
    assert_eq!(seen, 32 * 4, "{:?}", lines.json());
    let access = lines
        .json()
        .into_iter()
        .filter(|l| l["target"] == "tern::access")
        .count();
    assert_eq!(access, 32);
}

#[tokio::test]
async fn the_text_format_writes_the_request_before_the_message() {
    let lines = Lines::default();
    let _default =
        tracing::subscriber::set_default(tern_subscriber(&lines, tern::log::Format::Text, "info"));
    let server = common::spawn_with(app(), config()).await;
    let res = ask(
        &server,
        &[
            ("x-request-id", "req-text-1"),
            ("x-forwarded-for", "203.0.113.9"),
            ("traceparent", INCOMING),
        ],
    )
    .await;
    assert_eq!(res.status, 200);
    let res = common::get(&server, "/burst/3").await;
    assert_eq!(res.status, 200);
    server.shutdown().await;
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` in {text}"))
            .to_owned()
    };
    let handler = line("in handler");
    assert!(
        handler.contains(
            " INFO request{method=GET route=/users/{id:u64} request_id=req-text-1 \
             client=203.0.113.9 trace_id=4bf92f3577b34da6a3ce929d0e0e4736}: in handler"
        ),
        "{handler}"
    );
    assert!(line("in task").contains("request_id=req-text-1"), "{text}");
    let access = line("path=\"/users/42\"");
    assert!(
        access.contains("trace_id=4bf92f3577b34da6a3ce929d0e0e4736 status=200 latency_us="),
        "{access}"
    );
    let nested = line("in app span");
    assert!(
        nested.contains("route=/burst/{n} request_id=")
            && nested.contains("}: lookup{table=\"items\"}: in app span n=3"),
        "{nested}"
    );
    // A line outside any request has no request part.
    tracing::info!("after the server");
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let last = text.lines().last().unwrap();
    assert!(last.ends_with(" INFO after the server"), "{last}");
}
