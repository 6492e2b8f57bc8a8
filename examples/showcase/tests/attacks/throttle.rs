//! The login throttle raced by a parallel burst (item 1), and the CSRF
//! check dodged with a junk bearer token or an `Origin` of another
//! scheme (item 6), on the production showcase.

use super::harness::*;

/// `n` wrong guesses for `admin` at once, spread over `ports` in turn:
/// how many got past the throttle (`401`, or `503` from a full hashing
/// queue: neither is a refusal by the throttle) and how many it refused
/// (`429` with `Retry-After`).
fn burst(ports: &[u16], n: usize) -> (usize, usize) {
    let guesses: Vec<_> = (0..n)
        .map(|i| {
            let port = ports[i % ports.len()];
            std::thread::spawn(move || {
                let body = format!("username=admin&password=guess+number+{i}");
                request(port, &login_form(&body)).unwrap()
            })
        })
        .collect();
    let (mut past, mut refused) = (0, 0);
    for guess in guesses {
        let res = guess.join().unwrap();
        match status(&res) {
            401 | 503 => past += 1,
            429 => {
                assert!(header(&res, "retry-after").is_some(), "{res}");
                refused += 1;
            }
            other => panic!("a guess got {other}: {res}"),
        }
    }
    (past, refused)
}

/// Issue 25, item 1: 150 parallel guesses for `admin` from one address
/// were 149 evaluated (no 429) and the right one logged in. Now at most
/// `AUTH_LOGIN_FAILURES` (10) of 40 get past the throttle, and the right
/// password after them is refused.
#[test]
fn a_parallel_burst_of_guesses_gets_at_most_ten_evaluated() {
    let s = Showcase::production("throttle-burst", &[]);
    let (past, refused) = burst(&[s.port], 40);
    println!("40 parallel guesses: {past} evaluated, {refused} refused (429)");
    assert!(past <= 10, "{past} of 40 parallel guesses were evaluated");
    assert_eq!(past + refused, 40);
    let (code, cookie) = s.login("admin", ADMIN_PASSWORD);
    assert_eq!(code, 429);
    assert!(cookie.is_none());
}

/// The same across two showcase processes sharing their counts in Redis
/// (`AUTH_STORE=redis`; the showcase's `redis` feature).
#[cfg(feature = "redis")]
#[test]
fn a_parallel_burst_across_two_processes_sharing_redis() {
    let Some(redis) = tern::test::service_url("REDIS_URL") else {
        return;
    };
    let prefix = unique("attacks");
    let store = [
        ("AUTH_STORE", "redis"),
        ("AUTH_REDIS_URL", redis.as_str()),
        ("AUTH_REDIS_PREFIX", prefix.as_str()),
        ("AUTH_SESSION_IDLE", "60s"),
    ];
    let a = Showcase::production("throttle-redis-a", &store);
    // The second process on the first one's database (the same admin).
    let database = format!("sqlite://{}/app.db", a.dir.display());
    let mut with_db = store.to_vec();
    with_db.push(("DATABASE_URL", database.as_str()));
    let b = Showcase::production("throttle-redis-b", &with_db);
    let (past, refused) = burst(&[a.port, b.port], 40);
    println!("40 parallel guesses on two processes: {past} evaluated, {refused} refused (429)");
    assert!(past <= 10, "{past} of 40 parallel guesses were evaluated");
    assert_eq!(past + refused, 40);
    for s in [&a, &b] {
        let (code, cookie) = s.login("admin", ADMIN_PASSWORD);
        assert_eq!(code, 429);
        assert!(cookie.is_none());
    }
}

/// The admin's session: its cookie and CSRF token.
fn session(s: &Showcase) -> (String, String) {
    let (code, cookie) = s.login("admin", ADMIN_PASSWORD);
    assert_eq!(code, 200);
    let cookie = cookie.unwrap();
    let res = s.raw(&format!(
        "GET /auth/session HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Cookie: {cookie}\r\n\r\n"
    ));
    assert_eq!(status(&res), 200, "{res}");
    let json: serde_json::Value = serde_json::from_str(body(&res)).unwrap();
    (cookie, json["csrf_token"].as_str().unwrap().to_owned())
}

/// `POST /notes` with a note, as the session `cookie`, with `extra`
/// header lines (each ending in CRLF).
fn post_note(s: &Showcase, cookie: &str, extra: &str, text: &str) -> String {
    let body = format!("text={}", form_encode(text));
    s.raw(&format!(
        "POST /notes HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Cookie: {cookie}\r\n{extra}\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len(),
        port = s.port,
    ))
}

fn notes(s: &Showcase, cookie: &str) -> String {
    s.raw(&format!(
        "GET /notes HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Accept: text/html\r\nCookie: {cookie}\r\n\r\n"
    ))
}

/// Issue 25, item 6: `Authorization: Bearer junk` with a session cookie
/// skipped the CSRF check and created a note. Now the session's request
/// needs the session's token, bearer or not.
#[test]
fn a_junk_bearer_token_does_not_dodge_the_csrf_check() {
    let s = Showcase::production("csrf-bearer", &[]);
    let (cookie, token) = session(&s);
    let dodged = post_note(
        &s,
        &cookie,
        "Authorization: Bearer junk\r\n",
        "bearer-dodge-1",
    );
    assert_eq!(status(&dodged), 403, "{dodged}");
    assert!(body(&dodged).contains("no CSRF token"), "{dodged}");
    assert!(!notes(&s, &cookie).contains("bearer-dodge-1"));
    // With the token it is the session's own request.
    let ok = post_note(
        &s,
        &cookie,
        &format!("Authorization: Bearer junk\r\nX-CSRF-Token: {token}\r\n"),
        "bearer-with-token",
    );
    assert_eq!(status(&ok), 303, "{ok}");
    assert!(notes(&s, &cookie).contains("bearer-with-token"));
}

/// Issue 25, item 6: `Origin: https://127.0.0.1:PORT` passed on the
/// plain-HTTP server. Scheme, host and port are compared now; a trusted
/// proxy's `X-Forwarded-Proto` is believed (loopback is trusted by
/// default), an untrusted peer's is not (the process's own
/// `TRUSTED_PROXIES`, recorded at start).
#[test]
fn an_origin_of_another_scheme_is_refused() {
    let s = Showcase::production("csrf-origin", &[]);
    let (cookie, token) = session(&s);
    let port = s.port;
    let with = |lines: &str| format!("X-CSRF-Token: {token}\r\n{lines}");
    for (lines, expected) in [
        (format!("Origin: http://127.0.0.1:{port}\r\n"), 303),
        (format!("Origin: https://127.0.0.1:{port}\r\n"), 403),
        (format!("Referer: https://127.0.0.1:{port}/notes\r\n"), 403),
        (format!("Origin: http://127.0.0.1:{}\r\n", port + 1), 403),
        (
            format!("Origin: http://127.0.0.1:{port}@evil.example\r\n"),
            403,
        ),
        (
            format!("X-Forwarded-Proto: https\r\nOrigin: https://127.0.0.1:{port}\r\n"),
            303,
        ),
    ] {
        let res = post_note(&s, &cookie, &with(&lines), "from an origin");
        assert_eq!(status(&res), expected, "{lines}: {res}");
        if expected == 403 {
            assert!(body(&res).contains("another site"), "{res}");
        }
    }

    // A process whose only trusted proxies are elsewhere: a loopback
    // client's `X-Forwarded-Proto` is not believed.
    let elsewhere =
        Showcase::production("csrf-origin-proxies", &[("TRUSTED_PROXIES", "10.0.0.0/8")]);
    let (cookie, token) = session(&elsewhere);
    let res = post_note(
        &elsewhere,
        &cookie,
        &format!(
            "X-CSRF-Token: {token}\r\nX-Forwarded-Proto: https\r\nOrigin: https://127.0.0.1:{}\r\n",
            elsewhere.port
        ),
        "through no proxy",
    );
    assert_eq!(status(&res), 403, "{res}");
    assert!(
        body(&res).contains(&format!(
            "not this site's `http://127.0.0.1:{}`",
            elsewhere.port
        )),
        "{res}"
    );
}
