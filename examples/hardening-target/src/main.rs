//! The server the hardening checks in `hardening/` attack: a Tern app with
//! the default configuration (limits, timeouts) read from the environment,
//! answering every method on every path, reading request bodies.
//!
//! `TERN_ADDR=127.0.0.1:4000 cargo run --release -p example-hardening-target`
//!
//! - any path, `GET`/`HEAD`/`DELETE`/`OPTIONS`: `200 ok`;
//! - any path, `POST`/`PUT`/`PATCH`: reads the whole body (within
//!   `TERN_MAX_BODY_BYTES`) and answers `200` with its length;
//! - every answer names the request it answers in `x-seen: METHOD PATH`,
//!   so a check can tell which requests the server believes it received
//!   (a smuggled one shows up there);
//! - `/panic`: a handler that panics (one 500, the server goes on);
//! - `/sleep/{ms}`: answers after `ms` milliseconds (for drain and timeout
//!   checks);
//! - `/big/{kib}`: a body of `kib` KiB (for slow readers);
//! - `/h2/instant`, any method: answers at once without reading the
//!   request body; `/h2/slow/{ms}`, any method: answers after `ms`
//!   milliseconds, without reading the body (for `h2_conformance.py`: the
//!   same frames must get the same answer whichever of the handler and the
//!   client is faster).

use std::time::Duration;

use tern::{
    extract::Path,
    http::{HeaderName, HeaderValue},
    routing::{any, get},
    App, Bytes, IntoResponse, Method, Uri,
};

async fn anything(method: Method, uri: Uri, body: Bytes) -> impl IntoResponse {
    let seen = format!("{method} {}", uri.path());
    let text = match method {
        Method::POST | Method::PUT | Method::PATCH => format!("read {} bytes", body.len()),
        _ => "ok".to_owned(),
    };
    let seen = HeaderValue::try_from(seen).unwrap_or(HeaderValue::from_static("?"));
    ([(HeaderName::from_static("x-seen"), seen)], text)
}

async fn panics() -> &'static str {
    panic!("the hardening target's /panic route")
}

async fn sleep(Path(ms): Path<u64>) -> String {
    tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
    format!("slept {ms} ms")
}

async fn instant() -> &'static str {
    "instant"
}

async fn slow_unread(Path(ms): Path<u64>) -> String {
    tokio::time::sleep(Duration::from_millis(ms.min(60_000))).await;
    format!("slept {ms} ms")
}

async fn big(Path(kib): Path<usize>) -> Vec<u8> {
    vec![b'x'; kib.min(64 * 1024) * 1024]
}

fn app() -> App {
    App::new()
        .route("/panic", get(panics))
        .route("/sleep/{ms:u64}", get(sleep))
        .route("/big/{kib:u64}", get(big))
        .route("/h2/instant", any(instant))
        .route("/h2/slow/{ms:u64}", any(slow_unread))
        .route("/", any(anything))
        .route("/{*rest}", any(anything))
}

fn main() -> Result<(), tern::Error> {
    tern::run(app())
}
