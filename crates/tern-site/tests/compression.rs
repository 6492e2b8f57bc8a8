//! Compression over a real socket: each coding decoded back to the
//! original, and the responses it must leave alone (small, images, event
//! streams, ranges, precompressed files).
#![allow(clippy::unwrap_used, missing_docs)]

use std::{io::Read, net::SocketAddr};

use tern::{
    response::{Html, StreamResponse},
    routing::get,
    App,
};
use tern_site::StaticFiles;

mod common;

fn page() -> String {
    let mut html = String::from("<!doctype html><html lang=\"en\"><body>");
    for i in 0..400 {
        html.push_str(&format!(
            "<p>Paragraph {i}: Tern serves its own website.</p>\n"
        ));
    }
    html.push_str("</body></html>");
    html
}

#[derive(rust_embed::RustEmbed)]
#[folder = "tests/assets/"]
struct Assets;

async fn serve() -> SocketAddr {
    let files = StaticFiles::embedded::<Assets>();
    let app = App::new()
        .route("/page", get(|| async { Html(page()) }))
        .route("/small", get(|| async { "short text" }))
        .route(
            "/image",
            get(|| async {
                (
                    [(tern::http::header::CONTENT_TYPE, "image/png")],
                    vec![0u8; 4096],
                )
            }),
        )
        .route(
            "/events",
            get(|| async {
                StreamResponse::new(futures_util::stream::iter((0..100).map(|i| {
                    Ok::<_, std::io::Error>(format!(
                        "data: event {i} with some padding to be long\n\n"
                    ))
                })))
                .content_type("text/event-stream")
            }),
        )
        .route(
            "/stream",
            get(|| async {
                StreamResponse::new(futures_util::stream::iter((0..200).map(|i| {
                    Ok::<_, std::io::Error>(format!("line {i} of a streamed text body\n"))
                })))
                .content_type("text/plain; charset=utf-8")
            }),
        )
        .route(&files.pattern(), files.service())
        .layer(tern_site::compression());
    common::serve(app).await
}

/// An HTTP/1.0 request (the body ends at the close: no chunked coding to
/// undo); the lower-cased head and the raw body.
async fn get_raw(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (String, Vec<u8>) {
    let (head, body) =
        common::exchange(addr, &common::head("GET", path, "HTTP/1.0", headers)).await;
    (head.to_ascii_lowercase(), body)
}

fn decode(coding: &str, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "gzip" => {
            flate2::read::GzDecoder::new(body)
                .read_to_end(&mut out)
                .unwrap();
        }
        "br" => {
            brotli::Decompressor::new(body, 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        "zstd" => out = zstd::decode_all(body).unwrap(),
        _ => out = body.to_vec(),
    }
    out
}

#[tokio::test]
async fn each_coding_round_trips_and_the_rest_is_left_alone() {
    let addr = serve().await;
    let original = page();
    for (accept, coding) in [
        ("gzip", "gzip"),
        ("br", "br"),
        ("zstd", "zstd"),
        // Equal preference: tower-http takes zstd, then brotli.
        ("gzip, deflate, br, zstd", "zstd"),
        ("gzip, deflate, br", "br"),
        ("gzip;q=1, br;q=0.5", "gzip"),
    ] {
        let (head, body) = get_raw(addr, "/page", &[("accept-encoding", accept)]).await;
        assert!(head.starts_with("http/1.0 200"), "{head}");
        assert!(
            head.contains(&format!("content-encoding: {coding}\r\n")),
            "{accept}: {head}"
        );
        assert!(head.contains("vary: accept-encoding"), "{head}");
        assert!(
            body.len() < original.len() / 4,
            "{accept}: {} bytes",
            body.len()
        );
        assert_eq!(decode(coding, &body), original.as_bytes(), "{accept}");
    }
    // No Accept-Encoding, or identity only: as it is, with its length.
    for headers in [&[][..], &[("accept-encoding", "identity")][..]] {
        let (head, body) = get_raw(addr, "/page", headers).await;
        assert!(!head.contains("content-encoding"), "{head}");
        assert!(head.contains(&format!("content-length: {}\r\n", original.len())));
        assert_eq!(body, original.as_bytes());
    }
    // A streamed text body: compressed as it streams.
    let (head, body) = get_raw(addr, "/stream", &[("accept-encoding", "gzip")]).await;
    assert!(head.contains("content-encoding: gzip"), "{head}");
    let expected: String = (0..200)
        .map(|i| format!("line {i} of a streamed text body\n"))
        .collect();
    assert_eq!(decode("gzip", &body), expected.as_bytes());

    // Left alone: small bodies, images, event streams.
    for path in ["/small", "/image", "/events"] {
        let (head, _) = get_raw(addr, path, &[("accept-encoding", "gzip, br, zstd")]).await;
        assert!(!head.contains("content-encoding"), "{path}: {head}");
    }
}

#[tokio::test]
async fn ranges_and_precompressed_files_are_not_compressed_again() {
    let addr = serve().await;
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/assets/long.txt"
    ))
    .unwrap();
    // The file compressed on the fly.
    let (head, body) = get_raw(addr, "/static/long.txt", &[("accept-encoding", "br")]).await;
    assert!(head.contains("content-encoding: br"), "{head}");
    assert_eq!(decode("br", &body), text);
    // A range: the bytes asked for, as they are.
    let (head, body) = get_raw(
        addr,
        "/static/long.txt",
        &[("accept-encoding", "br"), ("range", "bytes=0-99")],
    )
    .await;
    assert!(head.starts_with("http/1.0 206"), "{head}");
    assert!(!head.contains("content-encoding"), "{head}");
    assert_eq!(body, &text[..100]);
    // A precompressed sibling goes out as it is, once.
    let (head, body) = get_raw(addr, "/static/long.txt", &[("accept-encoding", "gzip")]).await;
    assert!(head.contains("content-encoding: gzip"), "{head}");
    assert_eq!(head.matches("content-encoding").count(), 1);
    let sibling = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/assets/long.txt.gz"
    ))
    .unwrap();
    assert_eq!(body, sibling);
    assert_eq!(decode("gzip", &body), text);
}

fn etag(head: &str) -> String {
    head.lines()
        .find_map(|l| l.strip_prefix("etag: "))
        .unwrap()
        .trim()
        .to_owned()
}

/// A strong ETag names the identity bytes: on what the layer compresses it
/// becomes weak (redbot rates a strong one there BAD), and revalidation
/// with it still gets a 304. A precompressed sibling keeps its own strong
/// tag (its own bytes).
#[tokio::test]
async fn compressed_answers_carry_a_weak_etag_and_still_revalidate() {
    let addr = serve().await;
    let (plain, _) = get_raw(addr, "/static/long.txt", &[]).await;
    let strong = etag(&plain);
    assert!(strong.starts_with('"'), "{plain}");
    let (br, _) = get_raw(addr, "/static/long.txt", &[("accept-encoding", "br")]).await;
    assert!(br.contains("content-encoding: br"), "{br}");
    assert_eq!(etag(&br), format!("w/{strong}"), "{br}");
    let (again, body) = get_raw(
        addr,
        "/static/long.txt",
        &[
            ("accept-encoding", "br"),
            ("if-none-match", &format!("W/{strong}")),
        ],
    )
    .await;
    assert!(again.starts_with("http/1.0 304"), "{again}");
    assert!(body.is_empty());
    let (gz, _) = get_raw(addr, "/static/long.txt", &[("accept-encoding", "gzip")]).await;
    let sibling = etag(&gz);
    assert!(sibling.starts_with('"') && sibling != strong, "{gz}");
}
