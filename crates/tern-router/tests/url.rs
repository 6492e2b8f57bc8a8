//! URL building: every built path matches its route back with the same
//! parameters, values are encoded, and bad input is refused.
#![allow(clippy::unwrap_used)]

use tern_router::{Router, UrlError};

fn router() -> Router<&'static str> {
    let mut r = Router::new();
    for p in [
        "/",
        "/users/{id:u64}",
        "/users/{name}",
        "/users/{id}/posts/{slug:slug}",
        "/files/{*path}",
        "/repos/{*path}/blob/{file}",
        "/caf\u{e9}/{x}",
    ] {
        r.insert(p, p).unwrap();
    }
    r
}

#[test]
fn built_paths_match_back() {
    let r = router();
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let table: &[Case<'_>] = &[
        ("/", &[], "/"),
        ("/users/{id:u64}", &[("id", "42")], "/users/42"),
        (
            "/users/{name}",
            &[("name", "Ada Lovelace")],
            "/users/Ada%20Lovelace",
        ),
        (
            "/users/{name}",
            &[("name", "a/b?c#d%e")],
            "/users/a%2Fb%3Fc%23d%25e",
        ),
        ("/users/{name}", &[("name", "..")], "/users/%2E%2E"),
        (
            "/users/{name}",
            &[("name", "z\u{fc}rich")],
            "/users/z%C3%BCrich",
        ),
        (
            "/users/{id}/posts/{slug:slug}",
            &[("slug", "hello-world"), ("id", "7")],
            "/users/7/posts/hello-world",
        ),
        (
            "/files/{*path}",
            &[("path", "a b/c.txt")],
            "/files/a%20b/c.txt",
        ),
        (
            "/repos/{*path}/blob/{file}",
            &[("path", "org/repo"), ("file", "main.rs")],
            "/repos/org/repo/blob/main.rs",
        ),
        ("/caf\u{e9}/{x}", &[("x", "1")], "/caf%C3%A9/1"),
    ];
    for (pattern, params, expected) in table {
        let url = r.url(pattern, params).unwrap();
        assert_eq!(&url, expected, "{pattern}");
        let m = r.at(&url).unwrap();
        assert_eq!(m.pattern, *pattern, "{url} matched back");
        for (name, value) in *params {
            assert_eq!(m.params.get(name), Some(*value), "{url}: {name}");
        }
    }
}

#[test]
fn bad_input_is_refused() {
    let r = router();
    assert!(matches!(
        r.url("/nope", &[]),
        Err(UrlError::UnknownRoute { .. })
    ));
    assert!(matches!(
        r.url("/users/{name}", &[]),
        Err(UrlError::MissingParam { .. })
    ));
    assert!(matches!(
        r.url("/users/{name}", &[("name", "a"), ("extra", "b")]),
        Err(UrlError::UnknownParam { .. })
    ));
    assert!(matches!(
        r.url("/users/{id:u64}", &[("id", "-1")]),
        Err(UrlError::InvalidValue { .. })
    ));
    assert!(matches!(
        r.url("/users/{name}", &[("name", "")]),
        Err(UrlError::InvalidValue { .. })
    ));
    assert!(matches!(
        r.url("/files/{*path}", &[("path", "/abs")]),
        Err(UrlError::InvalidValue { .. })
    ));
    let e = r
        .url("/users/{id:u64}", &[("id", "x")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`x`") && e.contains("/users/{id:u64}"), "{e}");
}
