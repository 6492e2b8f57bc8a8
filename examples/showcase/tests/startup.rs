//! The showcase binary as a user runs it: production refuses weak
//! settings with the setting's name; a good configuration serves, with
//! either runtime, and SIGTERM drains and exits 0.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::{
    process::{Command, Stdio},
    time::Duration,
};

use support::{
    exited_within, free_port, isolated, request, scratch, sqlite, stderr_of, wait_for, BIN, STRONG,
};

fn run_expecting_failure(envs: &[(&str, &str)]) -> String {
    let mut cmd = isolated();
    cmd.env("TERN_ADDR", "127.0.0.1:0");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(!out.status.success(), "the server started with {envs:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn production_refuses_weak_or_missing_settings() {
    for (envs, setting) in [
        (
            vec![("TERN_ENV", "production"), ("ALLOWED_HOSTS", "example.com")],
            "SECRET_KEY",
        ),
        (
            vec![
                ("TERN_ENV", "production"),
                ("ALLOWED_HOSTS", "example.com"),
                ("SECRET_KEY", "short"),
            ],
            "SECRET_KEY",
        ),
        (
            vec![
                ("TERN_ENV", "production"),
                ("ALLOWED_HOSTS", "example.com"),
                ("SECRET_KEY", "changemechangemechangemechangeme"),
            ],
            "SECRET_KEY",
        ),
        (
            vec![("TERN_ENV", "production"), ("SECRET_KEY", STRONG)],
            "ALLOWED_HOSTS",
        ),
        (vec![("TERN_ENV", "staging")], "TERN_ENV"),
        (vec![("TERN_MAX_BODY_BYTES", "lots")], "TERN_MAX_BODY_BYTES"),
        (vec![("TERN_ADDR", "nowhere")], "TERN_ADDR"),
    ] {
        let stderr = run_expecting_failure(&envs);
        assert!(
            stderr.contains(setting),
            "{envs:?}: expected `{setting}` in: {stderr}"
        );
        assert!(!stderr.contains(STRONG), "a secret was printed: {stderr}");
    }
}

fn get(port: u16, path: &str, host: &str) -> Option<String> {
    request(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
    .ok()
}

fn serve_and_stop(envs: &[(&str, &str)], host: &str) {
    let port = free_port();
    let mut child = Command::new(BIN)
        .env("TERN_ADDR", format!("127.0.0.1:{port}"))
        .envs(envs.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let body = wait_for(&mut child, "the showcase", Duration::from_secs(20), || {
        get(port, "/json", host)
    });
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    assert!(body.ends_with(r#"{"message":"Hello, World!"}"#), "{body}");
    let health = get(port, "/health", host).unwrap();
    assert!(health.ends_with("ok"), "{health}");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = exited_within(&mut child, Duration::from_secs(20))
        .expect("the showcase did not stop on SIGTERM");
    let stderr = stderr_of(&mut child);
    assert!(exit.success(), "exit {exit:?}: {stderr}");
    assert!(!stderr.contains(STRONG), "a secret was logged: {stderr}");
}

#[test]
fn production_with_good_settings_serves_and_stops_on_sigterm() {
    serve_and_stop(
        &[
            ("TERN_ENV", "production"),
            ("SECRET_KEY", STRONG),
            ("ALLOWED_HOSTS", "localhost"),
            ("TERN_ACCESS_LOG", "true"),
        ],
        "localhost",
    );
}

#[test]
fn per_core_runtime_serves_and_stops_on_sigterm() {
    serve_and_stop(
        &[("TERN_RUNTIME", "per-core"), ("TERN_WORKERS", "2")],
        "localhost",
    );
}

/// Once passwords are hashed with `PASSWORD_PEPPER`, a start without it
/// is refused, naming the setting (every such account would be locked
/// out otherwise).
#[test]
fn a_pepper_in_use_is_required_at_start() {
    let dir = scratch("pepper");
    let url = sqlite(&dir);
    let pepper = "a pepper of at least sixteen bytes";
    // Development: the `admin` account is made, hashed with the pepper.
    serve_and_stop(
        &[("DATABASE_URL", &url), ("PASSWORD_PEPPER", pepper)],
        "localhost",
    );
    for envs in [
        vec![("DATABASE_URL", url.as_str())],
        vec![
            ("DATABASE_URL", url.as_str()),
            ("TERN_ENV", "production"),
            ("SECRET_KEY", STRONG),
            ("ALLOWED_HOSTS", "localhost"),
        ],
    ] {
        let stderr = run_expecting_failure(&envs);
        assert!(stderr.contains("PASSWORD_PEPPER"), "{envs:?}: {stderr}");
    }
    // With it, the same database serves.
    serve_and_stop(
        &[
            ("DATABASE_URL", &url),
            ("PASSWORD_PEPPER", pepper),
            ("TERN_ENV", "production"),
            ("SECRET_KEY", STRONG),
            ("ALLOWED_HOSTS", "localhost"),
        ],
        "localhost",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
