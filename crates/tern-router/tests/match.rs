//! `Router::at`: which route a path reaches and what it captures.
#![allow(clippy::unwrap_used)]

use tern_router::{MatchError, Router};

/// What a lookup must give.
#[derive(Debug)]
enum Expect {
    /// The matching pattern and its params, in pattern order.
    Route(&'static str, &'static [(&'static str, &'static str)]),
    NotFound,
    Malformed,
}
use Expect::*;

/// Routes inserted in order, then `(path, expectation)` pairs.
type Group = (&'static [&'static str], &'static [(&'static str, Expect)]);

const UUID: &str = "67e55044-10b1-426f-9247-bb680e5fe0c8";

fn run(groups: &[Group]) {
    for (routes, cases) in groups {
        let mut router = Router::new();
        router.constraint("even", |s| s.len() % 2 == 0);
        for &pattern in *routes {
            router
                .insert(pattern, pattern)
                .unwrap_or_else(|e| panic!("inserting {pattern:?}: {e}"));
        }
        for (path, expect) in *cases {
            let got = router.at(path);
            let context = format!("routes {routes:?}, path {path:?}");
            match (expect, got) {
                (Route(pattern, params), Ok(m)) => {
                    assert_eq!(m.pattern, *pattern, "{context}");
                    assert_eq!(m.value, pattern, "{context}");
                    let got: Vec<_> = m.params.iter().collect();
                    assert_eq!(got, *params, "{context}");
                    assert_eq!(m.params.len(), params.len(), "{context}");
                    assert_eq!(m.params.is_empty(), params.is_empty(), "{context}");
                    for (name, value) in *params {
                        assert_eq!(m.params.get(name), Some(*value), "{context}");
                    }
                }
                (NotFound, Err(MatchError::NotFound))
                | (Malformed, Err(MatchError::MalformedPath)) => {}
                (expect, got) => panic!("{context}: expected {expect:?}, got {got:?}"),
            }
        }
    }
}

#[test]
fn statics() {
    run(&[(
        &["/", "/a", "/a/b", "/a/", "/café", "/{{x}}", "/a%20b"],
        &[
            ("/", Route("/", &[])),
            ("/a", Route("/a", &[])),
            ("/a/", Route("/a/", &[])),
            ("/a/b", Route("/a/b", &[])),
            ("/a/b/", NotFound),
            ("/b", NotFound),
            ("/A", NotFound),
            ("", NotFound),
            ("a", NotFound),
            ("*", NotFound),
            ("/café", Route("/café", &[])),
            ("/{x}", Route("/{{x}}", &[])),
            ("/{{x}}", NotFound),
            // Pattern text is literal: `%20` in a pattern is three characters.
            ("/a b", NotFound),
            ("/a%2520b", Route("/a%20b", &[])),
        ],
    )]);
}

#[test]
fn params() {
    run(&[(
        &[
            "/users/{id}",
            "/users/{id}/posts/{post}",
            "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}/{j}",
        ],
        &[
            ("/users/42", Route("/users/{id}", &[("id", "42")])),
            ("/users/ada", Route("/users/{id}", &[("id", "ada")])),
            (
                "/users/ada/posts/7",
                Route("/users/{id}/posts/{post}", &[("id", "ada"), ("post", "7")]),
            ),
            ("/users/", NotFound),
            ("/users", NotFound),
            ("/users/ada/posts", NotFound),
            ("/users/ada/posts/", NotFound),
            (
                "/0/1/2/3/4/5/6/7/8/9",
                Route(
                    "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}/{j}",
                    &[
                        ("a", "0"),
                        ("b", "1"),
                        ("c", "2"),
                        ("d", "3"),
                        ("e", "4"),
                        ("f", "5"),
                        ("g", "6"),
                        ("h", "7"),
                        ("i", "8"),
                        ("j", "9"),
                    ],
                ),
            ),
            (
                "/0/1/2/3/4/5/6/7/8/%39",
                Route(
                    "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}/{j}",
                    &[
                        ("a", "0"),
                        ("b", "1"),
                        ("c", "2"),
                        ("d", "3"),
                        ("e", "4"),
                        ("f", "5"),
                        ("g", "6"),
                        ("h", "7"),
                        ("i", "8"),
                        ("j", "9"),
                    ],
                ),
            ),
        ],
    )]);
}

#[test]
fn different_param_names_at_the_same_position() {
    run(&[(
        &[
            "/users/{id}",
            "/users/{user_id}/posts",
            "/users/{uid}/posts/{pid}",
            "/users/{n:u64}/likes",
            "/users/{m:u64}/likes/{k}",
        ],
        &[
            ("/users/7", Route("/users/{id}", &[("id", "7")])),
            (
                "/users/7/posts",
                Route("/users/{user_id}/posts", &[("user_id", "7")]),
            ),
            (
                "/users/7/posts/9",
                Route("/users/{uid}/posts/{pid}", &[("uid", "7"), ("pid", "9")]),
            ),
            (
                "/users/7/likes",
                Route("/users/{n:u64}/likes", &[("n", "7")]),
            ),
            (
                "/users/7/likes/x",
                Route("/users/{m:u64}/likes/{k}", &[("m", "7"), ("k", "x")]),
            ),
            ("/users/x/likes", NotFound),
        ],
    )]);
}

#[test]
fn constraints() {
    const BIG: &str = "18446744073709551615";
    const BIGGER: &str = "18446744073709551616";
    run(&[
        (
            &["/u/{v:u64}"],
            &[
                ("/u/0", Route("/u/{v:u64}", &[("v", "0")])),
                ("/u/007", Route("/u/{v:u64}", &[("v", "007")])),
                (
                    "/u/18446744073709551615",
                    Route("/u/{v:u64}", &[("v", BIG)]),
                ),
                ("/u/18446744073709551616", NotFound),
                ("/u/-1", NotFound),
                ("/u/+1", NotFound),
                ("/u/1a", NotFound),
                ("/u/", NotFound),
                ("/u/%31%32", Route("/u/{v:u64}", &[("v", "12")])),
            ],
        ),
        (
            &["/i/{v:i64}"],
            &[
                ("/i/5", Route("/i/{v:i64}", &[("v", "5")])),
                ("/i/-5", Route("/i/{v:i64}", &[("v", "-5")])),
                ("/i/-0", Route("/i/{v:i64}", &[("v", "-0")])),
                (
                    "/i/-9223372036854775808",
                    Route("/i/{v:i64}", &[("v", "-9223372036854775808")]),
                ),
                (
                    "/i/9223372036854775807",
                    Route("/i/{v:i64}", &[("v", "9223372036854775807")]),
                ),
                ("/i/9223372036854775808", NotFound),
                ("/i/-9223372036854775809", NotFound),
                ("/i/-", NotFound),
                ("/i/--1", NotFound),
                ("/i/+1", NotFound),
            ],
        ),
        (
            &["/s/{v:slug}"],
            &[
                ("/s/a", Route("/s/{v:slug}", &[("v", "a")])),
                (
                    "/s/hello-world-2",
                    Route("/s/{v:slug}", &[("v", "hello-world-2")]),
                ),
                ("/s/Hello", NotFound),
                ("/s/-a", NotFound),
                ("/s/a-", NotFound),
                ("/s/a--b", NotFound),
                ("/s/a_b", NotFound),
                ("/s/a%20b", NotFound),
            ],
        ),
        (
            &["/id/{v:uuid}"],
            &[
                (
                    "/id/67e55044-10b1-426f-9247-bb680e5fe0c8",
                    Route("/id/{v:uuid}", &[("v", UUID)]),
                ),
                (
                    "/id/67E55044-10B1-426F-9247-BB680E5FE0C8",
                    Route(
                        "/id/{v:uuid}",
                        &[("v", "67E55044-10B1-426F-9247-BB680E5FE0C8")],
                    ),
                ),
                (
                    "/id/67e55044-10B1-426f-9247-BB680e5fe0c8",
                    Route(
                        "/id/{v:uuid}",
                        &[("v", "67e55044-10B1-426f-9247-BB680e5fe0c8")],
                    ),
                ),
                ("/id/67e55044-10b1-426f-9247-bb680e5fe0c", NotFound),
                ("/id/67e55044-10b1-426f-9247-bb680e5fe0c88", NotFound),
                ("/id/67e5504410b1426f9247bb680e5fe0c8", NotFound),
                ("/id/g7e55044-10b1-426f-9247-bb680e5fe0c8", NotFound),
            ],
        ),
        (
            &["/c/{v:even}"],
            &[
                ("/c/ab", Route("/c/{v:even}", &[("v", "ab")])),
                ("/c/abc", NotFound),
                ("/c/%C3%A9", Route("/c/{v:even}", &[("v", "é")])),
            ],
        ),
        (
            // Overflowing or failing constraints fall through to the next.
            &["/n/{v:u64}", "/n/{v:i64}", "/n/{v:slug}", "/n/{v}"],
            &[
                ("/n/42", Route("/n/{v:u64}", &[("v", "42")])),
                ("/n/-42", Route("/n/{v:i64}", &[("v", "-42")])),
                (
                    "/n/18446744073709551616",
                    Route("/n/{v:slug}", &[("v", BIGGER)]),
                ),
                ("/n/Abc", Route("/n/{v}", &[("v", "Abc")])),
                (
                    "/n/-9223372036854775809",
                    Route("/n/{v}", &[("v", "-9223372036854775809")]),
                ),
            ],
        ),
    ]);
}

#[test]
fn constraints_are_tried_in_insertion_order() {
    run(&[
        (
            &["/o/{v:slug}", "/o/{v:u64}", "/o/{v}"],
            &[
                ("/o/12", Route("/o/{v:slug}", &[("v", "12")])),
                ("/o/ab", Route("/o/{v:slug}", &[("v", "ab")])),
                ("/o/AB", Route("/o/{v}", &[("v", "AB")])),
            ],
        ),
        (
            &["/o/{v:u64}", "/o/{v:slug}", "/o/{v}"],
            &[
                ("/o/12", Route("/o/{v:u64}", &[("v", "12")])),
                ("/o/ab", Route("/o/{v:slug}", &[("v", "ab")])),
            ],
        ),
        (
            // The order is per position: the node was created by the first
            // route through it, whatever routes came later.
            &["/o/{v:u64}/x", "/o/{v:slug}", "/o/{v:u64}"],
            &[
                ("/o/12", Route("/o/{v:u64}", &[("v", "12")])),
                ("/o/12/x", Route("/o/{v:u64}/x", &[("v", "12")])),
            ],
        ),
    ]);
}

#[test]
fn globs_at_the_end() {
    run(&[
        (
            &["/static/{*path}"],
            &[
                ("/static/a", Route("/static/{*path}", &[("path", "a")])),
                (
                    "/static/a/b/c",
                    Route("/static/{*path}", &[("path", "a/b/c")]),
                ),
                ("/static/a/", Route("/static/{*path}", &[("path", "a/")])),
                (
                    "/static/a//b",
                    Route("/static/{*path}", &[("path", "a//b")]),
                ),
                (
                    "/static/../etc",
                    Route("/static/{*path}", &[("path", "../etc")]),
                ),
                (
                    "/static/a%2Fb/c",
                    Route("/static/{*path}", &[("path", "a/b/c")]),
                ),
                (
                    "/static/%20/x",
                    Route("/static/{*path}", &[("path", " /x")]),
                ),
                (
                    "/static/a/%20",
                    Route("/static/{*path}", &[("path", "a/ ")]),
                ),
                ("/static/", NotFound),
                ("/static", NotFound),
                // The first segment must be non-empty: never a value like `/etc`.
                ("/static//etc", NotFound),
            ],
        ),
        (
            &["/{*all}", "/"],
            &[
                ("/", Route("/", &[])),
                ("/x", Route("/{*all}", &[("all", "x")])),
                ("/x/y/", Route("/{*all}", &[("all", "x/y/")])),
                ("//x", NotFound),
            ],
        ),
    ]);
}

#[test]
fn globs_mid_path() {
    run(&[
        (
            &["/repos/{*path}/blob", "/repos/{*path}"],
            &[
                (
                    "/repos/a/blob",
                    Route("/repos/{*path}/blob", &[("path", "a")]),
                ),
                (
                    "/repos/a/b/blob",
                    Route("/repos/{*path}/blob", &[("path", "a/b")]),
                ),
                (
                    "/repos/a/blob/b/blob",
                    Route("/repos/{*path}/blob", &[("path", "a/blob/b")]),
                ),
                (
                    "/repos/a/blob/b",
                    Route("/repos/{*path}", &[("path", "a/blob/b")]),
                ),
                ("/repos/blob", Route("/repos/{*path}", &[("path", "blob")])),
                (
                    "/repos/a/blob/",
                    Route("/repos/{*path}", &[("path", "a/blob/")]),
                ),
            ],
        ),
        (
            &["/repos/{*path}/blob/{file}"],
            &[
                (
                    "/repos/a/b/blob/x.rs",
                    Route(
                        "/repos/{*path}/blob/{file}",
                        &[("path", "a/b"), ("file", "x.rs")],
                    ),
                ),
                (
                    "/repos/a/blob/blob/c",
                    Route(
                        "/repos/{*path}/blob/{file}",
                        &[("path", "a/blob"), ("file", "c")],
                    ),
                ),
                ("/repos/a/blob", NotFound),
                ("/repos/blob/x", NotFound),
                (
                    "/repos/a%2Fb/c/blob/d%20e",
                    Route(
                        "/repos/{*path}/blob/{file}",
                        &[("path", "a/b/c"), ("file", "d e")],
                    ),
                ),
            ],
        ),
        (
            // Shortest span first: `p = "a"` lets `/x/{q}` match, so the
            // longer `p = "a/x"` for `/g/{*p}/x` is never tried.
            &["/g/{*p}/x", "/g/{*p}/x/{q}"],
            &[
                (
                    "/g/a/x/x",
                    Route("/g/{*p}/x/{q}", &[("p", "a"), ("q", "x")]),
                ),
                ("/g/a/x/b/x", Route("/g/{*p}/x", &[("p", "a/x/b")])),
                ("/g/a/x", Route("/g/{*p}/x", &[("p", "a")])),
            ],
        ),
    ]);
}

#[test]
fn priority_and_backtracking() {
    run(&[
        (
            &["/f/{*rest}", "/f/{name}", "/f/new", "/f/{n:u64}"],
            &[
                ("/f/new", Route("/f/new", &[])),
                ("/f/7", Route("/f/{n:u64}", &[("n", "7")])),
                ("/f/x", Route("/f/{name}", &[("name", "x")])),
                ("/f/x/y", Route("/f/{*rest}", &[("rest", "x/y")])),
                ("/f/new/y", Route("/f/{*rest}", &[("rest", "new/y")])),
            ],
        ),
        (
            &[
                "/users/new",
                "/users/{id}",
                "/users/{id}/edit",
                "/users/{id:u64}/posts",
            ],
            &[
                ("/users/new", Route("/users/new", &[])),
                (
                    "/users/new/edit",
                    Route("/users/{id}/edit", &[("id", "new")]),
                ),
                ("/users/5/edit", Route("/users/{id}/edit", &[("id", "5")])),
                (
                    "/users/5/posts",
                    Route("/users/{id:u64}/posts", &[("id", "5")]),
                ),
                ("/users/x/posts", NotFound),
                ("/users/new/posts", NotFound),
            ],
        ),
        (
            // Backtracking across several levels, back to the root.
            &["/a/b/c", "/a/{x}/d", "/{y}/b/e", "/{*z}/f"],
            &[
                ("/a/b/c", Route("/a/b/c", &[])),
                ("/a/b/d", Route("/a/{x}/d", &[("x", "b")])),
                ("/a/b/e", Route("/{y}/b/e", &[("y", "a")])),
                ("/a/b/f", Route("/{*z}/f", &[("z", "a/b")])),
                ("/a/b/g", NotFound),
            ],
        ),
        (
            &["/b/{id}/edit", "/b/{*rest}"],
            &[
                ("/b/1/edit", Route("/b/{id}/edit", &[("id", "1")])),
                ("/b/1/view", Route("/b/{*rest}", &[("rest", "1/view")])),
                ("/b/1", Route("/b/{*rest}", &[("rest", "1")])),
            ],
        ),
    ]);
}

#[test]
fn percent_decoding() {
    run(&[(
        &["/café", "/a", "/p/{x}", "/p/{x}/{y}"],
        &[
            ("/caf%C3%A9", Route("/café", &[])),
            ("/caf%c3%a9", Route("/café", &[])),
            ("/%61", Route("/a", &[])),
            ("/p/a%20b", Route("/p/{x}", &[("x", "a b")])),
            ("/p/a+b", Route("/p/{x}", &[("x", "a+b")])),
            ("/p/%25", Route("/p/{x}", &[("x", "%")])),
            ("/p/%2525", Route("/p/{x}", &[("x", "%25")])),
            // `%2F` stays inside its segment.
            ("/p/a%2Fb", Route("/p/{x}", &[("x", "a/b")])),
            (
                "/p/a%2fb/c",
                Route("/p/{x}/{y}", &[("x", "a/b"), ("y", "c")]),
            ),
            ("/a%2F", NotFound),
            (
                "/p/%C3%A9/%E2%82%AC",
                Route("/p/{x}/{y}", &[("x", "é"), ("y", "€")]),
            ),
            ("/p/%zz", Malformed),
            ("/p/%4", Malformed),
            ("/p/%", Malformed),
            ("/p/a%g1", Malformed),
            // Checked before matching, even where no route would match.
            ("/nothing/here/%zz", Malformed),
            ("/%zz/a", Malformed),
            // Invalid UTF-8 once decoded.
            ("/p/%FF", Malformed),
            ("/p/%C3", Malformed),
            ("/p/%C3%28", Malformed),
            ("/p/%ED%A0%80", Malformed),
        ],
    )]);
}

#[test]
fn trailing_slash_is_significant() {
    run(&[(
        &["/a", "/b/", "/c/{x}", "/d/{x}/"],
        &[
            ("/a", Route("/a", &[])),
            ("/a/", NotFound),
            ("/b/", Route("/b/", &[])),
            ("/b", NotFound),
            ("/c/1", Route("/c/{x}", &[("x", "1")])),
            ("/c/1/", NotFound),
            ("/d/1/", Route("/d/{x}/", &[("x", "1")])),
            ("/d/1", NotFound),
            ("/d//", NotFound),
        ],
    )]);
}

#[test]
fn empty_segments() {
    run(&[(
        &["/", "/a/b", "/a//b", "/p/{x}/b", "/q/{x:u64}"],
        &[
            ("/a//b", Route("/a//b", &[])),
            ("/a/b", Route("/a/b", &[])),
            ("/a///b", NotFound),
            ("//a/b", NotFound),
            ("/p//b", NotFound),
            ("/q/", NotFound),
            ("//", NotFound),
            ("/", Route("/", &[])),
        ],
    )]);
}

#[test]
fn dot_segments_are_literal() {
    run(&[(
        &["/a/../b", "/x/./y", "/f/{name}"],
        &[
            ("/a/../b", Route("/a/../b", &[])),
            ("/a/%2E%2E/b", Route("/a/../b", &[])),
            ("/b", NotFound),
            ("/x/./y", Route("/x/./y", &[])),
            ("/x/y", NotFound),
            ("/f/..", Route("/f/{name}", &[("name", "..")])),
            ("/f/.", Route("/f/{name}", &[("name", ".")])),
            ("/f/%2E%2E", Route("/f/{name}", &[("name", "..")])),
        ],
    )]);
}

#[test]
fn params_borrow_unless_decoded() {
    let mut router = Router::new();
    router.insert("/p/{x}/{*rest}", ()).unwrap();
    let path = String::from("/p/plain/a/b");
    let m = router.at(&path).unwrap();
    let range = path.as_bytes().as_ptr_range();
    for (_, value) in m.params.iter() {
        assert!(
            range.contains(&value.as_ptr()),
            "{value:?} should borrow the path"
        );
    }
    let m = router.at("/p/plain/a/b%20c").unwrap();
    assert_eq!(
        m.params.iter().collect::<Vec<_>>(),
        [("x", "plain"), ("rest", "a/b c")]
    );
}

#[test]
fn params_debug_and_default() {
    let mut router = Router::new();
    router.insert("/p/{x}/{y}", ()).unwrap();
    let m = router.at("/p/1/2").unwrap();
    assert_eq!(format!("{:?}", m.params), r#"{"x": "1", "y": "2"}"#);
    let cloned = m.params.clone();
    assert_eq!(cloned.get("y"), Some("2"));
    let empty = tern_router::Params::default();
    assert!(empty.is_empty());
    assert_eq!(empty.get("x"), None);
}

#[test]
fn match_errors_display() {
    assert_eq!(
        MatchError::NotFound.to_string(),
        "no route matches the path"
    );
    assert!(MatchError::MalformedPath
        .to_string()
        .contains("percent-escape"));
}
