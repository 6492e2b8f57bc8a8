//! Query strings and urlencoded forms, generated with structure (nested
//! keys, lists, indexes, escapes) and counts large enough to reach the
//! body limit, through Tern's `Query` and `Form` extractors in process:
//! every answer is a 200 or a 4xx, never a 500, a panic or a hang.
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run form`
#![no_main]

#[path = "common.rs"]
mod common;

use std::collections::HashMap;

use libfuzzer_sys::{arbitrary, fuzz_target};
use serde::Deserialize;
use tern::{
    extract::{Form, Query},
    routing::{get, post},
    App, AppService,
};

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    pairs: Vec<Pair>,
    as_query: bool,
}

#[derive(Debug, arbitrary::Arbitrary)]
struct Pair {
    name: Name,
    segments: Vec<Segment>,
    value: Value,
    /// Repeats the pair: large counts from small inputs.
    times: u16,
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Name {
    Fixed(u8),
    Raw(String),
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Segment {
    Empty,
    Index(u32),
    Key(u8),
    Raw(String),
    /// Many `[]` at once: the deepest nesting.
    Deep(u16),
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Value {
    Number(i64),
    Text(String),
    Escapes(u16),
    Empty,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Typed {
    q: Option<String>,
    page: Option<u32>,
    tag: Option<Vec<String>>,
    user: Option<HashMap<String, String>>,
    flag: Option<bool>,
}

const MAX_BODY: usize = 2 * 1024 * 1024;

fn render(input: &Input) -> String {
    let names = ["q", "page", "tag", "user", "flag", "a"];
    let mut out = String::new();
    for pair in &input.pairs {
        let mut one = match &pair.name {
            Name::Fixed(n) => names[usize::from(*n) % names.len()].to_owned(),
            Name::Raw(s) => s.replace(['&', '='], ""),
        };
        for seg in &pair.segments {
            match seg {
                Segment::Empty => one.push_str("[]"),
                Segment::Index(i) => one.push_str(&format!("[{i}]")),
                Segment::Key(k) => one.push_str(&format!("[k{k}]")),
                Segment::Raw(s) => one.push_str(&format!("[{}]", s.replace(['&', '='], ""))),
                Segment::Deep(n) => one.push_str(&"[]".repeat(usize::from(*n))),
            }
        }
        one.push('=');
        match &pair.value {
            Value::Number(n) => one.push_str(&n.to_string()),
            Value::Text(s) => one.push_str(&s.replace('&', "%26")),
            Value::Escapes(n) => one.push_str(&"%41".repeat(usize::from(*n))),
            Value::Empty => {}
        }
        for _ in 0..=pair.times {
            if out.len() + one.len() + 1 > MAX_BODY {
                return out;
            }
            if !out.is_empty() {
                out.push('&');
            }
            out.push_str(&one);
        }
    }
    out
}

fn app() -> AppService {
    App::new()
        .route(
            "/map",
            get(|Query(q): Query<HashMap<String, serde_json::Value>>| async move {
                q.len().to_string()
            })
            .post(|Form(f): Form<HashMap<String, serde_json::Value>>| async move {
                f.len().to_string()
            }),
        )
        .route(
            "/typed",
            get(|Query(_): Query<Typed>| async { "ok" })
                .post(|Form(_): Form<Typed>| async { "ok" }),
        )
        .route("/list", post(|Form(v): Form<Vec<(String, String)>>| async move { v.len().to_string() }))
        .build()
        .expect("the fuzz app builds")
}

fuzz_target!(|input: Input| {
    thread_local! {
        static APP: AppService = app();
    }
    let text = render(&input);
    let app = APP.with(Clone::clone);
    common::block_on(async move {
        for path in ["/map", "/typed", "/list"] {
            let req = if input.as_query {
                let Ok(uri) = format!("{path}?{text}").parse::<http::Uri>() else {
                    return;
                };
                http::Request::get(uri).body(tern::body::Body::empty())
            } else {
                http::Request::post(path)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(tern::body::Body::from(text.clone()))
            };
            let req = req.expect("a request");
            let res = app.call(req, None).await;
            let status = res.status().as_u16();
            common::assert_ok_or_client_error(status, format_args!("{path}, {} bytes", text.len()));
        }
    });
});
