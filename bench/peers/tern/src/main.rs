//! Bench peer: Tern itself, built from this repository, configured like
//! the other peers: one current-thread tokio runtime, `Server::serve_with_shutdown`,
//! the access log off, the health route off, tower-http's
//! `CompressionLayer` on the two compression routes only, Tern's `{id:u64}`
//! constraint on the constrained routes.
//!
//! What stays on because it is part of Tern's cost per request: the
//! request ID (generated and sent as `x-request-id`), the framing checks
//! (one `Host`, `chunked` only), the body limit, the request timeout and
//! the panic guard. Development mode: no security headers (production
//! would add them).
//!
//! `BENCH_OPS` turns on what operators use, for `tern-bench ops` to
//! measure its cost: `off` (default), `metrics` (`TERN_METRICS`, nothing
//! scraping), `span` (Tern's default log output at `info`: since `278290f`
//! the request's fields for its lines, which replaced the request span
//! there, though no line is written; `TERN_LOG_FORMAT` for the format),
//! or `all`.
//!
//! `BENCH_ADDR` (default `127.0.0.1:8080`) is the address. Prints
//! `listening on ADDR` once bound; `SIGTERM` or Ctrl-C drains and exits.

use std::{io, time::Duration};

use peer_common::{workload as w, Message, Payload, ReadResponse, User, WriteResponse};
use tern::{
    extract::Path,
    http::{header, Method},
    routing::{get, on, MethodRouter},
    App, Config, IntoResponse, Json, Response, Server, StatusCode,
};
use tower_http::compression::CompressionLayer;

fn main() -> io::Result<()> {
    let mut config = Config::default();
    config.workers = 1;
    config.access_log = false;
    config.health_path = None;
    // The other peers give in-flight requests 5 s at shutdown.
    config.timeouts.shutdown = Duration::from_secs(5);
    // Tern's own HTTP/1 connection is the default (issue 31);
    // `TERN_HTTP1=hyper` measures hyper's HTTP/1 server under Tern.
    if std::env::var("TERN_HTTP1").as_deref() == Ok("hyper") {
        config.http1 = tern::config::Http1Engine::Hyper;
    }
    let ops = std::env::var("BENCH_OPS").unwrap_or_default();
    match ops.as_str() {
        "" | "off" => {}
        "metrics" => config.metrics = true,
        // `TERN_LOG_FORMAT` (json) is the environment's.
        "span" => tern::init_logging(),
        "all" => {
            config.metrics = true;
            tern::init_logging();
        }
        other => {
            return Err(io::Error::other(format!(
                "BENCH_OPS `{other}` is none of off, metrics, span, all"
            )))
        }
    }
    let service = app().build_with(config).map_err(io::Error::other)?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::from_std(peer_common::bind()?)?;
            peer_common::announce(listener.local_addr()?);
            Server::new(service)
                .serve_with_shutdown(listener, tern::shutdown_signal())
                .await
        })
}

fn app() -> App {
    let mut app = App::new()
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
        .route(
            "/compression/text",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, w::TEXT_PLAIN)],
                    w::compression_text(),
                )
            })
            .layer(CompressionLayer::new()),
        )
        .route(
            "/compression/json",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, w::APPLICATION_JSON)],
                    w::compression_json(),
                )
            })
            .layer(CompressionLayer::new()),
        );
    for route in w::mixed_routes() {
        app = app.route(&route.tern_pattern, mixed(&route));
    }
    #[cfg(feature = "slowdown")]
    {
        app = app.layer(tern::middleware::from_fn(slowdown));
    }
    app
}

/// The injected cost of the `slowdown` feature: `BENCH_SLOWDOWN_ITERS`
/// rounds of fixed work per request ([`w::spin`]), the same instructions
/// every time, so that both of the gate's signals (throughput and
/// callgrind's instruction count) can see it.
#[cfg(feature = "slowdown")]
async fn slowdown(req: tern::Request, next: tern::middleware::Next) -> Response {
    static ITERATIONS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let iterations = *ITERATIONS.get_or_init(|| {
        std::env::var("BENCH_SLOWDOWN_ITERS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1_000)
    });
    std::hint::black_box(w::spin(iterations));
    next.run(req).await
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

/// The handler of one mixed route. Constrained routes are registered as
/// `{id:u64}`: the router refuses other values, the handler checks nothing.
fn mixed(route: &w::Route) -> MethodRouter {
    let method = match route.method {
        w::Method::Get => Method::GET,
        w::Method::Post => Method::POST,
        w::Method::Put => Method::PUT,
        w::Method::Patch => Method::PATCH,
        w::Method::Delete => Method::DELETE,
    };
    let index = route.index;
    match (route.param_names().len(), route.method.is_write()) {
        (0, false) => on(method, move || async move { read(index, &[]) }),
        (0, true) => on(method, move |Json(p): Json<Payload>| async move {
            write(index, &[], &p)
        }),
        (1, false) => on(method, move |Path(a): Path<String>| async move {
            read(index, &[&a])
        }),
        (1, true) => on(
            method,
            move |Path(a): Path<String>, Json(p): Json<Payload>| async move { write(index, &[&a], &p) },
        ),
        (_, false) => on(
            method,
            move |Path((a, b)): Path<(String, String)>| async move { read(index, &[&a, &b]) },
        ),
        (_, true) => on(
            method,
            move |Path((a, b)): Path<(String, String)>, Json(p): Json<Payload>| async move {
                write(index, &[&a, &b], &p)
            },
        ),
    }
}
