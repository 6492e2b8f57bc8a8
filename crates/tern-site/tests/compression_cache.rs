//! The cache of compressed answers over a real socket: what it keeps (a
//! body seen twice, never one seen once), what a hit sends, what it never
//! mixes up, what it leaves to the layer, its bound, its setting and its
//! counts.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{io::Read, net::SocketAddr};

use tern::{
    extract::Path,
    response::{Html, StreamResponse},
    routing::get,
    App, Config,
};
use tern_site::{
    compression::{compression_with, CompressionCache, MAX_CACHED_BODY, SEEN_ONCE_SLOTS},
    StaticFiles,
};

mod common;

/// A page of `paragraphs` paragraphs; `variant` changes one byte of it
/// (the digit in the title), never its length.
fn page(paragraphs: usize, variant: u8) -> String {
    let mut html = format!(
        "<!doctype html><html lang=\"en\"><title>Page {}</title><body>",
        variant % 10
    );
    for i in 0..paragraphs {
        html.push_str(&format!(
            "<p>Paragraph {i}: Tern serves its own website.</p>\n"
        ));
    }
    html.push_str("</body></html>");
    html
}

/// Over [`MAX_CACHED_BODY`], and still compressible.
fn huge() -> String {
    let mut text = String::new();
    let mut i = 0u64;
    while text.len() <= MAX_CACHED_BODY {
        text.push_str(&format!("line {i} of a long text answer\n"));
        i += 1;
    }
    text
}

#[derive(rust_embed::RustEmbed)]
#[folder = "tests/assets/"]
struct Assets;

fn app() -> App {
    let files = StaticFiles::embedded::<Assets>();
    App::new()
        .route(&files.pattern(), files.service())
        .route("/page", get(|| async { Html(page(400, 0)) }))
        .route(
            "/variant/{n:u64}",
            get(|Path(n): Path<u64>| async move { Html(page(400, n as u8)) }),
        )
        .route(
            "/distinct/{n:u64}",
            get(|Path(n): Path<u64>| async move { Html(format!("{n:08}{}", page(100, 0))) }),
        )
        .route("/small", get(|| async { "short text" }))
        .route("/huge", get(|| async { huge() }))
        .route(
            "/stream",
            get(|| async {
                StreamResponse::new(futures_util::stream::iter((0..200).map(|i| {
                    Ok::<_, std::io::Error>(format!("line {i} of a streamed text body\n"))
                })))
                .content_type("text/plain; charset=utf-8")
            }),
        )
}

async fn serve(cache: CompressionCache) -> SocketAddr {
    common::serve(app().layer(compression_with(cache))).await
}

/// An HTTP/1.0 exchange: the lower-cased head and the raw body.
async fn get_raw(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> (String, Vec<u8>) {
    let (head, body) =
        common::exchange(addr, &common::head("GET", path, "HTTP/1.0", headers)).await;
    (head.to_ascii_lowercase(), body)
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .map(str::trim)
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
        other => panic!("no decoder for {other}"),
    }
    out
}

#[tokio::test]
async fn a_page_is_kept_on_its_second_request_and_sent_from_the_cache_after() {
    let cache = CompressionCache::bytes(1 << 20);
    let addr = serve(cache.clone()).await;
    let original = page(400, 0);
    for (n, coding) in ["br", "gzip", "zstd"].into_iter().enumerate() {
        let (n, kept_n) = (n as u64, n);
        // Seen once: compressed fast, not kept.
        let (first_head, first) = get_raw(addr, "/page", &[("accept-encoding", coding)]).await;
        assert_eq!(decode(coding, &first), original.as_bytes(), "{coding}");
        let stats = cache.stats();
        assert_eq!(
            (stats.firsts, stats.misses, stats.entries),
            (n + 1, n, kept_n),
            "{coding}"
        );
        // Seen twice: kept.
        let (kept_head, kept) = get_raw(addr, "/page", &[("accept-encoding", coding)]).await;
        assert_eq!(cache.stats().entries, kept_n + 1, "{coding}");
        // Then sent from the cache.
        let (head, again) = get_raw(addr, "/page", &[("accept-encoding", coding)]).await;
        for (h, body) in [(&first_head, &first), (&kept_head, &kept), (&head, &again)] {
            assert!(h.starts_with("http/1.0 200"), "{h}");
            assert_eq!(header(h, "content-encoding"), Some(coding), "{h}");
            assert_eq!(header(h, "vary"), Some("accept-encoding"), "{h}");
            // The compressed length, known in advance.
            assert_eq!(
                header(h, "content-length"),
                Some(body.len().to_string().as_str()),
                "{h}"
            );
        }
        assert_eq!(again, kept, "{coding}: a hit is the kept answer's bytes");
        assert!(kept.len() < original.len() / 4, "{coding}");
        assert_eq!(decode(coding, &again), original.as_bytes(), "{coding}");
        let stats = cache.stats();
        assert_eq!(
            (stats.firsts, stats.misses, stats.hits),
            (n + 1, n + 1, n + 1)
        );
    }
    // The same page without a coding: as it is, and not counted.
    let (head, body) = get_raw(addr, "/page", &[]).await;
    assert_eq!(header(&head, "content-encoding"), None);
    assert_eq!(body, original.as_bytes());
    let stats = cache.stats();
    assert_eq!(stats.hits + stats.misses + stats.firsts, 9);
    assert_eq!((stats.entries, stats.seen), (3, 0));
}

/// A page that differs on every request (a token, a nonce, the time):
/// compressed fast every time, kept never, and the hashes remembered
/// stay within their bound.
#[tokio::test]
async fn a_page_that_differs_on_every_request_is_never_kept() {
    let cache = CompressionCache::bytes(1 << 20);
    let addr = serve(cache.clone()).await;
    for n in 0..100 {
        let (head, body) = get_raw(
            addr,
            &format!("/distinct/{n}"),
            &[("accept-encoding", "br")],
        )
        .await;
        assert_eq!(header(&head, "content-encoding"), Some("br"), "{head}");
        let expected = format!("{n:08}{}", page(100, 0));
        assert_eq!(decode("br", &body), expected.as_bytes(), "page {n}");
    }
    let stats = cache.stats();
    assert_eq!(
        (
            stats.firsts,
            stats.misses,
            stats.hits,
            stats.entries,
            stats.bytes
        ),
        (100, 0, 0, 0, 0),
        "{stats:?}"
    );
    assert!(stats.seen > 0 && stats.seen <= 100, "{stats:?}");
    assert!(stats.seen <= SEEN_ONCE_SLOTS);
}

#[tokio::test]
async fn bodies_of_the_same_length_never_get_each_others_bytes() {
    let cache = CompressionCache::bytes(1 << 20);
    let addr = serve(cache.clone()).await;
    // Seen once, seen twice (kept), sent from the cache.
    for round in 0..3 {
        for n in 0..5u8 {
            let (_, body) =
                get_raw(addr, &format!("/variant/{n}"), &[("accept-encoding", "br")]).await;
            assert_eq!(
                decode("br", &body),
                page(400, n).as_bytes(),
                "variant {n}, round {round}"
            );
        }
    }
    let stats = cache.stats();
    assert_eq!(
        (stats.firsts, stats.misses, stats.hits, stats.entries),
        (5, 5, 5, 5)
    );
}

#[tokio::test]
async fn the_bound_holds_and_the_oldest_goes_first() {
    // Each distinct page: 5,134 bytes and about 200 compressed.
    let bound = 30_000;
    let cache = CompressionCache::bytes(bound);
    let addr = serve(cache.clone()).await;
    // Each page twice, so that it is kept.
    for n in 0..20 {
        for _ in 0..2 {
            let (_, body) = get_raw(
                addr,
                &format!("/distinct/{n}"),
                &[("accept-encoding", "gzip")],
            )
            .await;
            assert!(decode("gzip", &body).starts_with(format!("{n:08}").as_bytes()));
            assert!(cache.stats().bytes <= bound, "{:?}", cache.stats());
        }
    }
    let stats = cache.stats();
    assert!(stats.entries >= 4 && stats.entries < 20, "{stats:?}");
    assert_eq!((stats.firsts, stats.misses), (20, 20));
    // The newest is still there, the first is gone (and must be seen
    // twice again to come back).
    get_raw(addr, "/distinct/19", &[("accept-encoding", "gzip")]).await;
    assert_eq!(cache.stats().hits, 1);
    get_raw(addr, "/distinct/0", &[("accept-encoding", "gzip")]).await;
    let stats = cache.stats();
    assert_eq!((stats.hits, stats.misses, stats.firsts), (1, 20, 21));
}

/// A static file from the cache: its strong `ETag` made weak, as the
/// layer does, and revalidation with it a `304`.
#[tokio::test]
async fn a_cached_file_carries_a_weak_etag_and_still_revalidates() {
    let cache = CompressionCache::bytes(1 << 20);
    let addr = serve(cache.clone()).await;
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/assets/long.txt"
    ))
    .unwrap();
    let (plain, _) = get_raw(addr, "/static/long.txt", &[]).await;
    let strong = header(&plain, "etag").unwrap().to_owned();
    assert!(strong.starts_with('"'), "{plain}");
    for _ in 0..3 {
        let (head, body) = get_raw(addr, "/static/long.txt", &[("accept-encoding", "br")]).await;
        assert_eq!(header(&head, "content-encoding"), Some("br"), "{head}");
        assert_eq!(header(&head, "etag"), Some(format!("w/{strong}").as_str()));
        assert_eq!(header(&head, "accept-ranges"), None, "{head}");
        assert_eq!(decode("br", &body), text);
    }
    let stats = cache.stats();
    assert_eq!((stats.firsts, stats.misses, stats.hits), (1, 1, 1));
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
}

#[tokio::test]
async fn small_huge_and_streamed_bodies_are_left_to_the_layer() {
    let cache = CompressionCache::bytes(8 << 20);
    let addr = serve(cache.clone()).await;
    // Under the floor: not compressed, not counted.
    let (head, body) = get_raw(addr, "/small", &[("accept-encoding", "br")]).await;
    assert_eq!(header(&head, "content-encoding"), None, "{head}");
    assert_eq!(body, b"short text");
    // Over 256 KiB: compressed as it streams, without a length.
    let (head, body) = get_raw(addr, "/huge", &[("accept-encoding", "gzip")]).await;
    assert_eq!(header(&head, "content-encoding"), Some("gzip"), "{head}");
    assert_eq!(header(&head, "content-length"), None, "{head}");
    assert_eq!(decode("gzip", &body), huge().as_bytes());
    // A stream: compressed as it streams, as before the cache.
    let (head, body) = get_raw(addr, "/stream", &[("accept-encoding", "zstd")]).await;
    assert_eq!(header(&head, "content-encoding"), Some("zstd"), "{head}");
    assert_eq!(header(&head, "content-length"), None, "{head}");
    assert_eq!(header(&head, "vary"), Some("accept-encoding"), "{head}");
    let expected: String = (0..200)
        .map(|i| format!("line {i} of a streamed text body\n"))
        .collect();
    assert_eq!(decode("zstd", &body), expected.as_bytes());
    let stats = cache.stats();
    assert_eq!(
        (
            stats.hits,
            stats.misses,
            stats.firsts,
            stats.bypasses,
            stats.entries
        ),
        (0, 0, 0, 2, 0)
    );
}

#[tokio::test]
async fn sixty_four_requests_at_once_all_get_the_right_bytes() {
    let cache = CompressionCache::bytes(1 << 20);
    let addr = serve(cache.clone()).await;
    let original = page(400, 0);
    let all_at_once = || async {
        let tasks: Vec<_> = (0..64)
            .map(|i| {
                let coding = ["br", "gzip", "zstd", "gzip, deflate, br, zstd"][i % 4];
                tokio::spawn(async move {
                    let (head, body) = get_raw(addr, "/page", &[("accept-encoding", coding)]).await;
                    (header(&head, "content-encoding").unwrap().to_owned(), body)
                })
            })
            .collect();
        let mut by_coding = std::collections::HashMap::<String, Vec<Vec<u8>>>::new();
        for task in tasks {
            let (coding, body) = task.await.unwrap();
            assert_eq!(decode(&coding, &body), original.as_bytes(), "{coding}");
            let seen = by_coding.entry(coding).or_default();
            if !seen.contains(&body) {
                seen.push(body);
            }
        }
        by_coding
    };
    // Cold: first sightings (fast) and misses (kept) race; each answer
    // in a coding is one of those two compressions, whoever made it.
    for (coding, bodies) in all_at_once().await {
        assert!(
            bodies.len() <= 2,
            "{coding}: {} distinct answers",
            bodies.len()
        );
    }
    let stats = cache.stats();
    assert_eq!(stats.hits + stats.misses + stats.firsts, 64, "{stats:?}");
    assert!(stats.firsts >= 3 && stats.misses >= 3, "{stats:?}");
    assert_eq!(stats.entries, 3);
    // Warm: every answer in a coding is the kept bytes.
    for (coding, bodies) in all_at_once().await {
        assert_eq!(bodies.len(), 1, "{coding}");
    }
    assert_eq!(cache.stats().hits - stats.hits, 64);
}

/// `/metrics` of a server running `install`, with `settings`.
async fn metrics_after_three_pages(settings: &[(&str, &str)]) -> (String, String) {
    let mut all = vec![("TERN_METRICS", "on")];
    all.extend_from_slice(settings);
    let config = Config::from_settings(all).unwrap();
    let app = tern_site::compression::install(app());
    let addr = common::serve_with(app, config).await;
    let mut head = String::new();
    for _ in 0..3 {
        head = get_raw(addr, "/page", &[("accept-encoding", "br")]).await.0;
    }
    let (_, metrics) = get_raw(addr, "/metrics", &[]).await;
    (head, String::from_utf8(metrics).unwrap())
}

#[tokio::test]
async fn the_setting_sizes_the_cache_and_zero_turns_it_off() {
    let (head, metrics) = metrics_after_three_pages(&[]).await;
    assert!(header(&head, "content-length").is_some(), "{head}");
    for line in [
        "tern_site_compression_cache_total{result=\"hit\"} 1",
        "tern_site_compression_cache_total{result=\"miss\"} 1",
        "tern_site_compression_cache_total{result=\"first\"} 1",
        "tern_site_compression_cache_total{result=\"bypass\"} 0",
        "tern_site_compression_cache_entries 1",
    ] {
        assert!(metrics.contains(line), "{line}\n{metrics}");
    }

    let (head, metrics) = metrics_after_three_pages(&[("SITE_COMPRESSION_CACHE", "0")]).await;
    // Compressed by the layer as it streams: no length.
    assert_eq!(header(&head, "content-encoding"), Some("br"), "{head}");
    assert_eq!(header(&head, "content-length"), None, "{head}");
    for line in [
        "tern_site_compression_cache_total{result=\"hit\"} 0",
        "tern_site_compression_cache_total{result=\"miss\"} 0",
        "tern_site_compression_cache_total{result=\"first\"} 0",
        "tern_site_compression_cache_entries 0",
    ] {
        assert!(metrics.contains(line), "{line}\n{metrics}");
    }

    // A bound too small for the page: compressed fast every time, kept
    // never.
    let (_, metrics) = metrics_after_three_pages(&[("SITE_COMPRESSION_CACHE", "1000")]).await;
    for line in [
        "tern_site_compression_cache_total{result=\"first\"} 3",
        "tern_site_compression_cache_total{result=\"miss\"} 0",
    ] {
        assert!(metrics.contains(line), "{line}\n{metrics}");
    }

    // A value that is not a number stops the start, naming the variable.
    let config = Config::from_settings([("SITE_COMPRESSION_CACHE", "8 MiB")]).unwrap();
    let err = tern_site::compression::install(app())
        .build_with(config)
        .unwrap_err()
        .to_string();
    assert!(err.contains("SITE_COMPRESSION_CACHE"), "{err}");
}
