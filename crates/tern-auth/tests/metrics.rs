//! The accounts' metrics over real sockets, on SQLite and PostgreSQL:
//! logins by result (JSON and forms alike), and the refusals of the CSRF
//! check, the login throttle and a rate limit, as `/metrics` serves them.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{net::SocketAddr, time::Duration};

use tern::{
    routing::{get, post},
    App, Config,
};
use tern_auth::{create_user, Passwords, RateLimit};
use tern_data::{testing::fresh, Backend, Database};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

const SECRET: &str = "Zt3pQ9wLx2Nc8RvB5mKj7HdF4sGy6UaE";
const PASSWORD: &str = "a long enough password";

/// One request: the status and the head (lower case).
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{headers}\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let head = answer.split("\r\n\r\n").next().unwrap().to_lowercase();
    (head[9..12].parse().unwrap(), head)
}

async fn json_login(addr: SocketAddr, user: &str, password: &str) -> u16 {
    let body = serde_json::json!({ "username": user, "password": password }).to_string();
    send(
        addr,
        "POST",
        "/auth/login",
        "Content-Type: application/json\r\n",
        &body,
    )
    .await
    .0
}

/// A browser's form: the `303`'s `Location`.
async fn form_login(addr: SocketAddr, user: &str, password: &str) -> String {
    let body = format!("username={user}&password={}", password.replace(' ', "+"));
    let (status, head) = send(
        addr,
        "POST",
        "/auth/login",
        "Content-Type: application/x-www-form-urlencoded\r\nAccept: text/html\r\n",
        &body,
    )
    .await;
    assert_eq!(status, 303, "{head}");
    head.lines()
        .find_map(|l| l.strip_prefix("location: "))
        .unwrap()
        .to_owned()
}

async fn scrape(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    answer
}

fn value(text: &str, series: &str) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| {
            let (s, v) = l.rsplit_once(' ')?;
            (s == series).then(|| v.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no `{series}` in:\n{text}"))
}

#[tokio::test]
async fn logins_and_refusals_are_counted_by_result_and_reason() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let app = App::new().settings::<Database>("database");
        let limit = RateLimit::per(1, Duration::from_secs(60)).metrics(app.metrics());
        let app = tern_auth::install(
            app.route("/open", post(|| async { "open" }))
                .route("/limited", get(|| async { "hi" }).layer(limit.layer())),
        );
        let mut config = Config::from_settings([
            ("DATABASE_URL", url.as_str()),
            ("SECRET_KEY", SECRET),
            ("AUTH_LOGIN_FAILURES", "2"),
        ])
        .unwrap();
        config.metrics = true;
        let service = app.build_with(config).unwrap();
        let db = service.settings::<Database>().unwrap();
        db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
        for user in ["ada", "bob"] {
            create_user(db.pool(), &Passwords::default(), user, PASSWORD, false)
                .await
                .unwrap();
        }
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(
            tern::Server::new(service).serve_with_shutdown(listener, std::future::pending()),
        );

        // The families are there before any login.
        let text = scrape(addr).await;
        assert_eq!(value(&text, r#"tern_auth_logins_total{result="ok"}"#), 0.0);

        assert_eq!(json_login(addr, "ada", PASSWORD).await, 200);
        assert_eq!(json_login(addr, "ada", "not the password").await, 401);
        assert_eq!(
            form_login(addr, "ada", "not the password").await,
            "/login?error=invalid"
        );
        // Two attempts in the window: the third is refused unevaluated.
        assert_eq!(json_login(addr, "ada", PASSWORD).await, 429);
        assert_eq!(
            form_login(addr, "ada", PASSWORD).await,
            "/login?error=throttled"
        );
        assert_eq!(form_login(addr, "bob", PASSWORD).await, "/");
        // Another site's page posting here.
        let (status, _) = send(
            addr,
            "POST",
            "/open",
            "Origin: https://evil.example\r\n",
            "",
        )
        .await;
        assert_eq!(status, 403);
        assert_eq!(send(addr, "GET", "/limited", "", "").await.0, 200);
        assert_eq!(send(addr, "GET", "/limited", "", "").await.0, 429);

        let text = scrape(addr).await;
        let want = [
            (r#"tern_auth_logins_total{result="ok"}"#, 2.0),
            (r#"tern_auth_logins_total{result="failed"}"#, 2.0),
            (r#"tern_auth_logins_total{result="throttled"}"#, 2.0),
            (r#"tern_auth_logins_total{result="busy"}"#, 0.0),
            (r#"tern_rejections_total{reason="throttle"}"#, 2.0),
            (r#"tern_rejections_total{reason="csrf"}"#, 1.0),
            (r#"tern_rejections_total{reason="rate_limit"}"#, 1.0),
        ];
        for (series, n) in want {
            assert_eq!(value(&text, series), n, "{backend:?} {series}:\n{text}");
        }
    }
}
