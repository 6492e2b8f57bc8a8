//! `tern::test::skip`: a test that cannot run passes with a line saying so
//! on a developer's machine, and fails the run under CI. Each case runs
//! this test binary again as a child with the environment it needs.

#![allow(clippy::unwrap_used)]

use std::process::Command;

/// Runs the `child` test of this binary with `CI` as given and a service
/// variable that is never set; returns whether it passed and its stderr.
fn child(ci: Option<&str>) -> (bool, String) {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "child_needs_a_service",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("TERN_SKIP_TEST_CHILD", "1")
    .env_remove("TERN_SKIP_TEST_NEVER_SET");
    match ci {
        Some(v) => cmd.env("CI", v),
        None => cmd.env_remove("CI"),
    };
    let out = cmd.output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout),
    )
}

#[test]
fn child_needs_a_service() {
    if std::env::var_os("TERN_SKIP_TEST_CHILD").is_none() {
        return; // only meaningful as the child of the tests below
    }
    let Some(_url) = tern::test::service_url("TERN_SKIP_TEST_NEVER_SET") else {
        return;
    };
    unreachable!("the variable is never set");
}

#[test]
fn without_ci_a_missing_service_skips_with_a_line() {
    for ci in [None, Some(""), Some("0"), Some("false")] {
        let (passed, out) = child(ci);
        assert!(passed, "CI={ci:?}: {out}");
        assert!(
            out.contains("skipped: TERN_SKIP_TEST_NEVER_SET is not set"),
            "{out}"
        );
    }
}

#[test]
fn under_ci_a_missing_service_fails_the_run() {
    for ci in ["true", "1", "yes"] {
        let (passed, out) = child(Some(ci));
        assert!(!passed, "CI={ci}: {out}");
        assert!(
            out.contains("TERN_SKIP_TEST_NEVER_SET is not set; under CI"),
            "{out}"
        );
    }
}
