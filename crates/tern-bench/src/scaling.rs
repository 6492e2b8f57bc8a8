//! Cost per size of every parser of client input: the instructions Tern
//! spends on one request of size n, 2n and 4n (callgrind, which repeats
//! exactly where times do not), and the ratio between steps. Linear work
//! doubles (ratio about 2); quadratic work quadruples. A ratio above
//! [`MAX_RATIO`] fails.
//!
//! The limits are raised for the measurement (`scaling_app`), so that each
//! parser does all the work the input asks for instead of stopping at
//! `TERN_MAX_FORM_FIELDS` and its kind: the point is that no input makes
//! the work grow faster than the input, limits or not.

use std::{collections::HashMap, path::Path};

use anyhow::Result;
use bytes::Bytes;
use http::{header, Request};
use serde::Serialize;
use tern::{
    extract::{Cookies, Form, Multipart, Path as UrlPath, Query},
    routing::{get, post},
    App, AppService, Json,
};

/// The highest ratio of the cost at 2n to the cost at n that passes.
pub const MAX_RATIO: f64 = 2.6;

/// A parser and the input sizes it is measured at.
#[derive(Debug, Clone, Copy)]
pub struct Parser {
    /// The name used on the command line and in the table.
    pub name: &'static str,
    /// What the size counts.
    pub unit: &'static str,
    /// The smallest size; then twice and four times it.
    pub base: usize,
    /// The smallest size in quick mode (CI).
    pub quick: usize,
}

/// Every parser measured.
pub fn parsers() -> Vec<Parser> {
    let p = |name, unit, base, quick| Parser {
        name,
        unit,
        base,
        quick,
    };
    vec![
        p("form-keys", "distinct keys", 20_000, 2_000),
        p("form-nested-keys", "keys of one nested map", 20_000, 2_000),
        p("form-list", "items of one list", 20_000, 2_000),
        p("form-depth", "bracket levels", 60, 30),
        p("form-long-key", "bytes of one key", 400_000, 40_000),
        // A URI is at most 64 KiB (the http crate), so these stay smaller.
        p("query-keys", "distinct keys", 2_000, 1_000),
        p("json-keys", "object keys", 20_000, 2_000),
        p("json-depth", "nesting levels", 30, 30),
        p("multipart-parts", "parts", 2_000, 200),
        p(
            "multipart-header",
            "bytes of one part header",
            200_000,
            20_000,
        ),
        p("cookies", "cookies", 10_000, 1_000),
        p("path-escapes", "percent-escapes", 4_000, 2_000),
    ]
}

/// The app that serves the measured requests, with limits raised.
pub fn scaling_app() -> AppService {
    async fn parts(mut m: Multipart) -> String {
        let mut n = 0usize;
        while let Ok(Some(field)) = m.next_field().await {
            let _ = field.bytes().await;
            n += 1;
        }
        n.to_string()
    }
    let app =
        App::new()
            .route(
                "/form",
                post(
                    |Form(f): Form<HashMap<String, serde_json::Value>>| async move {
                        f.len().to_string()
                    },
                ),
            )
            .route(
                "/query",
                get(
                    |Query(q): Query<HashMap<String, serde_json::Value>>| async move {
                        q.len().to_string()
                    },
                ),
            )
            .route(
                "/json",
                post(|Json(v): Json<serde_json::Value>| async move { v.is_object().to_string() }),
            )
            .route("/upload", post(parts))
            .route(
                "/cookies",
                get(|c: Cookies| async move { c.iter().count().to_string() }),
            )
            .route(
                "/p/{name}",
                get(|UrlPath(p): UrlPath<String>| async move { p.len().to_string() }),
            );
    let mut config = tern::Config::default();
    config.health_path = None;
    config.limits.max_body_bytes = 64 * 1024 * 1024;
    config.limits.max_multipart_field_bytes = 64 * 1024 * 1024;
    config.limits.max_form_fields = usize::MAX;
    config.limits.max_form_depth = 1000;
    config.limits.max_multipart_parts = usize::MAX;
    match app.build_with(config) {
        Ok(app) => app,
        Err(e) => panic!("the scaling app does not build: {e}"),
    }
}

fn form(body: String) -> Request<Bytes> {
    Request::post("/form")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Bytes::from(body))
        .unwrap_or_default()
}

fn join(n: usize, item: impl Fn(usize) -> String, sep: &str) -> String {
    (0..n).map(item).collect::<Vec<_>>().join(sep)
}

/// One request of `parser` at `size`.
pub fn request(parser: &str, size: usize) -> Request<Bytes> {
    let get = |uri: String| {
        Request::get(uri)
            .header(header::HOST, "localhost")
            .body(Bytes::new())
            .unwrap_or_default()
    };
    match parser {
        "form-keys" => form(join(size, |i| format!("k{i}=1"), "&")),
        "form-nested-keys" => form(join(size, |i| format!("m[k{i}]=1"), "&")),
        "form-list" => form(join(size, |_| "t[]=1".to_owned(), "&")),
        "form-depth" => form(format!("a{}=1", "[]".repeat(size))),
        "form-long-key" => form(format!("{}=1", "k".repeat(size))),
        "query-keys" => get(format!("/query?{}", join(size, |i| format!("k{i}=1"), "&"))),
        "json-keys" => Request::post("/json")
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Bytes::from(format!(
                "{{{}}}",
                join(size, |i| format!("\"k{i}\":1"), ",")
            )))
            .unwrap_or_default(),
        "json-depth" => Request::post("/json")
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Bytes::from(format!(
                "{}{}",
                "[".repeat(size),
                "]".repeat(size)
            )))
            .unwrap_or_default(),
        "multipart-parts" | "multipart-header" => {
            let (parts, header_bytes) = if parser == "multipart-parts" {
                (size, 0)
            } else {
                (1, size)
            };
            let mut body = String::new();
            for i in 0..parts {
                body.push_str("--B\r\n");
                body.push_str(&format!(
                    "Content-Disposition: form-data; name=\"f{i}\"\r\n"
                ));
                if header_bytes > 0 {
                    body.push_str(&format!("X-Big: {}\r\n", "v".repeat(header_bytes)));
                }
                body.push_str("\r\nvalue\r\n");
            }
            body.push_str("--B--\r\n");
            Request::post("/upload")
                .header(header::HOST, "localhost")
                .header(header::CONTENT_TYPE, "multipart/form-data; boundary=B")
                .body(Bytes::from(body))
                .unwrap_or_default()
        }
        "cookies" => Request::get("/cookies")
            .header(header::HOST, "localhost")
            .header(header::COOKIE, join(size, |i| format!("c{i}=1"), "; "))
            .body(Bytes::new())
            .unwrap_or_default(),
        "path-escapes" => get(format!("/p/{}", "%41".repeat(size))),
        _ => get("/unknown".to_owned()),
    }
}

/// One parser's figures.
#[derive(Debug, Clone, Serialize)]
pub struct Scaling {
    /// The parser.
    pub parser: String,
    /// What the size counts.
    pub unit: String,
    /// The sizes: n, 2n, 4n.
    pub sizes: Vec<usize>,
    /// Instructions spent on the request at each size (the run minus a
    /// run that builds the same request and does not send it).
    pub instructions: Vec<u64>,
    /// cost(2n)/cost(n), cost(4n)/cost(2n).
    pub ratios: Vec<f64>,
    /// Every ratio is at most [`MAX_RATIO`].
    pub linear: bool,
}

/// Measures `parser` with the `scaling` example binary under callgrind.
pub fn measure(binary: &Path, parser: &Parser, quick: bool) -> Result<Scaling> {
    let base = if quick { parser.quick } else { parser.base };
    let sizes = vec![base, base * 2, base * 4];
    let mut instructions = Vec::new();
    for &size in &sizes {
        let size_arg = size.to_string();
        let skip = crate::callgrind::total_ir(binary, &[parser.name, &size_arg, "skip"])?;
        let run = crate::callgrind::total_ir(binary, &[parser.name, &size_arg, "run"])?;
        instructions.push(run.saturating_sub(skip));
    }
    let ratios: Vec<f64> = instructions
        .windows(2)
        .map(|w| w[1] as f64 / w[0].max(1) as f64)
        .collect();
    Ok(Scaling {
        parser: parser.name.to_owned(),
        unit: parser.unit.to_owned(),
        linear: ratios.iter().all(|&r| r <= MAX_RATIO),
        sizes,
        instructions,
        ratios,
    })
}
