//! The showcase's command line as an operator uses it: `--help`,
//! `routes`, `check`, `migrate`, `createsuperuser`, `serve --addr`.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Command, Output, Stdio},
    time::Duration,
};

use support::{free_port, isolated, request, wait_for, BIN, STRONG};

/// A scratch directory: the SQLite default (`data/app.db`) lives in it.
fn scratch(name: &str) -> PathBuf {
    support::scratch(&format!("commands-{name}"))
}

fn showcase(dir: &Path, args: &[&str], envs: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = isolated();
    cmd.current_dir(dir)
        .env("RUST_LOG", "warn")
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_lists_every_command_and_each_has_its_own() {
    let dir = scratch("help");
    let out = showcase(&dir, &["--help"], &[], None);
    assert!(out.status.success());
    let text = stdout(&out);
    for command in [
        "serve",
        "routes",
        "check",
        "secret-key",
        "migrate",
        "createsuperuser",
    ] {
        assert!(text.contains(&format!("  {command} ")), "{command}: {text}");
    }
    let out = showcase(&dir, &["createsuperuser", "--help"], &[], None);
    assert!(
        stdout(&out).contains("--password-stdin"),
        "{}",
        stdout(&out)
    );
    let out = showcase(&dir, &["migrate", "--help"], &[], None);
    assert!(stdout(&out).contains("--plan"), "{}", stdout(&out));
    // A mistake: exit non-zero, say what is wrong, start nothing.
    let out = showcase(&dir, &["migrat"], &[], None);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unrecognized subcommand 'migrat'"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("migrate"),
        "a suggestion: {}",
        stderr(&out)
    );
    assert!(!dir.join("data").exists(), "a mistake touched the database");
}

#[test]
fn routes_lists_methods_patterns_handlers_and_middleware() {
    let out = showcase(&scratch("routes"), &["routes"], &[], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let row = |method: &str, pattern: &str| -> Vec<String> {
        text.lines()
            .find(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                cells.first() == Some(&method) && cells.get(1) == Some(&pattern)
            })
            .unwrap_or_else(|| panic!("no {method} {pattern} in:\n{text}"))
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    // Handlers by their full path: the app's and a battery's.
    assert_eq!(row("GET", "/guide/{slug}")[3], "showcase::site::doc");
    assert_eq!(row("POST", "/auth/login")[3], "tern_auth::handlers::login");
    let notes = row("POST", "/notes").join(" ");
    // The CSRF check runs before the rate limit (outermost first).
    let csrf = notes.find("FromFnLayer<csrf").unwrap();
    let limit = notes.find("RateLimit").unwrap();
    assert!(csrf < limit, "{notes}");
    assert!(text.contains("/health"), "{text}");
}

#[test]
fn migrate_plans_applies_and_says_what_it_did() {
    let dir = scratch("migrate");
    let plan = showcase(&dir, &["migrate", "--plan"], &[], None);
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert!(
        stdout(&plan).contains("would apply 0001_notes.sqlite.sql"),
        "{}",
        stdout(&plan)
    );
    let applied = showcase(&dir, &["migrate"], &[], None);
    assert!(applied.status.success(), "{}", stderr(&applied));
    let text = stdout(&applied);
    assert!(text.contains("applying 0001_notes.sqlite.sql"), "{text}");
    assert!(text.contains("applying 0001_accounts.sqlite.sql"), "{text}");
    assert!(
        text.contains("applying 0002_usernames_as_given_and_emails.sqlite.sql"),
        "{text}"
    );
    assert!(
        text.contains("applying 0003_api_tokens.sqlite.sql"),
        "{text}"
    );
    assert!(
        text.contains("applying 0004_superusers.sqlite.sql"),
        "{text}"
    );
    assert!(text.contains("applying 0001_admin.sqlite.sql"), "{text}");
    assert!(
        text.contains("applying 0002_memberships.sqlite.sql"),
        "{text}"
    );
    assert!(text.contains("applied 7 migration(s)"), "{text}");
    let again = showcase(&dir, &["migrate"], &[], None);
    assert!(
        stdout(&again).contains("nothing to apply"),
        "{}",
        stdout(&again)
    );
}

#[test]
fn createsuperuser_makes_a_superuser_once() {
    let dir = scratch("superuser");
    let password = "a long enough password";
    // Before `migrate`: the error says what to run.
    let early = showcase(
        &dir,
        &["createsuperuser", "--username", "ada", "--password-stdin"],
        &[],
        Some(password),
    );
    assert!(!early.status.success());
    assert!(stderr(&early).contains("migrate"), "{}", stderr(&early));
    assert!(showcase(&dir, &["migrate"], &[], None).status.success());
    let made = showcase(
        &dir,
        &["createsuperuser", "--username", "ada", "--password-stdin"],
        &[],
        Some(&format!("{password}\n")),
    );
    assert!(made.status.success(), "{}", stderr(&made));
    assert!(
        stdout(&made).contains("made the superuser `ada`"),
        "{}",
        stdout(&made)
    );
    let twice = showcase(
        &dir,
        &["createsuperuser", "--username", "ada", "--password-stdin"],
        &[],
        Some(password),
    );
    assert!(!twice.status.success());
    assert!(
        stderr(&twice).contains("exists already"),
        "{}",
        stderr(&twice)
    );
    // A password that breaks the rules is refused, and says why.
    let short = showcase(
        &dir,
        &["createsuperuser", "--username", "bob", "--password-stdin"],
        &[],
        Some("short"),
    );
    assert!(!short.status.success());
    assert!(!stderr(&short).is_empty());
    // Not a terminal, no --password-stdin: refused, nothing asked.
    let piped = showcase(&dir, &["createsuperuser", "--username", "eve"], &[], None);
    assert!(
        stderr(&piped).contains("--password-stdin"),
        "{}",
        stderr(&piped)
    );
    // The account logs in on the served app.
    let port = free_port();
    let mut server = Command::new(BIN)
        .current_dir(&dir)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let body = format!(r#"{{"username":"ada","password":"{password}"}}"#);
    let answer = post_json(&mut server, port, "/auth/login", &body);
    let _ = server.kill();
    let _ = server.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn check_fails_in_development_and_passes_a_production_setup() {
    let dir = scratch("check");
    let dev = showcase(&dir, &["check"], &[], None);
    assert_eq!(dev.status.code(), Some(1), "{}", stdout(&dev));
    let text = stdout(&dev);
    for setting in ["TERN_ENV", "SECRET_KEY", "ALLOWED_HOSTS"] {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with("FAIL") && l.contains(setting)),
            "{setting}: {text}"
        );
    }
    let production = [
        ("TERN_ENV", "production"),
        ("SECRET_KEY", STRONG),
        ("ALLOWED_HOSTS", "example.com"),
        ("TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
        ("SHOWCASE_ADMIN_PASSWORD", "an operator's own password"),
    ];
    // Production does not migrate at start: the checklist says to.
    let before = showcase(&dir, &["check"], &production, None);
    assert_eq!(before.status.code(), Some(1), "{}", stdout(&before));
    assert!(
        stdout(&before).contains("run the `migrate` command"),
        "{}",
        stdout(&before)
    );
    assert!(showcase(&dir, &["migrate"], &production, None)
        .status
        .success());
    let after = showcase(&dir, &["check"], &production, None);
    assert!(after.status.success(), "{}", stdout(&after));
    assert!(stdout(&after).contains("none failed"), "{}", stdout(&after));
    assert!(!stdout(&after).contains(STRONG), "a secret was printed");
    // An example secret of the app's own settings fails, by name.
    let mut weak = production.to_vec();
    weak.pop();
    weak.push(("SHOWCASE_ADMIN_PASSWORD", "changeme"));
    let example = showcase(&dir, &["check"], &weak, None);
    assert_eq!(example.status.code(), Some(1));
    // (The showcase reads its own settings in `main`, before `check`.)
    let said = format!("{}{}", stdout(&example), stderr(&example));
    assert!(said.contains("SHOWCASE_ADMIN_PASSWORD"), "{said}");
}

/// `POST path` with a JSON body, once the server on `port` answers.
fn post_json(server: &mut std::process::Child, port: u16, path: &str, body: &str) -> String {
    let raw = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    wait_for(server, "the showcase", Duration::from_secs(20), || {
        request(port, &raw).ok()
    })
}

/// `secret-key` prints a key production accepts (the error for a weak
/// one names this command), a new one each time, with no configuration
/// at all (and in production without a key: it is how one is made).
#[test]
fn secret_key_prints_a_new_key_that_production_accepts() {
    let dir = scratch("secret-key");
    let production = [("TERN_ENV", "production"), ("ALLOWED_HOSTS", "localhost")];
    let first = showcase(&dir, &["secret-key"], &production, None);
    assert!(first.status.success(), "{}", stderr(&first));
    let key = stdout(&first).trim().to_owned();
    assert_eq!(key.len(), 64, "{key}");
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
    let second = stdout(&showcase(&dir, &["secret-key"], &[], None));
    assert_ne!(second.trim(), key);
    assert!(
        !dir.join("data").exists(),
        "secret-key touched the database"
    );
    let weak = showcase(
        &dir,
        &["check"],
        &[
            ("TERN_ENV", "production"),
            ("ALLOWED_HOSTS", "localhost"),
            ("SECRET_KEY", "my-super-secret-key-for-production-2024"),
        ],
        None,
    );
    assert!(stdout(&weak).contains("secret-key"), "{}", stdout(&weak));
    let good = showcase(
        &dir,
        &["check"],
        &[
            ("TERN_ENV", "production"),
            ("ALLOWED_HOSTS", "localhost"),
            ("SECRET_KEY", &key),
        ],
        None,
    );
    let text = stdout(&good);
    let line = text.lines().find(|l| l.contains("SECRET_KEY")).unwrap();
    assert!(line.contains("ok"), "{text}");
    assert!(!text.contains(&key), "the key was printed by check: {text}");
}
