//! `Router::at` allocates nothing for a path without `%` escapes.
//!
//! `allocation-counter` installs a counting global allocator in this test
//! binary only and counts per thread, so other tests running at the same
//! time cannot disturb a measurement.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;

use tern_router::{MatchError, Router};

fn router() -> Router<&'static str> {
    let mut router = Router::new();
    router.constraint("even", |s| s.len() % 2 == 0);
    let patterns = [
        "/",
        "/health",
        "/users/new",
        "/users/{id:u64}",
        "/users/{id:uuid}",
        "/users/{name:slug}",
        "/users/{name}",
        "/users/{id}/edit",
        "/users/{user_id}/posts/{post:i64}",
        "/pairs/{p:even}",
        "/static/{*path}",
        "/repos/{*path}/blob/{file}",
        "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}",
    ];
    for pattern in patterns {
        router.insert(pattern, pattern).unwrap();
    }
    router
}

#[test]
fn the_counter_is_installed() {
    // Guards against the zero-allocation assertions passing vacuously.
    let info = allocation_counter::measure(|| drop(black_box(Box::new(1_u64))));
    assert_eq!(info.count_total, 1);
}

#[test]
fn matching_a_clean_path_allocates_nothing() {
    let router = router();
    // (path, expected pattern)
    let cases = [
        ("/", "/"),
        ("/health", "/health"),
        ("/users/new", "/users/new"),
        ("/users/42", "/users/{id:u64}"),
        (
            "/users/67e55044-10b1-426f-9247-bb680e5fe0c8",
            "/users/{id:uuid}",
        ),
        ("/users/ada-lovelace", "/users/{name:slug}"),
        ("/users/Ada", "/users/{name}"),
        ("/users/new/edit", "/users/{id}/edit"),
        ("/users/7/posts/-3", "/users/{user_id}/posts/{post:i64}"),
        ("/pairs/ab", "/pairs/{p:even}"),
        ("/static/css/site.css", "/static/{*path}"),
        ("/repos/a/b/c/blob/lib.rs", "/repos/{*path}/blob/{file}"),
        ("/1/2/3/4/5/6/7/8", "/{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}"),
    ];
    for (path, pattern) in cases {
        let mut got = None;
        let info = allocation_counter::measure(|| {
            let m = router.at(black_box(path)).unwrap();
            got = Some(m.pattern);
            for (name, value) in m.params.iter() {
                black_box((name, value));
            }
            drop(black_box(m));
        });
        assert_eq!(got, Some(pattern), "{path}");
        assert_eq!(info.count_total, 0, "{path} allocated: {info:?}");
    }
}

#[test]
fn a_miss_allocates_nothing() {
    let router = router();
    let misses = [
        "/nope",
        "/users/",
        "/users/1/posts/x",
        "/static/",
        "/repos/a/b/c",
        "/1/2/3/4/5/6/7/8/9",
        "no-slash",
    ];
    for path in misses {
        let info = allocation_counter::measure(|| {
            assert_eq!(
                router.at(black_box(path)).unwrap_err(),
                MatchError::NotFound
            );
        });
        assert_eq!(info.count_total, 0, "{path} allocated: {info:?}");
    }
}

#[test]
fn decoding_allocates_only_for_escapes() {
    // The reverse guarantee is not zero, just bounded: one segment vector
    // plus one string per escaped segment.
    let router = router();
    let info = allocation_counter::measure(|| {
        let m = router.at(black_box("/users/a%20b")).unwrap();
        assert_eq!(m.params.get("name"), Some("a b"));
    });
    assert_eq!(info.count_total, 2, "{info:?}");
}
