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
