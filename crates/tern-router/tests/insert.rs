//! `Router::insert`: which patterns are accepted, which are refused and why.
#![allow(clippy::unwrap_used)]

use tern_router::{InsertError, Router};

fn router_with(patterns: &[&str]) -> Router<usize> {
    let mut router = Router::new();
    router.constraint("hex", |s| s.bytes().all(|b| b.is_ascii_hexdigit()));
    for (i, pattern) in patterns.iter().enumerate() {
        router
            .insert(pattern, i)
            .unwrap_or_else(|e| panic!("inserting {pattern:?}: {e}"));
    }
    router
}

#[test]
fn valid_patterns() {
    let patterns = [
        "/",
        "/a",
        "/a/",
        "/a//b",
        "/a/./b/../c",
        "/café",
        "/users/{id}",
        "/users/{id}/posts/{post}",
        "/users/{id:u64}",
        "/users/{id:i64}",
        "/users/{id:slug}",
        "/users/{id:uuid}",
        "/users/{id:hex}",
        "/users/{*rest}",
        "/repos/{*path}/blob",
        "/repos/{*path}/blob/{file}",
        "/{*all}",
        "/{x}",
        "/braces/{{literal}}",
        "/braces/{{",
        "/braces/}}",
        "/a{{b}}c",
        "/with-dash/{some_name}/{other-name}",
        "/glob/{*rest}/",
        "/a%20b",
    ];
    let router = router_with(&patterns);
    assert_eq!(router.len(), patterns.len());
    assert!(!router.is_empty());
    let listed: Vec<_> = router.iter().map(|(p, &v)| (p.to_owned(), v)).collect();
    let expected: Vec<_> = patterns
        .iter()
        .enumerate()
        .map(|(i, p)| ((*p).to_owned(), i))
        .collect();
    assert_eq!(listed, expected, "iter() is in insertion order");
}

#[test]
fn invalid_patterns() {
    // (pattern, a fragment the reason must contain)
    let cases = [
        ("", "must start with `/`"),
        ("users", "must start with `/`"),
        ("{id}", "must start with `/`"),
        ("/{a}{b}", "no text between them"),
        ("/x{a}{b:u64}.y", "no text between them"),
        ("/x{*rest}", "must be a whole segment"),
        ("/{*rest}.tar", "must be a whole segment"),
        ("/{a}-{a}", "`a` is used twice"),
        ("/{a}/{b}.{a}", "`a` is used twice"),
        ("/{a}.{b}.{c}.{d}.{e}.{f}.{g}.{h}.{i}", "at most 8"),
        ("/{}", "empty parameter name"),
        ("/{:u64}", "empty parameter name"),
        ("/{*}", "empty parameter name"),
        ("/{id:}", "empty constraint name"),
        ("/{id}/{id}", "`id` is used twice"),
        ("/{id}/{id:u64}", "`id` is used twice"),
        ("/{id}/{*id}", "`id` is used twice"),
        ("/{id", "unterminated `{`"),
        ("/a/{", "unterminated `{`"),
        ("/{a{b}}", "unterminated `{`"),
        ("/a}", "unmatched `}`"),
        ("/}a", "unmatched `}`"),
        ("/{*rest:u64}", "cannot take a constraint"),
        ("/{a*}", "`*`"),
        ("/{*a}/{*b}", "at most one glob"),
    ];
    for (pattern, fragment) in cases {
        let mut router = router_with(&[]);
        match router.insert(pattern, 0) {
            Err(InsertError::InvalidPattern {
                pattern: reported,
                reason,
            }) => {
                assert_eq!(reported, pattern);
                assert!(
                    reason.contains(fragment),
                    "{pattern:?}: reason {reason:?} lacks {fragment:?}"
                );
                let shown = router.insert(pattern, 0).unwrap_err().to_string();
                assert!(
                    shown.contains(pattern) && shown.contains(&reason),
                    "{shown}"
                );
            }
            other => panic!("{pattern:?}: expected InvalidPattern, got {other:?}"),
        }
        assert!(router.is_empty(), "{pattern:?} left a route behind");
    }
}

#[test]
fn conflicts() {
    // (existing routes, new pattern, the existing pattern it clashes with)
    let cases: &[(&[&str], &str, &str)] = &[
        (&["/a"], "/a", "/a"),
        (&["/"], "/", "/"),
        (&["/u/{id}"], "/u/{name}", "/u/{id}"),
        (&["/u/{id}"], "/u/{id}", "/u/{id}"),
        (&["/f/{*a}"], "/f/{*b}", "/f/{*a}"),
        (&["/n/{a:u64}"], "/n/{b:u64}", "/n/{a:u64}"),
        (&["/n/{a:hex}"], "/n/{b:hex}", "/n/{a:hex}"),
        (&["/r/{*p}/blob"], "/r/{*q}/blob", "/r/{*p}/blob"),
        (&["/x", "/u/{id}/p/{q}"], "/u/{a}/p/{b}", "/u/{id}/p/{q}"),
        (&["/{{a}}"], "/{{a}}", "/{{a}}"),
    ];
    for &(existing, pattern, clash) in cases {
        let mut router = router_with(existing);
        let err = router.insert(pattern, 99).unwrap_err();
        assert_eq!(
            err,
            InsertError::Conflict {
                pattern: pattern.to_owned(),
                existing: clash.to_owned(),
            }
        );
        let shown = err.to_string();
        assert!(
            shown.contains(&format!("`{pattern}`")) && shown.contains(&format!("`{clash}`")),
            "Display must name both routes: {shown}"
        );
        assert_eq!(router.len(), existing.len(), "a refused route is not added");
    }
}

#[test]
fn non_conflicts() {
    // Pairs that look alike but differ in shape or priority.
    let cases: &[&[&str]] = &[
        &[
            "/n/{a:u64}",
            "/n/{a:slug}",
            "/n/{a:i64}",
            "/n/{a}",
            "/n/{*a}",
        ],
        &["/n/{a:u64}", "/n/{b:hex}"],
        &["/a", "/a/"],
        &["/a", "/{a}"],
        &["/users/{id}", "/users/{user_id}/posts"],
        &["/f/{*a}", "/f/{*a}/x", "/f/{a}/x"],
        &["/{{a}}", "/{a}"],
    ];
    for patterns in cases {
        let router = router_with(patterns);
        assert_eq!(router.len(), patterns.len());
    }
}

#[test]
fn unknown_constraint() {
    let cases = [
        ("/n/{id:u32}", "u32"),
        ("/n/{id:U64}", "U64"),
        ("/n/{id:u64:x}", "u64:x"),
    ];
    for (pattern, constraint) in cases {
        let mut router = router_with(&[]);
        let err = router.insert(pattern, 0).unwrap_err();
        assert_eq!(
            err,
            InsertError::UnknownConstraint {
                pattern: pattern.to_owned(),
                constraint: constraint.to_owned(),
            }
        );
        assert!(err.to_string().contains(constraint));
        assert!(router.is_empty());
    }
}

#[test]
fn constraint_registered_later_is_unknown_before() {
    let mut router = Router::new();
    assert!(matches!(
        router.insert("/c/{x:even}", 0),
        Err(InsertError::UnknownConstraint { .. })
    ));
    router.constraint("even", |s| s.len() % 2 == 0);
    router.insert("/c/{x:even}", 0).unwrap();
}

#[test]
fn refused_insert_leaves_no_node_behind() {
    // Had a refused `/m/{a:slug}/...` created its slug node, the slug route
    // inserted later would be tried before the u64 one.
    let refused = ["/m/{a:slug}/{b}/{b}", "/m/{a:slug}/{b:nope}"];
    for pattern in refused {
        let mut router = Router::new();
        assert!(router.insert(pattern, "refused").is_err());
        router.insert("/m/{a:u64}", "u64").unwrap();
        router.insert("/m/{a:slug}", "slug").unwrap();
        assert_eq!(*router.at("/m/12").unwrap().value, "u64", "after {pattern}");
    }
}

#[test]
fn get_mut_uses_the_exact_pattern() {
    let mut router = router_with(&["/u/{id}", "/a"]);
    *router.get_mut("/u/{id}").unwrap() += 10;
    assert_eq!(*router.at("/u/1").unwrap().value, 10);
    assert!(router.get_mut("/u/{name}").is_none());
    assert!(router.get_mut("/nope").is_none());
    assert!(router.get_mut("not a pattern {").is_none());
    assert_eq!(router.get_mut("/a").copied(), Some(1));
}

#[test]
fn default_is_empty() {
    let router: Router<()> = Router::default();
    assert!(router.is_empty());
    assert_eq!(router.len(), 0);
    assert_eq!(router.iter().count(), 0);
}
