//! The public in-process test client, used the way an app's own tests
//! would use it.
#![allow(clippy::unwrap_used, missing_docs)]

use serde::{Deserialize, Serialize};
use tern::{
    extract::{Form, Path},
    routing::{get, post},
    test::TestClient,
    App, Json, StatusCode,
};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Todo {
    id: u64,
    title: String,
}

fn app() -> App {
    App::new()
        .route(
            "/todos/{id}",
            get(|Path(id): Path<u64>| async move {
                Json(Todo {
                    id,
                    title: format!("todo {id}"),
                })
            }),
        )
        .route(
            "/todos",
            post(|Json(t): Json<Todo>| async move { (StatusCode::CREATED, Json(t)) }),
        )
        .route(
            "/login",
            post(
                |Form(f): Form<std::collections::HashMap<String, String>>| async move {
                    format!("hi {}", f["user"])
                },
            ),
        )
}

#[tokio::test]
async fn requests_without_a_socket() {
    let client = TestClient::new(app());
    let res = client.get("/todos/3").send().await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.json::<Todo>(),
        Todo {
            id: 3,
            title: "todo 3".into()
        }
    );
    assert!(res.header("x-request-id").is_some());

    let res = client
        .post("/todos")
        .json(&Todo {
            id: 9,
            title: "write tests".into(),
        })
        .send()
        .await;
    assert_eq!(res.status(), StatusCode::CREATED);
    assert_eq!(res.json::<Todo>().title, "write tests");

    let res = client
        .post("/login")
        .form(&[("user", "ada lovelace")])
        .send()
        .await;
    assert_eq!(res.text(), "hi ada lovelace");

    let res = client.get("/todos/x").send().await;
    assert_eq!(res.status(), 400);
    assert_eq!(res.problem()["field"], "id");
    assert!(res.detail().unwrap().contains("`x`"));

    let res = client.delete("/todos/3").send().await;
    assert_eq!(res.status(), 405);
    assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS"));
}

#[tokio::test]
async fn the_test_client_applies_the_app_configuration() {
    let mut config = tern::Config::default().with_allowed_hosts(["example.com"]);
    config.limits.max_body_bytes = 10;
    let client = TestClient::new(app().config(config));
    assert_eq!(
        client.get("/todos/1").send().await.status(),
        400,
        "localhost is not allowed"
    );
    let res = client
        .get("/todos/1")
        .header("host", "example.com")
        .send()
        .await;
    assert_eq!(res.status(), 200);
    let res = client
        .post("/todos")
        .header("host", "example.com")
        .json(&Todo {
            id: 1,
            title: "too long a title".into(),
        })
        .send()
        .await;
    assert_eq!(res.status(), 413);
}

#[test]
#[should_panic(expected = "the app does not build")]
fn a_conflicting_app_fails_loudly() {
    let _ = TestClient::new(
        App::new()
            .route("/a/{x}", get(|| async { "" }))
            .route("/a/{y}", get(|| async { "" })),
    );
}
