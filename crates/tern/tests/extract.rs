//! Every extractor over a real socket: its happy path, and its rejection
//! (status and problem+json body).
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use bytes::Bytes;
use common::{request, send, Resp, TestServer};
use http_body_util::Full;
use serde::{Deserialize, Serialize};
use tern::{
    extract::{ClientIp, Extension, Form, Host, Path, PeerAddr, Query, RequestId, State},
    middleware::{from_fn, Next},
    routing::{get, post},
    App, HeaderMap, Json, Method, Request, Uri,
};

#[derive(Clone, Default)]
struct AppState {
    hits: Arc<AtomicU64>,
}

#[derive(Deserialize, Serialize)]
struct Repo {
    owner: String,
    id: u32,
}

#[derive(Deserialize, Serialize, Debug)]
struct Search {
    q: String,
    #[serde(default)]
    tag: Vec<String>,
    page: Option<u32>,
    user: Option<User>,
}

#[derive(Deserialize, Serialize, Debug)]
struct User {
    name: String,
    age: u8,
}

#[derive(Clone)]
struct CurrentUser(&'static str);

fn app() -> App<AppState> {
    App::with_state(AppState::default())
        .route(
            "/one/{id}",
            get(|Path(id): Path<u64>| async move { id.to_string() }),
        )
        .route(
            "/two/{owner}/{id}",
            get(|Path((owner, id)): Path<(String, u32)>| async move { format!("{owner}:{id}") }),
        )
        .route(
            "/repo/{owner}/{id}",
            get(|Path(r): Path<Repo>| async move { Json(r) }),
        )
        .route(
            "/search",
            get(|Query(s): Query<Search>| async move { Json(s) }),
        )
        .route("/json", post(|Json(u): Json<User>| async move { Json(u) }))
        .route("/form", post(|Form(u): Form<User>| async move { Json(u) }))
        .route(
            "/bytes",
            post(|b: Bytes| async move { format!("{} bytes", b.len()) }),
        )
        .route("/string", post(|s: String| async move { s.to_uppercase() }))
        .route(
            "/headers",
            get(|h: HeaderMap| async move {
                h.get("x-hello")
                    .map(|v| v.to_str().unwrap().to_owned())
                    .unwrap_or_default()
            }),
        )
        .route(
            "/state",
            get(|State(s): State<AppState>| async move {
                (s.hits.fetch_add(1, Ordering::SeqCst) + 1).to_string()
            }),
        )
        .route("/host", get(|Host(h): Host| async move { h }))
        .route(
            "/ip",
            get(
                |ClientIp(ip): ClientIp, PeerAddr(peer): PeerAddr| async move {
                    format!("{ip} {}", peer.ip())
                },
            ),
        )
        .route(
            "/request-id",
            get(|RequestId(id): RequestId| async move { id }),
        )
        .route(
            "/meta",
            post(|m: Method, u: Uri, req: Request| async move {
                format!("{m} {} {}", u.path(), !req.headers().is_empty())
            }),
        )
        .route(
            "/optional",
            get(|q: Option<Query<User>>| async move { q.map_or("none".to_owned(), |q| q.0.name) }),
        )
        .route(
            "/ext",
            get(|Extension(u): Extension<CurrentUser>| async move { u.0 }).layer(from_fn(
                |mut req: Request, next: Next| async move {
                    req.extensions_mut().insert(CurrentUser("ada"));
                    next.run(req).await
                },
            )),
        )
        .route(
            "/ext-missing",
            get(|Extension(u): Extension<CurrentUser>| async move { u.0 }),
        )
}

async fn post_with(
    server: &TestServer,
    path: &str,
    content_type: &str,
    body: &'static [u8],
) -> Resp {
    send(
        &common::client(),
        request("POST", &server.url(path))
            .header("content-type", content_type)
            .body(Full::new(Bytes::from_static(body)))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn path() {
    let server = common::spawn(app()).await;
    assert_eq!(common::get(&server, "/one/42").await.text(), "42");
    assert_eq!(common::get(&server, "/two/tern/7").await.text(), "tern:7");
    assert_eq!(
        common::get(&server, "/repo/ada%20l/9").await.json()["owner"],
        "ada l"
    );
    let doc = common::get(&server, "/one/forty-two").await.problem(400);
    assert_eq!(doc["field"], "id");
    assert!(
        doc["detail"].as_str().unwrap().contains("`forty-two`"),
        "{doc}"
    );
    let doc = common::get(&server, "/repo/tern/-1").await.problem(400);
    assert_eq!(doc["field"], "id");
    server.shutdown().await;
}

#[tokio::test]
async fn query() {
    let server = common::spawn(app()).await;
    for q in [
        "q=rust&tag=a&tag=b&page=2",
        "q=rust&tag[]=a&tag[]=b&page=2",
        "q=rust&tag%5B%5D=a&tag%5B%5D=b&page=2",
    ] {
        let doc = common::get(&server, &format!("/search?{q}")).await.json();
        assert_eq!(doc["tag"], serde_json::json!(["a", "b"]), "{q}");
        assert_eq!(doc["page"], 2, "{q}");
    }
    let doc = common::get(
        &server,
        "/search?q=caf%C3%A9+bar&user[name]=Ada&user[age]=36",
    )
    .await
    .json();
    assert_eq!(doc["q"], "café bar");
    assert_eq!(doc["user"]["name"], "Ada");
    let doc = common::get(&server, "/search?q=x&page=two")
        .await
        .problem(400);
    assert_eq!(doc["field"], "page");
    let doc = common::get(&server, "/search?q=x&user[name]=a&user[age]=300")
        .await
        .problem(400);
    assert_eq!(doc["field"], "user[age]");
    let doc = common::get(&server, "/search?page=1").await.problem(400);
    assert!(
        doc["detail"]
            .as_str()
            .unwrap()
            .contains("missing field `q`"),
        "{doc}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn json() {
    let server = common::spawn(app()).await;
    let res = post_with(
        &server,
        "/json",
        "application/json",
        br#"{"name":"Ada","age":36}"#,
    )
    .await;
    assert_eq!(res.json()["name"], "Ada");
    assert_eq!(res.header("content-type"), Some("application/json"));
    let res = post_with(
        &server,
        "/json",
        "application/vnd.api+json",
        br#"{"name":"Ada","age":36}"#,
    )
    .await;
    assert_eq!(res.status, 200);
    post_with(
        &server,
        "/json",
        "text/plain",
        br#"{"name":"Ada","age":36}"#,
    )
    .await
    .problem(415);
    let doc = post_with(&server, "/json", "application/json", br#"{"name":"Ada","#)
        .await
        .problem(400);
    assert!(doc["detail"].as_str().unwrap().contains("line 1"), "{doc}");
    let doc = post_with(
        &server,
        "/json",
        "application/json",
        br#"{"name":"Ada","age":"old"}"#,
    )
    .await
    .problem(422);
    assert!(
        doc["detail"].as_str().unwrap().contains("invalid type"),
        "{doc}"
    );
    post_with(&server, "/json", "application/json", br#"{"name":"Ada"}"#)
        .await
        .problem(422);
    server.shutdown().await;
}

#[tokio::test]
async fn json_body_limit() {
    let mut config = common::config();
    config.limits.max_body_bytes = 64;
    let server = common::spawn_with(app(), config).await;
    let big: &'static [u8] = Box::leak(
        format!(r#"{{"name":"{}","age":1}}"#, "a".repeat(200))
            .into_bytes()
            .into_boxed_slice(),
    );
    post_with(&server, "/json", "application/json", big)
        .await
        .problem(413);
    server.shutdown().await;
}

#[tokio::test]
async fn form() {
    let server = common::spawn(app()).await;
    let res = post_with(
        &server,
        "/form",
        "application/x-www-form-urlencoded",
        b"name=Ada+L&age=36",
    )
    .await;
    assert_eq!(res.json()["name"], "Ada L");
    post_with(&server, "/form", "application/json", b"name=Ada&age=36")
        .await
        .problem(415);
    let doc = post_with(
        &server,
        "/form",
        "application/x-www-form-urlencoded",
        b"name=Ada&age=old",
    )
    .await
    .problem(400);
    assert_eq!(doc["field"], "age");
    server.shutdown().await;
}

#[tokio::test]
async fn bytes_and_string() {
    let server = common::spawn(app()).await;
    assert_eq!(
        post_with(
            &server,
            "/bytes",
            "application/octet-stream",
            b"\x00\x01\x02"
        )
        .await
        .text(),
        "3 bytes"
    );
    assert_eq!(
        post_with(&server, "/string", "text/plain", b"hello")
            .await
            .text(),
        "HELLO"
    );
    post_with(&server, "/string", "text/plain", b"\xff\xfe")
        .await
        .problem(400);
    server.shutdown().await;
}

#[tokio::test]
async fn head_extractors() {
    let server = common::spawn(app()).await;
    let client = common::client();
    let res = send(
        &client,
        request("GET", &server.url("/headers"))
            .header("x-hello", "world")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.text(), "world");
    assert_eq!(common::get(&server, "/state").await.text(), "1");
    assert_eq!(common::get(&server, "/state").await.text(), "2");
    assert_eq!(
        common::get(&server, "/host").await.text(),
        server.addr.to_string()
    );
    assert_eq!(
        common::get(&server, "/ip").await.text(),
        "127.0.0.1 127.0.0.1"
    );
    let res = post_with(&server, "/meta", "text/plain", b"").await;
    assert_eq!(res.text(), "POST /meta true");
    assert_eq!(
        common::get(&server, "/optional?name=ada&age=3")
            .await
            .text(),
        "ada"
    );
    // Absent is `None`; a query that is there but does not parse is
    // `Query`'s 400, not `None` (issue 26).
    assert_eq!(common::get(&server, "/optional").await.text(), "none");
    let doc = common::get(&server, "/optional?name=ada&age=x")
        .await
        .problem(400);
    assert_eq!(doc["field"], "age", "{doc}");
    assert_eq!(common::get(&server, "/ext").await.text(), "ada");
    let doc = common::get(&server, "/ext-missing").await.problem(500);
    assert!(
        doc["detail"].as_str().unwrap().contains("CurrentUser"),
        "{doc}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn request_ids() {
    let server = common::spawn(app()).await;
    let a = common::get(&server, "/request-id").await;
    let b = common::get(&server, "/request-id").await;
    assert_eq!(a.header("x-request-id"), Some(a.text().as_str()));
    assert_ne!(a.text(), b.text());
    assert_eq!(a.text().len(), 32);
    // The peer (loopback) is a trusted proxy by default: its ID is kept.
    let res = send(
        &common::client(),
        request("GET", &server.url("/request-id"))
            .header("x-request-id", "abc-123")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.text(), "abc-123");
    server.shutdown().await;
}

#[tokio::test]
async fn host_missing_is_a_bad_request() {
    let server = common::spawn(app()).await;
    let bytes = common::raw(
        server.addr,
        b"GET /host HTTP/1.0\r\n\r\n",
        std::time::Duration::from_secs(2),
    )
    .await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.starts_with("HTTP/1.0 400") || text.starts_with("HTTP/1.1 400"),
        "{text}"
    );
    assert!(text.contains("application/problem+json"), "{text}");
    server.shutdown().await;
}

#[tokio::test]
async fn client_ip_believes_only_trusted_proxies() {
    // Trusted: loopback is in TRUSTED_PROXIES, so the header names the client.
    let mut trusted = common::config();
    trusted.trusted_proxy_header = Some(http::HeaderName::from_static("x-forwarded-for"));
    let server = common::spawn_with(app(), trusted.clone()).await;
    // Only the rightmost entry is the trusted proxy's; when it is not an
    // address, the peer's address counts, never an entry to its left (the
    // client may have sent those).
    for (lines, client) in [
        (&["203.0.113.9, 198.51.100.7"][..], "198.51.100.7"),
        (&["198.51.100.7:4711"], "198.51.100.7"),
        (&["1.2.3.4, unknown"], "127.0.0.1"),
        (&["1.2.3.4,"], "127.0.0.1"),
        (&["1.2.3.4", "unknown"], "127.0.0.1"),
        (&["unknown", "198.51.100.7"], "198.51.100.7"),
    ] {
        let mut req = request("GET", &server.url("/ip"));
        for line in lines {
            req = req.header("x-forwarded-for", *line);
        }
        let res = send(&common::client(), req.body(Full::default()).unwrap()).await;
        assert_eq!(res.text(), format!("{client} 127.0.0.1"), "{lines:?}");
    }
    server.shutdown().await;

    // Untrusted peer: the forged header is ignored.
    let mut untrusted = trusted;
    untrusted.trusted_proxies = vec!["10.0.0.0/8".parse().unwrap()];
    let server = common::spawn_with(app(), untrusted).await;
    let res = send(
        &common::client(),
        request("GET", &server.url("/ip"))
            .header("x-forwarded-for", "203.0.113.9")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_eq!(res.text(), "127.0.0.1 127.0.0.1");
    // Nor is a request ID from an untrusted peer.
    let res = send(
        &common::client(),
        request("GET", &server.url("/request-id"))
            .header("x-request-id", "forged")
            .body(Full::default())
            .unwrap(),
    )
    .await;
    assert_ne!(res.text(), "forged");
    server.shutdown().await;
}

mod cookies_and_uploads {
    use super::*;
    use tern::extract::{
        cookie::{Cookie, Cookies},
        Multipart,
    };

    fn app() -> App {
        App::new()
            .route(
                "/login",
                post(|mut c: Cookies| async move {
                    c.add(Cookie::new("theme", "dark"));
                    c.add_signed(Cookie::new("user", "ada"));
                    c.add_private(Cookie::new("session", "s3cr3t-token"));
                    (c, "logged in")
                }),
            )
            .route(
                "/me",
                get(|c: Cookies| async move {
                    format!(
                        "theme={} user={} session={}",
                        c.get("theme").map_or("-", |c| c.value()),
                        c.get_signed("user")
                            .map_or("-".into(), |c| c.value().to_owned()),
                        c.get_private("session")
                            .map_or("-".into(), |c| c.value().to_owned()),
                    )
                }),
            )
            .route(
                "/logout",
                post(|mut c: Cookies| async move {
                    c.remove("user");
                    (c, "bye")
                }),
            )
            .route(
                "/upload",
                post(|mut form: Multipart| async move {
                    let mut out = Vec::new();
                    while let Some(field) = form.next_field().await? {
                        let name = field.name().unwrap_or_default().to_owned();
                        let file = field.file_name().map(str::to_owned);
                        let bytes = field.bytes().await?;
                        out.push(format!(
                            "{name}:{}:{}",
                            file.unwrap_or_default(),
                            bytes.len()
                        ));
                    }
                    Ok::<_, tern::extract::Rejection>(out.join(","))
                }),
            )
    }

    fn set_cookies(res: &Resp) -> Vec<String> {
        res.headers
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect()
    }

    async fn me(server: &TestServer, cookie: &str) -> String {
        send(
            &common::client(),
            request("GET", &server.url("/me"))
                .header("cookie", cookie)
                .body(Full::default())
                .unwrap(),
        )
        .await
        .text()
    }

    #[tokio::test]
    async fn plain_signed_and_private_cookies() {
        let config = common::config().with_secret_key("q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ");
        let server = common::spawn_with(app(), config).await;
        let res = post_with(&server, "/login", "text/plain", b"").await;
        let cookies = set_cookies(&res);
        assert_eq!(cookies.len(), 3, "{cookies:?}");
        for c in &cookies {
            assert!(
                c.contains("HttpOnly") && c.contains("SameSite=Lax") && c.contains("Path=/"),
                "{c}"
            );
            assert!(!c.contains("Secure"), "development: no Secure flag: {c}");
        }
        let jar: Vec<&str> = cookies
            .iter()
            .map(|c| c.split(';').next().unwrap())
            .collect();
        let private = jar.iter().find(|c| c.starts_with("session=")).unwrap();
        assert!(
            !private.contains("s3cr3t"),
            "private cookies are encrypted: {private}"
        );
        let signed = jar.iter().find(|c| c.starts_with("user=")).unwrap();
        assert!(
            signed.contains("ada"),
            "signed cookies are readable: {signed}"
        );
        assert_eq!(
            me(&server, &jar.join("; ")).await,
            "theme=dark user=ada session=s3cr3t-token"
        );

        // Tampering: change the signed value, and a byte of the private one.
        let forged_user = signed.replace("ada", "eve");
        let (name, value) = private.split_once('=').unwrap();
        let mut bytes = value.as_bytes().to_vec();
        bytes[5] = if bytes[5] == b'A' { b'B' } else { b'A' };
        let forged_session = format!("{name}={}", String::from_utf8(bytes).unwrap());
        let forged = format!("theme=light; {forged_user}; {forged_session}");
        assert_eq!(me(&server, &forged).await, "theme=light user=- session=-");

        let res = post_with(&server, "/logout", "text/plain", b"").await;
        let removal = set_cookies(&res).join("");
        assert!(
            removal.starts_with("user=;") && removal.contains("Max-Age=0"),
            "{removal}"
        );
        server.shutdown().await;
    }

    #[tokio::test]
    async fn production_cookies_are_secure() {
        let config = common::config()
            .with_secret_key("q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ")
            .with_allowed_hosts(["*"])
            .production();
        let server = common::spawn_with(app(), config).await;
        let res = post_with(&server, "/login", "text/plain", b"").await;
        for c in set_cookies(&res) {
            assert!(c.contains("Secure"), "{c}");
        }
        server.shutdown().await;
    }

    fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, file, data) in parts {
            body.extend_from_slice(b"--XBOUNDARY\r\n");
            match file {
                Some(f) => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes()),
                None => body.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes()),
            }
            body.extend_from_slice(data);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(b"--XBOUNDARY--\r\n");
        body
    }

    async fn upload(server: &TestServer, body: Vec<u8>, content_type: &str) -> Resp {
        send(
            &common::client(),
            request("POST", &server.url("/upload"))
                .header("content-type", content_type)
                .body(Full::new(Bytes::from(body)))
                .unwrap(),
        )
        .await
    }

    #[tokio::test]
    async fn multipart_fields_and_limits() {
        let mut config = common::config();
        config.limits.max_multipart_field_bytes = 1000;
        config.limits.max_body_bytes = 5000;
        let server = common::spawn_with(app(), config).await;
        let ct = "multipart/form-data; boundary=XBOUNDARY";

        let res = upload(
            &server,
            multipart(&[
                ("title", None, b"hello"),
                ("file", Some("a.bin"), &[7u8; 900]),
            ]),
            ct,
        )
        .await;
        assert_eq!(res.text(), "title::5,file:a.bin:900");

        let doc = upload(
            &server,
            multipart(&[("file", Some("big.bin"), &[7u8; 1500])]),
            ct,
        )
        .await
        .problem(413);
        assert!(doc["detail"].as_str().unwrap().contains("`file`"), "{doc}");

        let many: Vec<(&str, Option<&str>, &[u8])> =
            (0..8).map(|_| ("part", None, &[1u8; 900][..])).collect();
        upload(&server, multipart(&many), ct).await.problem(413);

        upload(&server, multipart(&[("a", None, b"x")]), "text/plain")
            .await
            .problem(415);
        upload(&server, b"--XBOUNDARY\r\nno headers end".to_vec(), ct)
            .await
            .problem(400);
        server.shutdown().await;
    }
}

mod typed_headers {
    use super::*;
    use tern::{
        extract::TypedHeader,
        headers::{authorization::Bearer, Authorization, CacheControl, ContentLength, UserAgent},
    };

    #[tokio::test]
    async fn typed_headers_parse_or_name_the_header() {
        let app = App::new()
            .route(
                "/ua",
                get(|TypedHeader(ua): TypedHeader<UserAgent>| async move { ua.to_string() }),
            )
            .route(
                "/token",
                get(
                    |TypedHeader(auth): TypedHeader<Authorization<Bearer>>| async move {
                        (
                            TypedHeader(CacheControl::new().with_no_store()),
                            auth.token().to_owned(),
                        )
                    },
                ),
            )
            .route(
                "/lying",
                get(|| async { (TypedHeader(ContentLength(5)), "seven b") }),
            );
        let server = common::spawn(app).await;
        let client = common::client();
        let res = send(
            &client,
            request("GET", &server.url("/ua"))
                .header("user-agent", "tern-test/1")
                .body(Full::default())
                .unwrap(),
        )
        .await;
        assert_eq!(res.text(), "tern-test/1");
        let res = send(
            &client,
            request("GET", &server.url("/token"))
                .header("authorization", "Bearer abc.def")
                .body(Full::default())
                .unwrap(),
        )
        .await;
        assert_eq!(res.text(), "abc.def");
        assert_eq!(res.header("cache-control"), Some("no-store"));
        // A wrong Content-Length from a handler is corrected, not sent.
        let res = common::get(&server, "/lying").await;
        assert_eq!(res.text(), "seven b");
        assert_eq!(res.header("content-length"), Some("7"));
        let doc = common::get(&server, "/token").await.problem(400);
        assert_eq!(doc["field"], "authorization");
        let res = send(
            &client,
            request("GET", &server.url("/token"))
                .header("authorization", "Basic Zm9v")
                .body(Full::default())
                .unwrap(),
        )
        .await;
        let doc = res.problem(400);
        assert!(
            doc["detail"].as_str().unwrap().contains("malformed"),
            "{doc}"
        );
        server.shutdown().await;
    }
}
