//! The first-day mistakes that used to pass silently or panic (issue 10):
//! another router's parameter syntax, the constraint hint, and starting
//! the server from async code.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tern::{routing::get, App, Config};

#[test]
fn other_routers_parameter_syntax_is_refused_with_the_fix() {
    for (pattern, fix) in [("/a/:id", "{id}"), ("/files/*path", "{*path}")] {
        let err = App::new()
            .route(pattern, get(|| async { "x" }))
            .build()
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&format!("write `{fix}`")),
            "{pattern}: {text}"
        );
        assert!(!text.contains("  "), "a broken line continuation: {text}");
    }
}

#[test]
fn an_unknown_constraint_names_app_constraint() {
    let err = App::new()
        .route("/a/{id:int}", get(|| async { "x" }))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("App::constraint"), "{err}");
}

#[cfg(feature = "cli")]
#[tokio::test]
async fn run_inside_a_runtime_says_to_use_serve() {
    // Before: tokio's "Cannot start a runtime from within a runtime" panic.
    let err = tern::run(App::new()).unwrap_err();
    assert!(err.to_string().contains("tern::serve(app).await"), "{err}");
}

#[tokio::test]
async fn serve_runs_on_the_callers_runtime_and_drains_on_sigterm() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = Config::default();
    config.addr = format!("127.0.0.1:{port}").parse().unwrap();
    let app = App::new()
        .route("/", get(|| async { "served" }))
        .config(config);
    let server = tokio::spawn(tern::serve(app));
    let mut answer = None;
    for _ in 0..100 {
        if let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .await
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).await.unwrap();
            answer = Some(out);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(answer.unwrap().ends_with("served"));
    // SIGTERM to this test process: `serve` drains and returns Ok.
    let status = std::process::Command::new("kill")
        .args(["-TERM", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let result = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("serve returned after SIGTERM")
        .unwrap();
    assert!(result.is_ok(), "{:?}", result.err());
}

/// Both ways a body can be too large give one wording, naming the limit
/// and the setting, and every answer Tern makes carries a request ID (the
/// 413 refused before routing had none).
#[tokio::test]
async fn both_413s_say_the_same_and_carry_a_request_id() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut config = Config::default();
    config.limits.max_body_bytes = 10;
    let service = App::new()
        .route(
            "/echo",
            tern::routing::post(|body: tern::Bytes| async move { body }),
        )
        .build_with(config)
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tern::Server::new(service).serve_with_shutdown(listener, std::future::pending()));
    let mut details = Vec::new();
    for request in [
        // Announced by Content-Length: refused before it is read.
        &b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world"[..],
        // Chunked: found while reading.
        &b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n"[..],
    ] {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(request).await.unwrap();
        let mut out = String::new();
        tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut out))
            .await
            .unwrap()
            .unwrap();
        assert!(out.starts_with("HTTP/1.1 413"), "{out}");
        assert!(out.contains("\r\nx-request-id: "), "no request ID: {out}");
        let body = &out[out.find("\r\n\r\n").unwrap() + 4..];
        let doc: serde_json::Value = serde_json::from_str(body).unwrap();
        details.push(doc["detail"].as_str().unwrap().to_owned());
    }
    assert_eq!(details[0], details[1]);
    assert_eq!(
        details[0],
        "the request body is larger than the limit of 10 bytes (TERN_MAX_BODY_BYTES)"
    );
}

/// A JSON body of the wrong shape names the field by its JSON pointer.
#[tokio::test]
async fn json_errors_name_the_field_by_its_pointer() {
    #[derive(serde::Deserialize)]
    #[allow(dead_code)]
    struct Item {
        title: String,
        tags: Vec<u32>,
    }
    let client = tern::test::TestClient::new(App::new().route(
        "/items",
        tern::routing::post(|tern::Json(_): tern::Json<Item>| async { "ok" }),
    ));
    for (body, pointer) in [
        (r#"{"title":3,"tags":[]}"#, "/title"),
        (r#"{"title":"a","tags":[1,2,"x"]}"#, "/tags/2"),
        // A missing field is named too, under its parent.
        (r#"{"tags":[]}"#, "/title"),
    ] {
        let res = client
            .post("/items")
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await;
        assert_eq!(res.status(), 422);
        let doc: serde_json::Value = serde_json::from_str(&res.text()).unwrap();
        // `pointer` for JSON (RFC 6901), as schema contracts will; query,
        // form and path errors name the key in `field`.
        assert_eq!(doc["pointer"], pointer, "{doc}");
        assert!(doc.get("field").is_none(), "{doc}");
        assert!(doc["detail"].as_str().unwrap().contains(pointer), "{doc}");
    }
}

/// Header tuples take `String` values; an invalid one is a 500 naming it.
#[tokio::test]
async fn header_tuples_take_strings() {
    use tern::{http::header, IntoResponse, StatusCode};
    let client = tern::test::TestClient::new(
        App::new()
            .route(
                "/made",
                tern::routing::post(|| async {
                    let location = format!("/items/{}", 7);
                    (StatusCode::CREATED, [(header::LOCATION, location)], "made")
                }),
            )
            .route(
                "/bad",
                get(|| async {
                    (StatusCode::OK, [(header::LOCATION, "a\nb".to_owned())], "x").into_response()
                }),
            ),
    );
    let res = client.post("/made").send().await;
    assert_eq!(res.status(), 201);
    assert_eq!(res.headers()["location"], "/items/7");
    let res = client.get("/bad").send().await;
    assert_eq!(res.status(), 500);
    assert!(res.text().contains("`location`"), "{}", res.text());
}

/// `Path<(u64, u64)>` on a route with one parameter is the server's bug:
/// the app does not build, and the error names the route, the method and
/// the fix; never a 400 blamed on the client.
#[test]
fn a_path_that_does_not_fit_the_route_stops_the_build() {
    use tern::extract::Path;
    async fn two(Path((a, b)): Path<(u64, u64)>) -> String {
        format!("{a}{b}")
    }
    async fn one(Path(a): Path<u64>) -> String {
        a.to_string()
    }
    async fn short(Path((a,)): Path<(u64,)>) -> String {
        a.to_string()
    }
    for (app, message) in [
        (
            App::new().route("/a/{id}", get(two)),
            "route `/a/{id}`: its GET handler: the handler takes `Path<(u64, u64)>`, 2 value(s), \
             but the route has 1 parameter(s) (`id`): make the tuple hold one value per \
             parameter, in order",
        ),
        (
            // A tuple shorter than the parameters would take the first.
            App::new().route("/a/{x}/{y}", tern::routing::post(short)),
            "route `/a/{x}/{y}`: its POST handler: the handler takes `Path<(u64,)>`, 1 value(s), \
             but the route has 2 parameter(s) (`x`, `y`)",
        ),
        (
            App::new().scope("/s", |s| s.route("/{x}/{y}", get(one))),
            "route `/s/{x}/{y}`: its GET handler: the handler takes `Path<u64>`, one value, but \
             the route has 2 parameters (`x`, `y`): take a tuple of 2 values or a struct",
        ),
        (
            App::new().route("/plain", get(one)),
            "route `/plain`: its GET handler: the handler takes `Path<u64>` but the route has \
             no parameters",
        ),
    ] {
        let err = app.build().expect_err(message).to_string();
        assert!(err.starts_with(message), "{err}\nexpected: {message}");
    }
    // What fits builds; a struct and a list are not counted.
    assert!(App::new()
        .route("/a/{x}/{y}", get(two))
        .route("/b/{id}", get(one))
        .route(
            "/c/{*rest}",
            get(|Path(v): Path<Vec<String>>| async move { v.join(",") })
        )
        .build()
        .is_ok());
}

/// Where the build cannot check (a host pattern's parameters join the
/// path's), a `Path` that does not fit is a 500 that says how to fix it,
/// never a 400 blamed on the client.
#[tokio::test]
async fn a_path_that_does_not_fit_a_host_route_is_a_500() {
    use tern::extract::Path;
    let client = tern::test::TestClient::new(App::new().host("{tenant}.example.com", |h| {
        h.route(
            "/a/{id}",
            get(|Path((a, b, c)): Path<(String, u64, u64)>| async move { format!("{a}{b}{c}") }),
        )
        .route(
            "/b/{x}",
            get(|Path((t, x)): Path<(String, u64)>| async move { format!("{t}{x}") }),
        )
    }));
    let res = client
        .get("/a/5")
        .header("host", "acme.example.com")
        .send()
        .await;
    assert_eq!(res.status(), 500, "{}", res.text());
    assert!(
        res.text().contains("the route has 2 path parameter(s)"),
        "{}",
        res.text()
    );
    // A value the client got wrong is still the client's 400.
    let res = client
        .get("/b/x")
        .header("host", "acme.example.com")
        .send()
        .await;
    assert_eq!(res.status(), 400);
    let res = client
        .get("/b/2")
        .header("host", "acme.example.com")
        .send()
        .await;
    assert_eq!(res.text(), "acme2");
}
