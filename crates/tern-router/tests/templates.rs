//! Parameters inside a segment (templates): `/img-{id}.png`,
//! `/v{version}`, `/{name}.{ext}`: where the split falls, the priority
//! against other kinds of segment, decoding, URLs built back.
#![allow(clippy::unwrap_used)]

use tern_router::{MatchError, Router};

fn params(router: &Router<&'static str>, path: &str) -> (&'static str, Vec<(String, String)>) {
    let m = router.at(path).unwrap_or_else(|e| panic!("{path}: {e:?}"));
    (
        *m.value,
        m.params
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    )
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn the_split_falls_at_the_last_separators() {
    let mut router = Router::new();
    router.insert("/files/{name}.{ext}", "file").unwrap();
    router.insert("/img-{id:u64}.png", "image").unwrap();
    router.insert("/api/v{major}.{minor}", "version").unwrap();
    router.insert("/d/{a}-{b}-{c}", "three").unwrap();
    assert_eq!(
        params(&router, "/files/archive.tar.gz"),
        ("file", kv(&[("name", "archive.tar"), ("ext", "gz")]))
    );
    assert_eq!(
        params(&router, "/img-42.png"),
        ("image", kv(&[("id", "42")]))
    );
    assert_eq!(
        params(&router, "/api/v1.2.3"),
        ("version", kv(&[("major", "1.2"), ("minor", "3")]))
    );
    assert_eq!(
        params(&router, "/d/x-y-z-w"),
        ("three", kv(&[("a", "x-y"), ("b", "z"), ("c", "w")]))
    );
    // Parameters are never empty; the texts must be there.
    for miss in [
        "/files/.gz",
        "/files/name.",
        "/files/noext",
        "/img-.png",
        "/img-x.png",
        "/img-42.jpg",
        "/api/v.1",
        "/d/x--w",
    ] {
        assert_eq!(router.at(miss).unwrap_err(), MatchError::NotFound, "{miss}");
    }
}

#[test]
fn priority_static_then_templates_by_text_then_constraints_parameters_globs() {
    let mut router = Router::new();
    router.insert("/r/{any}", "param").unwrap();
    router.insert("/r/{id:u64}", "u64").unwrap();
    router.insert("/r/{name}.{ext}", "name.ext").unwrap();
    router.insert("/r/{id}.json", "json").unwrap();
    router.insert("/r/index.json", "static").unwrap();
    router.insert("/r/{*rest}", "glob").unwrap();
    assert_eq!(params(&router, "/r/index.json").0, "static");
    // `{id}.json` has more text than `{name}.{ext}`.
    assert_eq!(params(&router, "/r/7.json").0, "json");
    assert_eq!(params(&router, "/r/7.xml").0, "name.ext");
    assert_eq!(params(&router, "/r/7").0, "u64");
    assert_eq!(params(&router, "/r/x").0, "param");
    assert_eq!(params(&router, "/r/x/y").0, "glob");
    // A template whose constraint refuses its split gives way.
    let mut router = Router::new();
    router.insert("/p/{id:u64}.pdf", "numbered").unwrap();
    router.insert("/p/{file}", "any").unwrap();
    assert_eq!(params(&router, "/p/12.pdf").0, "numbered");
    assert_eq!(params(&router, "/p/x.pdf").0, "any");
    // Backtracking: the template's branch fails further down.
    let mut router = Router::new();
    router.insert("/t/{a}.x/end", "template").unwrap();
    router.insert("/t/{b}/other", "param").unwrap();
    assert_eq!(params(&router, "/t/1.x/other").0, "param");
    assert_eq!(params(&router, "/t/1.x/end").0, "template");
}

#[test]
fn conflicts_are_the_same_template_only() {
    let mut router = Router::new();
    router.insert("/{a}.{b}", 1).unwrap();
    assert!(router.insert("/{x}.{y}", 2).is_err());
    router.insert("/{a}.{b:u64}", 3).unwrap();
    router.insert("/{a}-{b}", 4).unwrap();
    router.insert("/v{a}", 5).unwrap();
}

#[test]
fn templates_match_the_decoded_segment() {
    let mut router = Router::new();
    router.insert("/f/{name}.{ext}", "file").unwrap();
    assert_eq!(
        params(&router, "/f/a%20b.t%78t"),
        ("file", kv(&[("name", "a b"), ("ext", "txt")]))
    );
    // An encoded dot is a dot once decoded.
    assert_eq!(
        params(&router, "/f/a%2Eb"),
        ("file", kv(&[("name", "a"), ("ext", "b")]))
    );
    // A `/` encoded inside stays in the segment.
    assert_eq!(
        params(&router, "/f/a%2Fb.c"),
        ("file", kv(&[("name", "a/b"), ("ext", "c")]))
    );
    // Non-ASCII around the separators.
    assert_eq!(
        params(&router, "/f/caf%C3%A9.%C3%A9t%C3%A9"),
        ("file", kv(&[("name", "café"), ("ext", "été")]))
    );
    assert_eq!(
        params(&router, "/f/café.été").1,
        kv(&[("name", "café"), ("ext", "été")])
    );
}

#[test]
fn urls_are_built_and_checked_against_the_split() {
    let mut router = Router::new();
    router.insert("/img-{id:u64}.png", ()).unwrap();
    router.insert("/f/{name}.{ext}", ()).unwrap();
    assert_eq!(
        router.url("/img-{id:u64}.png", &[("id", "42")]).unwrap(),
        "/img-42.png"
    );
    assert!(router.url("/img-{id:u64}.png", &[("id", "x")]).is_err());
    assert_eq!(
        router
            .url("/f/{name}.{ext}", &[("name", "archive.tar"), ("ext", "gz")])
            .unwrap(),
        "/f/archive.tar.gz"
    );
    assert_eq!(
        router
            .url("/f/{name}.{ext}", &[("name", "a b"), ("ext", "t/x")])
            .unwrap(),
        "/f/a%20b.t%2Fx"
    );
    // `ext` holding the separator would match back split elsewhere.
    assert!(router
        .url("/f/{name}.{ext}", &[("name", "a"), ("ext", "tar.gz")])
        .is_err());
    for (name, ext) in [("archive.tar", "gz"), ("a b", "t/x"), ("é", "%")] {
        let url = router
            .url("/f/{name}.{ext}", &[("name", name), ("ext", ext)])
            .unwrap();
        let m = router.at(&url).unwrap();
        assert_eq!(m.params.get("name"), Some(name), "{url}");
        assert_eq!(m.params.get("ext"), Some(ext), "{url}");
    }
}

#[test]
fn cost_stays_linear_in_the_segment() {
    // A long segment of separators: the split scans it a bounded number of
    // times per parameter, never tries every split.
    let mut router = Router::new();
    router
        .insert("/{a}.{b}.{c}.{d}.{e}.{f}.{g}.{h}", ())
        .unwrap();
    let long = format!("/{}", "x".repeat(64 * 1024));
    assert_eq!(router.at(&long).unwrap_err(), MatchError::NotFound);
    // Dots are text like any other: a run of them splits too.
    let dots = format!("/{}", ".".repeat(64 * 1024));
    assert_eq!(router.at(&dots).unwrap().params.get("h"), Some("."));
    let ok = format!("/{}x.b.c.d.e.f.g.h", "a.".repeat(32 * 1024));
    assert!(router.at(&ok).is_ok());
}
