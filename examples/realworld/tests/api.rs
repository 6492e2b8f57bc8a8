//! Conduit through its public API, on SQLite and PostgreSQL (the full
//! official collection runs with newman in `.ci/run`): accounts and
//! tokens, articles with tags in a transaction, lists of Conduit's shape,
//! favourites, follows, comments, and Conduit's error bodies.
#![allow(clippy::unwrap_used)]

use serde_json::{json, Value};
use tern::test::{TestClient, TestResponse};
use tern_data::testing::{fresh, BACKENDS};

async fn client(url: &str) -> TestClient {
    let config = tern::Config::from_settings([("DATABASE_URL", url)]).unwrap();
    let app = || realworld::app().config(config.clone());
    tern::command::serve(app(), ["realworld", "migrate"])
        .await
        .unwrap();
    TestClient::new(app())
}

struct Api<'a> {
    client: &'a TestClient,
}

impl Api<'_> {
    async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> TestResponse {
        let uri = format!("/api{path}");
        let mut req = match method {
            "GET" => self.client.get(&uri),
            "POST" => self.client.post(&uri),
            "PUT" => self.client.put(&uri),
            _ => self.client.delete(&uri),
        };
        if let Some(token) = token {
            req = req.header("authorization", &format!("Token {token}"));
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        req.send().await
    }

    async fn register(&self, name: &str) -> String {
        let body = json!({"user": {"username": name, "email": format!("{name}@example.com"), "password": "a long password"}});
        let res = self.call("POST", "/users", None, Some(body)).await;
        assert_eq!(res.status(), 201, "{}", res.text());
        let user: Value = res.json();
        assert_eq!(user["user"]["username"], name);
        assert_eq!(user["user"]["bio"], Value::Null);
        user["user"]["token"].as_str().unwrap().to_owned()
    }
}

fn errors(res: &TestResponse) -> Vec<String> {
    let body: Value = res.json();
    serde_json::from_value(body["errors"]["body"].clone()).unwrap_or_else(|_| panic!("{body}"))
}

#[tokio::test]
async fn conduit_on_both_databases() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let client = client(&url).await;
        let api = Api { client: &client };
        let alice = api.register("Alice").await;
        let bob = api.register("bob").await;

        // A taken name (in any case) is Conduit's 422 with its error body.
        let again = json!({"user": {"username": "ALICE", "email": "x@example.com", "password": "a long password"}});
        let res = api.call("POST", "/users", None, Some(again)).await;
        assert_eq!(res.status(), 422);
        assert_eq!(errors(&res), ["has already been taken"]);
        // Login by email gives a new token that works; a wrong password is 401.
        let login = json!({"user": {"email": "alice@example.com", "password": "a long password"}});
        let res = api.call("POST", "/users/login", None, Some(login)).await;
        assert_eq!(res.status(), 200, "{}", res.text());
        let token = res.json::<Value>()["user"]["token"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_ne!(token, alice);
        let me = api.call("GET", "/user", Some(&token), None).await;
        assert_eq!(me.json::<Value>()["user"]["token"], token.as_str());
        let wrong = json!({"user": {"email": "alice@example.com", "password": "not it at all"}});
        assert_eq!(
            api.call("POST", "/users/login", None, Some(wrong))
                .await
                .status(),
            401
        );
        // No token, or a made-up one: 401 in Conduit's shape.
        let res = api.call("GET", "/user", None, None).await;
        assert_eq!(res.status(), 401);
        assert_eq!(errors(&res).len(), 1);
        assert_eq!(
            api.call("GET", "/user", Some("tern_madeup"), None)
                .await
                .status(),
            401
        );
        // The profile's bio, set through PUT /user.
        let res = api
            .call(
                "PUT",
                "/user",
                Some(&alice),
                Some(json!({"user": {"bio": "I write"}})),
            )
            .await;
        assert_eq!(res.json::<Value>()["user"]["bio"], "I write");

        // An article: tags sorted, timestamps with a fraction and Z.
        let new = json!({"article": {"title": "How to train your dragon", "description": "Ever wonder how?",
                                      "body": "Very carefully.", "tagList": ["training", "dragons"]}});
        let res = api.call("POST", "/articles", Some(&alice), Some(new)).await;
        assert_eq!(res.status(), 201, "{}", res.text());
        let article = res.json::<Value>()["article"].clone();
        assert_eq!(article["tagList"], json!(["dragons", "training"]));
        let at = article["createdAt"].as_str().unwrap();
        assert!(
            at.len() == 24 && at.ends_with('Z') && at.as_bytes()[19] == b'.',
            "{at}"
        );
        assert_eq!(
            article["author"],
            json!({"username": "Alice", "bio": "I write", "image": null, "following": false})
        );
        let slug = article["slug"].as_str().unwrap().to_owned();
        assert!(slug.starts_with("how-to-train-your-dragon-"), "{slug}");
        // A blank title is refused, and nothing is written.
        let blank = json!({"article": {"title": " ", "description": "d", "body": "b", "tagList": ["never"]}});
        let res = api
            .call("POST", "/articles", Some(&alice), Some(blank))
            .await;
        assert_eq!(
            (res.status().as_u16(), errors(&res)),
            (422, vec!["title can't be blank".to_owned()])
        );

        // Bob favourites it and follows Alice: his feed and the filters.
        let res = api
            .call(
                "POST",
                &format!("/articles/{slug}/favorite"),
                Some(&bob),
                None,
            )
            .await;
        assert_eq!(res.json::<Value>()["article"]["favoritesCount"], 1);
        assert_eq!(res.json::<Value>()["article"]["favorited"], true);
        let feed = api
            .call("GET", "/articles/feed", Some(&bob), None)
            .await
            .json::<Value>();
        assert_eq!(feed, json!({"articles": [], "articlesCount": 0}));
        let res = api
            .call("POST", "/profiles/alice/follow", Some(&bob), None)
            .await;
        assert_eq!(res.json::<Value>()["profile"]["following"], true);
        let feed = api
            .call("GET", "/articles/feed", Some(&bob), None)
            .await
            .json::<Value>();
        assert_eq!(feed["articlesCount"], 1);
        assert_eq!(feed["articles"][0]["author"]["following"], true);
        for (query, count) in [
            ("tag=dragons", 1),
            ("tag=never", 0),
            ("tag=%27%20OR%201%3D1%20--", 0),
            ("author=Alice", 1),
            ("author=bob", 0),
            ("favorited=bob", 1),
            ("favorited=Alice", 0),
            ("limit=1&offset=1", 1),
        ] {
            let list = api
                .call("GET", &format!("/articles?{query}"), None, None)
                .await
                .json::<Value>();
            assert_eq!(list["articlesCount"], count, "{query}: {list}");
        }
        let empty = api
            .call("GET", "/articles?limit=1&offset=1", None, None)
            .await
            .json::<Value>();
        assert_eq!(empty["articles"], json!([]));
        let res = api.call("GET", "/articles?limit=101", None, None).await;
        assert_eq!(res.status(), 400);
        assert!(errors(&res)[0].contains("limit"), "{:?}", errors(&res));

        // Only the author changes or deletes it; the slug follows the title.
        let edit = json!({"article": {"body": "With two hands"}});
        assert_eq!(
            api.call(
                "PUT",
                &format!("/articles/{slug}"),
                Some(&bob),
                Some(edit.clone())
            )
            .await
            .status(),
            403
        );
        let res = api
            .call(
                "PUT",
                &format!("/articles/{slug}"),
                Some(&alice),
                Some(edit),
            )
            .await;
        assert_eq!(res.json::<Value>()["article"]["body"], "With two hands");
        assert_eq!(res.json::<Value>()["article"]["slug"], slug.as_str());

        // Comments: Bob's, which only Bob deletes.
        let path = format!("/articles/{slug}/comments");
        let res = api
            .call(
                "POST",
                &path,
                Some(&bob),
                Some(json!({"comment": {"body": "Thanks!"}})),
            )
            .await;
        let id = res.json::<Value>()["comment"]["id"].as_i64().unwrap();
        let list = api.call("GET", &path, None, None).await.json::<Value>();
        assert_eq!(list["comments"][0]["author"]["username"], "bob");
        assert_eq!(
            api.call("DELETE", &format!("{path}/{id}"), Some(&alice), None)
                .await
                .status(),
            403
        );
        assert_eq!(
            api.call("DELETE", &format!("{path}/{id}"), Some(&bob), None)
                .await
                .status(),
            204
        );

        let tags = api.call("GET", "/tags", None, None).await.json::<Value>();
        assert_eq!(tags, json!({"tags": ["dragons", "training"]}));
        assert_eq!(
            api.call("DELETE", &format!("/articles/{slug}"), Some(&alice), None)
                .await
                .status(),
            204
        );
        let tags = api.call("GET", "/tags", None, None).await.json::<Value>();
        assert_eq!(tags, json!({"tags": []}));
        assert_eq!(
            api.call("GET", &format!("/articles/{slug}"), None, None)
                .await
                .status(),
            404
        );
    }
}

/// A parallel burst of the same request: the same name registered 12
/// times (one account), the same article favourited 12 times (one
/// favourite), 12 articles written at once with their tags (each in its
/// transaction: all there, every tag row with its article).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bursts_of_the_same_request() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let client = std::sync::Arc::new(client(&url).await);
        let burst =
            |method: &'static str, path: String, token: Option<String>, body: Option<Value>| {
                let mut set = tokio::task::JoinSet::new();
                for _ in 0..12 {
                    let (client, path, token, body) =
                        (client.clone(), path.clone(), token.clone(), body.clone());
                    set.spawn(async move {
                        let res = Api { client: &client }
                            .call(method, &path, token.as_deref(), body)
                            .await;
                        res.status().as_u16()
                    });
                }
                set
            };
        let same = json!({"user": {"username": "dup", "email": "dup@example.com", "password": "a long password"}});
        let mut statuses = burst("POST", "/users".into(), None, Some(same))
            .join_all()
            .await;
        statuses.sort_unstable();
        assert_eq!(statuses[0], 201, "{backend:?}: {statuses:?}");
        assert!(
            statuses[1..].iter().all(|s| *s == 422),
            "{backend:?}: {statuses:?}"
        );

        let api = Api { client: &client };
        let token = api.register("writer").await;
        let new = json!({"article": {"title": "Same", "description": "d", "body": "b", "tagList": ["x", "y"]}});
        let made = burst("POST", "/articles".into(), Some(token.clone()), Some(new))
            .join_all()
            .await;
        assert!(made.iter().all(|s| *s == 201), "{backend:?}: {made:?}");
        let list = api
            .call("GET", "/articles?tag=y&limit=100", None, None)
            .await
            .json::<Value>();
        assert_eq!(list["articlesCount"], 12, "{backend:?}");
        let slug = list["articles"][0]["slug"].as_str().unwrap().to_owned();
        let faves = burst(
            "POST",
            format!("/articles/{slug}/favorite"),
            Some(token.clone()),
            None,
        )
        .join_all()
        .await;
        assert!(faves.iter().all(|s| *s == 200), "{backend:?}: {faves:?}");
        let one = api
            .call("GET", &format!("/articles/{slug}"), None, None)
            .await
            .json::<Value>();
        assert_eq!(one["article"]["favoritesCount"], 1, "{backend:?}");
    }
}

/// Under production settings (a real key, allowed hosts, a front end on
/// another origin): the API works for token clients, the front end's
/// preflight is answered, and a cross-site write without a token is
/// refused before it reaches a handler.
#[tokio::test]
async fn production_settings_with_a_front_end_elsewhere() {
    let Some(url) = fresh(tern_data::Backend::Sqlite).await else {
        return;
    };
    let config = tern::Config::from_settings([
        ("TERN_ENV", "production"),
        (
            "SECRET_KEY",
            "9f1c2e7a4b8d3f60a5e9c1b7d2f48a6e3c0b9d7f1a2e5c8b4d6f0a3e9c7b1d5f",
        ),
        ("ALLOWED_HOSTS", "*"),
        ("CORS_ALLOWED_ORIGINS", "https://conduit.example"),
        ("DATABASE_URL", url.as_str()),
    ])
    .unwrap();
    let app = || realworld::app().config(config.clone());
    tern::command::serve(app(), ["realworld", "migrate"])
        .await
        .unwrap();
    let client = TestClient::new(app());
    let api = Api { client: &client };
    let token = api.register("prod").await;
    let new = json!({"article": {"title": "T", "description": "d", "body": "b", "tagList": []}});
    let res = client
        .post("/api/articles")
        .header("origin", "https://conduit.example")
        .header("authorization", &format!("Token {token}"))
        .json(&new)
        .send()
        .await;
    assert_eq!(res.status(), 201, "{}", res.text());
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some("https://conduit.example")
    );
    let preflight = client
        .request(tern::Method::OPTIONS, "/api/articles")
        .header("origin", "https://conduit.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type",
        )
        .send()
        .await;
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://conduit.example")
    );
    let forged = client
        .post("/api/articles")
        .header("origin", "https://evil.example")
        .json(&new)
        .send()
        .await;
    assert_eq!(forged.status(), 403, "{}", forged.text());
    assert_eq!(errors(&forged).len(), 1);
}

#[tokio::test]
async fn an_update_is_one_transaction() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let client = client(&url).await;
        let api = Api { client: &client };
        let alice = api.register("alice").await;
        // The new name is written first, then the password is refused:
        // nothing of the change stays.
        let change = json!({"user": {"username": "alice2", "bio": "new", "password": "short"}});
        let res = api.call("PUT", "/user", Some(&alice), Some(change)).await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        let res = api.call("GET", "/user", Some(&alice), None).await;
        let user: Value = res.json();
        assert_eq!(user["user"]["username"], "alice", "{backend:?}: {user}");
        assert_eq!(user["user"]["bio"], Value::Null, "{backend:?}: {user}");
        // A change that holds is written whole.
        let change = json!({"user": {"username": "alice2", "bio": "new", "password": "a new long password"}});
        let res = api.call("PUT", "/user", Some(&alice), Some(change)).await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        let login =
            json!({"user": {"email": "alice@example.com", "password": "a new long password"}});
        let res = api.call("POST", "/users/login", None, Some(login)).await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        let user: Value = res.json();
        assert_eq!(user["user"]["username"], "alice2");
        assert_eq!(user["user"]["bio"], "new");
    }
}
