//! `#[tern::handler]` changes nothing at run time: handlers with the
//! attribute answer as they would without it, and its hidden checks pass
//! clippy in the crate that uses it. Its errors are in `compile_fail.rs`.
#![cfg(feature = "macros")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use serde::Deserialize;
use tern::{
    extract::{FromRef, Path, Query, State},
    routing::get,
    test::TestClient,
    App, Json, StatusCode,
};

#[derive(Clone, Default)]
struct AppState {
    hits: Hits,
}

#[derive(Clone, Default)]
struct Hits(Arc<AtomicU64>);

impl FromRef<AppState> for Hits {
    fn from_ref(state: &AppState) -> Self {
        state.hits.clone()
    }
}

#[derive(Deserialize)]
struct Page {
    page: Option<u32>,
}

#[derive(Deserialize)]
struct NewMember {
    name: String,
}

#[tern::handler]
async fn list(Path(team): Path<u64>, Query(page): Query<Page>) -> String {
    format!("team {team}, page {}", page.page.unwrap_or(1))
}

#[tern::handler]
async fn join(
    State(state): State<AppState>,
    Path(team): Path<u64>,
    Json(member): Json<NewMember>,
) -> (StatusCode, String) {
    state.hits.0.fetch_add(1, Ordering::Relaxed);
    (StatusCode::CREATED, format!("{} joins {team}", member.name))
}

#[tern::handler(state = AppState)]
async fn hits(State(Hits(hits)): State<Hits>) -> String {
    hits.load(Ordering::Relaxed).to_string()
}

fn app() -> App<AppState> {
    App::with_state(AppState::default())
        .route("/teams/{team}", get(list).post(join))
        .scope("/stats", |s| s.route("/hits", get(hits)))
}

#[tokio::test]
async fn attributed_handlers_answer_as_usual() {
    let client = TestClient::new(app());
    let res = client.get("/teams/7?page=2").send().await;
    assert_eq!(res.text(), "team 7, page 2");

    let res = client
        .post("/teams/7")
        .body(r#"{"name":"ada"}"#)
        .header("content-type", "application/json")
        .send()
        .await;
    assert_eq!(res.status(), StatusCode::CREATED);
    assert_eq!(res.text(), "ada joins 7");

    assert_eq!(client.get("/stats/hits").send().await.text(), "1");

    // A rejection is still the extractor's, before the handler runs.
    let res = client
        .post("/teams/7")
        .body("{")
        .header("content-type", "application/json")
        .send()
        .await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    assert_eq!(client.get("/stats/hits").send().await.text(), "1");
}
