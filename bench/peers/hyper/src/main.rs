//! Bench peer: bare hyper 1, the floor the other servers are measured
//! from. A `match` on method and path for the fixed endpoints, matchit 0.8
//! for the mixed routes, serde_json for bodies, one current-thread tokio
//! runtime.
//!
//! `BENCH_ADDR` (default `127.0.0.1:8080`) is the address;
//! `BENCH_PIPELINE_FLUSH=1` turns on hyper's `pipeline_flush` (off by
//! default, as in hyper). Prints `listening on ADDR` once bound; `SIGTERM`
//! or Ctrl-C stops accepting, closes idle connections and exits (in-flight
//! requests get up to 5 s).

use std::{convert::Infallible, io, sync::Arc, time::Duration};

use bytes::Bytes;
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::{
    rt::{TokioExecutor, TokioIo},
    server::{conn::auto, graceful::GracefulShutdown},
};
use peer_common::{is_digits, workload as w, Message, Payload, ReadResponse, User, WriteResponse};
use tokio::{
    net::TcpListener,
    signal::unix::{signal, SignalKind},
};

type Res = Response<Full<Bytes>>;

const TEXT_PLAIN: HeaderValue = HeaderValue::from_static(w::TEXT_PLAIN);
const APPLICATION_JSON: HeaderValue = HeaderValue::from_static(w::APPLICATION_JSON);
const OCTET_STREAM: HeaderValue = HeaderValue::from_static(w::OCTET_STREAM);

/// A mixed route as the matchit table holds it.
struct Entry {
    index: usize,
    method: Method,
    digits_only: bool,
}

struct App {
    mixed: matchit::Router<Entry>,
}

impl App {
    fn new() -> Result<App, matchit::InsertError> {
        let mut mixed = matchit::Router::new();
        for route in w::mixed_routes() {
            let method = match route.method {
                w::Method::Get => Method::GET,
                w::Method::Post => Method::POST,
                w::Method::Put => Method::PUT,
                w::Method::Patch => Method::PATCH,
                w::Method::Delete => Method::DELETE,
            };
            mixed.insert(
                route.pattern,
                Entry {
                    index: route.index,
                    method,
                    digits_only: route.digits_only,
                },
            )?;
        }
        Ok(App { mixed })
    }
}

fn main() -> io::Result<()> {
    let pipeline_flush = std::env::var("BENCH_PIPELINE_FLUSH").is_ok_and(|v| v == "1");
    let app = Arc::new(App::new().map_err(io::Error::other)?);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve(app, pipeline_flush))
}

async fn serve(app: Arc<App>, pipeline_flush: bool) -> io::Result<()> {
    let listener = TcpListener::from_std(peer_common::bind()?)?;
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().pipeline_flush(pipeline_flush);
    let graceful = GracefulShutdown::new();
    let mut term = signal(SignalKind::terminate())?;
    peer_common::announce(listener.local_addr()?);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors: back off rather than spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        };
        let _ = stream.set_nodelay(true);
        let app = Arc::clone(&app);
        let service = service_fn(move |req| {
            let app = Arc::clone(&app);
            async move { Ok::<_, Infallible>(handle(&app, req).await) }
        });
        let conn = builder
            .serve_connection(TokioIo::new(stream), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
    Ok(())
}

async fn handle(app: &App, req: Request<Incoming>) -> Res {
    if req.method() == Method::GET {
        let path = req.uri().path();
        let fixed = match path {
            "/plaintext" => Some(bytes(TEXT_PLAIN, w::PLAINTEXT.as_bytes())),
            "/json" => Some(json(&Message::hello())),
            "/small" => Some(bytes(OCTET_STREAM, w::body(w::SMALL_LEN))),
            "/medium" => Some(bytes(OCTET_STREAM, w::body(w::MEDIUM_LEN))),
            "/large" => Some(bytes(OCTET_STREAM, w::body(w::LARGE_LEN))),
            "/compression/text" => {
                Some(compressed(req.headers(), TEXT_PLAIN, w::compression_text()))
            }
            "/compression/json" => Some(compressed(
                req.headers(),
                APPLICATION_JSON,
                w::compression_json(),
            )),
            "/llms.txt" => Some(match tokio::fs::read(w::llms_txt_path()).await {
                Ok(body) => with_type(TEXT_PLAIN, Bytes::from(body)),
                Err(_) => status(StatusCode::INTERNAL_SERVER_ERROR),
            }),
            _ => path
                .strip_prefix("/user/")
                .map(|id| match id.parse::<u64>() {
                    Ok(id) => json(&User::new(id)),
                    Err(_) => status(StatusCode::NOT_FOUND),
                }),
        };
        if let Some(res) = fixed {
            return res;
        }
    }
    mixed(app, req).await
}

async fn mixed(app: &App, req: Request<Incoming>) -> Res {
    let (parts, body) = req.into_parts();
    let Ok(matched) = app.mixed.at(parts.uri.path()) else {
        return status(StatusCode::NOT_FOUND);
    };
    let route = matched.value;
    if route.method != parts.method {
        return status(StatusCode::METHOD_NOT_ALLOWED);
    }
    // At most two parameters in the table: no allocation for them.
    let mut values = [""; 2];
    let mut n = 0;
    for (_, value) in matched.params.iter() {
        if n == values.len() {
            return status(StatusCode::NOT_FOUND);
        }
        values[n] = value;
        n += 1;
    }
    let params = &values[..n];
    if route.digits_only && !params.iter().all(|p| is_digits(p)) {
        return status(StatusCode::NOT_FOUND);
    }
    if !matches!(route.method, Method::POST | Method::PUT | Method::PATCH) {
        return json(&ReadResponse {
            route: route.index,
            params,
        });
    }
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|ct| ct.as_bytes().starts_with(b"application/json"));
    if !is_json {
        return status(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
    let Ok(collected) = body.collect().await else {
        return status(StatusCode::BAD_REQUEST);
    };
    match serde_json::from_slice::<Payload>(&collected.to_bytes()) {
        Ok(payload) => json(&WriteResponse::new(route.index, params, &payload)),
        Err(_) => status(StatusCode::BAD_REQUEST),
    }
}

fn with_type(content_type: HeaderValue, body: Bytes) -> Res {
    let mut res = Response::new(Full::new(body));
    res.headers_mut().insert(header::CONTENT_TYPE, content_type);
    res
}

fn bytes(content_type: HeaderValue, body: &'static [u8]) -> Res {
    with_type(content_type, Bytes::from_static(body))
}

fn json<T: serde::Serialize>(value: &T) -> Res {
    match serde_json::to_vec(value) {
        Ok(body) => with_type(APPLICATION_JSON, Bytes::from(body)),
        Err(_) => status(StatusCode::INTERNAL_SERVER_ERROR),
    }
}

fn status(code: StatusCode) -> Res {
    let mut res = Response::new(Full::new(Bytes::new()));
    *res.status_mut() = code;
    res
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

/// The encoding `Accept-Encoding` prefers among br and gzip: the highest
/// q-value, br on a tie, none with q=0 (as tower-http decides).
fn preferred(headers: &HeaderMap) -> Encoding {
    let mut best = (0u16, Encoding::Identity);
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or_default().trim();
            let q = parts
                .find_map(|p| p.trim().strip_prefix("q="))
                .map_or(1000, |q| {
                    (q.trim().parse::<f32>().unwrap_or(0.0) * 1000.0) as u16
                });
            let encoding = if name.eq_ignore_ascii_case("br") {
                Encoding::Brotli
            } else if name.eq_ignore_ascii_case("gzip") {
                Encoding::Gzip
            } else {
                continue;
            };
            let rank = |e| if e == Encoding::Brotli { 2 } else { 1 };
            if q > 0 && (q > best.0 || (q == best.0 && rank(encoding) > rank(best.1))) {
                best = (q, encoding);
            }
        }
    }
    best.1
}

/// Compresses per request with the levels tower-http uses by default
/// (what the axum and Tern peers run): gzip 6, brotli quality 4 with a
/// 22-bit window.
fn compressed(headers: &HeaderMap, content_type: HeaderValue, body: &'static [u8]) -> Res {
    use std::io::Write;
    let (encoded, name) = match preferred(headers) {
        Encoding::Identity => return bytes(content_type, body),
        Encoding::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(
                Vec::with_capacity(body.len() / 4),
                flate2::Compression::new(6),
            );
            let out = enc.write_all(body).and_then(|()| enc.finish());
            (out, "gzip")
        }
        Encoding::Brotli => {
            let mut enc =
                brotli::CompressorWriter::new(Vec::with_capacity(body.len() / 4), 4096, 4, 22);
            let out = enc.write_all(body).map(|()| enc.into_inner());
            (out, "br")
        }
    };
    let Ok(encoded) = encoded else {
        return status(StatusCode::INTERNAL_SERVER_ERROR);
    };
    let mut res = with_type(content_type, Bytes::from(encoded));
    let headers = res.headers_mut();
    headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(name));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    res
}
