//! `multipart/form-data` bodies generated with structure (parts, names,
//! file names, headers, boundaries in data) and counts large enough to
//! reach the body limit, read whole through Tern's `Multipart` in process:
//! every answer is a 200 or a 4xx, never a 500, a panic or a hang.
//!
//! `cd crates/tern/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run multipart`
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::{arbitrary, fuzz_target};
use tern::{extract::Multipart, routing::post, App, AppService};

#[derive(Debug, arbitrary::Arbitrary)]
struct Input {
    parts: Vec<Part>,
    close: bool,
    preamble: Vec<u8>,
}

#[derive(Debug, arbitrary::Arbitrary)]
struct Part {
    name: Option<String>,
    file_name: Option<(String, u16)>,
    headers: Vec<(String, String)>,
    data: Vec<u8>,
    data_repeat: u16,
    times: u8,
    raw_crlf: bool,
}

const MAX_BODY: usize = 2 * 1024 * 1024;

fn render(input: &Input) -> Vec<u8> {
    let mut out = input.preamble.clone();
    for part in &input.parts {
        let mut one = Vec::new();
        one.extend_from_slice(b"--XyZ\r\n");
        let mut cd = String::from("Content-Disposition: form-data");
        if let Some(name) = &part.name {
            cd.push_str(&format!(
                "; name=\"{}\"",
                name.replace(['"', '\r', '\n'], "")
            ));
        }
        if let Some((f, pad)) = &part.file_name {
            let long = "n".repeat(usize::from(*pad) % 600);
            cd.push_str(&format!(
                "; filename=\"{}{long}\"",
                f.replace(['"', '\r', '\n'], "")
            ));
        }
        one.extend_from_slice(cd.as_bytes());
        one.extend_from_slice(b"\r\n");
        for (k, v) in &part.headers {
            one.extend_from_slice(k.as_bytes());
            one.extend_from_slice(b": ");
            one.extend_from_slice(v.as_bytes());
            one.extend_from_slice(if part.raw_crlf { b"\n" } else { b"\r\n" });
        }
        one.extend_from_slice(b"\r\n");
        for _ in 0..=usize::from(part.data_repeat) {
            one.extend_from_slice(&part.data);
            if one.len() > MAX_BODY {
                break;
            }
        }
        one.extend_from_slice(b"\r\n");
        for _ in 0..=part.times {
            if out.len() + one.len() > MAX_BODY {
                return out;
            }
            out.extend_from_slice(&one);
        }
    }
    if input.close {
        out.extend_from_slice(b"--XyZ--\r\n");
    }
    out
}

async fn read(mut m: Multipart) -> Result<String, tern::extract::Rejection> {
    let mut n = 0usize;
    while let Some(field) = m.next_field().await? {
        let _ = field.file_name();
        field.bytes().await?;
        n += 1;
    }
    Ok(n.to_string())
}

fn app() -> AppService {
    App::new()
        .route("/upload", post(read))
        .build()
        .expect("the fuzz app builds")
}

fuzz_target!(|input: Input| {
    thread_local! {
        static APP: AppService = app();
    }
    let body = render(&input);
    let app = APP.with(Clone::clone);
    common::block_on(async move {
        let req = http::Request::post("/upload")
            .header("content-type", "multipart/form-data; boundary=XyZ")
            .body(tern::body::Body::from(body.clone()))
            .expect("a request");
        let status = app.call(req, None).await.status().as_u16();
        common::assert_ok_or_client_error(status, format_args!("{} bytes", body.len()));
    });
});
