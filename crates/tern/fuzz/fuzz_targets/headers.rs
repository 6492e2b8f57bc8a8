//! Cookies, typed headers and path parameters generated with structure
//! (many cookies, long values, escapes) up to the head limit, through
//! Tern's `Cookies`, `TypedHeader` and `Path` extractors in process: every
//! answer is a 200 or a 4xx, never a 500, a panic or a hang.
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run headers`
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::{arbitrary, fuzz_target};
use tern::{
    extract::{Cookies, Path, TypedHeader},
    headers,
    routing::get,
    App, AppService,
};

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    cookies: Vec<(String, String, u8)>,
    raw_cookie: Vec<u8>,
    path: Vec<Seg>,
    header: (u8, String, u16),
}

#[derive(Debug, arbitrary::Arbitrary)]
enum Seg {
    Text(String),
    Escape(u8, u16),
    Bad(u8),
}

const MAX_HEAD: usize = 16 * 1024;

fn app() -> AppService {
    App::new()
        .route(
            "/c",
            get(|c: Cookies| async move {
                let n = c.iter().count();
                let _ = c.get_signed("s");
                let _ = c.get_private("p");
                n.to_string()
            }),
        )
        .route(
            "/p/{name}/{id:u64}",
            get(|Path((n, id)): Path<(String, u64)>| async move { format!("{n}{id}") }),
        )
        .route("/g/{*rest}", get(|Path(p): Path<String>| async move { p }))
        .route(
            "/h",
            get(
                |TypedHeader(a): TypedHeader<headers::UserAgent>,
                 r: Option<TypedHeader<headers::Range>>,
                 t: Option<TypedHeader<headers::ContentType>>| async move {
                    format!("{} {} {}", a.as_str().len(), r.is_some(), t.is_some())
                },
            ),
        )
        .build()
        .expect("the fuzz app builds")
}

fuzz_target!(|input: Input| {
    thread_local! {
        static APP: AppService = app();
    }
    let mut cookie = String::new();
    for (k, v, times) in &input.cookies {
        for _ in 0..=*times {
            if cookie.len() + k.len() + v.len() + 3 > MAX_HEAD {
                break;
            }
            cookie.push_str(&format!("{k}={v}; "));
        }
    }
    let mut path = String::from("/p/");
    for seg in &input.path {
        match seg {
            Seg::Text(s) => path.push_str(s),
            Seg::Escape(b, n) => {
                for _ in 0..usize::from(*n).min(MAX_HEAD / 3) {
                    path.push_str(&format!("%{b:02X}"));
                }
            }
            Seg::Bad(b) => path.push_str(&format!("%{}", *b as char)),
        }
    }
    let (which, value, repeat) = &input.header;
    let long = value.repeat(usize::from(*repeat).min(MAX_HEAD / value.len().max(1)));
    let app = APP.with(Clone::clone);
    common::block_on(async move {
        let mut reqs = Vec::new();
        if let Ok(v) = http::HeaderValue::from_str(&cookie) {
            reqs.push(http::Request::get("/c").header("cookie", v));
        }
        if let Ok(v) = http::HeaderValue::from_bytes(&input.raw_cookie) {
            reqs.push(http::Request::get("/c").header("cookie", v));
        }
        for p in [
            path.clone(),
            path.replacen("/p/", "/g/", 1),
            format!("{path}/7"),
        ] {
            if let Ok(uri) = p.parse::<http::Uri>() {
                reqs.push(http::Request::get(uri));
            }
        }
        if let Ok(v) = http::HeaderValue::from_str(&long) {
            let name = ["user-agent", "range", "content-type"][usize::from(*which) % 3];
            reqs.push(
                http::Request::get("/h")
                    .header("user-agent", "fuzz")
                    .header(name, v),
            );
        }
        for req in reqs {
            let req = req.body(tern::body::Body::empty()).expect("a request");
            let status = app.call(req, None).await.status().as_u16();
            common::assert_ok_or_client_error(status, "a request");
        }
    });
});
