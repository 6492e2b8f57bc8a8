//! Handlers whose extractors are all ready at once
//! (`FromRequestParts::IMMEDIATE`: `Path`, `Query`, `State`, `Extension`,
//! the head's parts) extract when they are called, not at their future's
//! first poll. Over a real socket: the same answers and rejections as
//! before, under middleware and without; a panic in such an extractor is
//! a `500` and the connection's next request is served; an extractor that
//! claims to be ready and is not answers `500` instead of hanging.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use http::request::Parts;
use serde::{Deserialize, Deserializer};
use tern::{
    extract::{Extension, FromRequestParts, Path, Query, State},
    middleware::{from_fn, Next},
    routing::get,
    App, HeaderMap, Method, Request,
};

#[derive(Clone, Default)]
struct AppState {
    hits: Arc<AtomicU64>,
}

#[derive(Clone)]
struct Tag(&'static str);

#[derive(Deserialize)]
struct Page {
    page: u32,
}

/// A route parameter whose `Deserialize` panics on `boom`.
struct Fragile(String);

impl<'de> Deserialize<'de> for Fragile {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let text = String::deserialize(de)?;
        assert_ne!(text, "boom", "a route parameter's Deserialize panicked");
        Ok(Fragile(text))
    }
}

/// An extractor that says it is ready at once and waits.
struct Liar;

impl<S: Send + Sync> FromRequestParts<S> for Liar {
    type Rejection = std::convert::Infallible;

    const IMMEDIATE: bool = true;

    async fn from_request_parts(_: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        tokio::task::yield_now().await;
        Ok(Liar)
    }
}

async fn everything(
    method: Method,
    headers: HeaderMap,
    State(state): State<AppState>,
    Extension(tag): Extension<Tag>,
    Query(q): Query<Page>,
    Path((name, id)): Path<(String, u64)>,
) -> String {
    let hits = state.hits.fetch_add(1, Ordering::SeqCst) + 1;
    let hello = headers.get("x-hello").map_or("", |v| v.to_str().unwrap());
    format!(
        "{method} {name} {id} page={} tag={} hits={hits} hello={hello}",
        q.page, tag.0
    )
}

fn tagged(req: Request, next: Next) -> impl std::future::Future<Output = tern::Response> {
    let mut req = req;
    req.extensions_mut().insert(Tag("mw"));
    next.run(req)
}

fn app() -> App<AppState> {
    App::with_state(AppState::default())
        // Under a `from_fn` middleware: the handler is reached through a
        // tower service, its request's context in the extensions.
        .route(
            "/layered/{name}/{id}",
            get(everything).layer(from_fn(tagged)),
        )
        // Without: the context is the current one, the extension added by
        // an app-wide middleware.
        .route("/plain/{name}/{id}", get(everything))
        .route(
            "/fragile/{v}",
            get(|Path(Fragile(v)): Path<Fragile>| async move { v }),
        )
        .route(
            "/fragile-layered/{v}",
            get(|Path(Fragile(v)): Path<Fragile>| async move { v })
                .layer(from_fn(|req: Request, next: Next| next.run(req))),
        )
        .route("/liar", get(|_: Liar| async { "never" }))
        .layer(from_fn(|mut req: Request, next: Next| {
            if req.extensions().get::<Tag>().is_none() {
                req.extensions_mut().insert(Tag("app"));
            }
            next.run(req)
        }))
}

#[tokio::test]
async fn extractors_ready_at_once_answer_as_before_with_and_without_middleware() {
    let server = common::spawn(app()).await;
    let client = common::client();
    for (path, tag, hits) in [("layered", "mw", 1), ("plain", "app", 2)] {
        let res = common::send(
            &client,
            common::request("GET", &server.url(&format!("/{path}/ada%20l/42?page=3")))
                .header("x-hello", "hi")
                .body(Default::default())
                .unwrap(),
        )
        .await;
        assert_eq!(res.status, 200, "{}", res.text());
        // The app-wide middleware tags the request; the route's own,
        // which runs after it, tags it again.
        assert_eq!(
            res.text(),
            format!("GET ada l 42 page=3 tag={tag} hits={hits} hello=hi")
        );
        // Each extractor's rejection, as a problem naming what was wrong.
        let doc = common::get(&server, &format!("/{path}/ada/forty-two?page=3"))
            .await
            .problem(400);
        assert_eq!(doc["field"], "id", "{doc}");
        let doc = common::get(&server, &format!("/{path}/ada/42?page=x"))
            .await
            .problem(400);
        assert_eq!(doc["field"], "page", "{doc}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn a_panic_in_an_extractor_ready_at_once_is_a_500_and_the_connection_goes_on() {
    let server = common::spawn(app()).await;
    for path in ["fragile", "fragile-layered"] {
        // One connection: the panic's answer, then the next request.
        let bytes = common::raw(
            server.addr,
            format!(
                "GET /{path}/boom HTTP/1.1\r\nHost: t\r\n\r\nGET /{path}/fine HTTP/1.1\r\nHost: t\r\n\r\n"
            )
            .as_bytes(),
            std::time::Duration::from_millis(500),
        )
        .await;
        assert_eq!(
            common::statuses(&bytes),
            [500, 200],
            "{}",
            String::from_utf8_lossy(&bytes)
        );
        assert!(String::from_utf8_lossy(&bytes).ends_with("fine"));
    }
    server.shutdown().await;
}

#[tokio::test]
async fn an_extractor_that_says_it_is_ready_at_once_and_is_not_answers_500() {
    let server = common::spawn(app()).await;
    let doc = common::get(&server, "/liar").await.problem(500);
    assert!(
        doc["detail"].as_str().unwrap().contains("ready at once"),
        "{doc}"
    );
    server.shutdown().await;
}
