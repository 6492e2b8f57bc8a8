//! The Tern showcase: `cargo run --release` at the workspace root.
//!
//! Serves on `TERN_ADDR` (default `127.0.0.1:3000`) with no setup: a home
//! page, a JSON endpoint, typed parameters, a static `/llms.txt` read from
//! disk, `/health`, and a contract API (`/items`) documented at
//! `/openapi.json` and `/docs`. With `COSE_KEYS` set, `/items` also takes
//! and answers COSE.

mod items;

use serde::{Deserialize, Serialize};
use tern::{
    extract::{Path, Query},
    response::Html,
    routing::{get, post},
    App, IntoResponse, Json, Problem, StatusCode,
};

async fn home() -> Html<&'static str> {
    Html(include_str!("home.html"))
}

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

async fn json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

#[derive(Serialize)]
struct User {
    id: u64,
    name: String,
}

async fn user(Path(id): Path<u64>) -> Result<Json<User>, Problem> {
    if id == 0 {
        return Err(
            Problem::new(StatusCode::NOT_FOUND).with_detail("there is no user 0; ids start at 1")
        );
    }
    Ok(Json(User {
        id,
        name: format!("user-{id}"),
    }))
}

#[derive(Deserialize, Serialize)]
struct Search {
    q: String,
    #[serde(default)]
    tag: Vec<String>,
    page: Option<u32>,
}

async fn search(Query(search): Query<Search>) -> Json<Search> {
    Json(search)
}

async fn echo(Json(value): Json<serde_json::Value>) -> Json<serde_json::Value> {
    Json(value)
}

async fn llms_txt() -> impl IntoResponse {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/static/llms.txt");
    match tokio::fs::read(path).await {
        Ok(bytes) => Ok((
            [(
                tern::http::header::CONTENT_TYPE,
                "text/plain; charset=utf-8",
            )],
            bytes,
        )),
        Err(e) => Err(Problem::new(StatusCode::NOT_FOUND)
            .with_detail(format!("llms.txt is not readable: {e}"))),
    }
}

/// The showcase app; also used by the showcase's tests.
fn app() -> App<items::Store> {
    let mut app = App::with_state(items::Store::default());
    if std::env::var_os("COSE_KEYS").is_some() {
        app = app.settings::<tern_contract::cose::Keyring>("cose");
    }
    let app = app
        .route("/", get(home))
        .route("/json", get(json))
        .route("/llms.txt", get(llms_txt))
        .route("/users/{id:u64}", get(user))
        .route("/search", get(search))
        .route("/echo", post(echo))
        .route("/items", get(items::list).post(items::create))
        .route("/items/{id:u64}", get(items::show));
    tern_contract::openapi::OpenApi::new("Tern showcase", env!("CARGO_PKG_VERSION"))
        .description("The showcase's routes; `/items` is a contract API (JSON, CBOR, COSE).")
        .serve(app)
}

fn main() -> Result<(), tern::Error> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    tern::run(app())
}

#[cfg(test)]
mod tests {
    use tern::test::TestClient;

    #[tokio::test]
    async fn every_showcase_page_answers() {
        let client = TestClient::new(super::app());
        let home = client.get("/").send().await;
        assert_eq!(home.status(), 200);
        assert!(home.text().contains("<h1>Tern</h1>"));
        assert_eq!(
            home.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(
            client.get("/json").send().await.text(),
            r#"{"message":"Hello, World!"}"#
        );
        assert_eq!(
            client
                .get("/users/7")
                .send()
                .await
                .json::<serde_json::Value>()["name"],
            "user-7"
        );
        assert_eq!(client.get("/users/0").send().await.status(), 404);
        let search = client.get("/search?q=tern&tag=a&tag[]=b").send().await;
        assert_eq!(
            search.json::<serde_json::Value>()["tag"],
            serde_json::json!(["a", "b"])
        );
        let llms = client.get("/llms.txt").send().await;
        assert!(llms.text().starts_with("# Tern"));
        let echo = client
            .post("/echo")
            .json(&serde_json::json!({"a": [1, 2]}))
            .send()
            .await;
        assert_eq!(echo.text(), r#"{"a":[1,2]}"#);
        assert_eq!(client.get("/health").send().await.text(), "ok");
        let created = client
            .post("/items")
            .json(&serde_json::json!({"name": "hammer", "qty": 2, "owner": "ada@example.com"}))
            .send()
            .await;
        assert_eq!(created.status(), 200, "{}", created.text());
        let bad = client
            .post("/items")
            .json(&serde_json::json!({"name": "", "qty": 0, "owner": "ada"}))
            .send()
            .await;
        assert_eq!(bad.status(), 422);
        assert_eq!(bad.problem()["errors"].as_array().map(Vec::len), Some(3));
        let list: serde_json::Value = client.get("/items").send().await.json();
        assert_eq!(list["total"], 1);
        let none: serde_json::Value = client.get("/items?q=saw&limit=5").send().await.json();
        assert_eq!(none["total"], 0);
        let bad = client.get("/items?limit=0").send().await;
        assert_eq!(bad.status(), 422);
        assert_eq!(bad.problem()["errors"][0]["pointer"], "/limit");
        let doc: serde_json::Value = client.get("/openapi.json").send().await.json();
        assert!(doc["paths"]["/items"]["post"]["requestBody"].is_object());
        assert!(client
            .get("/docs")
            .send()
            .await
            .text()
            .contains("/openapi.json"));
    }
}
