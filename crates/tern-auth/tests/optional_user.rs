//! `Option<User>` (and `Option<Session>`, `Option<Staff>`) through the
//! public test client: `None` for no session, a tampered cookie or an
//! ended session; the store's error (`5xx`) when the store fails, never
//! `None` (issue 26). Before the change any rejection read as `None`, so
//! the store failure answered `200 anonymous`.
#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::json;
use tern::{routing::get, test::TestClient, App, Config};
use tern_auth::{create_user, Passwords, Session, Staff, User};
use tern_data::{sqlx, testing::fresh, with_pool, Backend, Database};

const SECRET: &str = "Zt3pQ9wLx2Nc8RvB5mKj7HdF4sGy6UaE";

async fn who(user: Option<User>) -> String {
    user.map_or("anonymous".to_owned(), |u| u.username)
}

async fn session(s: Option<Session>) -> String {
    s.map_or("no session".to_owned(), |s| s.user.username)
}

async fn staff(s: Option<Staff>) -> String {
    s.map_or("not staff".to_owned(), |Staff(u)| u.username)
}

fn app() -> App {
    tern_auth::install(
        App::new()
            .settings::<Database>("database")
            .route("/who", get(who))
            .route("/session", get(session))
            .route("/staff", get(staff)),
    )
}

/// The `name=value` of the session cookie a login sets.
async fn login(client: &TestClient, name: &str) -> String {
    let res = client
        .post("/auth/login")
        .json(&json!({"username": name, "password": "a long enough password"}))
        .send()
        .await;
    assert_eq!(res.status(), 200, "{}", res.text());
    let cookie = res.header("set-cookie").unwrap();
    cookie.split(';').next().unwrap().to_owned()
}

async fn text(client: &TestClient, path: &str, cookie: Option<&str>) -> (u16, String) {
    let mut req = client.get(path);
    if let Some(cookie) = cookie {
        req = req.header("cookie", cookie);
    }
    let res = req.send().await;
    (res.status().as_u16(), res.text())
}

#[tokio::test]
async fn an_optional_user_is_none_only_without_a_session() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let config =
            Config::from_settings([("DATABASE_URL", url.as_str()), ("SECRET_KEY", SECRET)])
                .unwrap();
        let service = app().build_with(config).unwrap();
        let db = service.settings::<Database>().unwrap();
        db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
        let pool = db.pool().clone();
        let password = "a long enough password";
        create_user(&pool, &Passwords::default(), "ada", password, false)
            .await
            .unwrap();
        create_user(&pool, &Passwords::default(), "root", password, true)
            .await
            .unwrap();
        let client = TestClient::from_service(service);

        // No cookie at all, and a cookie that is not the session's.
        for path in ["/who", "/session", "/staff"] {
            let (status, body) = text(&client, path, None).await;
            assert_eq!(status, 200, "{backend:?} {path}: {body}");
            assert!(["anonymous", "no session", "not staff"].contains(&body.as_str()));
            let (status, _) = text(&client, path, Some("theme=dark")).await;
            assert_eq!(status, 200, "{backend:?} {path}");
        }

        let ada = login(&client, "ada").await;
        let root = login(&client, "root").await;
        assert_eq!(text(&client, "/who", Some(&ada)).await, (200, "ada".into()));
        assert_eq!(
            text(&client, "/session", Some(&ada)).await,
            (200, "ada".into())
        );
        // A user who is not staff has no `Staff`: `None`, not a 403.
        assert_eq!(
            text(&client, "/staff", Some(&ada)).await,
            (200, "not staff".into())
        );
        assert_eq!(
            text(&client, "/staff", Some(&root)).await,
            (200, "root".into())
        );

        // A tampered cookie is no session (documented in tern_auth's
        // `extract` module: a stale or foreign cookie must not lock a
        // browser out).
        let (name, value) = ada.split_once('=').unwrap();
        let flipped = if value.ends_with('A') { 'B' } else { 'A' };
        let tampered = format!("{name}={}{flipped}", &value[..value.len() - 1]);
        assert_eq!(
            text(&client, "/who", Some(&tampered)).await,
            (200, "anonymous".into())
        );

        // The store fails: its error, not a logged-out page.
        with_pool!(&pool, p => {
            sqlx::query("DROP TABLE tern_sessions").execute(p).await.unwrap().rows_affected()
        });
        for path in ["/who", "/session", "/staff"] {
            let (status, body) = text(&client, path, Some(&ada)).await;
            assert!(
                (500..600).contains(&status),
                "{backend:?} {path}: a store error answered {status} {body}"
            );
        }
        // Without a cookie nothing is looked up: still `None`.
        assert_eq!(text(&client, "/who", None).await, (200, "anonymous".into()));
    }
}
