//! Random route tables and random paths: the router must agree with the
//! reference matcher (`tern_router::reference`) on every insert and lookup.
//!
//! Routes come from a small alphabet of statics (including text that needs
//! brace escaping, a percent sign and non-ASCII), parameters, the four
//! built-in constraints, and globs anywhere in the pattern. Paths are either
//! filled in from a route (so most lookups hit), assembled from words,
//! percent-escapes of arbitrary bytes and empty segments, or arbitrary text.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use tern_router::reference::{self, render, Bit, Reference, Seg};
use tern_router::{InsertError, Router};

const STATICS: &[&str] = &["a", "b", "users", "new", "", "1", "é", "a b", "{x}", "%61"];
const CONSTRAINTS: &[&str] = &["u64", "i64", "slug", "uuid"];
/// The texts of templates (never empty).
const TEXTS: &[&str] = &[".", "-", "v", "img-", ".png", "é", "{", "%", "a b", ".."];
/// Path segments chosen to sit on the edges of the statics and constraints.
const WORDS: &[&str] = &[
    "a",
    "b",
    "users",
    "new",
    "",
    "1",
    "42",
    "0",
    "-1",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775808",
    "my-slug",
    "-x",
    "a--b",
    "A",
    "67e55044-10b1-426f-9247-bb680e5fe0c8",
    "é",
    "%C3%A9",
    "%c3%a9",
    "%61",
    "%2561",
    "a%20b",
    "a b",
    "a%2Fb",
    "{x}",
    "%7Bx%7D",
    ".",
    "..",
    "%zz",
    "%4",
    "%",
    "%FF",
    "%C3",
];

#[derive(Debug, Arbitrary)]
enum SegSpec {
    Static(u8),
    Param,
    Con(u8),
    Glob,
    /// A template: leading text, parameters (each a kind and the text that
    /// follows it unless it is the last), trailing text.
    Mixed(Option<u8>, Vec<(u8, u8)>, Option<u8>),
}

#[derive(Debug, Arbitrary)]
struct RouteSpec {
    segs: Vec<SegSpec>,
    /// Name parameters `q0, q1, ...` instead of `p0, p1, ...`, so routes
    /// sharing a node use different names.
    alt_names: bool,
}

#[derive(Debug, Arbitrary)]
enum PathSeg {
    Word(u8),
    /// `%XX` of any byte, upper or lower case hex.
    Escape(u8, bool),
    Empty,
}

#[derive(Debug, Arbitrary)]
enum PathSpec {
    /// Each segment of route `route` filled with a value likely to fit it.
    FromRoute {
        route: u8,
        picks: Vec<u8>,
        trailing_slash: bool,
    },
    Segments {
        segs: Vec<PathSeg>,
        trailing_slash: bool,
    },
    /// Anything, including text without a leading `/`.
    Raw(String),
}

#[derive(Debug, Arbitrary)]
struct Input {
    routes: Vec<RouteSpec>,
    paths: Vec<PathSpec>,
}

fn pick<'a>(options: &[&'a str], i: u8) -> &'a str {
    options[usize::from(i) % options.len()]
}

fn segs(spec: &RouteSpec) -> Vec<Seg> {
    spec.segs
        .iter()
        .take(6)
        .map(|seg| match seg {
            SegSpec::Static(i) => Seg::Static(pick(STATICS, *i).to_owned()),
            SegSpec::Param => Seg::Param,
            SegSpec::Con(i) => Seg::Con(pick(CONSTRAINTS, *i).to_owned()),
            SegSpec::Glob => Seg::Glob,
            SegSpec::Mixed(lead, params, trail) => template(*lead, params, *trail),
        })
        .collect()
}

fn template(lead: Option<u8>, params: &[(u8, u8)], trail: Option<u8>) -> Seg {
    let params = &params[..params.len().min(3)];
    if params.is_empty() {
        return Seg::Static(pick(TEXTS, lead.unwrap_or(0)).to_owned());
    }
    let mut bits = Vec::new();
    bits.extend(lead.map(|t| Bit::Text(pick(TEXTS, t).to_owned())));
    for (i, (kind, text)) in params.iter().enumerate() {
        bits.push(if kind % 3 == 0 {
            Bit::Con(pick(CONSTRAINTS, kind / 3).to_owned())
        } else {
            Bit::Param
        });
        if i + 1 < params.len() {
            bits.push(Bit::Text(pick(TEXTS, *text).to_owned()));
        }
    }
    match trail {
        Some(t) => bits.push(Bit::Text(pick(TEXTS, t).to_owned())),
        // A template holds text somewhere.
        None if lead.is_none() && params.len() == 1 => bits.push(Bit::Text(".".to_owned())),
        None => {}
    }
    Seg::Mixed(bits)
}

/// A value for `seg`, usually one it accepts.
fn fill(seg: &Seg, choice: u8) -> String {
    let options: &[&str] = match seg {
        Seg::Static(text) if !choice.is_multiple_of(8) => return text.clone(),
        Seg::Static(_) => WORDS,
        Seg::Param => &["x", "42", "new", "a%2Fb", "A", "%zz", ""],
        Seg::Con(c) => match c.as_str() {
            "u64" => &["42", "0", "18446744073709551616", "%31", "-1"],
            "i64" => &["-1", "42", "9223372036854775808", "-", "1-"],
            "slug" => &["my-slug", "42", "a", "-x", "A"],
            _ => &["67e55044-10b1-426f-9247-bb680e5fe0c8", "x", "42"],
        },
        Seg::Glob => &[
            "a", "a/b", "x/new/1", "a/", "b/users", "/a", "a//b", "%zz/a",
        ],
        Seg::Mixed(bits) => {
            let values = ["a", "42", "a.b", "-1", "my-slug", "%2E", "", "é", "v1.2"];
            let mut out = String::new();
            for (i, bit) in bits.iter().enumerate() {
                match bit {
                    Bit::Text(text) if !choice.is_multiple_of(7) => out.push_str(text),
                    Bit::Text(_) => out.push_str(pick(WORDS, choice)),
                    _ => out.push_str(pick(&values, choice.wrapping_add(i as u8 * 5))),
                }
            }
            return out;
        }
    };
    pick(options, choice).to_owned()
}

fn path(spec: &PathSpec, routes: &[Vec<Seg>]) -> String {
    let (parts, trailing_slash): (Vec<String>, bool) = match spec {
        PathSpec::FromRoute {
            route,
            picks,
            trailing_slash,
        } => {
            let Some(segs) = routes.get(usize::from(*route) % routes.len().max(1)) else {
                return "/".to_owned();
            };
            let parts = segs
                .iter()
                .enumerate()
                .map(|(i, seg)| fill(seg, picks.get(i).copied().unwrap_or(1)))
                .collect();
            (parts, *trailing_slash)
        }
        PathSpec::Segments {
            segs,
            trailing_slash,
        } => {
            let parts = segs
                .iter()
                .take(8)
                .map(|seg| match seg {
                    PathSeg::Word(i) => pick(WORDS, *i).to_owned(),
                    PathSeg::Escape(byte, true) => format!("%{byte:02X}"),
                    PathSeg::Escape(byte, false) => format!("%{byte:02x}"),
                    PathSeg::Empty => String::new(),
                })
                .collect();
            (parts, *trailing_slash)
        }
        PathSpec::Raw(text) => return text.chars().take(40).collect(),
    };
    let mut path = format!("/{}", parts.join("/"));
    if trailing_slash {
        path.push('/');
    }
    path
}

fuzz_target!(|input: Input| {
    let mut router = Router::new();
    let mut slow = Reference::default();
    let mut tables = Vec::new();
    for spec in input.routes.iter().take(16) {
        let segs = segs(spec);
        if segs.is_empty() {
            continue;
        }
        let (pattern, names) = render(&segs, if spec.alt_names { "q" } else { "p" });
        let inserted = router.insert(&pattern, ());
        if segs.iter().filter(|s| **s == Seg::Glob).count() > 1 {
            assert!(
                matches!(inserted, Err(InsertError::InvalidPattern { .. })),
                "two globs in {pattern} must be refused: {inserted:?}"
            );
            continue;
        }
        let accepted = slow.insert(segs.clone(), names, pattern.clone());
        match &inserted {
            Ok(()) => assert!(accepted, "{pattern} accepted, the reference says conflict"),
            Err(InsertError::Conflict { .. }) => {
                assert!(!accepted, "{pattern} refused as a conflict: {inserted:?}");
            }
            Err(e) => panic!("{pattern} refused: {e}"),
        }
        tables.push(segs);
    }
    for spec in input.paths.iter().take(16) {
        let path = path(spec, &tables);
        let routes: Vec<_> = router.iter().map(|(p, _)| p).collect();
        assert_eq!(
            reference::outcome(&router, &path),
            slow.at(&path),
            "path {path:?}, routes {routes:?}"
        );
    }
});
