//! Every parser of client input at its limits, over a real socket: the
//! deepest nesting, the most keys, the longest key, the most parts, the
//! most cookies the configured limits allow, and one step past each. Every
//! answer is the expected status (a 4xx problem+json naming the limit past
//! it), and the server keeps serving. Cost per size is checked in the bench
//! lab (`tern-bench scaling`), not here.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;

use bytes::Bytes;
use common::*;
use http_body_util::Full;
use serde::Deserialize;
use tern::{
    extract::{Cookies, Form, Multipart, Path, Query},
    routing::{self, post},
    App, HeaderMap, Json,
};

#[derive(Deserialize)]
struct Loose {
    #[allow(dead_code)]
    a: Option<serde_json::Value>,
}

async fn count_parts(mut m: Multipart) -> Result<String, tern::extract::Rejection> {
    let mut n = 0;
    while let Some(field) = m.next_field().await? {
        field.bytes().await?;
        n += 1;
    }
    Ok(n.to_string())
}

fn app() -> App {
    App::new()
        .route(
            "/form",
            post(|Form(f): Form<HashMap<String, serde_json::Value>>| async move {
                f.len().to_string()
            }),
        )
        .route(
            "/form-struct",
            post(|Form(_): Form<Loose>| async { "ok" }),
        )
        .route(
            "/query",
            routing::get(|Query(q): Query<HashMap<String, serde_json::Value>>| async move {
                q.len().to_string()
            }),
        )
        .route(
            "/json",
            post(|Json(v): Json<serde_json::Value>| async move {
                match v {
                    serde_json::Value::Object(m) => m.len().to_string(),
                    _ => "value".to_owned(),
                }
            }),
        )
        .route("/upload", post(count_parts))
        .route(
            "/cookies",
            routing::get(|c: Cookies| async move { c.iter().count().to_string() }),
        )
        .route(
            "/p/{name}",
            routing::get(|Path(p): Path<String>| async move { p.len().to_string() }),
        )
        .route(
            "/agent",
            routing::get(
                |tern::extract::TypedHeader(a): tern::extract::TypedHeader<
                    headers::UserAgent,
                >| async move { a.as_str().len().to_string() },
            ),
        )
        .route("/headers", routing::get(|h: HeaderMap| async move { h.len().to_string() }))
}

fn nested_key(depth: usize) -> String {
    format!("a{}", "[]".repeat(depth))
}

fn keys(n: usize) -> String {
    (0..n)
        .map(|i| format!("k{i}=1"))
        .collect::<Vec<_>>()
        .join("&")
}

fn json_depth(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn json_keys(bytes: usize) -> String {
    let mut s = String::from("{");
    let mut i = 0;
    while s.len() < bytes - 20 {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("\"k{i}\":1"));
        i += 1;
    }
    s.push('}');
    s
}

fn multipart(parts: usize, file_name: Option<&str>, extra_headers: usize) -> (String, Vec<u8>) {
    let boundary = "XyZzY";
    let mut body = Vec::new();
    for i in 0..parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file_name {
            Some(f) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"f{i}\"; filename=\"{f}\"\r\n")
                    .as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"f{i}\"\r\n").as_bytes(),
            ),
        }
        for h in 0..extra_headers {
            body.extend_from_slice(format!("X-H{h}: v\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\nvalue\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

struct Case {
    name: &'static str,
    method: &'static str,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    status: u16,
    /// The body says this (a count for 200s; the limit's name for 4xx).
    says: &'static str,
}

fn form(name: &'static str, body: String, status: u16, says: &'static str) -> Case {
    Case {
        name,
        method: "POST",
        path: "/form".into(),
        headers: vec![("content-type", "application/x-www-form-urlencoded".into())],
        body: body.into_bytes(),
        status,
        says,
    }
}

fn upload(
    name: &'static str,
    (content_type, body): (String, Vec<u8>),
    status: u16,
    says: &'static str,
) -> Case {
    Case {
        name,
        method: "POST",
        path: "/upload".into(),
        headers: vec![("content-type", content_type)],
        body,
        status,
        says,
    }
}

fn get_case(name: &'static str, path: String, status: u16, says: &'static str) -> Case {
    Case {
        name,
        method: "GET",
        path,
        headers: vec![],
        body: vec![],
        status,
        says,
    }
}

fn cases() -> Vec<Case> {
    let max_body = 2 * 1024 * 1024;
    let mut cases = vec![
        // The reproduction: 10,000 levels aborted the process.
        Case {
            path: "/form-struct".into(),
            ..form(
                "form: a + []x10,000 (was a stack overflow)",
                format!("{}=1", nested_key(10_000)),
                400,
                "TERN_MAX_FORM_DEPTH",
            )
        },
        form(
            "form: map, []x10,000",
            format!("{}=1", nested_key(10_000)),
            400,
            "TERN_MAX_FORM_DEPTH",
        ),
        form(
            "form: the deepest key allowed (32)",
            format!("{}=1", nested_key(32)),
            200,
            "1",
        ),
        form(
            "form: one level past (33)",
            format!("{}=1", nested_key(33)),
            400,
            "TERN_MAX_FORM_DEPTH",
        ),
        form(
            "form: map keys nested 32 deep",
            format!("a{}=1", "[k]".repeat(32)),
            200,
            "1",
        ),
        form("form: the most fields (1,000)", keys(1000), 200, "1000"),
        form(
            "form: one field past (1,001)",
            keys(1001),
            400,
            "TERN_MAX_FORM_FIELDS",
        ),
        // The reproduction: 150,000 keys took 41 s of CPU.
        form(
            "form: 150,000 keys (was quadratic)",
            keys(150_000),
            400,
            "TERN_MAX_FORM_FIELDS",
        ),
        form(
            "form: 1,000 fields in one nested map",
            (0..1000)
                .map(|i| format!("m[k{i}]=1"))
                .collect::<Vec<_>>()
                .join("&"),
            200,
            "1",
        ),
        form(
            "form: the longest key (the whole body)",
            format!("{}=1", "k".repeat(max_body - 2)),
            200,
            "1",
        ),
        form(
            "form: a body of escapes at the limit",
            format!("k={}", "%41".repeat((max_body - 2) / 3)),
            200,
            "1",
        ),
        form(
            "form: one list of 1,000 items",
            (0..1000).map(|_| "t[]=1").collect::<Vec<_>>().join("&"),
            200,
            "1",
        ),
        form(
            "form: an unbalanced 1 MiB key is not echoed",
            format!("{}[=1", "k".repeat(1024 * 1024)),
            400,
            "unbalanced",
        ),
        form(
            "form: past the body limit",
            "k".repeat(max_body + 1),
            413,
            "TERN_MAX_BODY_BYTES",
        ),
        get_case(
            "query: 10,000 levels",
            format!("/query?{}=1", nested_key(5000)),
            400,
            "TERN_MAX_FORM_DEPTH",
        ),
        get_case(
            "query: the most fields (1,000)",
            format!("/query?{}", keys(1000)),
            200,
            "1000",
        ),
        get_case(
            "query: one field past",
            format!("/query?{}", keys(1001)),
            400,
            "TERN_MAX_FORM_FIELDS",
        ),
        Case {
            name: "json: 127 levels (serde_json's limit is 128)",
            method: "POST",
            path: "/json".into(),
            headers: vec![("content-type", "application/json".into())],
            body: json_depth(127).into_bytes(),
            status: 200,
            says: "value",
        },
        Case {
            name: "json: 10,000 levels",
            method: "POST",
            path: "/json".into(),
            headers: vec![("content-type", "application/json".into())],
            body: json_depth(10_000).into_bytes(),
            status: 400,
            says: "recursion limit",
        },
        Case {
            name: "json: the most keys the body limit allows",
            method: "POST",
            path: "/json".into(),
            headers: vec![("content-type", "application/json".into())],
            body: json_keys(max_body).into_bytes(),
            status: 200,
            says: "",
        },
    ];
    cases.push(upload(
        "multipart: the most parts (100)",
        multipart(100, None, 0),
        200,
        "100",
    ));
    cases.push(upload(
        "multipart: one part past (101)",
        multipart(101, None, 0),
        413,
        "TERN_MAX_MULTIPART_PARTS",
    ));
    cases.push(upload(
        "multipart: 20,000 parts",
        multipart(20_000, None, 0),
        413,
        "TERN_MAX_MULTIPART_PARTS",
    ));
    cases.push(upload(
        "multipart: the longest file name (255)",
        multipart(1, Some(&"n".repeat(255)), 0),
        200,
        "1",
    ));
    cases.push(upload(
        "multipart: a file name one byte past",
        multipart(1, Some(&"n".repeat(256)), 0),
        400,
        "longer than 255",
    ));
    cases.push(upload(
        "multipart: the most part headers (32)",
        multipart(1, None, 31),
        200,
        "1",
    ));
    cases.push(upload(
        "multipart: 41 part headers",
        multipart(1, None, 40),
        400,
        "malformed multipart",
    ));
    let (ct, mut body) = multipart(1, None, 0);
    let huge = format!("X-Big: {}\r\n", "v".repeat(max_body / 2));
    let at = body
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("head end")
        + 2;
    body.splice(at..at, huge.into_bytes());
    cases.push(upload(
        "multipart: a 1 MiB part header",
        (ct, body),
        200,
        "1",
    ));
    // The head limit (16 KiB) bounds cookies, path and header values.
    let cookies = (0..1500)
        .map(|i| format!("c{i}=1"))
        .collect::<Vec<_>>()
        .join("; ");
    cases.push(Case {
        headers: vec![("cookie", cookies)],
        ..get_case(
            "cookies: 1,500 in one 13 KiB header (the head limit is 16 KiB)",
            "/cookies".into(),
            200,
            "1500",
        )
    });
    cases.push(Case {
        headers: vec![("cookie", "c=".to_owned() + &"v".repeat(20 * 1024))],
        ..get_case("cookies: one head of 20 KiB", "/cookies".into(), 431, "")
    });
    cases.push(get_case(
        "path: a parameter of 5,000 escapes",
        format!("/p/{}", "%41".repeat(5000)),
        200,
        "5000",
    ));
    cases.push(get_case(
        "path: a malformed escape",
        "/p/%zz".into(),
        400,
        "",
    ));
    cases.push(Case {
        name: "typed header: a 15 KiB User-Agent",
        method: "GET",
        path: "/agent".into(),
        headers: vec![("user-agent", "a".repeat(15 * 1024))],
        body: vec![],
        status: 200,
        says: "15360",
    });
    cases.push(Case {
        name: "headers: the most allowed (100)",
        method: "GET",
        path: "/headers".into(),
        headers: (0..99)
            .map(|i| {
                (
                    Box::leak(format!("x-h{i}").into_boxed_str()) as &str,
                    "v".into(),
                )
            })
            .collect(),
        body: vec![],
        status: 200,
        says: "",
    });
    cases.push(Case {
        name: "headers: one past (101)",
        method: "GET",
        path: "/headers".into(),
        headers: (0..101)
            .map(|i| {
                (
                    Box::leak(format!("x-h{i}").into_boxed_str()) as &str,
                    "v".into(),
                )
            })
            .collect(),
        body: vec![],
        status: 431,
        says: "",
    });
    cases
}

#[tokio::test]
async fn every_parser_at_its_limits() {
    let server = spawn(app()).await;
    let client = client();
    let mut failures = Vec::new();
    for case in cases() {
        let mut req = request(case.method, &server.url(&case.path));
        for (k, v) in &case.headers {
            req = req.header(*k, v);
        }
        let req = req
            .body(Full::new(Bytes::from(case.body)))
            .expect("request");
        let res = send(&client, req).await;
        let text = res.text();
        if res.status.as_u16() != case.status {
            failures.push(format!(
                "{}: expected {}, got {}: {}",
                case.name,
                case.status,
                res.status,
                &text[..text.len().min(300)]
            ));
        } else if !text.contains(case.says) {
            failures.push(format!(
                "{}: the answer does not say `{}`: {}",
                case.name,
                case.says,
                &text[..text.len().min(300)]
            ));
        } else if case.status >= 400 && case.status != 431 {
            res.problem(case.status);
            assert!(
                text.len() < 1024,
                "{}: the problem echoes too much ({} bytes)",
                case.name,
                text.len()
            );
        }
        // The server is still there after every case.
        let health = get(&server, "/health").await;
        assert_eq!(health.status.as_u16(), 200, "after {}", case.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    server.shutdown().await;
}

#[tokio::test]
async fn form_limits_are_configurable() {
    let mut config = config();
    config.limits.max_form_fields = 10;
    config.limits.max_form_depth = 2;
    config.limits.max_multipart_parts = 2;
    let server = spawn_with(app(), config).await;
    let client = client();
    let post = |path: &str, ct: &str, body: String| {
        request("POST", &server.url(path))
            .header("content-type", ct)
            .body(Full::new(Bytes::from(body)))
            .expect("request")
    };
    let form = "application/x-www-form-urlencoded";
    assert_eq!(
        send(&client, post("/form", form, keys(10))).await.status,
        200
    );
    let doc = send(&client, post("/form", form, keys(11)))
        .await
        .problem(400);
    assert!(
        doc["detail"]
            .as_str()
            .unwrap()
            .contains("more than 10 fields"),
        "{doc}"
    );
    assert_eq!(
        send(&client, post("/form", form, "a[b][c]=1".into()))
            .await
            .status,
        200
    );
    send(&client, post("/form", form, "a[b][c][d]=1".into()))
        .await
        .problem(400);
    let q = get(&server, &format!("/query?{}", keys(11))).await;
    q.problem(400);
    let (ct, body) = multipart(3, None, 0);
    send(
        &client,
        request("POST", &server.url("/upload"))
            .header("content-type", ct)
            .body(Full::new(Bytes::from(body)))
            .expect("request"),
    )
    .await
    .problem(413);
    server.shutdown().await;
}
