//! Error pages over a real socket: browsers get an HTML page for every
//! problem, other clients `problem+json`; details escaped; production's
//! hidden `500` detail stays hidden in the page.
#![allow(clippy::unwrap_used, missing_docs)]

use std::net::SocketAddr;

use tern::{routing::get, App, Config, Problem, StatusCode};

mod common;

const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

fn app() -> App {
    App::new()
        .route("/", get(|| async { "home" }))
        .route(
            "/hostile",
            get(|| async {
                Err::<&str, _>(
                    Problem::new(StatusCode::BAD_REQUEST)
                        .with_detail("<script>alert(\"x\")</script> & 'more'"),
                )
            }),
        )
        .route(
            "/panic",
            get(|| async {
                if true {
                    panic!("secret internals: db password hunter2");
                }
                "never"
            }),
        )
        .problem_renderer(tern_site::html_errors)
}

/// Status, lower-cased head, body.
async fn ask(
    addr: SocketAddr,
    method: &str,
    path: &str,
    host: &str,
    accept: &str,
) -> (u16, String, String) {
    let mut headers = vec![("Content-Length", "0")];
    if !accept.is_empty() {
        headers.push(("Accept", accept));
    }
    let request = common::head(method, path, "HTTP/1.1", &headers).replacen(
        "Host: x",
        &format!("Host: {host}"),
        1,
    );
    let (head, body) = common::exchange(addr, &request).await;
    (
        head[9..12].parse().unwrap(),
        head.to_ascii_lowercase(),
        String::from_utf8(body).unwrap(),
    )
}

#[tokio::test]
async fn browsers_get_pages_and_api_clients_problems() {
    let addr = common::serve_with(
        app(),
        Config::from_settings([("TERN_ENV", "development")]).unwrap(),
    )
    .await;

    let (status, head, body) = ask(addr, "GET", "/nope", "x", BROWSER).await;
    assert_eq!(status, 404);
    assert!(
        head.contains("content-type: text/html; charset=utf-8"),
        "{head}"
    );
    assert!(
        head.contains(&format!("content-length: {}\r\n", body.len())),
        "{head}"
    );
    assert!(head.contains("x-request-id:"), "{head}");
    assert!(body.starts_with("<!doctype html>"));
    assert!(body.contains("<h1>Not Found</h1>"), "{body}");
    assert!(body.contains("Error 404"));
    assert!(body.contains("no route matches GET /nope"));

    // The same problem for clients that do not prefer HTML.
    for accept in [
        "",
        "*/*",
        "application/json",
        "application/problem+json",
        "application/json, text/html;q=0.5",
    ] {
        let (status, head, body) = ask(addr, "GET", "/nope", "x", accept).await;
        assert_eq!(status, 404, "{accept}");
        assert!(
            head.contains("content-type: application/problem+json"),
            "{accept}: {head}"
        );
        let problem: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(problem["status"], 404);
    }

    // 405 keeps its Allow header.
    let (status, head, body) = ask(addr, "POST", "/", "x", BROWSER).await;
    assert_eq!(status, 405);
    assert!(head.contains("allow: get"), "{head}");
    assert!(body.contains("<h1>Method Not Allowed</h1>"), "{body}");

    // A handler's problem, with markup in its detail: escaped.
    let (status, _, body) = ask(addr, "GET", "/hostile", "x", BROWSER).await;
    assert_eq!(status, 400);
    assert!(!body.contains("<script>"), "{body}");
    assert!(
        body.contains("&#60;script&#62;") || body.contains("&lt;script&gt;"),
        "{body}"
    );
}

#[tokio::test]
async fn production_hides_a_500s_detail_in_the_page_too() {
    let config = Config::from_settings([
        ("TERN_ENV", "production"),
        ("SECRET_KEY", "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ"),
        ("ALLOWED_HOSTS", "example.com"),
    ])
    .unwrap();
    let addr = common::serve_with(app(), config).await;
    let (status, head, body) = ask(addr, "GET", "/panic", "example.com", BROWSER).await;
    assert_eq!(status, 500);
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(
        !body.contains("hunter2") && !body.contains("secret internals"),
        "{body}"
    );
    assert!(body.contains("Error 500"));
    let (status, _, body) = ask(addr, "GET", "/panic", "example.com", "application/json").await;
    assert_eq!(status, 500);
    assert!(!body.contains("hunter2"), "{body}");
}
