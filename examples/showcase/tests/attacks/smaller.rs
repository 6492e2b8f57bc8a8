//! The login page without scripts (item 5) and a NUL in a note (item 6),
//! on the production showcase.

use super::harness::*;

fn form_post(s: &Showcase, path: &str, cookie: Option<&str>, body: &str) -> String {
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    s.raw(&format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Origin: http://127.0.0.1:{port}\r\nReferer: http://127.0.0.1:{port}/login\r\n\
         Accept: text/html,application/xhtml+xml,*/*;q=0.8\r\n{cookie}\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len(),
        port = s.port,
    ))
}

fn get(s: &Showcase, path: &str, cookie: Option<&str>) -> String {
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    s.raw(&format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Accept: text/html\r\n{cookie}\r\n"
    ))
}

/// Under the production CSP the login page had an inline script and a
/// `<form>` without `method`: the browser sent `GET /login?password=...`.
/// Now the form posts, the account routes answer a browser's form with a
/// redirect, and the logout is a form too.
#[test]
fn the_login_page_works_without_scripts_and_never_puts_the_password_in_a_url() {
    let s = Showcase::production("login-form", &[]);
    let page = get(&s, "/login", None);
    assert_eq!(status(&page), 200, "{page}");
    let csp = header(&page, "content-security-policy").unwrap();
    assert!(csp.starts_with("default-src 'self'"), "{csp}");
    let html = body(&page);
    assert!(
        html.contains(r#"<form id="login" method="post" action="/auth/login?next=/notes">"#),
        "{html}"
    );
    assert!(
        !html.contains("<script") && !html.contains("<style"),
        "{html}"
    );

    // A wrong password: back to the form with a fixed word, the
    // password nowhere in the answer.
    let wrong = form_post(
        &s,
        "/auth/login?next=/notes",
        None,
        "username=admin&password=hunter2hunter2",
    );
    assert_eq!(status(&wrong), 303, "{wrong}");
    assert_eq!(
        header(&wrong, "location"),
        Some("/login?error=invalid&next=%2Fnotes")
    );
    assert!(!wrong.contains("hunter2"));
    let shown = get(&s, "/login?error=invalid", None);
    assert!(body(&shown).contains("wrong username or password"));
    // Only the fixed words are shown.
    let other = get(&s, "/login?error=%3Cb%3Eowned", None);
    assert!(!body(&other).contains("owned"), "{other}");

    // The right one: to `next`, with the session cookie.
    let ok = form_post(
        &s,
        "/auth/login?next=/notes",
        None,
        &format!("username=admin&password={}", form_encode(ADMIN_PASSWORD)),
    );
    assert_eq!(status(&ok), 303, "{ok}");
    assert_eq!(header(&ok, "location"), Some("/notes"));
    let session = cookie(&ok, "tern_session").expect("a session cookie");
    // `next` off this site is ignored.
    let away = form_post(
        &s,
        "/auth/login?next=//evil.example/",
        None,
        &format!("username=admin&password={}", form_encode(ADMIN_PASSWORD)),
    );
    assert_eq!(header(&away, "location"), Some("/"), "{away}");

    // The notes page: no script; the logout is a form with the token.
    let notes = get(&s, "/notes", Some(&session));
    let html = body(&notes);
    assert!(html.contains("Logged in as <b>admin</b>"), "{html}");
    assert!(
        !html.contains("<script") && !html.contains("<style"),
        "{html}"
    );
    let csrf = html
        .split(r#"name="csrf_token" value=""#)
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .to_owned();
    assert!(html.contains(
        r#"<form id="logout" class="inline" method="post" action="/auth/logout?next=/notes">"#
    ));
    // Without its token the logout is refused (403), with it: to `next`.
    let refused = form_post(&s, "/auth/logout?next=/notes", Some(&session), "");
    assert_eq!(status(&refused), 403, "{refused}");
    let out = form_post(
        &s,
        "/auth/logout?next=/notes",
        Some(&session),
        &format!("csrf_token={}", form_encode(&csrf)),
    );
    assert_eq!(status(&out), 303, "{out}");
    assert_eq!(header(&out, "location"), Some("/notes"));
    let after = s.raw(&format!(
        "GET /auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nCookie: {session}\r\n\r\n"
    ));
    assert_eq!(status(&after), 401, "{after}");

    // Scripts still get JSON.
    let (status_json, _) = s.login("admin", ADMIN_PASSWORD);
    assert_eq!(status_json, 200);

    // The chat page: its script and stylesheet are files of the site.
    let chat = get(&s, "/chat", None);
    let html = body(&chat);
    assert!(!html.contains("<style"), "{html}");
    let script = html
        .split("<script src=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .expect("a script file");
    let js = get(&s, script, None);
    assert_eq!(status(&js), 200, "{js}");
    assert!(body(&js).contains("WebSocket"));
}

/// A NUL character in a note: PostgreSQL's text refused it (a 500, an
/// ERROR logged per request), SQLite stored it. Now 422 naming the
/// field, on both.
#[test]
fn a_nul_in_a_note_is_a_422_on_every_backend() {
    let mut backends = vec![None];
    if let Some(url) = fresh_postgres() {
        backends.push(Some(url));
    }
    for url in backends {
        let envs: Vec<(&str, &str)> = url.iter().map(|u| ("DATABASE_URL", u.as_str())).collect();
        let s = Showcase::production("nul", &envs);
        let (st, session) = s.login("admin", ADMIN_PASSWORD);
        assert_eq!(st, 200);
        let session = session.unwrap();
        let page = get(&s, "/notes", Some(&session));
        let csrf = body(&page)
            .split(r#"name="csrf_token" value=""#)
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .to_owned();
        let form = format!("csrf_token={}&text=a%00b", form_encode(&csrf));
        let res = s.raw(&format!(
            "POST /notes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nCookie: {session}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
            form.len(),
        ));
        assert_eq!(status(&res), 422, "{url:?}: {res}");
        assert!(
            body(&res).contains("`text` must not contain a NUL"),
            "{url:?}: {res}"
        );
    }
}
