//! The router against a reference matcher written for clarity, not speed.
//!
//! The reference (`tern_router::reference`, shared with the fuzz target)
//! scans every route, keeps those that match the decoded segments, and
//! picks the one whose per-segment ranks (static, then constrained in the
//! order first inserted at that position, then parameter, then glob) come
//! first lexicographically, ranking each path segment by the pattern
//! segment that consumed it. The router must agree on every insert and
//! every lookup.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use tern_router::reference::{self, render, Bit, Outcome, Reference, Seg};
use tern_router::Router;

/// A path segment likely to fit `seg`, chosen by `pick`.
fn fill(seg: &Seg, pick: u8) -> String {
    let options: &[&str] = match seg {
        Seg::Static(text) => return text.clone(),
        Seg::Param => &["x", "42", "new", "a%2Fb", "A"],
        Seg::Con(c) if c == "u64" => &["42", "0", "18446744073709551616", "%31"],
        Seg::Con(_) => &["my-slug", "42", "a", "-x"],
        Seg::Glob => &["a", "a/b", "x/new/1", "a/", "b/users"],
        Seg::Mixed(bits) => {
            // Each parameter filled in turn; the text may repeat inside a
            // value (`a.b` for `{x}.{y}`), to test where the split falls.
            let values = ["a", "7", "a.b", "v1", "x-y", "%2E", "1.2.3", "-"];
            let mut out = String::new();
            for (i, bit) in bits.iter().enumerate() {
                match bit {
                    Bit::Text(text) => out.push_str(text),
                    _ => out.push_str(values[(usize::from(pick) + i * 3) % values.len()]),
                }
            }
            return out;
        }
    };
    options[usize::from(pick) % options.len()].to_owned()
}

fn mixed() -> impl Strategy<Value = Seg> {
    let text = prop::sample::select(vec![".", "-", "v", "img-", ".png", "a", "."]);
    let param = prop_oneof![
        3 => Just(Bit::Param),
        1 => Just(Bit::Con("u64".to_owned())),
    ];
    // text? param (text param)* text?, at least one text.
    (
        prop::option::of(text.clone()),
        param.clone(),
        prop::collection::vec((text.clone(), param), 0..=2),
        prop::option::of(text),
    )
        .prop_filter_map("a template has text", |(first, p, more, last)| {
            if first.is_none() && more.is_empty() && last.is_none() {
                return None;
            }
            let mut bits = Vec::new();
            bits.extend(first.map(|t| Bit::Text(t.to_owned())));
            bits.push(p);
            for (t, p) in more {
                bits.push(Bit::Text(t.to_owned()));
                bits.push(p);
            }
            bits.extend(last.map(|t| Bit::Text(t.to_owned())));
            Some(Seg::Mixed(bits))
        })
}

fn seg() -> impl Strategy<Value = Seg> {
    prop_oneof![
        6 => prop::sample::select(vec!["a", "b", "users", "new", "", "1"])
            .prop_map(|text| Seg::Static(text.to_owned())),
        3 => Just(Seg::Param),
        1 => Just(Seg::Con("u64".to_owned())),
        1 => Just(Seg::Con("slug".to_owned())),
        2 => Just(Seg::Glob),
        3 => mixed(),
    ]
}

/// Up to four segments with at most one glob, and a naming scheme.
fn route() -> impl Strategy<Value = (Vec<Seg>, bool)> {
    let segs = prop::collection::vec(seg(), 1..=4).prop_map(|mut segs| {
        let mut seen_glob = false;
        for seg in &mut segs {
            if *seg == Seg::Glob {
                if seen_glob {
                    *seg = Seg::Param;
                }
                seen_glob = true;
            }
        }
        segs
    });
    (segs, any::<bool>())
}

fn random_path() -> impl Strategy<Value = String> {
    let segment = prop::sample::select(vec![
        "a",
        "b",
        "users",
        "new",
        "",
        "1",
        "42",
        "18446744073709551616",
        "my-slug",
        "-x",
        "A",
        "%61",
        "a%2Fb",
        "%zz",
        "a.b",
        "img-7.png",
        "v1.2",
        "x-y.z",
        "a.b%2E",
        "7.png",
    ]);
    prop::collection::vec(segment, 1..=6).prop_map(|segs| format!("/{}", segs.join("/")))
}

/// Inserts `routes` into both matchers and compares every lookup.
fn check(routes: &[(Vec<Seg>, bool)], paths: &[String]) {
    let mut router = Router::new();
    let mut reference = Reference::default();
    for (segs, alt_names) in routes {
        let (pattern, names) = render(segs, if *alt_names { "q" } else { "p" });
        let accepted = reference.insert(segs.clone(), names, pattern.clone());
        let inserted = router.insert(&pattern, pattern.clone());
        assert_eq!(
            inserted.is_ok(),
            accepted,
            "inserting {pattern}: {inserted:?}"
        );
    }
    for path in paths {
        if let Ok(m) = router.at(path) {
            assert_eq!(m.value, m.pattern);
        }
        let routes: Vec<_> = router.iter().map(|(p, _)| p).collect();
        assert_eq!(
            reference::outcome(&router, path),
            reference.at(path),
            "path {path:?}, routes {routes:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn router_agrees_with_reference(
        routes in prop::collection::vec(route(), 1..=12),
        random in prop::collection::vec(random_path(), 0..=10),
        picks in prop::collection::vec(any::<u8>(), 4),
    ) {
        // Paths built from the routes themselves, so most of them hit.
        let mut paths = random;
        for (segs, _) in &routes {
            for &pick in &picks {
                let parts: Vec<_> = segs.iter().map(|s| fill(s, pick)).collect();
                paths.push(format!("/{}", parts.join("/")));
            }
        }
        check(&routes, &paths);
    }
}

#[test]
fn reference_checks_itself_on_known_cases() {
    use Seg::*;
    let o = || Static("o".to_owned());
    let x = || Static("x".to_owned());
    let routes = vec![
        (vec![o(), Con("slug".to_owned())], false),
        (vec![o(), Con("u64".to_owned())], false),
        (vec![o(), Param, x()], true),
        (vec![o(), Glob], false),
        (vec![o(), Glob, x()], true),
    ];
    let paths: Vec<String> = ["/o/12", "/o/A", "/o/A/x", "/o/a/b/x", "/o/a/b", "/o/%zz"]
        .iter()
        .map(|p| (*p).to_owned())
        .collect();
    check(&routes, &paths);
    let mut reference = Reference::default();
    for (segs, alt) in &routes {
        let (pattern, names) = render(segs, if *alt { "q" } else { "p" });
        reference.insert(segs.clone(), names, pattern);
    }
    assert_eq!(
        reference.at("/o/12"),
        Outcome::Found("/o/{p1:slug}".into(), vec![("p1".into(), "12".into())])
    );
    assert_eq!(
        reference.at("/o/a/b/x"),
        Outcome::Found("/o/{*q1}/x".into(), vec![("q1".into(), "a/b".into())])
    );
}
