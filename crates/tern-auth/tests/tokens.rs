//! API tokens, on SQLite and PostgreSQL (issue 28): the database keeps
//! digests only; `Authorization` in the schemes of `AUTH_TOKEN_SCHEMES`;
//! an expired, revoked or unknown token (or one of an inactive user) is a
//! `401` with `WWW-Authenticate`, also beside a good session cookie;
//! lists and revocation stay within the user; scopes; and
//! `Option<Authenticated>`, `None` only without credentials.
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::Duration;

use serde_json::json;
use tern::{
    routing::{get, post},
    test::TestClient,
    App, Config,
};
use tern_auth::{
    create_user, list_tokens, revoke_all_tokens, revoke_token, Accounts, AuthError, Authenticated,
    Credential, NewToken, Passwords, User,
};
use tern_data::{sqlx, testing::fresh, with_pool, Backend, Database, Pool};

const SECRET: &str = "Zt3pQ9wLx2Nc8RvB5mKj7HdF4sGy6UaE";
const PASSWORD: &str = "correct horse battery";

async fn whoami(auth: Authenticated) -> String {
    let by = match &auth.by {
        Credential::Session(_) => "session".to_owned(),
        Credential::Token(t) => format!("token {}", t.name),
    };
    format!("{} by {by}", auth.user.username)
}

async fn echo(auth: Authenticated) -> String {
    auth.token().unwrap_or("none").to_owned()
}

async fn maybe(auth: Option<Authenticated>) -> String {
    auth.map_or("anonymous".to_owned(), |a| a.user.username)
}

async fn write(auth: Authenticated) -> Result<&'static str, AuthError> {
    auth.require_scope("write")?;
    Ok("wrote")
}

fn app() -> App {
    tern_auth::install(
        App::new()
            .settings::<Database>("database")
            .route("/whoami", get(whoami))
            .route("/echo", get(echo))
            .route("/maybe", get(maybe))
            .route("/write", post(write))
            .route(
                "/limited",
                get(whoami).layer(
                    tern_auth::RateLimit::per(2, Duration::from_secs(60))
                        .per_user()
                        .layer(),
                ),
            ),
    )
}

struct Setup {
    client: TestClient,
    pool: Pool,
    accounts: std::sync::Arc<Accounts>,
    ada: User,
    bob: User,
}

/// A served app on `backend` with users ada and bob, or `None` (skipped)
/// for PostgreSQL without `POSTGRES_URL`.
async fn setup(backend: Backend, extra: &[(&str, &str)]) -> Option<Setup> {
    let url = fresh(backend).await?;
    let mut settings = vec![("DATABASE_URL", url.as_str()), ("SECRET_KEY", SECRET)];
    settings.extend_from_slice(extra);
    let service = app()
        .build_with(Config::from_settings(settings).unwrap())
        .unwrap();
    let db = service.settings::<Database>().unwrap();
    db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
    let pool = db.pool().clone();
    let passwords = Passwords::default();
    let ada = create_user(&pool, &passwords, "ada", PASSWORD, false)
        .await
        .unwrap();
    let bob = create_user(&pool, &passwords, "bob", PASSWORD, false)
        .await
        .unwrap();
    let accounts = service.settings::<Accounts>().unwrap();
    Some(Setup {
        client: TestClient::from_service(service),
        pool,
        accounts,
        ada,
        bob,
    })
}

impl Setup {
    async fn token(&self, user: &User) -> String {
        NewToken::new(user, "cli")
            .create(&self.pool, &self.accounts)
            .await
            .unwrap()
            .secret
    }

    /// `GET path` with these headers: status, `WWW-Authenticate`, body.
    async fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, Option<String>, String) {
        let mut req = self.client.get(path);
        for (name, value) in headers {
            req = req.header(name, value);
        }
        let res = req.send().await;
        let challenge = res.header("www-authenticate").map(str::to_owned);
        (res.status().as_u16(), challenge, res.text())
    }

    /// The session cookie of a login of `name`.
    async fn login(&self, name: &str) -> String {
        let res = self
            .client
            .post("/auth/login")
            .json(&json!({"username": name, "password": PASSWORD}))
            .send()
            .await;
        assert_eq!(res.status(), 200, "{}", res.text());
        let cookie = res.header("set-cookie").unwrap();
        cookie.split(';').next().unwrap().to_owned()
    }
}

fn invalid(scheme: &str) -> Option<String> {
    Some(format!("{scheme} error=\"invalid_token\""))
}

#[tokio::test]
async fn the_database_keeps_only_a_digest_of_the_secret() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(s) = setup(backend, &[]).await else {
            continue;
        };
        let issued = NewToken::new(&s.ada, "  laptop ")
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        assert!(issued.secret.starts_with("tern_"), "{}", issued.secret);
        // `tern_` and 32 bytes of URL-safe base64 without padding.
        assert_eq!(issued.secret.len(), 5 + 43);
        assert!(issued.secret[5..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert!(!format!("{issued:?}").contains(&issued.secret));
        assert_eq!(issued.token.name, "laptop");
        assert_eq!(issued.token.user_id, s.ada.id);
        // Every column of the row: the secret is in none of them.
        let sql = "SELECT token_hash, name, scopes FROM tern_api_tokens";
        let rows: Vec<(String, String, String)> = with_pool!(&s.pool, p => {
            sqlx::query_as(sql).fetch_all(p).await.unwrap()
        });
        assert_eq!(rows.len(), 1);
        let (hash, name, scopes) = &rows[0];
        assert_eq!((name.as_str(), scopes.as_str()), ("laptop", "*"));
        assert_eq!(hash.len(), 64, "a SHA-256 digest in hex: {hash}");
        assert!(!hash.contains(&issued.secret[5..]) && hash != &issued.secret);
        // Two tokens never share a secret.
        let other = s.token(&s.ada).await;
        assert_ne!(other, issued.secret);
    }
}

#[tokio::test]
async fn a_token_authenticates_in_the_configured_schemes_only() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        // The default: `Bearer`, in any case; `Token` is not looked at.
        let Some(s) = setup(backend, &[]).await else {
            continue;
        };
        let t = s.token(&s.ada).await;
        for header in [
            format!("Bearer {t}"),
            format!("bearer {t}"),
            format!("BEARER  {t}"),
        ] {
            let (status, _, body) = s.get("/whoami", &[("Authorization", &header)]).await;
            assert_eq!(
                (status, body.as_str()),
                (200, "ada by token cli"),
                "{header}"
            );
        }
        // The token as presented, for the app to echo.
        let (_, _, body) = s
            .get("/echo", &[("Authorization", &format!("Bearer {t}"))])
            .await;
        assert_eq!(body, t);
        // Another scheme is no token: no credentials at all.
        let (status, challenge, body) = s
            .get("/whoami", &[("Authorization", &format!("Token {t}"))])
            .await;
        assert_eq!(status, 401, "{backend:?}: {body}");
        assert_eq!(challenge.as_deref(), Some("Bearer"));
        assert!(body.contains("Authorization: Bearer <token>"), "{body}");

        // `AUTH_TOKEN_SCHEMES=Token` (Conduit's): `Bearer` is not looked at.
        let s = setup(backend, &[("AUTH_TOKEN_SCHEMES", "Token")])
            .await
            .unwrap();
        let t = s.token(&s.ada).await;
        let (status, _, body) = s
            .get("/whoami", &[("Authorization", &format!("Token {t}"))])
            .await;
        assert_eq!((status, body.as_str()), (200, "ada by token cli"));
        let (status, challenge, _) = s
            .get("/whoami", &[("Authorization", &format!("Bearer {t}"))])
            .await;
        assert_eq!((status, challenge.as_deref()), (401, Some("Token")));
        // A bad token in the scheme names the scheme.
        let (status, challenge, _) = s
            .get("/whoami", &[("Authorization", "token tern_nope")])
            .await;
        assert_eq!((status, challenge), (401, invalid("Token")));

        // Both.
        let s = setup(backend, &[("AUTH_TOKEN_SCHEMES", " Bearer , Token ")])
            .await
            .unwrap();
        let t = s.token(&s.bob).await;
        for scheme in ["Bearer", "Token", "token"] {
            let header = format!("{scheme} {t}");
            let (status, _, body) = s.get("/whoami", &[("Authorization", &header)]).await;
            assert_eq!(
                (status, body.as_str()),
                (200, "bob by token cli"),
                "{header}"
            );
        }
        // Two tokens at once: which one? Neither (the challenge names the
        // scheme of the second).
        let mut req = s.client.get("/whoami");
        req = req.header("authorization", &format!("Bearer {t}"));
        req = req.header("authorization", &format!("Token {t}"));
        let res = req.send().await;
        assert_eq!(res.status(), 401, "{}", res.text());
        assert_eq!(res.header("www-authenticate"), invalid("Token").as_deref());
    }
}

#[tokio::test]
async fn expired_revoked_unknown_and_inactive_tokens_are_401() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(s) = setup(backend, &[]).await else {
            continue;
        };
        let bearer = |t: &str| format!("Bearer {t}");
        // Expired.
        let short = NewToken::new(&s.ada, "short")
            .expires_in(Duration::from_secs(2))
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        let (status, _, _) = s
            .get("/whoami", &[("Authorization", &bearer(&short.secret))])
            .await;
        assert_eq!(
            status, 200,
            "{backend:?}: a two-second token lives two seconds"
        );
        // Until the second it expires at (rounded up when made: at most 3 s).
        let expires = short.token.expires_at.unwrap();
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let left = Duration::from_secs(u64::try_from(expires).unwrap()).saturating_sub(unix);
        assert!(left <= Duration::from_secs(3), "{left:?}");
        tokio::time::sleep(left + Duration::from_millis(20)).await;
        let (status, challenge, body) = s
            .get("/whoami", &[("Authorization", &bearer(&short.secret))])
            .await;
        assert_eq!(
            (status, challenge),
            (401, invalid("Bearer")),
            "{backend:?}: {body}"
        );
        assert!(body.contains("not valid"), "{body}");
        // Made after it expired: the expired one is gone from the list.
        let long = NewToken::new(&s.ada, "long")
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        let names: Vec<String> = list_tokens(&s.pool, s.ada.id)
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["long"]);
        // Revoked.
        revoke_token(&s.pool, s.ada.id, long.token.id)
            .await
            .unwrap();
        let (status, challenge, _) = s
            .get("/whoami", &[("Authorization", &bearer(&long.secret))])
            .await;
        assert_eq!((status, challenge), (401, invalid("Bearer")));
        // Unknown, malformed, empty.
        for junk in [
            "Bearer tern_unknown",
            "Bearer junk",
            "Bearer",
            "Bearer  ",
            "Bearer tern_é",
        ] {
            let (status, challenge, _) = s.get("/whoami", &[("Authorization", junk)]).await;
            assert_eq!((status, challenge), (401, invalid("Bearer")), "{junk}");
        }
        // An inactive user's token.
        let t = s.token(&s.bob).await;
        let (status, _, _) = s.get("/whoami", &[("Authorization", &bearer(&t))]).await;
        assert_eq!(status, 200);
        let sql = "UPDATE tern_users SET is_active = FALSE WHERE id = $1";
        with_pool!(&s.pool, p => {
            sqlx::query(sql).bind(s.bob.id).execute(p).await.unwrap().rows_affected()
        });
        let (status, challenge, _) = s.get("/whoami", &[("Authorization", &bearer(&t))]).await;
        assert_eq!((status, challenge), (401, invalid("Bearer")));
    }
}

#[tokio::test]
async fn a_bad_token_beside_a_good_cookie_is_401() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(s) = setup(backend, &[]).await else {
            continue;
        };
        let cookie = s.login("ada").await;
        let (status, _, body) = s.get("/whoami", &[("Cookie", &cookie)]).await;
        assert_eq!((status, body.as_str()), (200, "ada by session"));
        let (_, _, body) = s.get("/echo", &[("Cookie", &cookie)]).await;
        assert_eq!(body, "none");
        // The header decides alone: no fall-back to the cookie.
        for path in ["/whoami", "/maybe"] {
            let (status, challenge, body) = s
                .get(
                    path,
                    &[("Cookie", &cookie), ("Authorization", "Bearer tern_junk")],
                )
                .await;
            assert_eq!(
                (status, challenge),
                (401, invalid("Bearer")),
                "{path}: {body}"
            );
            assert!(body.contains("not valid"), "{body}");
        }
        // A good token beside ada's cookie is bob's request.
        let t = s.token(&s.bob).await;
        let (_, _, body) = s
            .get(
                "/whoami",
                &[
                    ("Cookie", &cookie),
                    ("Authorization", &format!("Bearer {t}")),
                ],
            )
            .await;
        assert_eq!(body, "bob by token cli");
        // A header of another scheme leaves the cookie in charge.
        let (_, _, body) = s
            .get(
                "/whoami",
                &[("Cookie", &cookie), ("Authorization", "Basic YWRhOng=")],
            )
            .await;
        assert_eq!(body, "ada by session");
    }
}

#[tokio::test]
async fn lists_and_revocation_stay_within_the_user() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(s) = setup(backend, &[]).await else {
            continue;
        };
        let a1 = NewToken::new(&s.ada, "one")
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        let a2 = NewToken::new(&s.ada, "two")
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        let b1 = NewToken::new(&s.bob, "bob's")
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        let ada = list_tokens(&s.pool, s.ada.id).await.unwrap();
        assert_eq!(ada, [a1.token.clone(), a2.token.clone()]);
        let shown = serde_json::to_string(&ada).unwrap();
        assert!(!shown.contains(&a1.secret) && !shown.contains(&a1.secret[5..]));
        assert!(shown.contains("\"scopes\":[\"*\"]"), "{shown}");
        // Default lifetime: 30 days (the end rounded up to a whole second).
        let lifetime = a1.token.expires_at.unwrap() - a1.token.created_at;
        assert!(
            (30 * 86_400..=30 * 86_400 + 1).contains(&lifetime),
            "{lifetime}"
        );
        // Last use, recorded when used.
        assert_eq!(ada[0].last_used, None);
        s.get(
            "/whoami",
            &[("Authorization", &format!("Bearer {}", a1.secret))],
        )
        .await;
        let used = list_tokens(&s.pool, s.ada.id).await.unwrap();
        assert!(used[0].last_used.is_some() && used[1].last_used.is_none());
        // Bob's token is not ada's to revoke: 404, and it still works.
        let err = revoke_token(&s.pool, s.ada.id, b1.token.id)
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::NotFound(_)), "{err:?}");
        let res = tern::IntoResponse::into_response(err);
        assert_eq!(res.status(), 404);
        let (status, _, _) = s
            .get(
                "/whoami",
                &[("Authorization", &format!("Bearer {}", b1.secret))],
            )
            .await;
        assert_eq!(status, 200);
        // Revoking everything of ada's leaves bob's.
        assert_eq!(revoke_all_tokens(&s.pool, s.ada.id).await.unwrap(), 2);
        assert!(list_tokens(&s.pool, s.ada.id).await.unwrap().is_empty());
        let bob: Vec<i64> = list_tokens(&s.pool, s.bob.id)
            .await
            .unwrap()
            .iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(bob, [b1.token.id]);
        // Deleting a user deletes their tokens.
        with_pool!(&s.pool, p => {
            sqlx::query("DELETE FROM tern_users WHERE id = $1").bind(s.bob.id).execute(p).await.unwrap().rows_affected()
        });
        let left: i64 = with_pool!(&s.pool, p => {
            sqlx::query_scalar("SELECT COUNT(*) FROM tern_api_tokens").fetch_one(p).await.unwrap()
        });
        assert_eq!(left, 0);
    }
}

#[tokio::test]
async fn scopes_limit_a_token_and_a_session_has_every_scope() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(s) = setup(backend, &[]).await else {
            continue;
        };
        let read = NewToken::new(&s.ada, "reader")
            .scopes(["read", "read"])
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        assert_eq!(read.token.scopes.iter().collect::<Vec<_>>(), ["read"]);
        let writer = NewToken::new(&s.ada, "writer")
            .scopes(["read", "write"])
            .create(&s.pool, &s.accounts)
            .await
            .unwrap();
        let post = |secret: String| {
            let client = &s.client;
            async move {
                let res = client
                    .post("/write")
                    .header("authorization", &format!("Bearer {secret}"))
                    .send()
                    .await;
                (res.status().as_u16(), res.text())
            }
        };
        let (status, body) = post(read.secret.clone()).await;
        assert_eq!(status, 403, "{backend:?}: {body}");
        assert!(body.contains("scope `write`"), "{body}");
        assert_eq!(post(writer.secret).await, (200, "wrote".to_owned()));
        // A session may do anything (it sends its CSRF token: it is a
        // cookie's request).
        let login = s
            .client
            .post("/auth/login")
            .json(&json!({"username": "ada", "password": PASSWORD}))
            .send()
            .await;
        let cookie = login
            .header("set-cookie")
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        let csrf = login.json::<serde_json::Value>()["csrf_token"]
            .as_str()
            .unwrap()
            .to_owned();
        let res = s
            .client
            .post("/write")
            .header("cookie", &cookie)
            .header("x-csrf-token", &csrf)
            .send()
            .await;
        assert_eq!(
            (res.status().as_u16(), res.text()),
            (200, "wrote".to_owned())
        );
        // Bad names and scopes: 400 before anything is stored.
        for bad in [
            NewToken::new(&s.ada, " ")
                .create(&s.pool, &s.accounts)
                .await,
            NewToken::new(&s.ada, &"n".repeat(101))
                .create(&s.pool, &s.accounts)
                .await,
            NewToken::new(&s.ada, "x")
                .scopes(["two words"])
                .create(&s.pool, &s.accounts)
                .await,
            NewToken::new(&s.ada, "x")
                .scopes([""])
                .create(&s.pool, &s.accounts)
                .await,
            NewToken::new(&s.ada, "x")
                .expires_in(Duration::ZERO)
                .create(&s.pool, &s.accounts)
                .await,
        ] {
            let err = bad.unwrap_err();
            assert!(matches!(err, AuthError::BadRequest(_)), "{err:?}");
        }
        assert_eq!(list_tokens(&s.pool, s.ada.id).await.unwrap().len(), 2);
    }
}

#[tokio::test]
async fn an_optional_authenticated_is_none_only_without_credentials() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(s) = setup(backend, &[]).await else {
            continue;
        };
        let t = s.token(&s.ada).await;
        let cookie = s.login("bob").await;
        for (headers, expected) in [
            (vec![], (200, "anonymous")),
            // A cookie that is no session (stale, foreign) is no credential.
            (vec![("Cookie", "tern_session=stale")], (200, "anonymous")),
            (
                vec![("Authorization", "Basic YWRhOng=")],
                (200, "anonymous"),
            ),
            (vec![("Cookie", cookie.as_str())], (200, "bob")),
            (
                vec![("Authorization", &*format!("Bearer {t}"))],
                (200, "ada"),
            ),
        ] {
            let (status, _, body) = s.get("/maybe", &headers).await;
            assert_eq!((status, body.as_str()), expected, "{backend:?} {headers:?}");
        }
        let (status, challenge, _) = s.get("/maybe", &[("Authorization", "Bearer tern_x")]).await;
        assert_eq!((status, challenge), (401, invalid("Bearer")));
        // Required, without credentials: 401 naming the scheme.
        let (status, challenge, body) = s.get("/whoami", &[]).await;
        assert_eq!(
            (status, challenge.as_deref()),
            (401, Some("Bearer")),
            "{body}"
        );
    }
}

/// `RateLimit::per_user` counts a token's requests on its user (from
/// one address, two users' tokens are two budgets).
#[tokio::test]
async fn a_per_user_rate_limit_counts_by_the_tokens_user() {
    let Some(s) = setup(Backend::Sqlite, &[]).await else {
        return;
    };
    let ada = format!("Bearer {}", s.token(&s.ada).await);
    let bob = format!("Bearer {}", s.token(&s.bob).await);
    for _ in 0..2 {
        let (status, _, body) = s.get("/limited", &[("Authorization", &ada)]).await;
        assert_eq!((status, body.as_str()), (200, "ada by token cli"));
    }
    let (status, _, _) = s.get("/limited", &[("Authorization", &ada)]).await;
    assert_eq!(status, 429);
    let (status, _, body) = s.get("/limited", &[("Authorization", &bob)]).await;
    assert_eq!((status, body.as_str()), (200, "bob by token cli"));
}

#[test]
fn token_settings_are_read_and_checked() {
    let load = |settings: Vec<(&str, &str)>| {
        let config = Config::from_settings(settings).unwrap();
        tern::settings::load::<Accounts>("auth", &config).map_err(|e| e.to_string())
    };
    let shown = format!("{:?}", load(vec![]).unwrap());
    assert!(shown.contains("token_schemes: [\"Bearer\"]"), "{shown}");
    assert!(shown.contains("token_lifetime: 2592000s"), "{shown}");
    let shown = format!(
        "{:?}",
        load(vec![
            ("AUTH_TOKEN_SCHEMES", "Token"),
            ("AUTH_TOKEN_LIFETIME", "1h")
        ])
        .unwrap()
    );
    assert!(shown.contains("token_schemes: [\"Token\"]"), "{shown}");
    assert!(shown.contains("token_lifetime: 3600s"), "{shown}");
    for (settings, says) in [
        (
            vec![("AUTH_TOKEN_SCHEMES", "Bearer Token")],
            "AUTH_TOKEN_SCHEMES",
        ),
        (
            vec![("AUTH_TOKEN_SCHEMES", "Bearer,,Token")],
            "AUTH_TOKEN_SCHEMES",
        ),
        (vec![("AUTH_TOKEN_SCHEMES", "Bearer,bearer")], "twice"),
        (vec![("AUTH_TOKEN_LIFETIME", "soon")], "AUTH_TOKEN_LIFETIME"),
        (vec![("AUTH_TOKEN_LIFETIME", "0s")], "AUTH_TOKEN_LIFETIME"),
        (vec![("AUTH_TOKEN_SCHEME", "Token")], "AUTH_TOKEN_SCHEMES"),
    ] {
        let err = load(settings.clone()).unwrap_err();
        assert!(err.contains(says), "{settings:?}: {err}");
    }
}
