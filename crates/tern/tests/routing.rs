//! Routing and middleware over real sockets: 404, 405 with `Allow`, `HEAD`,
//! `OPTIONS`, scopes, fallback, middleware order (global, scope, route),
//! tower-http layers unchanged, the problem renderer, build errors.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use bytes::Bytes;
use common::{request, send};
use http::{HeaderValue, StatusCode};
use http_body_util::Full;
use tern::{
    extract::Path,
    middleware::{from_fn, from_fn_with_state, Next},
    routing::{any, get, post},
    App, IntoResponse, Json, Problem, Request, Response,
};

fn tag(
    name: &'static str,
) -> impl Fn(Request, Next) -> std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>>
       + Clone {
    move |req: Request, next: Next| {
        Box::pin(async move {
            let mut res = next.run(req).await;
            let trail = res
                .headers()
                .get("x-trail")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default();
            // Outer middleware appends last: the trail reads inside-out.
            res.headers_mut().insert(
                "x-trail",
                HeaderValue::from_str(&format!("{trail}{name};")).unwrap(),
            );
            res
        })
    }
}

fn app() -> App {
    App::new()
        .route("/", get(|| async { "home" }).post(|| async { "posted" }))
        .route(
            "/users/{id:u64}",
            get(|Path(id): Path<u64>| async move { format!("user {id}") }),
        )
        .route("/users/new", get(|| async { "new user form" }))
        .route(
            "/users/{id}/edit",
            get(|Path(id): Path<String>| async move { format!("edit {id}") }),
        )
        .route(
            "/files/{*path}",
            get(|Path(p): Path<String>| async move { p }),
        )
        .route("/any", any(|m: tern::Method| async move { m.to_string() }))
        .scope("/api", |api| {
            api.route("/ping", get(|| async { "pong" }))
                .route(
                    "/traced",
                    get(|| async { "traced" }).layer(from_fn(tag("route"))),
                )
                .scope("/v2", |v2| v2.route("/", get(|| async { "v2 root" })))
                .layer(from_fn(tag("scope")))
        })
        .layer(from_fn(tag("global")))
}

#[tokio::test]
async fn statuses_for_unknown_paths_and_methods() {
    let server = common::spawn(app()).await;
    let client = common::client();

    let res = common::get(&server, "/nope").await;
    let doc = res.problem(404);
    assert!(doc["detail"].as_str().unwrap().contains("/nope"), "{doc}");

    let res = send(
        &client,
        request("DELETE", &server.url("/users/1"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    res.problem(405);
    assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS"));

    let res = send(
        &client,
        request("PUT", &server.url("/"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    res.problem(405);
    assert_eq!(res.header("allow"), Some("GET, HEAD, POST, OPTIONS"));

    let res = send(
        &client,
        request("OPTIONS", &server.url("/"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.status, StatusCode::NO_CONTENT);
    assert_eq!(res.header("allow"), Some("GET, HEAD, POST, OPTIONS"));

    let res = send(
        &client,
        request("HEAD", &server.url("/users/7"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.status, 200);
    assert!(res.body.is_empty());
    assert_eq!(res.header("content-length"), Some("6"));

    let res = send(
        &client,
        request("PATCH", &server.url("/any"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.text(), "PATCH");
    server.shutdown().await;
}

#[tokio::test]
async fn priority_backtracking_and_globs() {
    let server = common::spawn(app()).await;
    for (path, body) in [
        ("/users/42", "user 42"),
        ("/users/new", "new user form"),
        ("/users/new/edit", "edit new"),
        ("/users/abc/edit", "edit abc"),
        ("/files/a/b/c.txt", "a/b/c.txt"),
        ("/files/caf%C3%A9", "café"),
        ("/api/ping", "pong"),
        ("/api/v2", "v2 root"),
    ] {
        let res = common::get(&server, path).await;
        assert_eq!(res.status, 200, "{path}: {}", res.text());
        assert_eq!(res.text(), body, "{path}");
    }
    // A constraint that does not match is not found, not a bad request.
    common::get(&server, "/users/abc").await.problem(404);
    // A malformed escape is the client's error.
    let res = common::get(&server, "/files/%zz").await;
    res.problem(400);
    server.shutdown().await;
}

#[tokio::test]
async fn middleware_runs_global_then_scope_then_route() {
    let server = common::spawn(app()).await;
    let res = common::get(&server, "/api/traced").await;
    assert_eq!(res.text(), "traced");
    assert_eq!(res.header("x-trail"), Some("route;scope;global;"));
    let res = common::get(&server, "/api/ping").await;
    assert_eq!(res.header("x-trail"), Some("scope;global;"));
    let res = common::get(&server, "/").await;
    assert_eq!(res.header("x-trail"), Some("global;"));
    // Global middleware also sees requests that match no route.
    let res = common::get(&server, "/missing").await;
    assert_eq!(res.header("x-trail"), Some("global;"));
    server.shutdown().await;
}

#[tokio::test]
async fn middleware_can_answer_on_its_own_and_use_state() {
    async fn guard(token: &'static str, req: Request, next: Next) -> Response {
        let ok = req.headers().get("x-token").is_some_and(|v| v == token);
        if ok {
            next.run(req).await
        } else {
            Problem::new(StatusCode::UNAUTHORIZED)
                .with_detail("send the `x-token` header")
                .into_response()
        }
    }
    let app = App::new()
        .route("/secret", get(|| async { "the secret" }))
        .layer(from_fn_with_state("letmein", guard));
    let server = common::spawn(app).await;
    common::get(&server, "/secret").await.problem(401);
    let res = send(
        &common::client(),
        request("GET", &server.url("/secret"))
            .header("x-token", "letmein")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.text(), "the secret");
    server.shutdown().await;
}

#[tokio::test]
async fn tower_http_layers_work_unchanged() {
    use tower_http::{compression::CompressionLayer, cors::CorsLayer};
    let big = "tern ".repeat(2000);
    let app = App::new()
        .route(
            "/big",
            get(move || {
                let big = big.clone();
                async move { big }
            }),
        )
        .layer(CompressionLayer::new())
        .layer(CorsLayer::permissive());
    let server = common::spawn(app).await;
    let res = send(
        &common::client(),
        request("GET", &server.url("/big"))
            .header("accept-encoding", "gzip")
            .header("origin", "https://example.com")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.status, 200);
    assert_eq!(res.header("content-encoding"), Some("gzip"));
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    assert!(
        res.body.len() < 10_000 / 4,
        "compressed: {} bytes",
        res.body.len()
    );
    server.shutdown().await;
}

#[tokio::test]
async fn tower_timeout_layer_per_route() {
    use std::time::Duration;
    let app = App::new().route(
        "/slow",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            "late"
        })
        .layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(
            100,
        ))),
    );
    let server = common::spawn(app).await;
    common::get(&server, "/slow").await.problem(503);
    server.shutdown().await;
}

#[tokio::test]
async fn fallback_and_custom_problem_renderer() {
    let app = App::new()
        .route("/", get(|| async { "home" }))
        .route(
            "/json",
            post(|Json(v): Json<serde_json::Value>| async move { Json(v) }),
        )
        .fallback(|uri: tern::Uri| async move {
            (
                StatusCode::NOT_FOUND,
                format!("custom 404 for {}", uri.path()),
            )
        });
    let server = common::spawn(app).await;
    let res = common::get(&server, "/elsewhere").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.text(), "custom 404 for /elsewhere");
    server.shutdown().await;

    let app = App::new()
        .route(
            "/json",
            post(|Json(v): Json<serde_json::Value>| async move { Json(v) }),
        )
        .problem_renderer(|p: &Problem| {
            let mut res = format!("ERROR {}: {}", p.status().as_u16(), p.detail()).into_response();
            *res.status_mut() = p.status();
            res
        });
    let server = common::spawn(app).await;
    let res = send(
        &common::client(),
        request("POST", &server.url("/json"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from("{oops")))
            .unwrap(),
    )
    .await;
    assert_eq!(res.status, 400);
    assert!(
        res.text()
            .starts_with("ERROR 400: the body is not valid JSON"),
        "{}",
        res.text()
    );
    assert_eq!(
        res.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let res = common::get(&server, "/nothing").await;
    assert!(res.text().starts_with("ERROR 404"), "{}", res.text());
    server.shutdown().await;
}

#[test]
fn conflicts_and_bad_routes_fail_the_build_with_both_routes_named() {
    let err = App::new()
        .route("/users/{id}", get(|| async { "a" }))
        .route("/users/{name}", get(|| async { "b" }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/users/{id}") && err.contains("/users/{name}"),
        "{err}"
    );

    let err = App::new()
        .route("/x", get(|| async { "a" }))
        .route("/x", get(|| async { "b" }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("GET /x"), "{err}");

    let err = App::new()
        .route("/x/{id:nope}", get(|| async { "a" }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope"), "{err}");

    let err = App::new()
        .route("no-slash", get(|| async { "a" }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(err.contains("no-slash"), "{err}");

    // Same path, different methods: merged, not a conflict.
    App::new()
        .route("/x", get(|| async { "a" }))
        .route("/x", post(|| async { "b" }))
        .build()
        .unwrap();
}

#[tokio::test]
async fn user_constraints() {
    let app = App::new()
        .constraint("hex", |s| s.bytes().all(|b| b.is_ascii_hexdigit()))
        .route(
            "/color/{c:hex}",
            get(|Path(c): Path<String>| async move { format!("hex {c}") }),
        )
        .route(
            "/color/{name}",
            get(|Path(c): Path<String>| async move { format!("name {c}") }),
        );
    let server = common::spawn(app).await;
    assert_eq!(
        common::get(&server, "/color/ff00aa").await.text(),
        "hex ff00aa"
    );
    assert_eq!(
        common::get(&server, "/color/teal").await.text(),
        "name teal"
    );
    server.shutdown().await;
}
