//! Arbitrary bytes through Tern's whole request path, in process: hyper's
//! HTTP/1.1 parser, Tern's framing and limit checks, routing (static,
//! typed, glob), extractors (`Path`, `Query`, `Json`, `Form`, `Bytes`,
//! headers) and body limits, over an in-memory connection.
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run request_path`
//!
//! The checks: nothing panics outside a handler (a panic inside one is a
//! 500, and the fuzzer's own panic hook would report it anyway), the
//! connection always ends, and every response the server writes starts with
//! a well-formed status line.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use tern::{
    extract::{Form, Path, Query},
    routing::{any, get, post},
    App, AppService, Bytes, HeaderMap, Json,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Deserialize)]
struct Item {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    tags: Vec<String>,
}

#[derive(Deserialize)]
struct Search {
    #[allow(dead_code)]
    q: Option<String>,
    #[allow(dead_code)]
    tag: Option<Vec<String>>,
}

fn app() -> AppService {
    let mut config = tern::Config::default();
    config.limits.max_body_bytes = 4096;
    config.timeouts.request = Duration::from_millis(200);
    App::new()
        .route("/", get(|| async { "home" }))
        .route(
            "/users/{id:u64}",
            get(|Path(id): Path<u64>| async move { id.to_string() }),
        )
        .route(
            "/repos/{owner}/{name}",
            get(|Path((o, n)): Path<(String, String)>| async move { format!("{o}/{n}") }),
        )
        .route(
            "/files/{*path}",
            get(|Path(p): Path<String>| async move { p }),
        )
        .route("/search", get(|Query(_): Query<Search>| async { "found" }))
        .route("/items", post(|Json(_): Json<Item>| async { "created" }))
        .route("/form", post(|Form(_): Form<Search>| async { "posted" }))
        .route(
            "/echo",
            any(|h: HeaderMap, b: Bytes| async move { format!("{} {}", h.len(), b.len()) }),
        )
        .build_with(config)
        .expect("the fuzz app builds")
}

fuzz_target!(|data: &[u8]| {
    thread_local! {
        static APP: AppService = app();
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
    }
    let app = APP.with(Clone::clone);
    RT.with(|rt| {
        rt.block_on(async move {
            let (mut client, server) = tokio::io::duplex(64 * 1024);
            let service = hyper_util::service::TowerToHyperService::new(app);
            let conn = hyper::server::conn::http1::Builder::new()
                .max_buf_size(16 * 1024)
                .serve_connection(hyper_util::rt::TokioIo::new(server), service);
            let conn = tokio::spawn(conn);
            let _ = client.write_all(data).await;
            let _ = client.shutdown().await;
            let mut out = Vec::new();
            let read =
                tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut out)).await;
            assert!(read.is_ok(), "the connection did not end within 5 s");
            let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
            if !out.is_empty() {
                assert!(
                    out.starts_with(b"HTTP/1.1 ") || out.starts_with(b"HTTP/1.0 "),
                    "not a status line: {:?}",
                    &out[..out.len().min(40)]
                );
            }
        });
    });
});
