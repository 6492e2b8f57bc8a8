//! Accounts over real sockets, on SQLite and PostgreSQL: login, the
//! session cookie, CSRF, fixation, tampering, logout, a new password,
//! the throttle, expiry, staff, rehashing, a rate limit per user.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{net::SocketAddr, time::Instant};

use serde_json::{json, Value};
use tern::{
    extract::Form,
    routing::{get, post},
    App, Config,
};
use tern_auth::{create_user, AuthError, Passwords, RateLimit, Staff, User};
use tern_data::{testing::fresh, with_pool, Backend, Database};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};

const SECRET: &str = "Zt3pQ9wLx2Nc8RvB5mKj7HdF4sGy6UaE";

async fn me(user: User) -> String {
    format!("hello {}", user.username)
}

#[derive(serde::Deserialize)]
struct Note {
    text: String,
}

async fn note(user: User, Form(n): Form<Note>) -> String {
    format!("{} wrote {}", user.username, n.text)
}

async fn admin(Staff(user): Staff) -> String {
    format!("{} is staff", user.username)
}

async fn open() -> &'static str {
    "open"
}

fn app() -> App {
    tern_auth::install(
        App::new()
            .settings::<Database>("database")
            .route("/me", get(me))
            .route("/notes", post(note))
            .route("/admin", get(admin))
            .route("/open", post(open))
            .route(
                "/limited",
                get(me).layer(
                    RateLimit::per(2, std::time::Duration::from_secs(60))
                        .per_user()
                        .layer(),
                ),
            ),
    )
}

struct Server {
    addr: SocketAddr,
    service: tern::AppService,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// One answer: status, head (lower-case names), body.
struct Answer {
    status: u16,
    head: String,
    raw_head: String,
    body: String,
}

impl Answer {
    /// The `name=value` of the `Set-Cookie` header, if any.
    fn cookie(&self) -> Option<String> {
        self.raw_head
            .lines()
            .find(|l| l.to_lowercase().starts_with("set-cookie: "))
            .map(|l| l[12..].split(';').next().unwrap().to_owned())
    }

    /// The `Set-Cookie` line, lower case.
    fn set_cookie_line(&self) -> String {
        self.head
            .lines()
            .find_map(|l| l.strip_prefix("set-cookie: "))
            .unwrap_or_default()
            .to_owned()
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

impl Server {
    async fn start(url: &str, extra: &[(&str, &str)]) -> Server {
        let mut settings = vec![("DATABASE_URL", url), ("SECRET_KEY", SECRET)];
        settings.extend_from_slice(extra);
        let config = Config::from_settings(settings).unwrap();
        let service = app().build_with(config).unwrap();
        let db = service.settings::<Database>().unwrap();
        db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(tern::Server::new(service.clone()).serve_with_shutdown(
            listener,
            async move {
                let _ = rx.await;
            },
        ));
        Server {
            addr,
            service,
            stop: Some(tx),
        }
    }

    fn pool(&self) -> tern_data::Pool {
        self.service.settings::<Database>().unwrap().pool().clone()
    }

    async fn user(&self, name: &str, password: &str, staff: bool) {
        create_user(&self.pool(), &Passwords::default(), name, password, staff)
            .await
            .unwrap();
    }

    async fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body.as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.unwrap();
        let answer = String::from_utf8(answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        Answer {
            status: head[9..12].parse().unwrap(),
            head: head.to_lowercase(),
            raw_head: head.to_owned(),
            body: body.to_owned(),
        }
    }

    async fn login(&self, name: &str, password: &str) -> Answer {
        let body = json!({"username": name, "password": password}).to_string();
        let headers = [("Content-Type", "application/json")];
        self.send("POST", "/auth/login", &headers, &body).await
    }

    async fn get(&self, path: &str, cookie: &str) -> Answer {
        self.send("GET", path, &[("Cookie", cookie)], "").await
    }

    async fn post_note(&self, cookie: &str, extra: &[(&str, &str)], body: &str) -> Answer {
        let mut headers = vec![
            ("Cookie", cookie),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ];
        headers.extend_from_slice(extra);
        self.send("POST", "/notes", &headers, body).await
    }
}

/// Logs `name` in: the cookie and the CSRF token.
async fn logged_in(server: &Server, name: &str, password: &str) -> (String, String) {
    let a = server.login(name, password).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let token = a.json()["csrf_token"].as_str().unwrap().to_owned();
    (a.cookie().unwrap(), token)
}

#[tokio::test]
async fn login_sessions_and_csrf() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(&url, &[]).await;
        server.user("Ada", "correct horse battery", false).await;

        // The name is kept as given, and compared without regard to case.
        let a = server.login("ada", "correct horse battery").await;
        assert_eq!(a.status, 200, "{backend:?}: {}", a.body);
        assert_eq!(a.json()["user"]["username"], "Ada");
        assert_eq!(a.json()["user"]["email"], Value::Null);
        let line = a.set_cookie_line();
        for attribute in ["httponly", "samesite=lax", "path=/", "max-age=1209600"] {
            assert!(line.contains(attribute), "{line}");
        }
        let cookie = a.cookie().unwrap();
        let token = a.json()["csrf_token"].as_str().unwrap().to_owned();
        assert_eq!(server.get("/me", &cookie).await.body, "hello Ada");
        let anonymous = server.send("GET", "/me", &[], "").await;
        assert_eq!(anonymous.status, 401);
        assert!(anonymous.head.contains("application/problem+json"));
        let session = server.get("/auth/session", &cookie).await;
        assert_eq!(session.json()["csrf_token"], token.as_str());

        // CSRF: missing, wrong, right (header or form field).
        let missing = server.post_note(&cookie, &[], "text=hi").await;
        assert_eq!(missing.status, 403, "{backend:?}");
        assert!(missing.body.contains("no CSRF token"), "{}", missing.body);
        let wrong = server
            .post_note(&cookie, &[("X-CSRF-Token", "not-the-token")], "text=hi")
            .await;
        assert_eq!(wrong.status, 403);
        assert!(wrong.body.contains("does not match"), "{}", wrong.body);
        let by_header = server
            .post_note(&cookie, &[("X-CSRF-Token", &token)], "text=hi")
            .await;
        assert_eq!(
            (by_header.status, by_header.body.as_str()),
            (200, "Ada wrote hi")
        );
        let by_field = server
            .post_note(&cookie, &[], &format!("text=there&csrf_token={token}"))
            .await;
        assert_eq!(
            (by_field.status, by_field.body.as_str()),
            (200, "Ada wrote there")
        );
        // Another site, even with the right token.
        let other_site = server
            .post_note(
                &cookie,
                &[("X-CSRF-Token", &token), ("Origin", "https://evil.example")],
                "text=hi",
            )
            .await;
        assert_eq!(other_site.status, 403);
        assert!(
            other_site.body.contains("another site"),
            "{}",
            other_site.body
        );
        let same_site = server
            .post_note(
                &cookie,
                &[
                    ("X-CSRF-Token", &token),
                    ("Origin", &format!("http://{}", server.addr)),
                ],
                "text=hi",
            )
            .await;
        assert_eq!(same_site.status, 200, "{}", same_site.body);
        // The form read for its token is bounded (1 MiB): past it, a 403
        // that says to send the header; at the bound, read and checked.
        let big = format!("csrf_token={token}&text={}", "x".repeat(1 << 20));
        let refused = server.post_note(&cookie, &[], &big).await;
        assert_eq!(refused.status, 403, "{}", refused.body);
        assert!(
            refused.body.contains("X-CSRF-Token header"),
            "{}",
            refused.body
        );
        let at_bound = format!("csrf_token={token}&text={}", "x".repeat((1 << 20) - 70));
        assert!(at_bound.len() <= 1 << 20);
        let read = server.post_note(&cookie, &[], &at_bound).await;
        assert_eq!(
            read.status,
            200,
            "{}",
            &read.body[..read.body.len().min(200)]
        );
        // A bearer request carries no cookie authority: no CSRF check.
        let bearer = server
            .send("POST", "/open", &[("Authorization", "Bearer abc")], "")
            .await;
        assert_eq!(bearer.status, 200);

        // Another session's token is not this one's.
        server.user("bob", "bob's long password", false).await;
        let (bob_cookie, bob_token) = logged_in(&server, "bob", "bob's long password").await;
        let crossed = server
            .post_note(&cookie, &[("X-CSRF-Token", &bob_token)], "text=hi")
            .await;
        assert_eq!(crossed.status, 403);

        // A tampered cookie is no session.
        let mut tampered = cookie.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        assert_eq!(server.get("/me", &tampered).await.status, 401);

        // Fixation: logging in with a session cookie (a form of that
        // session, so with its CSRF token) ends that session.
        let body = json!({"username": "bob", "password": "bob's long password"}).to_string();
        let headers = [
            ("Content-Type", "application/json"),
            ("Cookie", bob_cookie.as_str()),
            ("X-CSRF-Token", bob_token.as_str()),
        ];
        let again = server.send("POST", "/auth/login", &headers, &body).await;
        assert_eq!(again.status, 200, "{}", again.body);
        let new_bob = again.cookie().unwrap();
        assert_ne!(new_bob, bob_cookie);
        assert_eq!(server.get("/me", &bob_cookie).await.status, 401);
        assert_eq!(server.get("/me", &new_bob).await.body, "hello bob");

        // Logout ends it; its cookie and token replayed are refused.
        let out = server
            .send(
                "POST",
                "/auth/logout",
                &[("Cookie", &cookie), ("X-CSRF-Token", &token)],
                "",
            )
            .await;
        assert_eq!(out.status, 204, "{}", out.body);
        assert!(out.set_cookie_line().contains("max-age=0"), "{}", out.head);
        assert_eq!(server.get("/me", &cookie).await.status, 401);
        let replay = server
            .post_note(&cookie, &[("X-CSRF-Token", &token)], "text=hi")
            .await;
        assert_eq!(replay.status, 401);
    }
}

/// What `login_sessions_and_csrf` leaves out: a `Referer` when no
/// `Origin` is sent, the session's absolute lifetime (counted from login,
/// however busy the session), and the `Secure` cookie of production.
#[tokio::test]
async fn referer_lifetime_and_the_production_cookie() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        // The idle limit stays at its default (a day): only the lifetime
        // can end the session here.
        let server = Server::start(&url, &[("AUTH_SESSION_LIFETIME", "3s")]).await;
        server.user("ada", "correct horse battery", false).await;
        let login_at = Instant::now();
        let (cookie, token) = logged_in(&server, "ada", "correct horse battery").await;

        // Without `Origin`, the `Referer` must name this host.
        let with_token = |referer: String| {
            let (server, cookie, token) = (&server, &cookie, &token);
            async move {
                server
                    .post_note(
                        cookie,
                        &[("X-CSRF-Token", token), ("Referer", &referer)],
                        "text=hi",
                    )
                    .await
            }
        };
        let other = with_token("https://evil.example/form".to_owned()).await;
        assert_eq!(other.status, 403, "{backend:?}: {}", other.body);
        assert!(other.head.contains("application/problem+json"));
        assert!(
            other
                .body
                .contains("another site (Referer `https://evil.example/form`"),
            "{}",
            other.body
        );
        let lookalike = with_token(format!("http://{}.evil.example/", server.addr)).await;
        assert_eq!(lookalike.status, 403, "{}", lookalike.body);
        let ours = with_token(format!("http://{}/notes/new?x=1", server.addr)).await;
        assert_eq!((ours.status, ours.body.as_str()), (200, "ada wrote hi"));

        // In use all along, the session still ends at its lifetime (the
        // store counts whole seconds: 1.5 s is less than 3 s after login
        // whatever the rounding, 3.2 s is at least 3).
        while login_at.elapsed() < std::time::Duration::from_millis(1500) {
            assert_eq!(server.get("/me", &cookie).await.status, 200);
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        tokio::time::sleep(
            std::time::Duration::from_millis(3200).saturating_sub(login_at.elapsed()),
        )
        .await;
        let ended = server.get("/me", &cookie).await;
        assert_eq!(ended.status, 401, "{backend:?}: {}", ended.body);

        // Production: the session cookie is `Secure` as well.
        let production =
            Server::start(&url, &[("TERN_ENV", "production"), ("ALLOWED_HOSTS", "*")]).await;
        let a = production.login("ada", "correct horse battery").await;
        assert_eq!(a.status, 200, "{backend:?}: {}", a.body);
        let line = a.set_cookie_line();
        for attribute in ["; secure", "; httponly", "; samesite=lax"] {
            assert!(line.contains(attribute), "{line}");
        }
    }
}

/// `RateLimit::per_user`: each logged-in user has a count of their own,
/// though both come from one address; anonymous requests count by
/// address, apart from both.
#[tokio::test]
async fn a_per_user_rate_limit_counts_each_user_apart() {
    let Some(url) = fresh(Backend::Sqlite).await else {
        return;
    };
    let server = Server::start(&url, &[]).await;
    server.user("ada", "correct horse battery", false).await;
    server.user("bob", "bob's long password", false).await;
    let (ada, _) = logged_in(&server, "ada", "correct horse battery").await;
    let (bob, _) = logged_in(&server, "bob", "bob's long password").await;
    for remaining in ["1", "0"] {
        let a = server.get("/limited", &ada).await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert!(
            a.head
                .contains(&format!("ratelimit-remaining: {remaining}\r\n")),
            "{}",
            a.head
        );
    }
    let refused = server.get("/limited", &ada).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(refused.head.contains("retry-after: "), "{}", refused.head);
    let b = server.get("/limited", &bob).await;
    assert_eq!((b.status, b.body.as_str()), (200, "hello bob"));
    assert!(b.head.contains("ratelimit-remaining: 1\r\n"), "{}", b.head);
    // Anonymous: counted (by address), then refused by `User`.
    let anonymous = server.send("GET", "/limited", &[], "").await;
    assert_eq!(anonymous.status, 401);
    assert!(
        anonymous.head.contains("ratelimit-remaining: 1\r\n"),
        "{}",
        anonymous.head
    );
}

#[tokio::test]
async fn no_enumeration_and_a_throttle_per_account_and_address() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(
            &url,
            &[("AUTH_LOGIN_FAILURES", "3"), ("AUTH_LOGIN_WINDOW", "2s")],
        )
        .await;
        server.user("ada", "correct horse battery", false).await;
        server.user("cy", "cy's long password", false).await;
        server.user("dee", "dee's long password", false).await;

        // Unknown user and wrong password: the same answer, comparable time.
        let timed = |name: &'static str| {
            let server = &server;
            async move {
                let start = Instant::now();
                let a = server.login(name, "a wrong password").await;
                (a, start.elapsed())
            }
        };
        // The fastest of three each: a busy machine slows some, never
        // speeds any.
        let (mut t_unknown, mut t_wrong) = (std::time::Duration::MAX, std::time::Duration::MAX);
        for _ in 0..3 {
            let (unknown, t) = timed("nobody").await;
            t_unknown = t_unknown.min(t);
            let (wrong, t) = timed("dee").await;
            t_wrong = t_wrong.min(t);
            assert_eq!((unknown.status, wrong.status), (401, 401));
            assert_eq!(unknown.json()["detail"], wrong.json()["detail"]);
        }
        let ratio = t_unknown.as_secs_f64() / t_wrong.as_secs_f64();
        assert!((0.33..3.0).contains(&ratio), "{t_unknown:?} vs {t_wrong:?}");

        // Three failures for ada from this address, then 429 even with the
        // right password; another account is not affected.
        for _ in 0..3 {
            assert_eq!(server.login("ada", "nope nope nope").await.status, 401);
        }
        let throttled = server.login("ada", "correct horse battery").await;
        assert_eq!(throttled.status, 429, "{backend:?}: {}", throttled.body);
        assert!(
            throttled.head.contains("retry-after: "),
            "{}",
            throttled.head
        );
        assert_eq!(server.login("cy", "cy's long password").await.status, 200);
        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        assert_eq!(
            server.login("ada", "correct horse battery").await.status,
            200
        );

        // An oversized password is refused before any hashing.
        let huge = "x".repeat(100_000);
        let start = Instant::now();
        let a = server.login("ada", &huge).await;
        assert_eq!(a.status, 422, "{}", a.body);
        assert!(a.body.contains("at most 1024 bytes"), "{}", a.body);
        assert!(start.elapsed() < t_wrong, "{:?}", start.elapsed());
    }
}

#[tokio::test]
async fn passwords_sessions_expiry_staff_and_rehash() {
    let Some(url) = fresh(Backend::Sqlite).await else {
        return;
    };
    let server = Server::start(&url, &[("AUTH_SESSION_IDLE", "2s")]).await;
    server.user("ada", "correct horse battery", false).await;
    server.user("root", "root's long password", true).await;

    // A new password: every other session ends, this client gets a new one.
    let (first, _) = logged_in(&server, "ada", "correct horse battery").await;
    let (second, token) = logged_in(&server, "ada", "correct horse battery").await;
    let change = server
        .send(
            "POST",
            "/auth/password",
            &[
                ("Cookie", &second),
                ("X-CSRF-Token", &token),
                ("Content-Type", "application/json"),
            ],
            &json!({"current": "correct horse battery", "new": "a newer long password"})
                .to_string(),
        )
        .await;
    assert_eq!(change.status, 200, "{}", change.body);
    let third = change.cookie().unwrap();
    assert_eq!(server.get("/me", &first).await.status, 401);
    assert_eq!(server.get("/me", &second).await.status, 401);
    assert_eq!(server.get("/me", &third).await.status, 200);
    assert_eq!(
        server.login("ada", "correct horse battery").await.status,
        401
    );
    assert_eq!(
        server.login("ada", "a newer long password").await.status,
        200
    );
    let short = server
        .send(
            "POST",
            "/auth/password",
            &[
                ("Cookie", &third),
                (
                    "X-CSRF-Token",
                    change.json()["csrf_token"].as_str().unwrap(),
                ),
                ("Content-Type", "application/json"),
            ],
            &json!({"current": "a newer long password", "new": "short"}).to_string(),
        )
        .await;
    assert_eq!(short.status, 422, "{}", short.body);

    // Staff only.
    let (ada, _) = logged_in(&server, "ada", "a newer long password").await;
    assert_eq!(server.get("/admin", &ada).await.status, 403);
    let (root, _) = logged_in(&server, "root", "root's long password").await;
    assert_eq!(server.get("/admin", &root).await.body, "root is staff");

    // Idle too long: the session ends.
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(server.get("/admin", &root).await.status, 401);

    // A hash with older parameters is replaced at the next login.
    let pool = server.pool();
    let weak = {
        use argon2::password_hash::{PasswordHasher, SaltString};
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        let params = argon2::Params::new(8192, 1, 1, None).unwrap();
        argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params)
            .hash_password(b"root's long password", &salt)
            .unwrap()
            .to_string()
    };
    let sql = "UPDATE tern_users SET password_hash = $1 WHERE username = 'root'";
    with_pool!(&pool, p => {
        sqlx::query(sql).bind(&weak).execute(p).await.unwrap().rows_affected()
    });
    assert_eq!(
        server.login("root", "root's long password").await.status,
        200
    );
    let sql = "SELECT password_hash FROM tern_users WHERE username = 'root'";
    let stored: String = with_pool!(&pool, p => {
        sqlx::query_scalar(sql).fetch_one(p).await.unwrap()
    });
    assert!(
        stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "{stored}"
    );
}

/// `PASSWORD_PEPPER`: new hashes use it, older ones gain it at login,
/// and once in use it is required.
#[tokio::test]
async fn a_pepper_is_used_gained_at_login_and_then_required() {
    let Some(url) = fresh(Backend::Sqlite).await else {
        return;
    };
    let pepper = "a pepper of at least sixteen bytes";
    let plain = Server::start(&url, &[]).await;
    // Made before the pepper was set.
    plain.user("old", "correct horse battery", false).await;
    let peppered = Server::start(&url, &[("PASSWORD_PEPPER", pepper)]).await;
    let passwords = peppered.service.settings::<Passwords>().unwrap();
    create_user(
        &peppered.pool(),
        &passwords,
        "new",
        "another long one",
        false,
    )
    .await
    .unwrap();
    let hash_of = |name: &'static str| {
        let pool = peppered.pool();
        async move {
            let sql = "SELECT password_hash FROM tern_users WHERE username = $1";
            let hash: String = with_pool!(&pool, p => {
                sqlx::query_scalar(sql).bind(name).fetch_one(p).await.unwrap()
            });
            hash
        }
    };
    assert!(hash_of("new").await.contains(",keyid=cGVwcGVy$"));
    assert!(!hash_of("old").await.contains("keyid"));
    tern_auth::check_pepper(&plain.pool(), &Passwords::default())
        .await
        .unwrap_err();

    assert_eq!(peppered.login("new", "another long one").await.status, 200);
    // The older hash verifies without it, and is rehashed with it.
    assert_eq!(
        peppered.login("old", "correct horse battery").await.status,
        200
    );
    assert!(hash_of("old").await.contains(",keyid=cGVwcGVy$"));
    assert_eq!(
        peppered.login("old", "wrong horse battery").await.status,
        401
    );

    // Without the pepper: the start check names it; a login is an error
    // (500, the reason logged), never a plain wrong password.
    let err = tern_auth::check_pepper(&plain.pool(), &Passwords::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("PASSWORD_PEPPER") && err.contains("2 account"),
        "{err}"
    );
    assert!(!err.contains(pepper));
    let refused = plain.login("new", "another long one").await;
    assert_eq!(refused.status, 500, "{}", refused.body);
    assert!(
        !refused.body.contains("PASSWORD_PEPPER"),
        "{}",
        refused.body
    );
    tern_auth::check_pepper(&peppered.pool(), &passwords)
        .await
        .unwrap();
}

/// `tern_auth::login` by username or email: the throttle counts on the
/// account found, so its name, its email and the built-in `POST
/// /auth/login` share one budget (10 by default): ten wrong guesses by
/// email throttle the username, and the other way round.
#[tokio::test]
async fn a_login_by_email_and_by_name_share_the_throttle() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(&url, &[]).await;
        let pool = server.pool();
        let passwords = Passwords::default();
        let accounts = server.service.settings::<tern_auth::Accounts>().unwrap();
        for (name, email) in [("Ada", "ada@example.com"), ("bob", "bob@example.com")] {
            tern_auth::NewUser::new(name, "correct horse battery")
                .email(email)
                .create(&pool, &passwords)
                .await
                .unwrap();
        }
        let here: std::net::IpAddr = "203.0.113.7".parse().unwrap();
        let login = |ip, login: &'static str, password: &'static str| {
            let (pool, accounts, passwords) = (&pool, &accounts, &passwords);
            async move { tern_auth::login(pool, accounts, passwords, ip, login, password).await }
        };
        // Right by either, in any case; the name answered is the stored one.
        for by in ["ada", "ADA@example.com"] {
            let user = login(here, by, "correct horse battery").await.unwrap();
            assert_eq!(user.username, "Ada", "{backend:?}: {by}");
        }
        // Ten wrong guesses by email (in two spellings)...
        for i in 0..10 {
            let by = if i % 2 == 0 {
                "ada@example.com"
            } else {
                "Ada@Example.COM"
            };
            let err = login(here, by, "a wrong guess").await.unwrap_err();
            assert!(
                matches!(err, AuthError::BadCredentials),
                "{backend:?} {i}: {err}"
            );
        }
        // ... and the username is throttled, even with its password, here
        // and at the built-in login (which counts by the name too).
        let err = login(here, "ada", "correct horse battery")
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::Throttled(_)), "{backend:?}: {err}");
        let err = login(here, "ada@example.com", "correct horse battery")
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::Throttled(_)), "{err}");
        // The test socket's address is 127.0.0.1: count there too.
        let localhost: std::net::IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..10 {
            login(localhost, "ADA@EXAMPLE.COM", "a wrong guess")
                .await
                .unwrap_err();
        }
        let a = server.login("ada", "correct horse battery").await;
        assert_eq!(a.status, 429, "{backend:?}: {}", a.body);
        // Another address, and another account, are not affected; an
        // unknown login is counted on itself.
        let there: std::net::IpAddr = "198.51.100.2".parse().unwrap();
        assert!(login(there, "ada", "correct horse battery").await.is_ok());
        assert!(login(here, "bob@example.com", "correct horse battery")
            .await
            .is_ok());
        for _ in 0..10 {
            let err = login(here, "nobody@example.com", "a wrong guess")
                .await
                .unwrap_err();
            assert!(matches!(err, AuthError::BadCredentials), "{err}");
        }
        let err = login(here, "Nobody@Example.com", "a wrong guess")
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::Throttled(_)), "{err}");
        // A success resets the count of its account.
        for _ in 0..9 {
            login(there, "bob", "a wrong guess").await.unwrap_err();
        }
        assert!(login(there, "bob@example.com", "correct horse battery")
            .await
            .is_ok());
        for _ in 0..10 {
            let err = login(there, "bob", "a wrong guess").await.unwrap_err();
            assert!(matches!(err, AuthError::BadCredentials), "{err}");
        }
        // An oversized password: refused before counting or hashing.
        let huge: &'static str = Box::leak("x".repeat(2000).into_boxed_str());
        let err = login(there, "nobody-else", huge).await.unwrap_err();
        assert!(matches!(err, AuthError::Password(_)), "{err}");
    }
}

#[test]
fn the_default_throttle_is_ten_failures_a_minute() {
    let config = Config::from_settings([("DATABASE_URL", "sqlite::memory:")]).unwrap();
    let accounts: tern_auth::Accounts = tern::settings::load("auth", &config).unwrap();
    let shown = format!("{accounts:?}");
    assert!(shown.contains("login_failures: 10"), "{shown}");
    assert!(shown.contains("login_window: 60s"), "{shown}");
}

/// `AUTH_STORE=redis`: sessions and the throttle's counts in Redis (the
/// users stay in the database), shared by two servers.
#[cfg(feature = "redis")]
#[tokio::test]
async fn the_redis_store_keeps_sessions_and_counts_for_every_server() {
    let Some(redis) = tern::test::service_url("REDIS_URL") else {
        return;
    };
    let url = fresh(Backend::Sqlite).await.unwrap();
    // Keys of their own: another run's sessions and counts do not matter.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let prefix = format!("tern-test-{}-{nanos}", std::process::id());
    let settings = [
        ("AUTH_STORE", "redis"),
        ("AUTH_REDIS_URL", redis.as_str()),
        ("AUTH_REDIS_PREFIX", prefix.as_str()),
        ("AUTH_LOGIN_FAILURES", "2"),
        ("AUTH_LOGIN_WINDOW", "2s"),
        // What is left in Redis after the test goes within a minute.
        ("AUTH_SESSION_IDLE", "60s"),
    ];
    let a = Server::start(&url, &settings).await;
    let b = Server::start(&url, &settings).await;
    a.user("ada", "correct horse battery", false).await;

    let (cookie, token) = logged_in(&a, "ada", "correct horse battery").await;
    assert_eq!(b.get("/me", &cookie).await.body, "hello ada");
    // Not in the database.
    let count: i64 = with_pool!(&a.pool(), p => {
        sqlx::query_scalar("SELECT COUNT(*) FROM tern_sessions").fetch_one(p).await.unwrap()
    });
    assert_eq!(count, 0);
    // The session keeps the name as given, the email and the rights.
    tern_auth::NewUser::new("Eve", "correct horse battery")
        .email("eve@example.com")
        .superuser(true)
        .create(&a.pool(), &Passwords::default())
        .await
        .unwrap();
    let (eve, _) = logged_in(&a, "eve", "correct horse battery").await;
    let session = b.get("/auth/session", &eve).await.json();
    assert_eq!(session["user"]["username"], "Eve");
    assert_eq!(session["user"]["email"], "eve@example.com");
    assert_eq!(session["user"]["is_staff"], true);
    assert_eq!(session["user"]["is_superuser"], true);
    let session = b.get("/auth/session", &cookie).await.json();
    assert_eq!(session["user"]["is_superuser"], false);
    // Logout on one ends it on the other.
    let out = b
        .send(
            "POST",
            "/auth/logout",
            &[("Cookie", &cookie), ("X-CSRF-Token", &token)],
            "",
        )
        .await;
    assert_eq!(out.status, 204);
    assert_eq!(a.get("/me", &cookie).await.status, 401);
    // A new password ends every session, on every server.
    let (first, _) = logged_in(&a, "ada", "correct horse battery").await;
    let (second, token) = logged_in(&b, "ada", "correct horse battery").await;
    let change = a
        .send(
            "POST",
            "/auth/password",
            &[
                ("Cookie", &second),
                ("X-CSRF-Token", &token),
                ("Content-Type", "application/json"),
            ],
            &json!({"current": "correct horse battery", "new": "a newer long password"})
                .to_string(),
        )
        .await;
    assert_eq!(change.status, 200, "{}", change.body);
    assert_eq!(b.get("/me", &first).await.status, 401);
    assert_eq!(b.get("/me", &second).await.status, 401);
    assert_eq!(b.get("/me", &change.cookie().unwrap()).await.status, 200);
    // Failures counted across both servers.
    assert_eq!(a.login("ada", "wrong password").await.status, 401);
    assert_eq!(b.login("ada", "wrong password").await.status, 401);
    let throttled = a.login("ada", "a newer long password").await;
    assert_eq!(throttled.status, 429, "{}", throttled.body);
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    assert_eq!(b.login("ada", "a newer long password").await.status, 200);
}

#[cfg(feature = "redis")]
#[test]
fn store_settings_are_checked() {
    for (settings, says) in [
        (vec![("AUTH_STORE", "redis")], "set AUTH_REDIS_URL"),
        (
            vec![("AUTH_STORE", "memcached")],
            "`database` (the default) or `redis`",
        ),
        (
            vec![("AUTH_REDIS_URL", "redis://x/")],
            "AUTH_STORE is not `redis`",
        ),
        (
            vec![("AUTH_STORE", "redis"), ("AUTH_REDIS_URL", "not a url")],
            "AUTH_REDIS_URL",
        ),
    ] {
        let config = Config::from_settings(settings).unwrap();
        let err = tern::settings::load::<tern_auth::Accounts>("auth", &config)
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{err}");
    }
}
