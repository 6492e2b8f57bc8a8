//! The request context travels with the request (issue 26): a request
//! handed to another task (by a middleware that spawns `next.run(req)`, by
//! a tower layer that runs the inner service on a worker, as
//! `tower::buffer` does) keeps its settings, path parameters, request ID
//! and client address, and what Tern reads without a request (the app's
//! configuration, for answers such as `tern-contract`'s) is still the
//! request's app there; a handler that spawns work takes a
//! `RequestContext` along. Over real sockets, plus the in-process client.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{convert::Infallible, time::Duration};

use serde::Deserialize;
use tern::{
    extract::{ClientIp, Path, RequestId},
    middleware::{from_fn, Next},
    routing::get,
    settings::Settings,
    test::TestClient,
    App, Config, IntoResponse, Problem, Request, RequestContext, Response, StatusCode,
};
use tokio::sync::{mpsc, oneshot};

#[derive(Deserialize)]
struct Shop {
    name: String,
}

/// A body limit no default has, so that an answer that reads it proves it
/// read this app's configuration.
const BODY_LIMIT: u64 = 123_457;

fn config() -> Config {
    let mut config = Config::from_settings([("SHOP_NAME", "corner shop")]).unwrap();
    config.limits.max_body_bytes = BODY_LIMIT;
    config.timeouts.shutdown = Duration::from_secs(10);
    config
}

/// What the app's configuration says, read as `tern-contract`'s answers
/// read it: with no request, from the app answering on this thread.
fn current_body_limit() -> String {
    match tern::__private::current_config(|c| c.limits.max_body_bytes) {
        Some(limit) => limit.to_string(),
        None => "no app".to_owned(),
    }
}

/// An answer that, like `tern-contract`'s, reads the configuration
/// while it is made, with no request at hand.
struct Seen(String);

impl IntoResponse for Seen {
    fn into_response(self) -> Response {
        format!("{} limit={}", self.0, current_body_limit()).into_response()
    }
}

async fn show(
    Settings(shop): Settings<Shop>,
    Path(id): Path<u64>,
    RequestId(request_id): RequestId,
    ClientIp(ip): ClientIp,
) -> Seen {
    Seen(format!(
        "{} item={id} id={request_id} loopback={}",
        shop.name,
        ip.is_loopback()
    ))
}

/// What `show` answers to a request with this ID for item 7.
fn expected(res: &common::Resp) -> String {
    let id = res.header("x-request-id").expect("a request ID");
    assert_eq!(id.len(), 32, "a generated ID");
    format!("corner shop item=7 id={id} loopback=true limit={BODY_LIMIT}")
}

/// A middleware that runs the rest of the chain on a task of its own.
async fn spawn_next(req: Request, next: Next) -> Response {
    match tokio::spawn(next.run(req)).await {
        Ok(res) => res,
        Err(_) => Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail("the spawned task failed")
            .into_response(),
    }
}

/// A tower layer shaped like `tower::buffer`: one worker task, started
/// when the layer is applied, calls the inner service for every request
/// (so routing may run there, off the request's task), and the call's
/// future is polled on yet another task.
#[derive(Clone)]
struct OnWorker;

#[derive(Clone)]
struct WorkerService {
    tx: mpsc::UnboundedSender<(Request, oneshot::Sender<Response>)>,
}

impl<S> tower::Layer<S> for OnWorker
where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    type Service = WorkerService;

    fn layer(&self, mut inner: S) -> WorkerService {
        let (tx, mut rx) = mpsc::unbounded_channel::<(Request, oneshot::Sender<Response>)>();
        tokio::spawn(async move {
            while let Some((req, reply)) = rx.recv().await {
                use tower::ServiceExt;
                let Ok(ready) = inner.ready().await;
                let fut = ready.call(req);
                tokio::spawn(async move {
                    let Ok(res) = fut.await;
                    let _ = reply.send(res);
                });
            }
        });
        WorkerService { tx }
    }
}

impl tower::Service<Request> for WorkerService {
    type Response = Response;
    type Error = Infallible;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let (reply, answer) = oneshot::channel();
        let sent = self.tx.send((req, reply)).is_ok();
        Box::pin(async move {
            Ok(match answer.await {
                Ok(res) if sent => res,
                _ => StatusCode::SERVICE_UNAVAILABLE.into_response(),
            })
        })
    }
}

/// Every path of `app` answers as `show` does for item 7.
async fn assert_shows(app: App, paths: &[&str]) {
    let server = common::spawn_with(app, config()).await;
    for path in paths {
        let res = common::get(&server, path).await;
        assert_eq!(res.status, 200, "{path}: {}", res.text());
        assert_eq!(res.text(), expected(&res), "{path}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_middleware_that_spawns_next_keeps_the_context() {
    let app = App::new()
        .settings::<Shop>("shop")
        .route("/items/{id}", get(show))
        .layer(from_fn(spawn_next));
    assert_shows(app, &["/items/7"]).await;
}

#[tokio::test]
async fn a_layer_that_runs_the_request_on_a_worker_keeps_the_context() {
    let app = App::new()
        .settings::<Shop>("shop")
        .route("/items/{id}", get(show))
        .route("/route/items/{id}", get(show).layer(OnWorker))
        .layer(OnWorker);
    assert_shows(app, &["/items/7", "/route/items/7"]).await;
}

#[tokio::test]
async fn route_layers_and_nested_scopes_keep_the_context() {
    let app = App::new()
        .settings::<Shop>("shop")
        .route("/items/{id}", get(show))
        .scope("/shop", |shop| {
            shop.scope("/v1", |v1| {
                v1.route("/items/{id}", get(show))
                    .route_layer(from_fn(spawn_next))
            })
            .route_layer(OnWorker)
        })
        .route_layer(from_fn(spawn_next));
    assert_shows(app, &["/items/7", "/shop/v1/items/7"]).await;
}

/// A handler that hands its whole request to a task, which extracts
/// there: nothing of the handler's poll is current on that task.
async fn extract_in_task(req: Request) -> Response {
    use tern::extract::FromRequestParts;
    let task = tokio::spawn(async move {
        let shop = Settings::<Shop>::of(&req);
        let (mut parts, _) = req.into_parts();
        let id = Path::<u64>::from_request_parts(&mut parts, &()).await;
        let request_id = RequestId::from_request_parts(&mut parts, &()).await;
        let ip = ClientIp::from_request_parts(&mut parts, &()).await;
        match (shop, id, request_id, ip) {
            (Some(Settings(shop)), Ok(Path(id)), Ok(RequestId(request_id)), Ok(ClientIp(ip))) => {
                Seen(format!(
                    "{} item={id} id={request_id} loopback={}",
                    shop.name,
                    ip.is_loopback()
                ))
                .into_response()
            }
            (None, ..) => Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail("no settings on the task")
                .into_response(),
            (_, Err(e), ..) | (_, _, Err(e), _) | (.., Err(e)) => e.into_response(),
        }
    });
    task.await.unwrap()
}

/// `/items/7` answers as `show` does, from a task with no app current:
/// only the request's own values are there.
async fn assert_task_shows(app: App) {
    let server = common::spawn_with(app.settings::<Shop>("shop"), config()).await;
    let res = common::get(&server, "/items/7").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(
        res.text(),
        expected(&res).replace(&format!("limit={BODY_LIMIT}"), "limit=no app")
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_request_handed_to_a_task_keeps_its_context() {
    assert_task_shows(App::new().route("/items/{id}", get(extract_in_task))).await;
}

/// What a task reads from the context it was handed.
fn read_in_task(ctx: &RequestContext) -> String {
    let shop = ctx.settings::<Shop>().map(|s| s.name.clone());
    let routes = tern::__private::current_api_routes(|r| {
        r.iter().any(|r| r.path == "/orders/{order}/confirm")
    });
    format!(
        "id={} shop={} order={} peer_loopback={} routes={} limit={}",
        ctx.request_id(),
        shop.as_deref().unwrap_or("none"),
        ctx.param("order").unwrap_or("none"),
        ctx.peer().is_some_and(|p| p.ip().is_loopback()),
        routes.map_or("no app".to_owned(), |listed| listed.to_string()),
        current_body_limit(),
    )
}

async fn hand_off(ctx: RequestContext) -> String {
    let task = ctx.clone();
    let spawned = ctx
        .spawn(async move {
            // Past the handler's poll, on the task's own.
            tokio::task::yield_now().await;
            read_in_task(&task)
        })
        .await
        .unwrap();
    let task = ctx.clone();
    let blocking = ctx
        .spawn_blocking(move || read_in_task(&task))
        .await
        .unwrap();
    // A bare `tokio::spawn` gets the values through the handle but runs
    // in no app's scope.
    let task = ctx.clone();
    let bare = tokio::spawn(async move { read_in_task(&task) })
        .await
        .unwrap();
    let scoped = ctx.sync_scope(|| read_in_task(&ctx));
    format!("spawn: {spawned}\nblocking: {blocking}\nbare: {bare}\nsync: {scoped}")
}

fn hand_off_app() -> App {
    App::new()
        .settings::<Shop>("shop")
        .route("/orders/{order}/confirm", get(hand_off))
}

fn hand_off_expected(id: &str) -> String {
    let seen = format!("id={id} shop=corner shop order=42 peer_loopback=true");
    format!(
        "spawn: {seen} routes=true limit={BODY_LIMIT}\n\
         blocking: {seen} routes=true limit={BODY_LIMIT}\n\
         bare: {seen} routes=no app limit=no app\n\
         sync: {seen} routes=true limit={BODY_LIMIT}"
    )
}

#[tokio::test]
async fn a_handler_hands_its_context_to_spawned_and_blocking_tasks() {
    let server = common::spawn_with(hand_off_app(), config()).await;
    let res = common::get(&server, "/orders/42/confirm").await;
    assert_eq!(res.status, 200, "{}", res.text());
    let id = res.header("x-request-id").unwrap();
    assert_eq!(res.text(), hand_off_expected(id));
    server.shutdown().await;

    // In process too, behind a middleware that spawns the handler.
    let app = hand_off_app().layer(from_fn(spawn_next));
    let client = TestClient::from_service(app.build_with(config()).unwrap());
    let res = client.get("/orders/42/confirm").send().await;
    assert_eq!(res.status(), 200, "{}", res.text());
    let id = res.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(res.text(), hand_off_expected(&id));
}

#[tokio::test]
async fn middleware_reads_the_context_from_the_request() {
    async fn stamp(req: Request, next: Next) -> Response {
        // Before routing: the request has its ID but no parameters yet.
        let ctx = RequestContext::of(&req).expect("a Tern request");
        let before = format!("{}:{:?}", ctx.request_id().len(), ctx.param("id"));
        let mut res = next.run(req).await;
        res.headers_mut()
            .insert("x-before", before.parse().unwrap());
        res
    }
    let app = App::new()
        .settings::<Shop>("shop")
        .route("/items/{id}", get(show))
        .layer(from_fn(stamp));
    let server = common::spawn_with(app, config()).await;
    let res = common::get(&server, "/items/7").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("x-before"), Some("32:None"));
    assert_eq!(res.text(), expected(&res));
    server.shutdown().await;

    // A request no Tern app received has no context.
    let made = http::Request::get("/")
        .body(tern::body::Body::empty())
        .unwrap();
    assert!(RequestContext::of(&made).is_none());
}

#[test]
fn the_handle_can_move_anywhere() {
    fn movable<T: Clone + Send + Sync + 'static>() {}
    movable::<RequestContext>();
}

/// An extractor of an app's own that keeps the whole request, as an app's
/// extractor may (`FromRequest::KEEPS_REQUEST` left at its default).
struct Kept(Request);

impl<S: Send + Sync> tern::extract::FromRequest<S> for Kept {
    type Rejection = Infallible;

    async fn from_request(req: Request, _: &S) -> Result<Self, Infallible> {
        Ok(Kept(req))
    }
}

/// The kept request goes to a task, which extracts there.
async fn extract_kept_in_task(Kept(req): Kept) -> Response {
    extract_in_task(req).await
}

#[tokio::test]
async fn an_extractor_that_keeps_the_request_hands_on_its_context() {
    assert_task_shows(App::new().route("/items/{id}", get(extract_kept_in_task))).await;
}

/// An app served inside another app's route (a tower service there)
/// reads its own context: its own route's parameters and settings, the
/// outer request's client address, and its own request ID, as an app
/// served on its own would.
#[tokio::test]
async fn an_app_served_inside_another_reads_its_own_context() {
    let inner = App::new()
        .settings::<Shop>("shop")
        .route("/items/{id}", get(show))
        .build_with(config())
        .unwrap();
    let outer = App::new().route(
        "/items/{outer}",
        tern::routing::MethodRouter::default()
            .on_service(http::Method::GET, tern::routing::Route::from_service(inner)),
    );
    let server = common::spawn_with(outer, Config::default()).await;
    let res = common::get(&server, "/items/7").await;
    assert_eq!(res.status, 200, "{}", res.text());
    // The inner app's own ID: the outer one's answer carries the outer ID.
    let text = res.text();
    let id = text
        .strip_prefix("corner shop item=7 id=")
        .and_then(|rest| rest.strip_suffix(&format!(" loopback=true limit={BODY_LIMIT}")))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(id.len(), 32, "{text}");
    assert_ne!(Some(id), res.header("x-request-id"), "{text}");
    server.shutdown().await;
}

/// A handler that sets the request ID field itself (twice, beside one of
/// another name) still answers with the one ID Tern gave the request, in
/// the configured field; the same over HTTP/1.1 pipelined on one
/// connection (the codec writes the ID, `AppService::call_checked`) and in
/// process (the ID is in the answer's map).
#[tokio::test]
async fn the_answer_carries_one_request_id_whatever_the_handler_set() {
    async fn own(RequestId(id): RequestId) -> Response {
        let mut res = id.into_response();
        for (name, value) in [("x-trace", "a"), ("x-trace", "b"), ("x-request-id", "app")] {
            res.headers_mut().append(name, value.parse().unwrap());
        }
        res
    }
    let app = || App::new().route("/own", get(own));
    let mut config = config();
    config.request_id_header = "x-trace".parse().unwrap();
    let server = common::spawn_with(app(), config.clone()).await;
    let one = "GET /own HTTP/1.1\r\nhost: x\r\n\r\n";
    let out = common::raw(
        server.addr,
        one.repeat(3).as_bytes(),
        Duration::from_millis(300),
    )
    .await;
    let text = String::from_utf8_lossy(&out);
    let answers: Vec<&str> = text.split("HTTP/1.1 ").skip(1).collect();
    assert_eq!(answers.len(), 3, "{text}");
    let mut ids = Vec::new();
    for answer in answers {
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        let traces: Vec<&str> = head
            .lines()
            .filter_map(|l| l.strip_prefix("x-trace: "))
            .collect();
        assert_eq!(traces, [body], "{answer}");
        assert_eq!(body.len(), 32, "{answer}");
        assert!(head.contains("\r\nx-request-id: app"), "{answer}");
        ids.push(body.to_owned());
    }
    ids.dedup();
    assert_eq!(ids.len(), 3, "{text}");
    server.shutdown().await;

    let client = TestClient::from_service(app().build_with(config).unwrap());
    let res = client.get("/own").send().await;
    let traces: Vec<_> = res.headers().get_all("x-trace").iter().collect();
    assert_eq!(traces.len(), 1);
    assert_eq!(traces[0].to_str().unwrap(), res.text());
}
