//! Bench peer: axum 0.8, served by `axum::serve` on one current-thread
//! tokio runtime, with tower-http's `CompressionLayer` (gzip, br) on the
//! two compression routes only.
//!
//! `BENCH_ADDR` (default `127.0.0.1:8080`) is the address. Prints
//! `listening on ADDR` once bound; `SIGTERM` or Ctrl-C stops accepting,
//! lets in-flight requests finish and exits.

use std::io;

use axum::{
    extract::Path,
    http::{header, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, on, MethodFilter, MethodRouter},
    serve::ListenerExt,
    Json, Router,
};
use peer_common::{is_digits, workload as w, Message, Payload, ReadResponse, User, WriteResponse};
use tower_http::compression::CompressionLayer;

fn main() -> io::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve())
}

async fn serve() -> io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(peer_common::bind()?)?;
    peer_common::announce(listener.local_addr()?);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app())
        .with_graceful_shutdown(shutdown())
        .await
}

async fn shutdown() {
    let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

fn app() -> Router {
    let compressed = Router::new()
        .route(
            "/compression/text",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, w::TEXT_PLAIN)],
                    w::compression_text(),
                )
            }),
        )
        .route(
            "/compression/json",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, w::APPLICATION_JSON)],
                    w::compression_json(),
                )
            }),
        )
        .layer(CompressionLayer::new());
    let mut app = Router::new()
        .route("/plaintext", get(|| async { w::PLAINTEXT }))
        .route("/json", get(|| async { Json(Message::hello()) }))
        .route("/small", get(|| async { w::body(w::SMALL_LEN) }))
        .route("/medium", get(|| async { w::body(w::MEDIUM_LEN) }))
        .route("/large", get(|| async { w::body(w::LARGE_LEN) }))
        .route(
            "/user/{id}",
            get(|Path(id): Path<u64>| async move { Json(User::new(id)) }),
        )
        .route("/llms.txt", get(llms_txt))
        .merge(compressed);
    for route in w::mixed_routes() {
        app = app.route(&route.pattern, mixed(&route));
    }
    app
}

async fn llms_txt() -> Response {
    match tokio::fs::read(w::llms_txt_path()).await {
        Ok(body) => ([(header::CONTENT_TYPE, w::TEXT_PLAIN)], body).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

fn read(route: usize, params: &[&str]) -> Response {
    Json(ReadResponse { route, params }).into_response()
}

fn write(route: usize, params: &[&str], payload: &Payload) -> Response {
    Json(WriteResponse::new(route, params, payload)).into_response()
}

/// The handler of one mixed route: its method, its number of parameters,
/// read or write. axum has no route constraints: a constrained route
/// checks its parameter here and answers `404`.
fn mixed(route: &w::Route) -> MethodRouter {
    let filter = match route.method {
        w::Method::Get => MethodFilter::GET,
        w::Method::Post => MethodFilter::POST,
        w::Method::Put => MethodFilter::PUT,
        w::Method::Patch => MethodFilter::PATCH,
        w::Method::Delete => MethodFilter::DELETE,
    };
    let index = route.index;
    let digits = route.digits_only;
    match (route.param_names().len(), route.method.is_write()) {
        (0, false) => on(filter, move || async move { read(index, &[]) }),
        (0, true) => on(filter, move |Json(p): Json<Payload>| async move {
            write(index, &[], &p)
        }),
        (1, false) => on(filter, move |Path(a): Path<String>| async move {
            if digits && !is_digits(&a) {
                return StatusCode::NOT_FOUND.into_response();
            }
            read(index, &[&a])
        }),
        (1, true) => on(
            filter,
            move |Path(a): Path<String>, Json(p): Json<Payload>| async move {
                if digits && !is_digits(&a) {
                    return StatusCode::NOT_FOUND.into_response();
                }
                write(index, &[&a], &p)
            },
        ),
        (_, false) => on(
            filter,
            move |Path((a, b)): Path<(String, String)>| async move { read(index, &[&a, &b]) },
        ),
        (_, true) => on(
            filter,
            move |Path((a, b)): Path<(String, String)>, Json(p): Json<Payload>| async move {
                write(index, &[&a, &b], &p)
            },
        ),
    }
}
