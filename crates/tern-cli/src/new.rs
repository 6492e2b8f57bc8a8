//! `tern new`: a project that builds and passes its own tests.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The files of a new project: where each goes, and its text with
/// `__NAME__`, `__CRATE__`, `__TERN__` and `__TERN_SITE__` to fill in.
const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../template/Cargo.toml.in")),
    (".gitignore", include_str!("../template/gitignore.in")),
    ("README.md", include_str!("../template/README.md")),
    ("src/lib.rs", include_str!("../template/src/lib.rs")),
    ("src/main.rs", include_str!("../template/src/main.rs")),
    (
        "templates/base.html",
        include_str!("../template/templates/base.html"),
    ),
    (
        "templates/index.html",
        include_str!("../template/templates/index.html"),
    ),
    ("static/app.css", include_str!("../template/static/app.css")),
    ("tests/app.rs", include_str!("../template/tests/app.rs")),
];

/// The version of the Tern crates this `tern` was built with, and the one
/// a new project asks for by default. Every Tern crate has the workspace's
/// version, tern-cli's included (`tests/new.rs` checks), and the template
/// is written against that version's API.
pub const TERN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the project's Tern crates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A checkout of Tern's workspace (its `crates/` directory is used).
    Path(PathBuf),
    /// crates.io, at this version requirement.
    Version(String),
}

impl Source {
    /// crates.io at [`TERN_VERSION`], written as a caret requirement
    /// (`tern = "0.1.0"`): at least the version the template was written
    /// for, and any semver-compatible release after it, so `cargo update`
    /// brings fixes and a crate asking for `tern = "0.1.1"` still resolves
    /// with the app's (an `=` pin would refuse both); the project's
    /// `Cargo.lock` makes its builds repeatable.
    pub fn published() -> Self {
        Source::Version(TERN_VERSION.to_owned())
    }

    fn dependency(&self, krate: &str) -> String {
        match self {
            Source::Path(root) => {
                let path = root.join("crates").join(krate);
                format!("{{ path = {:?} }}", path.display().to_string())
            }
            Source::Version(version) => format!("{version:?}"),
        }
    }
}

/// Checks that `name` can be a package name: ASCII letters, digits, `-`
/// and `_`, starting with a letter, not a name Rust or Cargo keeps.
pub fn check_name(name: &str) -> Result<()> {
    const TAKEN: &[&str] = &[
        "test",
        "tern",
        "core",
        "std",
        "alloc",
        "proc_macro",
        "self",
        "super",
        "crate",
        "fn",
        "mod",
        "struct",
        "enum",
        "type",
        "use",
        "impl",
        "trait",
        "async",
        "await",
        "match",
    ];
    let first = name.chars().next();
    if !first.is_some_and(|c| c.is_ascii_alphabetic()) {
        bail!("`{name}`: a project name starts with a letter (a-z)");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        bail!("`{name}`: a project name has letters, digits, `-` and `_` only, not `{c}`");
    }
    if name.len() > 64 {
        bail!("`{name}`: a project name has at most 64 characters");
    }
    if TAKEN.contains(&name.replace('-', "_").as_str()) {
        bail!("`{name}` is a name Rust or Cargo keeps for itself; choose another");
    }
    Ok(())
}

/// Writes a new project called `name` into `dir` (made; it must not
/// exist, or be empty), printing each file it writes. Returns the files.
pub fn scaffold(name: &str, dir: &Path, tern: &Source) -> Result<Vec<PathBuf>> {
    check_name(name)?;
    if dir.exists()
        && dir
            .read_dir()
            .with_context(|| format!("reading {}", dir.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} exists and is not empty: nothing was written",
            dir.display()
        );
    }
    let krate = name.replace('-', "_");
    let mut written = Vec::with_capacity(FILES.len());
    for (rel, text) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("making {}", parent.display()))?;
        }
        let text = text
            .replace("__NAME__", name)
            .replace("__CRATE__", &krate)
            .replace("__TERN_SITE__", &tern.dependency("tern-site"))
            .replace("__TERN__", &tern.dependency("tern"));
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        println!("  wrote {}", path.display());
        written.push(path);
    }
    Ok(written)
}

/// Checks that `root` is a checkout of Tern (it has `crates/tern` and
/// `crates/tern-site`) and returns its absolute path, for [`Source::Path`].
pub fn checkout(root: &Path) -> Result<PathBuf> {
    let root = root
        .canonicalize()
        .with_context(|| format!("--tern-path {}", root.display()))?;
    for krate in ["tern", "tern-site"] {
        let manifest = root.join("crates").join(krate).join("Cargo.toml");
        if !manifest.is_file() {
            bail!(
                "--tern-path {}: not a checkout of Tern (no {})",
                root.display(),
                manifest.display()
            );
        }
    }
    Ok(root)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        for good in ["blog", "my-app", "shop_2"] {
            check_name(good).unwrap();
        }
        for (bad, says) in [
            ("", "starts with a letter"),
            ("2fast", "starts with a letter"),
            ("my app", "not ` `"),
            ("../evil", "starts with a letter"),
            ("a/b", "not `/`"),
            ("test", "keeps for itself"),
            ("tern", "keeps for itself"),
        ] {
            let err = check_name(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn every_placeholder_is_filled() {
        let dir = std::env::temp_dir().join(format!("tern-new-unit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = scaffold("demo-app", &dir, &Source::published()).unwrap();
        assert_eq!(files.len(), FILES.len());
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            assert!(!text.contains("__"), "{}: {text}", file.display());
        }
        let main = std::fs::read_to_string(dir.join("src/main.rs")).unwrap();
        assert!(main.contains("demo_app::app()"), "{main}");
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&format!("tern = \"{TERN_VERSION}\"")),
            "{manifest}"
        );
        // Not over a project that is there.
        let err = scaffold("demo-app", &dir, &Source::published()).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
