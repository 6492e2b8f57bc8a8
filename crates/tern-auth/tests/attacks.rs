//! Security round 3: the accounts under outside attack, over real
//! sockets. A parallel burst of guesses against the login throttle (on
//! SQLite, PostgreSQL, and two servers sharing Redis), a junk bearer
//! token sent with a session cookie to dodge the CSRF check, or without
//! one to dodge the origin check, a revoked token, and an `Origin` of
//! another scheme.
#![allow(clippy::unwrap_used, missing_docs)]

use std::net::SocketAddr;

use serde_json::{json, Value};
use tern::{
    extract::Form,
    routing::{get, post},
    App, Config,
};
use tern_auth::{create_user, Accounts, Authenticated, NewToken, Passwords, User};
use tern_data::{testing::fresh, Backend, Database};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};

const SECRET: &str = "a-secret-key-for-the-attack-tests-0123456789";
const PASSWORD: &str = "correct horse battery";

#[derive(serde::Deserialize)]
struct Note {
    text: String,
}

async fn note(user: User, Form(n): Form<Note>) -> String {
    format!("{} wrote {}", user.username, n.text)
}

async fn open() -> &'static str {
    "open"
}

fn app() -> App {
    tern_auth::install(
        App::new()
            .settings::<Database>("database")
            .route("/notes", post(note))
            .route("/open", post(open))
            .route("/me", get(|user: User| async move { user.username }))
            .route(
                "/posts",
                post(|auth: Authenticated| async move { format!("{} posted", auth.user.username) }),
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

/// One answer: status, head (lower case), body.
#[derive(Debug)]
struct Answer {
    status: u16,
    head: String,
    raw_head: String,
    body: String,
}

impl Answer {
    fn cookie(&self) -> Option<String> {
        self.raw_head
            .lines()
            .find(|l| l.to_lowercase().starts_with("set-cookie: "))
            .map(|l| l[12..].split(';').next().unwrap().to_owned())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// Sends one request to `addr`; `Host` is the address unless `headers`
/// name one.
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
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

async fn login(addr: SocketAddr, name: &str, password: &str) -> Answer {
    let body = json!({"username": name, "password": password}).to_string();
    let headers = [("Content-Type", "application/json")];
    send(addr, "POST", "/auth/login", &headers, &body).await
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

    async fn user(&self, name: &str, password: &str) -> User {
        let pool = self.service.settings::<Database>().unwrap().pool().clone();
        create_user(&pool, &Passwords::default(), name, password, false)
            .await
            .unwrap()
    }

    /// A new API token of `user`: its secret and id.
    async fn token(&self, user: &User) -> (String, i64) {
        let pool = self.service.settings::<Database>().unwrap().pool().clone();
        let accounts = self.service.settings::<Accounts>().unwrap();
        let issued = NewToken::new(user, "attack")
            .create(&pool, &accounts)
            .await
            .unwrap();
        (issued.secret, issued.token.id)
    }

    /// A logged-in session: the cookie and the CSRF token.
    async fn session(&self, name: &str, password: &str) -> (String, String) {
        let a = login(self.addr, name, password).await;
        assert_eq!(a.status, 200, "{}", a.body);
        let token = a.json()["csrf_token"].as_str().unwrap().to_owned();
        (a.cookie().unwrap(), token)
    }
}

/// `n` wrong guesses for `name` at once, spread over `servers` in turn:
/// how many were evaluated (`401`) and how many refused (`429`, each
/// with `Retry-After` and a problem+json).
async fn burst(servers: &[SocketAddr], name: &str, n: usize) -> (usize, usize) {
    let guesses: Vec<_> = (0..n)
        .map(|i| {
            let addr = servers[i % servers.len()];
            let name = name.to_owned();
            tokio::spawn(async move { login(addr, &name, &format!("guess number {i}")).await })
        })
        .collect();
    let (mut evaluated, mut refused) = (0, 0);
    for guess in guesses {
        let a = guess.await.unwrap();
        match a.status {
            401 => evaluated += 1,
            429 => {
                assert!(a.head.contains("retry-after: "), "{}", a.head);
                assert!(a.head.contains("application/problem+json"), "{}", a.head);
                refused += 1;
            }
            other => panic!("a guess got {other}: {}", a.body),
        }
    }
    (evaluated, refused)
}

/// Issue 25, item 1: the throttle was checked before the password hash
/// and counted after it, so a parallel burst passed the check before any
/// failure was counted (150 guesses, 149 evaluated). Each attempt is now
/// counted before it is evaluated: 40 guesses at once, at most 10 (the
/// limit) evaluated, the rest `429`; the right password after them is
/// refused too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_parallel_burst_of_guesses_is_evaluated_at_most_the_limit() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(&url, &[]).await;
        server.user("ada", PASSWORD).await;
        server.user("bob", PASSWORD).await;

        let (evaluated, refused) = burst(&[server.addr], "ada", 40).await;
        println!("{backend:?}: 40 parallel guesses, {evaluated} evaluated, {refused} refused");
        assert!(
            evaluated <= 10,
            "{backend:?}: {evaluated} of 40 parallel guesses were evaluated (limit 10)"
        );
        assert_eq!(evaluated + refused, 40);
        let right = login(server.addr, "ada", PASSWORD).await;
        assert_eq!(right.status, 429, "{backend:?}: {}", right.body);
        assert!(right.cookie().is_none());
        // Another account from the same address is not affected, and its
        // success resets its own count.
        assert_eq!(login(server.addr, "bob", PASSWORD).await.status, 200);
    }
}

/// The same burst across two servers sharing their counts in Redis
/// (`AUTH_STORE=redis`).
#[cfg(feature = "redis")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_parallel_burst_across_two_servers_sharing_redis() {
    let Some(redis) = tern::test::service_url("REDIS_URL") else {
        return;
    };
    let url = fresh(Backend::Sqlite).await.unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let prefix = format!("tern-attack-{}-{nanos}", std::process::id());
    let settings = [
        ("AUTH_STORE", "redis"),
        ("AUTH_REDIS_URL", redis.as_str()),
        ("AUTH_REDIS_PREFIX", prefix.as_str()),
        ("AUTH_SESSION_IDLE", "60s"),
    ];
    let a = Server::start(&url, &settings).await;
    let b = Server::start(&url, &settings).await;
    a.user("ada", PASSWORD).await;

    let (evaluated, refused) = burst(&[a.addr, b.addr], "ada", 40).await;
    println!("Redis, two servers: 40 parallel guesses, {evaluated} evaluated, {refused} refused");
    assert!(
        evaluated <= 10,
        "{evaluated} of 40 parallel guesses on two servers were evaluated (limit 10)"
    );
    assert_eq!(evaluated + refused, 40);
    for server in [&a, &b] {
        let right = login(server.addr, "ada", PASSWORD).await;
        assert_eq!(right.status, 429, "{}", right.body);
    }
}

/// Within the budget, a success resets the count: 2 failures, a login,
/// then 3 more failures (the limit) are all evaluated before the next
/// attempt is refused.
#[tokio::test]
async fn a_success_resets_the_count() {
    let Some(url) = fresh(Backend::Sqlite).await else {
        return;
    };
    let server = Server::start(&url, &[("AUTH_LOGIN_FAILURES", "3")]).await;
    server.user("ada", PASSWORD).await;
    for _ in 0..2 {
        assert_eq!(login(server.addr, "ada", "wrong").await.status, 401);
    }
    assert_eq!(login(server.addr, "ada", PASSWORD).await.status, 200);
    for _ in 0..3 {
        assert_eq!(login(server.addr, "ada", "wrong").await.status, 401);
    }
    let refused = login(server.addr, "ada", PASSWORD).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(
        refused.body.contains("too many failed logins"),
        "{}",
        refused.body
    );
}

/// Issue 25, item 6: `Authorization: Bearer <anything>` exempted a
/// request from the CSRF check, though its session cookie is what
/// authenticated it. A bearer token exempts a request only when no
/// session comes with it.
#[tokio::test]
async fn a_junk_bearer_token_does_not_exempt_a_session_from_csrf() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(&url, &[]).await;
        server.user("ada", PASSWORD).await;
        let (cookie, token) = server.session("ada", PASSWORD).await;
        let form = [
            ("Cookie", cookie.as_str()),
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", "Bearer junk"),
        ];
        let dodged = send(server.addr, "POST", "/notes", &form, "text=x").await;
        assert_eq!(dodged.status, 403, "{backend:?}: {}", dodged.body);
        assert!(dodged.body.contains("no CSRF token"), "{}", dodged.body);
        // Another site, bearer or not.
        let mut other = form.to_vec();
        other.push(("X-CSRF-Token", &token));
        other.push(("Origin", "http://evil.example"));
        let a = send(server.addr, "POST", "/notes", &other, "text=x").await;
        assert_eq!(a.status, 403, "{}", a.body);
        // With the session's token it is the session's request.
        let with_token = format!("text=x&csrf_token={token}");
        let a = send(server.addr, "POST", "/notes", &form, &with_token).await;
        assert_eq!((a.status, a.body.as_str()), (200, "ada wrote x"));
        // A bearer request without a session has no cookie authority to
        // protect: it passes (the app checks its token).
        let a = send(
            server.addr,
            "POST",
            "/open",
            &[("Authorization", "Bearer abc")],
            "",
        )
        .await;
        assert_eq!((a.status, a.body.as_str()), (200, "open"));
        // A cookie that is no live session is no authority either.
        let a = send(
            server.addr,
            "POST",
            "/open",
            &[
                ("Authorization", "Bearer abc"),
                ("Cookie", "tern_session=x"),
            ],
            "",
        )
        .await;
        assert_eq!(a.status, 200, "{}", a.body);
    }
}

/// Issue 25, item 6: the `Origin` check compared hosts only, so
/// `Origin: https://HOST` passed on a plain-HTTP server. Scheme, host
/// and port are compared now (default ports filled in); a proxy that
/// Tern trusts (`TRUSTED_PROXIES`, loopback by default) says the scheme
/// it was reached with in `X-Forwarded-Proto`.
#[tokio::test]
async fn the_origin_must_have_the_requests_scheme_host_and_port() {
    let Some(url) = fresh(Backend::Sqlite).await else {
        return;
    };
    let server = Server::start(&url, &[]).await;
    server.user("ada", PASSWORD).await;
    let (cookie, token) = server.session("ada", PASSWORD).await;
    let port = server.addr.port();
    let post = |extra: Vec<(&'static str, String)>| {
        let (addr, cookie, token) = (server.addr, cookie.clone(), token.clone());
        async move {
            let mut headers = vec![
                ("Cookie", cookie),
                (
                    "Content-Type",
                    "application/x-www-form-urlencoded".to_owned(),
                ),
                ("X-CSRF-Token", token),
            ];
            headers.extend(extra);
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            send(addr, "POST", "/notes", &headers, "text=hi").await
        }
    };
    let origin = |v: String| vec![("Origin", v)];
    for (headers, expected) in [
        (origin(format!("http://127.0.0.1:{port}")), 200),
        (origin(format!("HTTP://127.0.0.1:{port}")), 200),
        // Another scheme: the attack.
        (origin(format!("https://127.0.0.1:{port}")), 403),
        (origin(format!("ws://127.0.0.1:{port}")), 403),
        // Another port, or none (80 on http).
        (origin(format!("http://127.0.0.1:{}", port + 1)), 403),
        (origin("http://127.0.0.1".to_owned()), 403),
        // Junk.
        (origin(format!("http://127.0.0.1:{port}@evil.example")), 403),
        (origin(format!("http://evil.example@127.0.0.1:{port}")), 403),
        (origin("null".to_owned()), 403),
        (
            vec![("Referer", format!("https://127.0.0.1:{port}/notes"))],
            403,
        ),
        (
            vec![("Referer", format!("http://127.0.0.1:{port}/notes?x=1"))],
            200,
        ),
        // Default ports: `Host: localhost` is port 80 on http.
        (
            vec![
                ("Host", "localhost".to_owned()),
                ("Origin", "http://localhost:80".to_owned()),
            ],
            200,
        ),
        (
            vec![
                ("Host", "localhost:80".to_owned()),
                ("Origin", "http://localhost".to_owned()),
            ],
            200,
        ),
        (
            vec![
                ("Host", "localhost".to_owned()),
                ("Origin", "https://localhost".to_owned()),
            ],
            403,
        ),
        (
            vec![
                ("Host", "[::1]:8080".to_owned()),
                ("Origin", "http://[::1]:8080".to_owned()),
            ],
            200,
        ),
        // Behind a proxy that terminates TLS (this peer, loopback, is a
        // trusted proxy by default): its `X-Forwarded-Proto` is the
        // request's scheme.
        (
            vec![
                ("Host", "app.example".to_owned()),
                ("X-Forwarded-Proto", "https".to_owned()),
                ("Origin", "https://app.example".to_owned()),
            ],
            200,
        ),
        (
            vec![
                ("Host", "app.example".to_owned()),
                ("X-Forwarded-Proto", "https".to_owned()),
                ("Origin", "http://app.example".to_owned()),
            ],
            403,
        ),
    ] {
        let shown = format!("{headers:?}");
        let a = post(headers).await;
        assert_eq!(a.status, expected, "{shown}: {}", a.body);
        if expected == 403 {
            assert!(a.body.contains("another site"), "{shown}: {}", a.body);
            assert!(a.head.contains("application/problem+json"));
        } else {
            assert_eq!(a.body, "ada wrote hi");
        }
    }
    // The refusal says what this request's origin is.
    let a = post(origin(format!("https://127.0.0.1:{port}"))).await;
    assert!(
        a.body
            .contains(&format!("not this site's `http://127.0.0.1:{port}`")),
        "{}",
        a.body
    );
}

/// Issue 28: any `Authorization: Bearer` skipped the origin check of a
/// request without a session: an exemption that took no credential at
/// all (another site's script, where CORS lets it send the header, could
/// post to any open route, a login included). Only a live token exempts
/// a request now.
#[tokio::test]
async fn a_made_up_bearer_token_gets_the_origin_check() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(&url, &[]).await;
        for path in ["/open", "/auth/login"] {
            let headers = [
                ("Authorization", "Bearer junk"),
                ("Origin", "http://evil.example"),
                ("Content-Type", "application/json"),
            ];
            let a = send(server.addr, "POST", path, &headers, "{}").await;
            assert_eq!(a.status, 403, "{backend:?} {path}: {}", a.body);
            assert!(a.body.contains("another site"), "{}", a.body);
        }
    }
}

/// A live token is the request's credential: no CSRF token needed, from
/// any origin, even with a session cookie beside it (a cross-site page
/// cannot set `Authorization`).
#[tokio::test]
async fn a_valid_token_needs_no_csrf_token_even_with_a_cookie() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(&url, &[]).await;
        let ada = server.user("ada", PASSWORD).await;
        let (cookie, _) = server.session("ada", PASSWORD).await;
        let (secret, _) = server.token(&ada).await;
        let bearer = format!("Bearer {secret}");
        for extra in [vec![], vec![("Cookie", cookie.as_str())]] {
            let mut headers = vec![
                ("Authorization", bearer.as_str()),
                ("Origin", "http://elsewhere.example"),
            ];
            headers.extend(extra);
            let a = send(server.addr, "POST", "/posts", &headers, "").await;
            assert_eq!(
                (a.status, a.body.as_str()),
                (200, "ada posted"),
                "{backend:?} {headers:?}"
            );
        }
        // The cookie alone still needs its token.
        let a = send(server.addr, "POST", "/posts", &[("Cookie", &cookie)], "").await;
        assert_eq!(a.status, 403, "{}", a.body);
    }
}

/// A revoked token is junk: the origin check, and with a session the
/// CSRF token, apply; past them, `Authenticated` answers it `401`.
#[tokio::test]
async fn a_revoked_token_gets_the_csrf_check() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = Server::start(&url, &[]).await;
        let ada = server.user("ada", PASSWORD).await;
        let (cookie, csrf) = server.session("ada", PASSWORD).await;
        let (secret, id) = server.token(&ada).await;
        let pool = server
            .service
            .settings::<Database>()
            .unwrap()
            .pool()
            .clone();
        tern_auth::revoke_token(&pool, ada.id, id).await.unwrap();
        let bearer = format!("Bearer {secret}");
        let with_cookie = [("Authorization", bearer.as_str()), ("Cookie", &cookie)];
        let a = send(server.addr, "POST", "/posts", &with_cookie, "").await;
        assert_eq!(a.status, 403, "{backend:?}: {}", a.body);
        assert!(a.body.contains("no CSRF token"), "{}", a.body);
        let foreign = [
            ("Authorization", bearer.as_str()),
            ("Origin", "http://evil.example"),
        ];
        let a = send(server.addr, "POST", "/posts", &foreign, "").await;
        assert_eq!(a.status, 403, "{}", a.body);
        assert!(a.body.contains("another site"), "{}", a.body);
        // Past the CSRF check (the session's token sent), the revoked
        // token decides: 401, not the cookie's user.
        let mut checked = with_cookie.to_vec();
        checked.push(("X-CSRF-Token", &csrf));
        let a = send(server.addr, "POST", "/posts", &checked, "").await;
        assert_eq!(a.status, 401, "{}", a.body);
        assert!(
            a.head
                .contains("www-authenticate: bearer error=\"invalid_token\""),
            "{}",
            a.head
        );
    }
}

/// An origin listed in `CORS_ALLOWED_ORIGINS` is trusted as the app's
/// own (a single-page app on another origin logs in and posts, with its
/// session's CSRF token); `*` trusts no one.
#[tokio::test]
async fn an_origin_listed_for_cors_passes_the_origin_check() {
    let Some(url) = fresh(Backend::Sqlite).await else {
        return;
    };
    for (origins, spa) in [("http://spa.example:5173", 200), ("*", 403)] {
        let server = Server::start(&url, &[("CORS_ALLOWED_ORIGINS", origins)]).await;
        if origins != "*" {
            server.user("ada", PASSWORD).await;
        }
        let body = json!({"username": "ada", "password": PASSWORD}).to_string();
        let headers = [
            ("Content-Type", "application/json"),
            ("Origin", "http://spa.example:5173"),
        ];
        let a = send(server.addr, "POST", "/auth/login", &headers, &body).await;
        assert_eq!(a.status, spa, "{origins}: {}", a.body);
        if spa != 200 {
            continue;
        }
        let token = a.json()["csrf_token"].as_str().unwrap().to_owned();
        let cookie = a.cookie().unwrap();
        for (origin, expected) in [
            ("http://spa.example:5173", 200),
            ("HTTP://SPA.example:5173", 200),
            ("http://spa.example", 403),
            ("https://spa.example:5173", 403),
            ("http://evil.example", 403),
        ] {
            let headers = [
                ("Cookie", cookie.as_str()),
                ("X-CSRF-Token", token.as_str()),
                ("Content-Type", "application/x-www-form-urlencoded"),
                ("Origin", origin),
            ];
            let a = send(server.addr, "POST", "/notes", &headers, "text=hi").await;
            assert_eq!(a.status, expected, "{origin}: {}", a.body);
        }
    }
}
