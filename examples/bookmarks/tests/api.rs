//! The API in-process: `tern::test::TestClient` sends each request through
//! the whole app (settings, auth, routing, extractors, problem+json)
//! without a socket.
#![allow(missing_docs)]

use bookmarks::{Bookmark, BookmarkPage};
use serde_json::{json, Value};
use tern::test::{TestClient, TestRequest, TestResponse};

const TOKEN: &str = "a-token-for-the-tests-only";

/// The app with these settings (instead of the process's environment).
fn client_with(settings: &[(&str, &str)]) -> TestClient {
    let config =
        tern::Config::from_settings(settings.iter().copied()).expect("the settings are valid");
    TestClient::new(bookmarks::app().config(config))
}

fn client() -> TestClient {
    client_with(&[("BOOKMARKS_API_TOKEN", TOKEN)])
}

fn authed(req: TestRequest) -> TestRequest {
    req.header("authorization", &format!("Bearer {TOKEN}"))
}

async fn create(client: &TestClient, title: &str, tags: &[&str]) -> Bookmark {
    let res = authed(client.post("/bookmarks"))
        .json(
            &json!({ "url": format!("https://example.com/{title}"), "title": title, "tags": tags }),
        )
        .send()
        .await;
    assert_eq!(res.status(), 201, "{}", res.text());
    res.json()
}

/// The ids of a list's page, and its total.
async fn list(client: &TestClient, query: &str) -> (Vec<u64>, usize) {
    let res = client.get(&format!("/bookmarks?{query}")).send().await;
    assert_eq!(res.status(), 200, "{query}: {}", res.text());
    let page: BookmarkPage = res.json();
    (page.items.iter().map(|b| b.id).collect(), page.total)
}

/// A 422 problem naming `field`: a query parameter by name (`field`), a
/// body's field by JSON pointer (`pointer`: `/title`), as Tern's own do.
fn assert_invalid(res: &TestResponse, field: &str) {
    assert_eq!(res.status(), 422, "{}", res.text());
    let problem = res.problem();
    match field.strip_prefix('/') {
        Some(_) => assert_eq!(problem["pointer"], field, "{problem}"),
        None => assert_eq!(problem["field"], field, "{problem}"),
    }
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(field), "{problem}");
}

#[tokio::test]
async fn create_get_update_delete() {
    let client = client();
    let res = authed(client.post("/bookmarks"))
        .json(&json!({ "url": "https://www.rust-lang.org", "title": "Rust", "tags": ["rust"] }))
        .send()
        .await;
    assert_eq!(res.status(), 201);
    assert_eq!(res.header("location"), Some("/bookmarks/1"));
    let created: Bookmark = res.json();
    assert_eq!(
        created,
        Bookmark {
            id: 1,
            url: "https://www.rust-lang.org".into(),
            title: "Rust".into(),
            tags: vec!["rust".into()],
        }
    );

    // Reads need no token.
    let res = client.get("/bookmarks/1").send().await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<Bookmark>(), created);

    // PATCH changes what it names.
    let res = authed(client.patch("/bookmarks/1"))
        .json(&json!({ "title": "The Rust language" }))
        .send()
        .await;
    assert_eq!(res.status(), 200, "{}", res.text());
    let patched: Bookmark = res.json();
    assert_eq!(patched.title, "The Rust language");
    assert_eq!(patched.url, created.url);
    assert_eq!(patched.tags, created.tags);

    // PUT replaces the whole bookmark (tags default to none).
    let res = authed(client.put("/bookmarks/1"))
        .json(&json!({ "url": "http://example.org", "title": "Example" }))
        .send()
        .await;
    assert_eq!(res.status(), 200, "{}", res.text());
    let replaced: Bookmark = res.json();
    assert_eq!((replaced.id, replaced.tags.len()), (1, 0));
    assert_eq!(
        client.get("/bookmarks/1").send().await.json::<Bookmark>(),
        replaced
    );

    let res = authed(client.delete("/bookmarks/1")).send().await;
    assert_eq!(res.status(), 204);
    assert!(res.bytes().is_empty());
    assert_eq!(client.get("/bookmarks/1").send().await.status(), 404);

    // Ids are never reused.
    assert_eq!(create(&client, "next", &[]).await.id, 2);
}

#[tokio::test]
async fn unknown_ids_are_404_problems() {
    let client = client();
    let res = client.get("/bookmarks/42").send().await;
    assert_eq!(res.status(), 404);
    assert_eq!(res.problem()["detail"], "there is no bookmark 42");
    let patch = authed(client.patch("/bookmarks/42"))
        .json(&json!({ "title": "x" }))
        .send()
        .await;
    assert_eq!(patch.status(), 404);
    let put = authed(client.put("/bookmarks/42"))
        .json(&json!({ "url": "https://x.org", "title": "x" }))
        .send()
        .await;
    assert_eq!(put.status(), 404);
    assert_eq!(
        authed(client.delete("/bookmarks/42")).send().await.status(),
        404
    );
    // Not a number: the `{id:u64}` route does not match at all.
    assert_eq!(client.get("/bookmarks/abc").send().await.status(), 404);
}

#[tokio::test]
async fn lists_filter_by_tags_and_text_and_paginate() {
    let client = client();
    create(&client, "axum", &["rust", "web"]).await; // 1
    create(&client, "serde", &["rust"]).await; // 2
    create(&client, "django", &["python", "web"]).await; // 3
    create(&client, "tern", &["rust", "web"]).await; // 4
    create(&client, "tokio", &["rust", "async"]).await; // 5

    assert_eq!(list(&client, "").await, (vec![1, 2, 3, 4, 5], 5));
    assert_eq!(list(&client, "tag=rust").await, (vec![1, 2, 4, 5], 4));
    // Repeated keys: every tag must be there.
    assert_eq!(list(&client, "tag=rust&tag=web").await, (vec![1, 4], 2));
    assert_eq!(list(&client, "tag=web&q=DJANGO").await, (vec![3], 1));
    assert_eq!(list(&client, "tag=nope").await, (vec![], 0));

    // Pages: the total counts every match.
    assert_eq!(list(&client, "per_page=2").await, (vec![1, 2], 5));
    assert_eq!(list(&client, "per_page=2&page=2").await, (vec![3, 4], 5));
    assert_eq!(list(&client, "per_page=2&page=3").await, (vec![5], 5));
    assert_eq!(list(&client, "per_page=2&page=9").await, (vec![], 5));
    assert_eq!(
        list(&client, "tag=rust&per_page=3&page=2").await,
        (vec![5], 4)
    );

    let res = client.get("/bookmarks?page=0").send().await;
    assert_invalid(&res, "page");
    let res = client.get("/bookmarks?per_page=0").send().await;
    assert_invalid(&res, "per_page");
    // Not a number: Tern's own 400, naming the parameter.
    let res = client.get("/bookmarks?per_page=many").send().await;
    assert_eq!(res.status(), 400);
    assert_eq!(res.problem()["field"], "per_page");
}

#[tokio::test]
async fn page_sizes_are_capped_by_the_settings() {
    let client = client_with(&[
        ("BOOKMARKS_API_TOKEN", TOKEN),
        ("BOOKMARKS_MAX_PAGE_SIZE", "3"),
    ]);
    for title in ["a", "b", "c", "d", "e"] {
        create(&client, title, &[]).await;
    }
    let page: BookmarkPage = client.get("/bookmarks?per_page=50").send().await.json();
    assert_eq!((page.items.len(), page.per_page, page.total), (3, 3, 5));
    // The default page size (20) is capped too.
    let page: BookmarkPage = client.get("/bookmarks").send().await.json();
    assert_eq!((page.items.len(), page.per_page), (3, 3));
}

#[tokio::test]
async fn invalid_input_is_a_422_naming_the_field() {
    let client = client();
    for (body, field) in [
        (json!({ "url": "ftp://example.com", "title": "x" }), "/url"),
        (json!({ "url": "https://", "title": "x" }), "/url"),
        (
            json!({ "url": "https://example.com", "title": "" }),
            "/title",
        ),
        (
            json!({ "url": "https://example.com", "title": "   " }),
            "/title",
        ),
        (
            json!({ "url": "https://example.com", "title": "x".repeat(201) }),
            "/title",
        ),
    ] {
        let res = authed(client.post("/bookmarks")).json(&body).send().await;
        assert_invalid(&res, field);
    }
    // 200 characters (not bytes) are fine.
    let res = authed(client.post("/bookmarks"))
        .json(&json!({ "url": "https://example.com", "title": "é".repeat(200) }))
        .send()
        .await;
    assert_eq!(res.status(), 201, "{}", res.text());

    let res = authed(client.patch("/bookmarks/1"))
        .json(&json!({ "url": "example.com" }))
        .send()
        .await;
    assert_invalid(&res, "/url");
    let res = authed(client.put("/bookmarks/1"))
        .json(&json!({ "url": "https://example.com", "title": "" }))
        .send()
        .await;
    assert_invalid(&res, "/title");

    // Wrong shapes are Tern's own 422s (a wrong type, a misspelt field);
    // nothing was changed.
    let res = authed(client.patch("/bookmarks/1"))
        .json(&json!({ "title": 7 }))
        .send()
        .await;
    assert_invalid(&res, "/title");
    let res = authed(client.patch("/bookmarks/1"))
        .json(&json!({ "titel": "typo" }))
        .send()
        .await;
    assert_invalid(&res, "/titel");
    let res = authed(client.post("/bookmarks"))
        .json(&json!({ "url": "https://example.com" }))
        .send()
        .await;
    assert_invalid(&res, "/title");
    assert_eq!(list(&client, "").await.1, 1);
}

#[tokio::test]
async fn writes_need_the_token() {
    let client = client();
    let body = json!({ "url": "https://example.com", "title": "x" });
    for auth in [
        None,
        Some("Bearer wrong"),
        Some(TOKEN),
        Some("Basic Zm9vOmJhcg=="),
    ] {
        let mut req = client.post("/bookmarks").json(&body);
        if let Some(auth) = auth {
            req = req.header("authorization", auth);
        }
        let res = req.send().await;
        assert_eq!(res.status(), 401, "{auth:?}");
        assert_eq!(res.header("www-authenticate"), Some("Bearer"));
        let problem: Value = res.problem();
        assert!(problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("Authorization: Bearer"));
    }
    create(&client, "kept", &[]).await;
    for res in [
        client.delete("/bookmarks/1").send().await,
        client
            .patch("/bookmarks/1")
            .json(&json!({ "title": "y" }))
            .send()
            .await,
        client.put("/bookmarks/1").json(&body).send().await,
    ] {
        assert_eq!(res.status(), 401);
    }
    assert_eq!(
        client
            .get("/bookmarks/1")
            .send()
            .await
            .json::<Bookmark>()
            .title,
        "kept"
    );
    // The scheme is case-insensitive (RFC 9110).
    let res = client
        .delete("/bookmarks/1")
        .header("authorization", &format!("bearer {TOKEN}"))
        .send()
        .await;
    assert_eq!(res.status(), 204);
}

#[tokio::test]
async fn routing_answers_before_auth() {
    let client = client();
    // An unknown path is a 404, not a 401.
    let res = client.post("/nope").send().await;
    assert_eq!(res.status(), 404);
    let res = client.delete("/bookmarks/1/extra").send().await;
    assert_eq!(res.status(), 404);
    // A wrong method is a 405 (with `Allow`), not a 401.
    let res = client.delete("/bookmarks").send().await;
    assert_eq!(res.status(), 405);
    assert!(res.header("allow").unwrap_or_default().contains("POST"));
    let res = client.post("/bookmarks/1").send().await;
    assert_eq!(res.status(), 405);
}
