//! Static files over a real socket: every rule of `tern_site::files`,
//! from a directory and embedded, and every spelling of a way out of the
//! root refused.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

use common::{exchange, serve};
use tern::App;
use tern_site::StaticFiles;

mod common;

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One request on a new connection; the whole answer.
async fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> Answer {
    let (head, body) = exchange(addr, &common::head(method, path, "HTTP/1.1", headers)).await;
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (k, v) = l.split_once(':').unwrap();
            (k.to_ascii_lowercase(), v.trim().to_owned())
        })
        .collect();
    Answer {
        status,
        headers,
        body,
    }
}

async fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Answer {
    request(addr, "GET", path, headers).await
}

async fn serve_files(files: &StaticFiles) -> SocketAddr {
    serve(
        App::new()
            .route(&files.pattern(), files.service())
            .route("/page", files.file("sub/page.html")),
    )
    .await
}

/// A root with files, a secret beside it, links in and out.
struct Tree {
    _dir: TempDir,
    root: PathBuf,
    big: Vec<u8>,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tree() -> Tree {
    let base = std::env::temp_dir().join(format!(
        "tern-site-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let root = base.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let w = |p: &str, b: &[u8]| std::fs::write(root.join(p), b).unwrap();
    w("app.css", b"body { color: #123456 }\n");
    w("app.css.br", b"BROTLI BYTES");
    w("app.css.gz", b"GZIP BYTES");
    w("sub/page.html", b"<p>hi</p>");
    w(".env", b"SECRET_KEY=nope");
    w("caf\u{e9}.txt", b"coffee");
    w("logo.png", b"\x89PNG not really");
    w("logo.png.br", b"never sent: images are compressed");
    let big: Vec<u8> = (0..200 * 1024u32).map(|i| (i * 7 % 251) as u8).collect();
    w("big.bin", &big);
    std::fs::write(base.join("secret.txt"), b"TOP SECRET").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(base.join("secret.txt"), root.join("escape.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("app.css"), root.join("inside.css")).unwrap();
        std::os::unix::fs::symlink(&base, root.join("up")).unwrap();
    }
    Tree {
        _dir: TempDir(base),
        root,
        big,
    }
}

#[tokio::test]
async fn a_file_with_its_validators_and_a_304_for_each() {
    let t = tree();
    let files = StaticFiles::dir(&t.root).unwrap();
    let addr = serve_files(&files).await;

    let a = get(addr, "/static/app.css", &[]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body, b"body { color: #123456 }\n");
    assert_eq!(a.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(a.header("content-length"), Some("24"));
    assert_eq!(a.header("accept-ranges"), Some("bytes"));
    assert_eq!(a.header("cache-control"), Some("no-cache"));
    assert_eq!(a.header("vary"), Some("accept-encoding"));
    let etag = a.header("etag").unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.len() == 34, "{etag}");
    let modified = a.header("last-modified").unwrap().to_owned();
    assert!(modified.ends_with(" GMT"));

    // The same content gives the same ETag (strong: from the content).
    assert_eq!(
        get(addr, "/static/app.css", &[]).await.header("etag"),
        Some(&*etag)
    );

    let listed = format!("\"other\", {etag}");
    for headers in [
        vec![("if-none-match", etag.as_str())],
        vec![("if-none-match", listed.as_str())],
        vec![("if-none-match", "*")],
        vec![("if-modified-since", modified.as_str())],
    ] {
        let a = get(addr, "/static/app.css", &headers).await;
        assert_eq!(a.status, 304, "{headers:?}");
        assert!(a.body.is_empty());
        assert_eq!(a.header("etag"), Some(&*etag));
        assert_eq!(a.header("cache-control"), Some("no-cache"));
    }
    let weak = format!("W/{etag}");
    assert_eq!(
        get(addr, "/static/app.css", &[("if-none-match", &weak)])
            .await
            .status,
        304
    );
    // Changed since, or a different tag: the file.
    let old = httpdate::fmt_http_date(std::time::SystemTime::now() - Duration::from_secs(86_400));
    assert_eq!(
        get(addr, "/static/app.css", &[("if-modified-since", &old)])
            .await
            .status,
        200
    );
    assert_eq!(
        get(addr, "/static/app.css", &[("if-none-match", "\"x\"")])
            .await
            .status,
        200
    );
    // If-None-Match decides alone when both are there.
    let a = get(
        addr,
        "/static/app.css",
        &[("if-none-match", "\"x\""), ("if-modified-since", &modified)],
    )
    .await;
    assert_eq!(a.status, 200);
    // If-Match and If-Unmodified-Since.
    let a = get(addr, "/static/app.css", &[("if-match", "\"x\"")]).await;
    assert_eq!(a.status, 412);
    assert_eq!(a.header("content-type"), Some("application/problem+json"));
    assert_eq!(
        get(addr, "/static/app.css", &[("if-match", &etag)])
            .await
            .status,
        200
    );
    assert_eq!(
        get(addr, "/static/app.css", &[("if-unmodified-since", &old)])
            .await
            .status,
        412
    );

    // HEAD: the headers of GET, no body.
    let h = request(addr, "HEAD", "/static/big.bin", &[]).await;
    assert_eq!(h.status, 200);
    assert_eq!(h.header("content-length"), Some("204800"));
    assert!(h.body.is_empty());
    assert_eq!(h.header("content-type"), Some("application/octet-stream"));
    // Other methods: 405.
    let p = request(addr, "POST", "/static/app.css", &[("content-length", "0")]).await;
    assert_eq!(p.status, 405);

    // Types by name; a name in UTF-8.
    assert_eq!(
        get(addr, "/static/sub/page.html", &[])
            .await
            .header("content-type"),
        Some("text/html; charset=utf-8")
    );
    // One file at a route of its own.
    let page = get(addr, "/page", &[]).await;
    assert_eq!((page.status, &page.body[..]), (200, &b"<p>hi</p>"[..]));
    assert!(page.header("etag").is_some());
    let cafe = get(addr, "/static/caf%C3%A9.txt", &[]).await;
    assert_eq!((cafe.status, &cafe.body[..]), (200, &b"coffee"[..]));

    // A change on disk shows at once, with a new ETag.
    std::fs::write(t.root.join("app.css"), b"body { color: red }\n").unwrap();
    let a = get(addr, "/static/app.css", &[("if-none-match", &etag)]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body, b"body { color: red }\n");
    assert_ne!(a.header("etag"), Some(&*etag));
}

#[tokio::test]
async fn ranges_whole_parts_past_the_end_and_if_range() {
    let t = tree();
    let files = StaticFiles::dir(&t.root).unwrap();
    let addr = serve_files(&files).await;
    let len = t.big.len();
    let full = get(addr, "/static/big.bin", &[]).await;
    assert_eq!(full.body, t.big);
    let etag = full.header("etag").unwrap().to_owned();
    let modified = full.header("last-modified").unwrap().to_owned();

    for (range, start, end) in [
        ("bytes=0-9", 0, 10),
        ("bytes=65530-65545", 65530, 65546),
        ("bytes=100000-", 100000, len),
        ("bytes=-10", len - 10, len),
        ("bytes=-999999", 0, len),
        ("bytes=204799-204799", len - 1, len),
        ("bytes=204700-999999", 204700, len),
    ] {
        let a = get(addr, "/static/big.bin", &[("range", range)]).await;
        assert_eq!(a.status, 206, "{range}");
        assert_eq!(a.body, &t.big[start..end], "{range}");
        assert_eq!(
            a.header("content-range"),
            Some(format!("bytes {start}-{}/{len}", end - 1).as_str()),
            "{range}"
        );
        assert_eq!(
            a.header("content-length"),
            Some((end - start).to_string().as_str())
        );
    }
    // Small files are served from memory: the same rules.
    let a = get(addr, "/static/app.css", &[("range", "bytes=5-9")]).await;
    assert_eq!((a.status, &a.body[..]), (206, &b"{ col"[..]));

    for range in ["bytes=204800-", "bytes=999999-1000000", "bytes=-0"] {
        let a = get(addr, "/static/big.bin", &[("range", range)]).await;
        assert_eq!(a.status, 416, "{range}");
        assert_eq!(a.header("content-range"), Some("bytes */204800"));
    }
    // Ignored: several ranges, other units, nonsense.
    for range in ["bytes=0-1,5-6", "items=0-1", "bytes=9-1", "bytes=a-b"] {
        let a = get(addr, "/static/big.bin", &[("range", range)]).await;
        assert_eq!((a.status, a.body.len()), (200, len), "{range}");
    }
    // If-Range: a current validator gives the part, an old one the whole.
    for (cond, status) in [
        (etag.as_str(), 206),
        ("\"stale\"", 200),
        (modified.as_str(), 206),
        ("Mon, 01 Jan 2001 00:00:00 GMT", 200),
    ] {
        let a = get(
            addr,
            "/static/big.bin",
            &[("range", "bytes=0-0"), ("if-range", cond)],
        )
        .await;
        assert_eq!(a.status, status, "{cond}");
    }
    let weak = format!("W/{etag}");
    let a = get(
        addr,
        "/static/big.bin",
        &[("range", "bytes=0-0"), ("if-range", &weak)],
    )
    .await;
    assert_eq!(a.status, 200);
}

#[tokio::test]
async fn precompressed_siblings_by_accept_encoding() {
    let t = tree();
    let files = StaticFiles::dir(&t.root).unwrap();
    let addr = serve_files(&files).await;
    for (accept, body, coding) in [
        ("gzip, deflate, br, zstd", &b"BROTLI BYTES"[..], Some("br")),
        ("gzip", b"GZIP BYTES", Some("gzip")),
        ("br;q=0, gzip", b"GZIP BYTES", Some("gzip")),
        // No .zst sibling: the next accepted one.
        ("zstd, gzip;q=0.5", b"GZIP BYTES", Some("gzip")),
        // Read as every Tern crate reads `Accept*` (`tern::accept`):
        // `Q` is `q`, a malformed weight drops its coding, and a quoted
        // comma splits nothing (before, it cut the weight off `br`).
        ("br;Q=0.5, gzip", b"GZIP BYTES", Some("gzip")),
        ("br;q=1.5, gzip;q=0.5", b"GZIP BYTES", Some("gzip")),
        (r#"br;x="a,b";q=0.1, gzip"#, b"GZIP BYTES", Some("gzip")),
        ("identity", b"body { color: #123456 }\n", None),
        ("", b"body { color: #123456 }\n", None),
    ] {
        let a = get(addr, "/static/app.css", &[("accept-encoding", accept)]).await;
        assert_eq!(a.status, 200, "{accept}");
        assert_eq!(a.body, body, "{accept}");
        assert_eq!(a.header("content-encoding"), coding, "{accept}");
        assert_eq!(a.header("vary"), Some("accept-encoding"));
        assert_eq!(a.header("content-type"), Some("text/css; charset=utf-8"));
    }
    // Each variant has its own ETag; its 304 works.
    let br = get(addr, "/static/app.css", &[("accept-encoding", "br")]).await;
    let plain = get(addr, "/static/app.css", &[]).await;
    assert_ne!(br.header("etag"), plain.header("etag"));
    let tag = br.header("etag").unwrap();
    let a = get(
        addr,
        "/static/app.css",
        &[("accept-encoding", "br"), ("if-none-match", tag)],
    )
    .await;
    assert_eq!(a.status, 304);
    // A range is of the identity representation.
    let a = get(
        addr,
        "/static/app.css",
        &[("accept-encoding", "br"), ("range", "bytes=0-3")],
    )
    .await;
    assert_eq!((a.status, &a.body[..]), (206, &b"body"[..]));
    assert_eq!(a.header("content-encoding"), None);
    // Already-compressed types are never sent compressed.
    let a = get(addr, "/static/logo.png", &[("accept-encoding", "br")]).await;
    assert_eq!(a.body, b"\x89PNG not really");
    assert_eq!(a.header("vary"), None);
    assert_eq!(a.header("content-type"), Some("image/png"));
}

#[tokio::test]
async fn fingerprinted_urls_are_immutable_and_change_with_the_content() {
    let t = tree();
    let files = StaticFiles::dir(&t.root).unwrap();
    let addr = serve_files(&files).await;
    let url = files.url("app.css");
    let print = url
        .strip_prefix("/static/app.")
        .and_then(|r| r.strip_suffix(".css"))
        .unwrap();
    assert_eq!(print.len(), 10);
    let a = get(addr, &url, &[]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body, b"body { color: #123456 }\n");
    assert_eq!(
        a.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(a.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(
        get(addr, "/static/app.0123456789.css", &[]).await.status,
        404
    );
    assert_eq!(
        files.url("/sub/page.html").len(),
        "/static/sub/page.0123456789.html".len()
    );
    assert_eq!(files.url("missing.css"), "/static/missing.css");

    std::fs::write(t.root.join("app.css"), b"body { color: blue }\n").unwrap();
    let new = files.url("app.css");
    assert_ne!(new, url);
    assert_eq!(get(addr, &url, &[]).await.status, 404);
    assert_eq!(get(addr, &new, &[]).await.body, b"body { color: blue }\n");
}

#[tokio::test]
async fn no_way_out_of_the_root() {
    let t = tree();
    let files = StaticFiles::dir(&t.root).unwrap();
    let addr = serve_files(&files).await;
    let table: &[(&str, u16)] = &[
        ("/static/../secret.txt", 400),
        ("/static/sub/../../secret.txt", 400),
        ("/static/%2e%2e/secret.txt", 400),
        ("/static/%2E%2E/secret.txt", 400),
        ("/static/.%2e/secret.txt", 400),
        ("/static/..%2fsecret.txt", 400),
        ("/static/..%2Fsecret.txt", 400),
        ("/static/..%5csecret.txt", 400),
        ("/static/..%5Csecret.txt", 400),
        ("/static/..\\secret.txt", 400),
        ("/static/sub%2f..%2f..%2fsecret.txt", 400),
        ("/static/app.css%00", 400),
        ("/static/%00", 400),
        ("/static/%2fetc%2fpasswd", 400),
        ("/static//etc/passwd", 404),
        ("/static///secret.txt", 404),
        ("/static/C:%5csecret.txt", 400),
        ("/static/%c0%ae%c0%ae/secret.txt", 400),
        ("/static/.../secret.txt", 400),
        ("/static/a%zz", 400),
        ("/static/escape.txt", 404),
        ("/static/up/secret.txt", 404),
        ("/static/.env", 404),
        ("/static/%2eenv", 404),
        ("/static/sub", 404),
        ("/static/sub/", 400),
        ("/static/nothing.txt", 404),
        ("/static/inside.css", 200),
    ];
    for &(path, status) in table {
        let a = get(addr, path, &[]).await;
        let body = String::from_utf8_lossy(&a.body);
        assert!(
            !body.contains("TOP SECRET") && !body.contains("SECRET_KEY"),
            "{path}: {body}"
        );
        // Empty segments never reach the service: the router's globs do
        // not match them (404).
        assert_eq!(a.status, status, "{path}: {body}");
        if status == 400 {
            assert_eq!(
                a.header("content-type"),
                Some("application/problem+json"),
                "{path}"
            );
        }
    }
    // Absolute-form and other spellings never reach a file outside either.
    let a = get(addr, "/static/%2Fetc%2Fhostname", &[]).await;
    assert_eq!(a.status, 400);
    assert!(StaticFiles::dir(t.root.join("missing"))
        .unwrap_err()
        .to_string()
        .contains("missing"));
}

#[derive(rust_embed::RustEmbed)]
#[folder = "tests/assets/"]
struct Assets;

#[tokio::test]
async fn embedded_files_follow_the_same_rules() {
    let files = StaticFiles::embedded::<Assets>().mount("/assets");
    let addr = serve_files(&files).await;
    let on_disk =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/assets/hello.txt"))
            .unwrap();
    let a = get(addr, "/assets/hello.txt", &[]).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body, on_disk);
    assert_eq!(a.header("content-type"), Some("text/plain; charset=utf-8"));
    let etag = a.header("etag").unwrap();
    assert_eq!(
        get(addr, "/assets/hello.txt", &[("if-none-match", etag)])
            .await
            .status,
        304
    );
    let a = get(addr, "/assets/hello.txt", &[("range", "bytes=0-4")]).await;
    assert_eq!((a.status, &a.body[..]), (206, &on_disk[..5]));
    let url = files.url("hello.txt");
    assert!(
        url.starts_with("/assets/hello.") && url.ends_with(".txt"),
        "{url}"
    );
    let a = get(addr, &url, &[]).await;
    assert_eq!(
        a.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(get(addr, "/assets/../Cargo.toml", &[]).await.status, 400);
    assert_eq!(get(addr, "/assets/nothing", &[]).await.status, 404);
    assert_eq!(get(addr, "/static/hello.txt", &[]).await.status, 404);
}
