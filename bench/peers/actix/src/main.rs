//! Bench peer: actix-web 4 with one worker (`workers(1)`) in a
//! single-threaded actix system, and its `Compress` middleware on the two
//! compression routes only.
//!
//! `BENCH_ADDR` (default `127.0.0.1:8080`) is the address. Prints
//! `listening on ADDR` once bound; `SIGTERM` or Ctrl-C stops it gracefully
//! (actix's own signal handling; in-flight requests get up to 5 s).
//!
//! Where it cannot match the others: actix-web has no cleartext HTTP/2
//! (h2c), so it serves HTTP/1.1 only and the `h2` workload skips it; its
//! acceptor runs on a thread of its own beside the one worker; its
//! `Compress` uses its own fixed levels (gzip "fast" = 1, brotli quality
//! 3) where tower-http's defaults are gzip 6 and brotli 4; compressed
//! bodies are streamed (chunked), like tower-http's.

use std::{io, time::Duration};

use actix_web::{
    http::{header::ContentType, Method, StatusCode},
    middleware::Compress,
    web, App, HttpResponse, HttpServer, Route,
};
use peer_common::{is_digits, workload as w, Message, Payload, ReadResponse, User, WriteResponse};

#[actix_web::main]
async fn main() -> io::Result<()> {
    let listener = peer_common::bind()?;
    let addr = listener.local_addr()?;
    let routes = w::mixed_routes();
    let server = HttpServer::new(move || {
        let mut app = App::new()
            .route("/plaintext", web::get().to(|| async { w::PLAINTEXT }))
            .route(
                "/json",
                web::get().to(|| async { web::Json(Message::hello()) }),
            )
            .route("/small", web::get().to(|| async { w::body(w::SMALL_LEN) }))
            .route(
                "/medium",
                web::get().to(|| async { w::body(w::MEDIUM_LEN) }),
            )
            .route("/large", web::get().to(|| async { w::body(w::LARGE_LEN) }))
            .route(
                "/user/{id}",
                web::get().to(|id: web::Path<u64>| async move { web::Json(User::new(*id)) }),
            )
            .route("/llms.txt", web::get().to(llms_txt))
            .service(
                web::resource("/compression/text")
                    .wrap(Compress::default())
                    .route(web::get().to(|| async {
                        HttpResponse::Ok()
                            .content_type(w::TEXT_PLAIN)
                            .body(w::compression_text())
                    })),
            )
            .service(
                web::resource("/compression/json")
                    .wrap(Compress::default())
                    .route(web::get().to(|| async {
                        HttpResponse::Ok()
                            .content_type(ContentType::json())
                            .body(w::compression_json())
                    })),
            );
        for route in &routes {
            app = app.route(&route.actix_pattern, mixed(route));
        }
        app
    })
    .workers(1)
    .tcp_nodelay(true)
    // Tern's defaults, so that the idle-connection and slow-head behaviour
    // match (actix's own are 5 s for both).
    .keep_alive(Duration::from_secs(60))
    .client_request_timeout(Duration::from_secs(10))
    .shutdown_timeout(5)
    .listen(listener)?;
    peer_common::announce(addr);
    server.run().await
}

async fn llms_txt() -> HttpResponse {
    match tokio::fs::read(w::llms_txt_path()).await {
        Ok(body) => HttpResponse::Ok().content_type(w::TEXT_PLAIN).body(body),
        Err(_) => HttpResponse::InternalServerError().finish(),
    }
}

fn read(route: usize, params: &[&str]) -> HttpResponse {
    HttpResponse::Ok().json(ReadResponse { route, params })
}

fn write(route: usize, params: &[&str], payload: &Payload) -> HttpResponse {
    HttpResponse::Ok().json(WriteResponse::new(route, params, payload))
}

fn not_found() -> HttpResponse {
    HttpResponse::new(StatusCode::NOT_FOUND)
}

/// The handler of one mixed route. The router already enforces `\d+` on
/// constrained routes; the check here is the same as the other peers' and
/// never fails for a path the router let through.
fn mixed(route: &w::Route) -> Route {
    let method = match route.method {
        w::Method::Get => Method::GET,
        w::Method::Post => Method::POST,
        w::Method::Put => Method::PUT,
        w::Method::Patch => Method::PATCH,
        w::Method::Delete => Method::DELETE,
    };
    let index = route.index;
    let digits = route.digits_only;
    let r = web::method(method);
    match (route.param_names().len(), route.method.is_write()) {
        (0, false) => r.to(move || async move { read(index, &[]) }),
        (0, true) => r.to(move |p: web::Json<Payload>| async move { write(index, &[], &p) }),
        (1, false) => r.to(move |a: web::Path<String>| async move {
            if digits && !is_digits(&a) {
                return not_found();
            }
            read(index, &[&a])
        }),
        (1, true) => r.to(
            move |a: web::Path<String>, p: web::Json<Payload>| async move {
                if digits && !is_digits(&a) {
                    return not_found();
                }
                write(index, &[&a], &p)
            },
        ),
        (_, false) => {
            r.to(move |ab: web::Path<(String, String)>| async move { read(index, &[&ab.0, &ab.1]) })
        }
        (_, true) => r.to(
            move |ab: web::Path<(String, String)>, p: web::Json<Payload>| async move {
                write(index, &[&ab.0, &ab.1], &p)
            },
        ),
    }
}
