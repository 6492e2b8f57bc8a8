//! The router against a reference matcher written for clarity, not speed.
//!
//! The reference scans every route, keeps those that match the decoded
//! segments, and picks the one whose per-segment ranks (static, then
//! constrained in the order first inserted at that position, then
//! parameter, then glob) come first lexicographically, ranking each path
//! segment by the pattern segment that consumed it. The router must agree
//! on every insert and every lookup.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use tern_router::{MatchError, Router};

/// A pattern segment, without its parameter name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Static(&'static str),
    Param,
    Con(&'static str),
    Glob,
}

/// How a path segment was consumed; the derived order is the priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Static,
    /// Index of the first accepted route with this prefix and constraint.
    Con(usize),
    Param,
    Glob,
}

#[derive(Debug)]
struct RefRoute {
    segs: Vec<Seg>,
    names: Vec<String>,
    pattern: String,
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Found(String, Vec<(String, String)>),
    NotFound,
    Malformed,
}

#[derive(Default)]
struct Reference {
    routes: Vec<RefRoute>,
}

impl Reference {
    /// Accepts the route unless one of the same shape exists.
    fn insert(&mut self, segs: &[Seg], names: Vec<String>, pattern: String) -> bool {
        if self.routes.iter().any(|r| r.segs == segs) {
            return false;
        }
        self.routes.push(RefRoute {
            segs: segs.to_vec(),
            names,
            pattern,
        });
        true
    }

    fn at(&self, path: &str) -> Outcome {
        let Some(rest) = path.strip_prefix('/') else {
            return Outcome::NotFound;
        };
        let Some(segments) = rest.split('/').map(decode).collect::<Option<Vec<_>>>() else {
            return Outcome::Malformed;
        };
        let mut best: Option<(Vec<Rank>, &RefRoute, Vec<String>)> = None;
        for route in &self.routes {
            let Some((ranks, values)) = self.try_route(route, &segments) else {
                continue;
            };
            match &best {
                Some((best_ranks, other, _)) if ranks == *best_ranks => panic!(
                    "two routes rank equally, which only conflicting routes can: {} and {}",
                    route.pattern, other.pattern
                ),
                Some((best_ranks, _, _)) if ranks > *best_ranks => {}
                _ => best = Some((ranks, route, values)),
            }
        }
        match best {
            None => Outcome::NotFound,
            Some((_, route, values)) => Outcome::Found(
                route.pattern.clone(),
                route.names.iter().cloned().zip(values).collect(),
            ),
        }
    }

    /// The ranks of each path segment and the captured values, if `route`
    /// matches.
    fn try_route(&self, route: &RefRoute, path: &[String]) -> Option<(Vec<Rank>, Vec<String>)> {
        let fixed = route.segs.iter().filter(|s| **s != Seg::Glob).count();
        let has_glob = fixed < route.segs.len();
        // With at most one glob per pattern, its span is forced.
        let glob_len = if has_glob {
            path.len().checked_sub(fixed).filter(|&n| n >= 1)?
        } else if path.len() == fixed {
            0
        } else {
            return None;
        };
        let mut ranks = Vec::new();
        let mut values = Vec::new();
        let mut at = 0;
        for (i, seg) in route.segs.iter().enumerate() {
            let segment = &path[at];
            match seg {
                Seg::Static(text) => {
                    if segment != text {
                        return None;
                    }
                    ranks.push(Rank::Static);
                }
                Seg::Con(name) => {
                    if segment.is_empty() || !constraint(name, segment) {
                        return None;
                    }
                    ranks.push(Rank::Con(self.first_with_prefix(&route.segs[..=i])));
                    values.push(segment.clone());
                }
                Seg::Param => {
                    if segment.is_empty() {
                        return None;
                    }
                    ranks.push(Rank::Param);
                    values.push(segment.clone());
                }
                Seg::Glob => {
                    if segment.is_empty() {
                        return None;
                    }
                    ranks.extend(std::iter::repeat_n(Rank::Glob, glob_len));
                    values.push(path[at..at + glob_len].join("/"));
                    at += glob_len;
                    continue;
                }
            }
            at += 1;
        }
        Some((ranks, values))
    }

    fn first_with_prefix(&self, prefix: &[Seg]) -> usize {
        self.routes
            .iter()
            .position(|r| r.segs.starts_with(prefix))
            .unwrap()
    }
}

fn constraint(name: &str, value: &str) -> bool {
    match name {
        "u64" => value.chars().all(|c| c.is_ascii_digit()) && value.parse::<u64>().is_ok(),
        "slug" => {
            value
                .chars()
                .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'))
                && !value.starts_with('-')
                && !value.ends_with('-')
                && !value.contains("--")
        }
        _ => unreachable!("no constraint {name}"),
    }
}

fn decode(segment: &str) -> Option<String> {
    let mut bytes = Vec::new();
    let mut rest = segment.as_bytes();
    while let Some((&first, tail)) = rest.split_first() {
        if first == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(first);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// The pattern text for `segs`, naming parameters `{prefix}{position}`.
fn render(segs: &[Seg], prefix: &str) -> (String, Vec<String>) {
    let mut names = Vec::new();
    let mut pattern = String::new();
    for (i, seg) in segs.iter().enumerate() {
        pattern.push('/');
        let name = format!("{prefix}{i}");
        match seg {
            Seg::Static(text) => pattern.push_str(text),
            Seg::Param => pattern.push_str(&format!("{{{name}}}")),
            Seg::Con(c) => pattern.push_str(&format!("{{{name}:{c}}}")),
            Seg::Glob => pattern.push_str(&format!("{{*{name}}}")),
        }
        if !matches!(seg, Seg::Static(_)) {
            names.push(name);
        }
    }
    (pattern, names)
}

/// A path segment likely to fit `seg`, chosen by `pick`.
fn fill(seg: &Seg, pick: u8) -> String {
    let options: &[&str] = match seg {
        Seg::Static(text) => return (*text).to_owned(),
        Seg::Param => &["x", "42", "new", "a%2Fb", "A"],
        Seg::Con("u64") => &["42", "0", "18446744073709551616", "%31"],
        Seg::Con(_) => &["my-slug", "42", "a", "-x"],
        Seg::Glob => &["a", "a/b", "x/new/1", "a/", "b/users"],
    };
    options[usize::from(pick) % options.len()].to_owned()
}

fn seg() -> impl Strategy<Value = Seg> {
    prop_oneof![
        6 => prop::sample::select(vec!["a", "b", "users", "new", "", "1"]).prop_map(Seg::Static),
        3 => Just(Seg::Param),
        1 => Just(Seg::Con("u64")),
        1 => Just(Seg::Con("slug")),
        2 => Just(Seg::Glob),
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
    ]);
    prop::collection::vec(segment, 1..=6).prop_map(|segs| format!("/{}", segs.join("/")))
}

/// Inserts `routes` into both matchers and compares every lookup.
fn check(routes: &[(Vec<Seg>, bool)], paths: &[String]) {
    let mut router = Router::new();
    let mut reference = Reference::default();
    for (segs, alt_names) in routes {
        let (pattern, names) = render(segs, if *alt_names { "q" } else { "p" });
        let accepted = reference.insert(segs, names, pattern.clone());
        let inserted = router.insert(&pattern, pattern.clone());
        assert_eq!(
            inserted.is_ok(),
            accepted,
            "inserting {pattern}: {inserted:?}"
        );
    }
    for path in paths {
        let got = match router.at(path) {
            Ok(m) => {
                assert_eq!(m.value, m.pattern);
                Outcome::Found(
                    m.pattern.to_owned(),
                    m.params
                        .iter()
                        .map(|(n, v)| (n.to_owned(), v.to_owned()))
                        .collect(),
                )
            }
            Err(MatchError::NotFound) => Outcome::NotFound,
            Err(MatchError::MalformedPath) => Outcome::Malformed,
            Err(e) => panic!("unexpected {e}"),
        };
        let routes: Vec<_> = router.iter().map(|(p, _)| p).collect();
        assert_eq!(got, reference.at(path), "path {path:?}, routes {routes:?}");
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
    let routes = vec![
        (vec![Static("o"), Con("slug")], false),
        (vec![Static("o"), Con("u64")], false),
        (vec![Static("o"), Param, Static("x")], true),
        (vec![Static("o"), Glob], false),
        (vec![Static("o"), Glob, Static("x")], true),
    ];
    let paths: Vec<String> = ["/o/12", "/o/A", "/o/A/x", "/o/a/b/x", "/o/a/b", "/o/%zz"]
        .iter()
        .map(|p| (*p).to_owned())
        .collect();
    check(&routes, &paths);
    let mut reference = Reference::default();
    for (segs, alt) in &routes {
        let (pattern, names) = render(segs, if *alt { "q" } else { "p" });
        reference.insert(segs, names, pattern);
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
