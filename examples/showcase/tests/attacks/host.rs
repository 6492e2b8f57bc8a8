//! Issue 25 item 4 and part of item 6, on the composed showcase in
//! production: junk `Host` spellings, weak `SECRET_KEY`s at start, and
//! request bodies in a content coding.

use super::harness::*;

use std::{io::Read, process::Stdio, time::Duration};

/// `ALLOWED_HOSTS=127.0.0.1,localhost`: each spelling used to pass as
/// the allowed host with a "port" of junk, and the sitemap echoed it.
#[test]
fn junk_hosts_get_400_and_never_reach_the_sitemap() {
    let app = Showcase::production("host", &[]);
    let port = app.port;
    let mut failures = Vec::new();
    for host in [
        format!("127.0.0.1:{port}@evil.example"),
        "127.0.0.1:80/evil".to_owned(),
        "localhost:0@evil.example".to_owned(),
        "localhost:".to_owned(),
        "[::1".to_owned(),
        "localhost:80:80".to_owned(),
        "localhost:abc".to_owned(),
        "user@localhost".to_owned(),
        "local host".to_owned(),
        "localhost%00".to_owned(),
        "localhost:99999".to_owned(),
        "localhost?.evil.example".to_owned(),
    ] {
        for path in ["/sitemap.xml", "/health"] {
            let res = app.raw(&format!(
                "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
            ));
            let ok = status(&res) == 400
                && header(&res, "content-type").is_some_and(|t| t.contains("problem+json"))
                && body(&res).contains("is not a host name with an optional port")
                && !res.contains("<loc>");
            if !ok {
                failures.push(format!("{path} with Host {host:?}: {res}"));
            }
        }
    }
    // The allowed hosts are still served, and the sitemap names them.
    for host in [format!("127.0.0.1:{port}"), "localhost".to_owned()] {
        let res = app.raw(&format!(
            "GET /sitemap.xml HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        ));
        if status(&res) != 200 || !body(&res).contains(&format!("<loc>http://{host}/")) {
            failures.push(format!("allowed host {host}: {res}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The showcase refuses to start in production with a guessable key
/// (both passed the old length-and-deny-list check), names `SECRET_KEY`,
/// says how to make one, and does not print the key.
#[test]
fn guessable_secret_keys_stop_the_showcase() {
    for weak in [
        "my-super-secret-key-for-production-2024",
        "0123456789abcdef0123456789abcdef0123",
    ] {
        let dir = scratch("attacks-secret");
        let mut child = isolated()
            .env("DATABASE_URL", sqlite(&dir))
            .env("TERN_ENV", "production")
            .env("SECRET_KEY", weak)
            .env("ALLOWED_HOSTS", "127.0.0.1,localhost")
            .env("TERN_ADDR", "127.0.0.1:0")
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let Some(status) = exited_within(&mut child, Duration::from_secs(30)) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the showcase started with SECRET_KEY={weak}");
        };
        let mut out = stderr_of(&mut child);
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(!status.success(), "{weak}: {out}");
        assert!(out.contains("SECRET_KEY"), "{weak}: {out}");
        assert!(out.contains("openssl rand"), "{weak}: {out}");
        assert!(!out.contains(weak), "the key is printed: {out}");
    }
}

/// A body in a content coding is not read as if plain: 415 naming the
/// coding, with `Accept-Encoding: identity`, on the app's own forms
/// (before the session and CSRF layers, which never see it).
#[test]
fn content_coded_bodies_get_415() {
    let app = Showcase::production("coding", &[]);
    for path in ["/notes", "/items", "/auth/login"] {
        for coding in ["br", "gzip"] {
            let body = "text=\u{1b}\u{0}compressed";
            let res = app.raw(&format!(
                "POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\nContent-Encoding: {coding}\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            ));
            assert_eq!(status(&res), 415, "{path} {coding}: {res}");
            assert!(
                body_has(&res, &format!("`{coding}`")),
                "{path} {coding}: {res}"
            );
            assert_eq!(header(&res, "accept-encoding"), Some("identity"), "{res}");
        }
    }
}

fn body_has(res: &str, needle: &str) -> bool {
    body(res).contains(needle)
}
