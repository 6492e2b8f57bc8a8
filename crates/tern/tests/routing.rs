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
                .route_layer(from_fn(tag("scope")))
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

/// Issue 10: a layer added with `App::layer` runs before routing, so an
/// auth layer there answers 401 for unknown paths and wrong methods;
/// `App::route_layer` runs after routing, so those stay 404 and 405.
#[tokio::test]
async fn route_layer_runs_after_routing_and_layer_before() {
    async fn guard(token: &'static str, req: Request, next: Next) -> Response {
        if req.headers().get("x-token").is_some_and(|v| v == token) {
            next.run(req).await
        } else {
            Problem::new(StatusCode::UNAUTHORIZED).into_response()
        }
    }
    let routes = || {
        App::new()
            .route("/notes", get(|| async { "notes" }))
            .scope("/admin", |a| a.route("/users", get(|| async { "admin" })))
    };
    let before = common::spawn(routes().layer(from_fn_with_state("t", guard))).await;
    let after = common::spawn(routes().route_layer(from_fn_with_state("t", guard))).await;
    let client = common::client();
    for (server, unknown, wrong_method) in [(&before, 401, 401), (&after, 404, 405)] {
        common::get(server, "/notes").await.problem(401);
        common::get(server, "/admin/users").await.problem(401);
        common::get(server, "/nope").await.problem(unknown);
        let res = send(
            &client,
            request("PATCH", &server.url("/notes"))
                .body(Full::default())
                .unwrap(),
        )
        .await;
        res.problem(wrong_method);
        let res = send(
            &client,
            request("GET", &server.url("/admin/users"))
                .header("x-token", "t")
                .body(Full::default())
                .unwrap(),
        )
        .await;
        assert_eq!(res.text(), "admin");
    }
    before.shutdown().await;
    after.shutdown().await;
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
            // Never answers: the timeout is what ends the request.
            std::future::pending::<()>().await;
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
        // The renderer does not set the status: the problem's is kept
        // (a renderer must not turn errors into `200`s).
        .problem_renderer(|p: &Problem, _: &tern::Requested| {
            format!("ERROR {}: {}", p.status().as_u16(), p.detail()).into_response()
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

#[tokio::test]
async fn named_routes_build_urls() {
    use tern::extract::Urls;
    let app = App::new()
        .named_route(
            "user",
            "/users/{id:u64}",
            get(|Path(id): Path<u64>| async move { format!("user {id}") }),
        )
        .scope("/files", |f| {
            f.named_route(
                "file",
                "/{*path}",
                get(|Path(p): Path<String>| async move { p }),
            )
        })
        .route(
            "/links",
            get(|urls: Urls| async move {
                let user = urls.url_for("user", &[("id", "7")]).unwrap();
                let file = urls.url_for("file", &[("path", "a b/c.txt")]).unwrap();
                let bad = urls
                    .url_for("user", &[("id", "x")])
                    .unwrap_err()
                    .to_string();
                format!("{user} {file} {bad}")
            }),
        );
    let server = common::spawn(app).await;
    let links = common::get(&server, "/links").await.text();
    let mut parts = links.splitn(3, ' ');
    let (user, file, bad) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    assert_eq!(user, "/users/7");
    assert_eq!(file, "/files/a%20b/c.txt");
    assert!(bad.contains("`x`"), "{bad}");
    // The built URLs route back to their handlers.
    assert_eq!(common::get(&server, user).await.text(), "user 7");
    assert_eq!(common::get(&server, file).await.text(), "a b/c.txt");
    server.shutdown().await;

    let err = App::new()
        .named_route("x", "/a", get(|| async { "" }))
        .named_route("x", "/b", get(|| async { "" }))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("`x`") && err.contains("/a") && err.contains("/b"),
        "{err}"
    );
}

#[tokio::test]
async fn trailing_slash_policies() {
    use tern::routing::TrailingSlash;
    let make = |policy| {
        App::new()
            .route("/docs", get(|| async { "docs" }))
            .route("/dir/", get(|| async { "dir" }))
            .trailing_slash(policy)
    };
    let client = common::client();
    let server = common::spawn(make(TrailingSlash::Strict)).await;
    common::get(&server, "/docs/").await.problem(404);
    common::get(&server, "/dir").await.problem(404);
    server.shutdown().await;

    let server = common::spawn(make(TrailingSlash::Redirect)).await;
    let res = send(
        &client,
        request("GET", &server.url("/docs/?v=1"))
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.status, StatusCode::PERMANENT_REDIRECT);
    assert_eq!(res.header("location"), Some("/docs?v=1"));
    let res = common::get(&server, "/dir").await;
    assert_eq!(res.header("location"), Some("/dir/"));
    common::get(&server, "/nothing/").await.problem(404);
    server.shutdown().await;

    let server = common::spawn(make(TrailingSlash::MatchBoth)).await;
    assert_eq!(common::get(&server, "/docs/").await.text(), "docs");
    assert_eq!(common::get(&server, "/dir").await.text(), "dir");
    server.shutdown().await;
}

#[tokio::test]
async fn host_routing_with_subdomain_parameters() {
    #[derive(serde::Deserialize)]
    struct TenantPage {
        tenant: String,
        page: String,
    }
    let app = App::new()
        .route("/", get(|| async { "marketing" }))
        .host("api.example.com", |api| {
            api.route("/", get(|| async { "api root" }))
        })
        .host("{tenant}.example.com", |t| {
            t.route(
                "/",
                get(|Path(tenant): Path<String>| async move { format!("home of {tenant}") }),
            )
            .route(
                "/pages/{page}",
                get(
                    |Path(p): Path<TenantPage>| async move { format!("{} / {}", p.tenant, p.page) },
                ),
            )
        });
    let server = common::spawn(app).await;
    let client = common::client();
    let at = |host: &'static str, path: &str| {
        request("GET", &server.url(path))
            .header("host", host)
            .body(Full::<Bytes>::default())
            .unwrap()
    };
    assert_eq!(
        send(&client, at("example.com", "/")).await.text(),
        "marketing"
    );
    assert_eq!(
        send(&client, at("API.example.com:8443", "/")).await.text(),
        "api root"
    );
    assert_eq!(
        send(&client, at("acme.example.com", "/")).await.text(),
        "home of acme"
    );
    assert_eq!(
        send(&client, at("acme.example.com", "/pages/about"))
            .await
            .text(),
        "acme / about"
    );
    // A host table routes its host alone.
    send(&client, at("acme.example.com", "/elsewhere"))
        .await
        .problem(404);
    // Health answers on every host.
    assert_eq!(
        send(&client, at("acme.example.com", "/health"))
            .await
            .text(),
        "ok"
    );
    server.shutdown().await;
}

/// A tower layer that runs the inner service on another task, as
/// `tower::buffer` does: the request's context must travel with it.
#[derive(Clone)]
struct OnAnotherTask;

impl<S> tower::Layer<S> for OnAnotherTask {
    type Service = OnAnotherTaskService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        OnAnotherTaskService(inner)
    }
}

#[derive(Clone)]
struct OnAnotherTaskService<S>(S);

impl<S> tower::Service<Request> for OnAnotherTaskService<S>
where
    S: tower::Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        use tower::ServiceExt;
        let inner = self.0.clone();
        let task = tokio::spawn(inner.oneshot(req));
        Box::pin(async move { task.await.unwrap() })
    }
}

#[tokio::test]
async fn extractors_work_behind_a_layer_that_moves_the_request_to_another_task() {
    use tern::extract::{PeerAddr, RequestId};
    async fn show(Path((a, b)): Path<(String, u32)>, peer: PeerAddr, id: RequestId) -> String {
        assert!(peer.0.ip().is_loopback());
        assert_eq!(id.0.len(), 32);
        format!("{a} {b}")
    }
    let app = App::new()
        .route("/route/{a}/{b}", get(show).layer(OnAnotherTask))
        .scope("/app", |s| s.route("/{a}/{b}", get(show)))
        .layer(OnAnotherTask);
    let server = common::spawn(app).await;
    let res = common::get(&server, "/route/x/7").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.text(), "x 7");
    let res = common::get(&server, "/app/y/8").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.text(), "y 8");
    common::get(&server, "/route/x/notanumber")
        .await
        .problem(400);
    server.shutdown().await;
}

/// Parameters inside a segment (`/files/{name}.{ext}`) reach `Path` by
/// name and by position, and URLs are built back with them.
#[tokio::test]
async fn parameters_inside_a_segment_reach_path_and_urls() {
    #[derive(serde::Deserialize)]
    struct File {
        name: String,
        ext: String,
    }
    async fn file(Path(f): Path<File>) -> String {
        format!("{} as {}", f.name, f.ext)
    }
    async fn image(Path((id, size)): Path<(u64, u32)>) -> String {
        format!("image {id} at {size}")
    }
    let service = App::new()
        .named_route("file", "/files/{name}.{ext}", get(file))
        .route("/img-{id:u64}@{size:u64}x.png", get(image))
        .build()
        .unwrap();
    let client = tern::test::TestClient::from_service(service.clone());
    assert_eq!(
        client.get("/files/report.tar.gz").send().await.text(),
        "report.tar as gz"
    );
    assert_eq!(
        client.get("/img-42@2x.png").send().await.text(),
        "image 42 at 2"
    );
    assert_eq!(client.get("/img-x@2x.png").send().await.status(), 404);
    assert_eq!(
        service
            .url_for("file", &[("name", "a b"), ("ext", "txt")])
            .unwrap(),
        "/files/a%20b.txt"
    );
}

/// A layer's service in three moods: `Pending` on its first `poll_ready`
/// (waking the task, ready on the next), failing `poll_ready`, or
/// panicking in `call` itself (before any future exists).
#[derive(Clone, Copy)]
enum Mood {
    NotReadyAtFirst,
    FailsReady,
    PanicsInCall,
}

#[derive(Clone)]
struct Moody(Mood);

impl<S> tower::Layer<S> for Moody {
    type Service = MoodyService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        MoodyService {
            inner,
            mood: self.0,
            polled: std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0)),
        }
    }
}

#[derive(Clone)]
struct MoodyService<S> {
    inner: S,
    mood: Mood,
    polled: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl<S> tower::Service<Request> for MoodyService<S>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible>,
{
    type Response = Response;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = futures_util::future::MapErr<
        S::Future,
        fn(std::convert::Infallible) -> Box<dyn std::error::Error + Send + Sync>,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Box<dyn std::error::Error + Send + Sync>>> {
        let n = self
            .polled
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        match self.mood {
            Mood::NotReadyAtFirst if n.is_multiple_of(2) => {
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }
            Mood::FailsReady => std::task::Poll::Ready(Err("not today".into())),
            _ => std::task::Poll::Ready(Ok(())),
        }
    }

    fn call(&mut self, req: Request) -> Self::Future {
        use futures_util::TryFutureExt;
        if let Mood::PanicsInCall = self.mood {
            panic!("a layer gave up in call");
        }
        self.inner.call(req).map_err(|never| match never {})
    }
}

/// A route's layer that is not ready when first asked is asked again
/// (and the request answered); one whose readiness fails gets a `500`
/// problem; one that panics in `call`, before it made a future, costs
/// one `500` like a panicking handler, and the server goes on.
#[tokio::test]
async fn layers_not_ready_failing_or_panicking_in_call_are_answered() {
    let app = App::new()
        .route(
            "/late",
            get(|| async { "late" }).layer(Moody(Mood::NotReadyAtFirst)),
        )
        .route(
            "/fails",
            get(|| async { "no" }).layer(Moody(Mood::FailsReady)),
        )
        .route(
            "/panics",
            get(|| async { "no" }).layer(Moody(Mood::PanicsInCall)),
        )
        .route("/ok", get(|| async { "ok" }));
    let server = common::spawn(app).await;
    for _ in 0..3 {
        let res = common::get(&server, "/late").await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(res.text(), "late");
    }
    common::get(&server, "/fails").await.problem(500);
    let doc = common::get(&server, "/panics").await.problem(500);
    assert!(
        doc["detail"]
            .as_str()
            .unwrap()
            .contains("a layer gave up in call"),
        "{doc}"
    );
    assert_eq!(common::get(&server, "/ok").await.text(), "ok");
    server.shutdown().await;
}
