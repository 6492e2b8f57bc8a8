//! `tern new` and the Tern crates a project depends on: by default
//! crates.io at the version this `tern` was built with (the one its
//! template is written for), with `--tern-path` a checkout, with
//! `--version` the requirement given.
#![allow(clippy::unwrap_used, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace this `tern` is built from.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A fresh, empty directory for one test's project.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-new-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `tern new demo-app --path DIR ARGS...`; returns the output and the
/// generated Cargo.toml.
fn new(dir: &Path, args: &[&str]) -> (Output, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tern"))
        .args(["new", "demo-app", "--path"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    (out, manifest)
}

/// The value of `key = ...` in the generated manifest's `[dependencies]`.
fn dependency<'a>(manifest: &'a str, key: &str) -> &'a str {
    let deps = manifest.split("[dependencies]\n").nth(1).unwrap();
    deps.lines()
        .find_map(|line| line.strip_prefix(&format!("{key} = ")))
        .unwrap_or_else(|| panic!("no `{key}` in [dependencies]:\n{manifest}"))
}

/// The version of `krate` in the workspace's `[workspace.dependencies]`:
/// the one its path dependency names, which is what it publishes as.
fn workspace_version(krate: &str) -> String {
    let root = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let prefix = format!("{krate} = {{ path = \"crates/{krate}\", version = \"");
    let line = root
        .lines()
        .find(|line| line.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}` line in the workspace's Cargo.toml"));
    line[prefix.len()..].split('"').next().unwrap().to_owned()
}

#[test]
fn by_default_the_tern_crates_are_this_tern_s_version_from_crates_io() {
    let dir = scratch("default");
    let (out, manifest) = new(&dir, &[]);
    assert!(out.status.success(), "{out:?}");
    let version = env!("CARGO_PKG_VERSION");
    for krate in ["tern", "tern-site"] {
        // The crate as published: the version its path dependency names in
        // this workspace is the version this `tern` writes.
        assert_eq!(workspace_version(krate), version, "{krate}");
        assert_eq!(
            dependency(&manifest, krate),
            format!("\"{version}\""),
            "{krate}"
        );
    }
    assert!(!manifest.contains("path ="), "{manifest}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tern_path_depends_on_the_checkout_s_crates() {
    let dir = scratch("path");
    let root = workspace();
    let (out, manifest) = new(&dir, &["--tern-path", root.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    for krate in ["tern", "tern-site"] {
        let path = root.join("crates").join(krate);
        assert_eq!(
            dependency(&manifest, krate),
            format!("{{ path = {:?} }}", path.display().to_string()),
            "{krate}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tern_path_must_be_a_checkout() {
    let dir = scratch("not-a-checkout");
    let elsewhere = std::env::temp_dir();
    let (out, manifest) = new(&dir, &["--tern-path", elsewhere.to_str().unwrap()]);
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("not a checkout of Tern"), "{stderr}");
    assert!(manifest.is_empty(), "{manifest}");
    assert!(!dir.exists(), "nothing is written");
}

#[test]
fn version_writes_the_requirement_given() {
    let dir = scratch("version");
    let (out, manifest) = new(&dir, &["--version", "=0.1.0"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(dependency(&manifest, "tern"), "\"=0.1.0\"");
    assert_eq!(dependency(&manifest, "tern-site"), "\"=0.1.0\"");
    std::fs::remove_dir_all(&dir).unwrap();
}
