//! Two showcase processes: a COSE message accepted by one is a replay for
//! the other when they share the replay store (Redis,
//! `COSE_REPLAY_STORE`); each process alone sees only its own messages.
//! Behind nginx (round robin, `X-Forwarded-For` trusted), on one
//! PostgreSQL and one Redis (sessions in the database, then with
//! `AUTH_STORE=redis` in Redis), a login on one is a login on the other,
//! logout on one ends it on both, and the login throttle and the rate
//! limit count across both; a note edited in the admin of one is seen,
//! and in the log, on the other. Needs the `redis` feature, `REDIS_URL`,
//! `POSTGRES_URL` and nginx, as `.ci/run` runs it:
//! `cargo test -p showcase --features redis --test processes`.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::{
    net::TcpStream,
    process::{Child, Command, Stdio},
    time::Duration,
};

use base64::Engine as _;
use support::{
    free_port, fresh_postgres, header, isolated, listening, parts, request, request_bytes, scratch,
    sqlite, unique, wait_for, Showcase,
};
use tern_contract::cose::{Keyring, Seal};

fn keys() -> String {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    format!("k1:A256GCM:{}", b64(&[0x5a; 32]))
}

impl Showcase {
    /// A showcase with only `envs` (and a database of its own unless
    /// they name one).
    fn start(envs: &[(&str, &str)]) -> Showcase {
        let dir = scratch("processes");
        let mut command = isolated();
        command
            .env("DATABASE_URL", sqlite(&dir))
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        Showcase::spawn(command, dir)
    }

    /// `POST /items` with a COSE body: the status.
    fn post(&self, body: &[u8]) -> u16 {
        let mut raw = format!(
            "POST /items HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/cose\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        raw.extend_from_slice(body);
        parts(&request_bytes(self.port, &raw).unwrap()).0
    }
}

fn sealed_item(name: &str) -> Vec<u8> {
    let config = tern::Config::from_settings([("COSE_KEYS", keys())]).unwrap();
    let keyring: Keyring = tern::settings::load("cose", &config).unwrap();
    let mut payload = Vec::new();
    ciborium::into_writer(
        &serde_json::json!({"name": name, "qty": 1, "owner": "ada@example.com"}),
        &mut payload,
    )
    .unwrap();
    keyring.seal(Seal::Encrypt0, b"k1", &payload).unwrap()
}

#[test]
fn a_replay_to_another_process_is_refused_with_a_shared_store() {
    let Some(redis) = tern::test::service_url("REDIS_URL") else {
        return;
    };
    let keys = keys();
    let shared = [
        ("COSE_KEYS", keys.as_str()),
        ("COSE_REPLAY_STORE", redis.as_str()),
    ];
    let a = Showcase::start(&shared);
    let b = Showcase::start(&shared);
    // A fresh message per run: the store outlives the test.
    let message = sealed_item(&format!("shared-{}", std::process::id()));
    assert_eq!(a.post(&message), 200);
    assert_eq!(b.post(&message), 401, "the other process took a replay");
    assert_eq!(a.post(&message), 401);
    // A new message is fine on either.
    assert_eq!(b.post(&sealed_item("another")), 200);

    // Without the shared store each process remembers only its own.
    let alone = [("COSE_KEYS", keys.as_str())];
    let c = Showcase::start(&alone);
    let d = Showcase::start(&alone);
    let message = sealed_item("alone");
    assert_eq!(c.post(&message), 200);
    assert_eq!(d.post(&message), 200, "no shared store: d cannot know");
    assert_eq!(c.post(&message), 401);
}

/// One HTTP/1.1 exchange on `port`: the status, the head, the body.
fn exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut raw = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str("\r\n");
    raw.push_str(body);
    let res = request(port, &raw).unwrap();
    (
        support::status(&res),
        support::head(&res).to_owned(),
        support::body(&res).to_owned(),
    )
}

/// nginx in front of `upstreams`, round robin, appending the client to
/// `X-Forwarded-For`; stopped when dropped.
struct Nginx {
    child: Child,
    port: u16,
}

impl Nginx {
    fn start(upstreams: &[u16]) -> Option<Nginx> {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())?;
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("tern-nginx-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let servers: String = upstreams
            .iter()
            .map(|p| format!("    server 127.0.0.1:{p};\n"))
            .collect();
        let d = dir.display();
        let conf = format!(
            "user root;\nworker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
               upstream tern {{\n{servers}  }}\n\
               server {{\n    listen 127.0.0.1:{port};\n\
                 location /chat/socket {{\n      proxy_pass http://tern;\n      proxy_http_version 1.1;\n\
                   proxy_set_header Host $http_host;\n      proxy_set_header Upgrade $http_upgrade;\n\
                   proxy_set_header Connection \"upgrade\";\n      proxy_set_header X-Forwarded-Proto $scheme;\n      proxy_read_timeout 120s;\n    }}\n\
                 location / {{\n\
                   proxy_pass http://tern;\n      proxy_http_version 1.1;\n\
                   proxy_set_header Host $http_host;\n\
                   proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n      proxy_set_header X-Forwarded-Proto $scheme;\n    }}\n  }}\n}}\n"
        );
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let mut child = Command::new(nginx)
            .arg("-c")
            .arg(&path)
            .arg("-p")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for(&mut child, "nginx", Duration::from_secs(10), || {
            listening(port)
        });
        Some(Nginx { child, port })
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: the master stops its workers and exits (a SIGKILL
        // would leave the workers running, serving the port).
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        if support::exited_within(&mut self.child, Duration::from_secs(5)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Sessions and the throttle's counts in the database (the default) and
/// then in Redis (`AUTH_STORE=redis`); the rate limit in Redis. One after
/// the other: both count the same address in the rate limit.
#[test]
fn two_processes_behind_nginx_share_sessions_the_throttle_and_the_rate_limit() {
    // .ci/run sets both.
    let (Some(redis), Some(_)) = (
        tern::test::service_url("REDIS_URL"),
        tern::test::service_url("POSTGRES_URL"),
    ) else {
        return;
    };
    let prefix = unique("processes");
    if !share_state(&redis, &[]) {
        return;
    }
    let in_redis = [
        ("AUTH_STORE", "redis"),
        ("AUTH_REDIS_URL", redis.as_str()),
        ("AUTH_REDIS_PREFIX", prefix.as_str()),
    ];
    share_state(&redis, &in_redis);
}

/// The checks, with `store` added to the processes' settings; false when
/// nginx is missing.
fn share_state(redis: &str, store: &[(&str, &str)]) -> bool {
    let database = fresh_postgres().unwrap();
    let mut shared = vec![
        ("DATABASE_URL", database.as_str()),
        (
            "SECRET_KEY",
            "a-shared-secret-key-for-both-showcase-processes",
        ),
        ("SHOWCASE_REDIS_URL", redis),
        ("SHOWCASE_RATE_LIMIT", "60"),
        ("SHOWCASE_ADMIN_PASSWORD", "two processes, one login"),
        ("AUTH_LOGIN_FAILURES", "3"),
        ("TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
        ("TRUSTED_PROXIES", "127.0.0.1"),
    ];
    shared.extend_from_slice(store);
    // A run less than a minute ago left its counts in Redis.
    let _ = Command::new("redis-cli")
        .args(["-u", redis, "DEL", "tern:rate:showcase:ip:127.0.0.1"])
        .stdout(Stdio::null())
        .status();
    let a = Showcase::start(&shared);
    let b = Showcase::start(&shared);
    let Some(proxy) = Nginx::start(&[a.port, b.port]) else {
        tern::test::skip("nginx is not installed (.ci/run installs it)");
        return false;
    };
    let login = |password: &str, forged: &str| {
        let body = format!(r#"{{"username": "admin", "password": "{password}"}}"#);
        let headers = [
            ("Content-Type", "application/json"),
            ("X-Forwarded-For", forged),
        ];
        exchange(proxy.port, "POST", "/auth/login", &headers, &body)
    };

    // A login through the proxy is a session on both processes.
    let (status, head, body) = login("two processes, one login", "203.0.113.1");
    assert_eq!(status, 200, "{body}");
    let cookie = header(&head, "set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let token: serde_json::Value = serde_json::from_str(&body).unwrap();
    let token = token["csrf_token"].as_str().unwrap().to_owned();
    for port in [a.port, b.port, proxy.port, proxy.port] {
        let (status, _, body) = exchange(port, "GET", "/auth/session", &[("Cookie", &cookie)], "");
        assert_eq!(status, 200, "port {port}: {body}");
    }
    // A WebSocket through the proxy (the README's `location` block): the
    // chat, as the logged-in admin.
    {
        use tokio_tungstenite::tungstenite::{client::IntoClientRequest, Message};
        let mut request = format!("ws://127.0.0.1:{}/chat/socket", proxy.port)
            .into_client_request()
            .unwrap();
        request
            .headers_mut()
            .insert("cookie", cookie.parse().unwrap());
        let stream = TcpStream::connect(("127.0.0.1", proxy.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let (mut ws, res) = tokio_tungstenite::tungstenite::client(request, stream).unwrap();
        assert_eq!(res.status(), 101);
        ws.send(Message::text(r#"{"op":"join","topic":"chat:lobby"}"#))
            .unwrap();
        let joined: serde_json::Value =
            serde_json::from_str(ws.read().unwrap().to_text().unwrap()).unwrap();
        assert_eq!(joined["presence"][0]["name"], "admin", "{joined}");
        ws.close(None).unwrap();
    }
    // With `AUTH_STORE=redis` the session is in Redis, under the prefix.
    if let Some((_, prefix)) = store.iter().find(|(k, _)| *k == "AUTH_REDIS_PREFIX") {
        let keys = Command::new("redis-cli")
            .args(["-u", redis, "--scan", "--pattern", &format!("{prefix}*")])
            .output()
            .unwrap();
        let keys = String::from_utf8_lossy(&keys.stdout);
        assert!(keys.contains("session"), "no session in Redis: {keys}");
    }
    // Logout on one ends it on both.
    let (status, _, _) = exchange(
        a.port,
        "POST",
        "/auth/logout",
        &[("Cookie", &cookie), ("X-CSRF-Token", &token)],
        "",
    );
    assert_eq!(status, 204);
    for port in [a.port, b.port] {
        assert_eq!(
            exchange(port, "GET", "/auth/session", &[("Cookie", &cookie)], "").0,
            401
        );
    }

    // The throttle counts failures on both processes together (the proxy
    // sends them in turn), whatever address the client claims: the one
    // the proxy appends is the one counted.
    for i in 0..3 {
        let (status, _, body) = login("wrong", &format!("198.51.100.{i}"));
        assert_eq!(status, 401, "{body}");
    }
    for forged in ["198.51.100.9", "10.0.0.1"] {
        let (status, head, body) = login("two processes, one login", forged);
        assert_eq!(status, 429, "{body}");
        assert!(header(&head, "retry-after").is_some());
    }

    // The rate limit: one count across both processes (directly, and
    // through the proxy with a forged address: the proxy appends the real
    // one), every answer one fewer left, until 429 from either.
    let mut last: Option<u32> = None;
    let mut refused = 0;
    for i in 0..70 {
        let forged = format!("192.0.2.{i}");
        let (port, headers) = match i % 3 {
            0 => (a.port, vec![]),
            1 => (b.port, vec![]),
            _ => (proxy.port, vec![("X-Forwarded-For", forged.as_str())]),
        };
        let (status, head, _) = exchange(port, "GET", "/json", &headers, "");
        if status == 429 {
            refused += 1;
            continue;
        }
        assert_eq!(status, 200);
        let left: u32 = header(&head, "ratelimit-remaining")
            .unwrap()
            .parse()
            .unwrap();
        if let Some(before) = last {
            assert!(left <= before, "{left} after {before}: not one count");
        }
        last = Some(left);
    }
    assert!(refused >= 5, "only {refused} of 70 refused at 60 a minute");
    // Through the proxy too: refused, or the one request the last second
    // refilled, with nothing left after it.
    let (status, head, _) = exchange(proxy.port, "GET", "/json", &[], "");
    assert!(
        status == 429 || header(&head, "ratelimit-remaining") == Some("0"),
        "{status}: {head}"
    );
    true
}

/// The admin on two processes on one PostgreSQL, as staff use it: logged
/// in through nginx with the admin's login form, a note added and then
/// edited through process A's admin (addressed directly) has its new text
/// on process B's edit page and through the proxy (which alternates), and
/// both changes are in B's log, the edit with its text before and after.
#[test]
fn admin_edit_on_one_process_is_seen_on_the_other() {
    // .ci/run sets it.
    let Some(database) = fresh_postgres() else {
        return;
    };
    let password = "the admin on two processes";
    let shared = [
        ("DATABASE_URL", database.as_str()),
        (
            "SECRET_KEY",
            "a-shared-secret-key-for-both-showcase-processes",
        ),
        // The `admin` superuser, made at start in development.
        ("SHOWCASE_ADMIN_PASSWORD", password),
    ];
    let a = Showcase::start(&shared);
    let b = Showcase::start(&shared);
    let Some(proxy) = Nginx::start(&[a.port, b.port]) else {
        tern::test::skip("nginx is not installed (.ci/run installs it)");
        return;
    };
    let html = ("Accept", "text/html");
    let form = ("Content-Type", "application/x-www-form-urlencoded");

    // The login page's form, through the proxy: back to the dashboard
    // with a session cookie.
    let (status, _, page) = exchange(proxy.port, "GET", "/admin/", &[html], "");
    assert_eq!(status, 303, "{page}");
    let body = format!("username=admin&password={}", support::form_encode(password));
    let (status, head, page) = exchange(
        proxy.port,
        "POST",
        "/auth/login?next=%2Fadmin%2F",
        &[html, form],
        &body,
    );
    assert_eq!(status, 303, "{head}\n{page}");
    assert_eq!(header(&head, "location"), Some("/admin/"), "{head}");
    let cookie = header(&head, "set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let cookie = ("Cookie", cookie.as_str());
    // The session's CSRF token, from the dashboard's logout form.
    let (status, _, page) = exchange(proxy.port, "GET", "/admin/", &[html, cookie], "");
    assert_eq!(status, 200, "{page}");
    let token = page
        .split(r#"name="csrf_token" value=""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();

    // Added, then edited, on A.
    let post = |port: u16, path: &str, text: &str| {
        let body = format!("csrf_token={token}&text={}", support::form_encode(text));
        exchange(port, "POST", path, &[html, form, cookie], &body)
    };
    let (status, head, page) = post(a.port, "/admin/notes/add", "written on A");
    assert_eq!(status, 303, "{head}\n{page}");
    let location = header(&head, "location").unwrap().to_owned();
    let id: i64 = location
        .strip_prefix("/admin/notes/")
        .and_then(|rest| rest.strip_suffix("?saved=1"))
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("the add went to {location}"));
    let note = format!("/admin/notes/{id}");
    let (status, head, page) = post(a.port, &note, "edited on A, read on B");
    assert_eq!(status, 303, "{head}\n{page}");
    assert_eq!(header(&head, "location"), Some(&*format!("{note}?saved=1")));

    // B's edit page, and the proxy's (both processes in turn), has the
    // new text.
    for port in [b.port, proxy.port, proxy.port] {
        let (status, _, page) = exchange(port, "GET", &note, &[html, cookie], "");
        assert_eq!(status, 200, "port {port}: {page}");
        assert!(
            page.contains(">edited on A, read on B</textarea>"),
            "port {port}: {page}"
        );
        assert!(!page.contains("written on A"), "port {port}: {page}");
    }

    // B's log: the add and the change of the note, by admin, the latest
    // first; the change's entry has the text before and after.
    let (status, _, log) = exchange(b.port, "GET", "/admin/log/", &[html, cookie], "");
    assert_eq!(status, 200, "{log}");
    let rows: Vec<&str> = log
        .split("<tr>")
        .filter(|row| row.contains(&format!(r#"href="{note}""#)))
        .collect();
    assert_eq!(rows.len(), 2, "{log}");
    assert!(
        rows[0].contains("<td>admin</td>") && rows[0].contains(">change</a>"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains("<td>admin</td>") && rows[1].contains(">add</a>"),
        "{}",
        rows[1]
    );
    let entry = rows[0]
        .split(r#"<a href="/admin/log/"#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap();
    let (status, _, page) = exchange(
        b.port,
        "GET",
        &format!("/admin/log/{entry}"),
        &[html, cookie],
        "",
    );
    assert_eq!(status, 200, "{page}");
    let changes = page.split(r#"<table class="changes">"#).nth(1).unwrap();
    assert!(
        changes.contains("written on A") && changes.contains("edited on A, read on B"),
        "{page}"
    );
}

/// Rights are shared state too: with sessions in Redis
/// (`AUTH_STORE=redis`, which keeps a session's flags), a staff user made
/// on process A's users page and logged in through B loses the admin on
/// B the moment a superuser takes staff away on A (the admin ends the
/// user's sessions in Redis).
#[test]
fn a_demotion_on_one_process_ends_the_admin_on_the_other() {
    // .ci/run sets both.
    let (Some(redis), Some(database)) = (tern::test::service_url("REDIS_URL"), fresh_postgres())
    else {
        return;
    };
    let prefix = unique("demotion");
    let password = "the admin on two processes";
    let shared = [
        ("DATABASE_URL", database.as_str()),
        (
            "SECRET_KEY",
            "a-shared-secret-key-for-both-showcase-processes",
        ),
        ("SHOWCASE_ADMIN_PASSWORD", password),
        ("AUTH_STORE", "redis"),
        ("AUTH_REDIS_URL", redis.as_str()),
        ("AUTH_REDIS_PREFIX", prefix.as_str()),
    ];
    let a = Showcase::start(&shared);
    let b = Showcase::start(&shared);
    let html = ("Accept", "text/html");
    let form = ("Content-Type", "application/x-www-form-urlencoded");
    // A login on `port`: its cookie and the session's CSRF token.
    let login = |port: u16, name: &str, secret: &str| {
        let body = format!(
            "username={}&password={}",
            support::form_encode(name),
            support::form_encode(secret)
        );
        let (status, head, page) = exchange(
            port,
            "POST",
            "/auth/login?next=%2Fadmin%2F",
            &[html, form],
            &body,
        );
        assert_eq!(status, 303, "{head}\n{page}");
        let cookie = header(&head, "set-cookie")
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        let (status, _, page) = exchange(
            port,
            "GET",
            "/admin/",
            &[html, ("Cookie", cookie.as_str())],
            "",
        );
        assert_eq!(status, 200, "{page}");
        let token = page
            .split(r#"name="csrf_token" value=""#)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .to_owned();
        (cookie, token)
    };
    let (root, token) = login(a.port, "admin", password);
    let as_root = ("Cookie", root.as_str());
    // A staff user, made on A's users page.
    let staff_password = "a staff password on two processes";
    let body = format!(
        "csrf_token={token}&username=ed&email=ed%40example.com&is_staff=on&password={p}&password2={p}",
        p = support::form_encode(staff_password)
    );
    let (status, head, page) = exchange(
        a.port,
        "POST",
        "/admin/tern_users/add",
        &[html, form, as_root],
        &body,
    );
    assert_eq!(status, 303, "{head}\n{page}");
    let user = header(&head, "location")
        .unwrap()
        .trim_end_matches("?saved=1")
        .to_owned();
    // Logged in on B: the admin opens (no model rights, but staff).
    let (ed, _) = login(b.port, "ed", staff_password);
    let as_ed = ("Cookie", ed.as_str());
    // Staff taken away on A (active kept).
    let body = format!("csrf_token={token}&username=ed&email=ed%40example.com&is_active=on");
    let (status, head, page) = exchange(a.port, "POST", &user, &[html, form, as_root], &body);
    assert_eq!(status, 303, "{head}\n{page}");
    // On B, at once: the session is gone, the admin asks for a login.
    let (status, head, _) = exchange(b.port, "GET", "/admin/", &[html, as_ed], "");
    assert_eq!(status, 303, "{head}");
    assert!(
        header(&head, "location").is_some_and(|l| l.starts_with("/admin/login")),
        "{head}"
    );
    // The superuser's own session, on B too, is untouched.
    let (status, _, _) = exchange(b.port, "GET", "/admin/", &[html, as_root], "");
    assert_eq!(status, 200);
}
