//! `tern bench` and the `bench` feature: without it the `tern` binary
//! does not build the bench lab, and `tern bench ...` says how to get it
//! (exit code 2, a usage error) instead of clap's "unrecognized
//! subcommand"; with it, `tern bench` is `tern-bench`'s command line.
#![allow(clippy::unwrap_used, missing_docs)]

use std::process::Command;

fn tern(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tern"))
        .args(args)
        .output()
        .unwrap()
}

#[cfg(not(feature = "bench"))]
#[test]
fn without_the_feature_bench_says_how_to_get_it() {
    for args in [
        &["bench"][..],
        &["bench", "run", "--quick", "--out", "target/x"][..],
    ] {
        let out = tern(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains("cargo install tern-cli --features bench"),
            "{stderr}"
        );
        assert!(stderr.contains("tern-bench"), "{stderr}");
        assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    }
}

#[cfg(feature = "bench")]
#[test]
fn with_the_feature_bench_is_the_labs_command_line() {
    let out = tern(&["bench", "--help"]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("run"), "{stdout}");
}

#[test]
fn new_is_there_either_way() {
    let out = tern(&["new", "--help"]);
    assert!(out.status.success(), "{out:?}");
}
