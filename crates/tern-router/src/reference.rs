//! A slow matcher written for clarity; used by tests and the fuzz target;
//! not part of the API.
//!
//! It implements the documented rules directly and shares no code with the
//! router (its own percent-decoder, its own constraint checks), so the two
//! can only agree by both being right. [`Reference::at`] scans every route,
//! keeps those that match the decoded segments, and picks the one whose
//! per-segment ranks (static, then constrained in the order first inserted
//! at that position, then parameter, then glob) come first
//! lexicographically, ranking each path segment by the pattern segment that
//! consumed it.
//!
//! ```
//! use tern_router::reference::{self, Outcome, Reference, Seg};
//! use tern_router::Router;
//!
//! let mut router = Router::new();
//! let mut slow = Reference::default();
//! for segs in [vec![Seg::Static("users".into()), Seg::Param]] {
//!     let (pattern, names) = reference::render(&segs, "p");
//!     assert!(slow.insert(segs, names, pattern.clone()));
//!     router.insert(&pattern, ())?;
//! }
//! assert_eq!(reference::outcome(&router, "/users/ada"), slow.at("/users/ada"));
//! assert_eq!(slow.at("/users/%zz"), Outcome::Malformed);
//! # Ok::<(), tern_router::InsertError>(())
//! ```
#![doc(hidden)]

use crate::{MatchError, Router};

/// A pattern segment, without its parameter name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    /// Literal text, matched against the decoded path segment.
    Static(String),
    /// `{name}`: any non-empty segment.
    Param,
    /// `{name:constraint}` with a built-in constraint: `u64`, `i64`, `slug`
    /// or `uuid`.
    Con(String),
    /// `{*name}`: one or more segments, the first non-empty.
    Glob,
    /// Text and parameters in one segment (`img-{id}.png`).
    Mixed(Vec<Bit>),
}

/// A piece of a [`Seg::Mixed`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Bit {
    /// Literal text (non-empty).
    Text(String),
    /// `{name}`.
    Param,
    /// `{name:constraint}` with a built-in constraint.
    Con(String),
}

/// How a path segment was consumed; the derived order is the priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Static,
    /// More static text first, then the index of the first accepted route
    /// with this prefix and template.
    Mixed(std::cmp::Reverse<usize>, usize),
    /// Index of the first accepted route with this prefix and constraint.
    Con(usize),
    Param,
    Glob,
}

#[derive(Debug)]
struct Route {
    segs: Vec<Seg>,
    names: Vec<String>,
    pattern: String,
}

/// The result of a lookup, comparable between the router and the reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The matching pattern and its `(name, decoded value)` parameters.
    Found(String, Vec<(String, String)>),
    /// No route matches.
    NotFound,
    /// A bad `%` escape, or a segment that is not UTF-8 once decoded.
    Malformed,
}

/// The router's answer for `path`, as an [`Outcome`].
pub fn outcome<T>(router: &Router<T>, path: &str) -> Outcome {
    match router.at(path) {
        Ok(m) => Outcome::Found(
            m.pattern.to_owned(),
            m.params
                .iter()
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
        ),
        Err(MatchError::NotFound) => Outcome::NotFound,
        Err(MatchError::MalformedPath) => Outcome::Malformed,
    }
}

/// The pattern text for `segs` and its parameter names, naming each
/// parameter `{prefix}{position}`; braces in static text are doubled.
pub fn render(segs: &[Seg], prefix: &str) -> (String, Vec<String>) {
    let mut names = Vec::new();
    let mut pattern = String::new();
    for (i, seg) in segs.iter().enumerate() {
        pattern.push('/');
        let name = format!("{prefix}{i}");
        match seg {
            Seg::Static(text) => {
                pattern.push_str(&text.replace('{', "{{").replace('}', "}}"));
                continue;
            }
            Seg::Param => pattern.push_str(&format!("{{{name}}}")),
            Seg::Con(c) => pattern.push_str(&format!("{{{name}:{c}}}")),
            Seg::Glob => pattern.push_str(&format!("{{*{name}}}")),
            Seg::Mixed(bits) => {
                for (j, bit) in bits.iter().enumerate() {
                    let name = format!("{prefix}{i}_{j}");
                    match bit {
                        Bit::Text(text) => {
                            pattern.push_str(&text.replace('{', "{{").replace('}', "}}"));
                        }
                        Bit::Param => pattern.push_str(&format!("{{{name}}}")),
                        Bit::Con(c) => pattern.push_str(&format!("{{{name}:{c}}}")),
                    }
                    if !matches!(bit, Bit::Text(_)) {
                        names.push(name);
                    }
                }
                continue;
            }
        }
        names.push(name);
    }
    (pattern, names)
}

/// A route table matched by linear scan.
#[derive(Debug, Default)]
pub struct Reference {
    routes: Vec<Route>,
}

impl Reference {
    /// Accepts the route unless one of the same shape exists (a conflict),
    /// and returns whether it did.
    ///
    /// `names` holds one name per non-static segment, in order; `pattern` is
    /// what [`Outcome::Found`] reports.
    pub fn insert(&mut self, segs: Vec<Seg>, names: Vec<String>, pattern: String) -> bool {
        if self.routes.iter().any(|r| r.segs == segs) {
            return false;
        }
        self.routes.push(Route {
            segs,
            names,
            pattern,
        });
        true
    }

    /// The route the documented rules pick for `path`.
    ///
    /// # Panics
    ///
    /// When two routes rank equally on a path, which only conflicting
    /// routes can: that would be a bug in the reference itself.
    pub fn at(&self, path: &str) -> Outcome {
        let Some(rest) = path.strip_prefix('/') else {
            return Outcome::NotFound;
        };
        let Some(segments) = rest.split('/').map(decode).collect::<Option<Vec<_>>>() else {
            return Outcome::Malformed;
        };
        let mut best: Option<(Vec<Rank>, &Route, Vec<String>)> = None;
        for (index, route) in self.routes.iter().enumerate() {
            let Some((ranks, values)) = self.try_route(index, &segments) else {
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

    /// The ranks of each path segment and the captured values, if route
    /// `index` matches.
    fn try_route(&self, index: usize, path: &[String]) -> Option<(Vec<Rank>, Vec<String>)> {
        let route = &self.routes[index];
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
                    ranks.push(Rank::Con(self.first_with_prefix(&route.segs[..=i], index)));
                    values.push(segment.clone());
                }
                Seg::Param => {
                    if segment.is_empty() {
                        return None;
                    }
                    ranks.push(Rank::Param);
                    values.push(segment.clone());
                }
                Seg::Mixed(bits) => {
                    let parts = split_mixed(bits, segment)?;
                    let text: usize = bits
                        .iter()
                        .map(|b| match b {
                            Bit::Text(t) => t.len(),
                            _ => 0,
                        })
                        .sum();
                    ranks.push(Rank::Mixed(
                        std::cmp::Reverse(text),
                        self.first_with_prefix(&route.segs[..=i], index),
                    ));
                    values.extend(parts);
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

    /// The index of the first route (at most `own`, whose prefix this is)
    /// starting with `prefix`: where the router created that node.
    fn first_with_prefix(&self, prefix: &[Seg], own: usize) -> usize {
        self.routes
            .iter()
            .position(|r| r.segs.starts_with(prefix))
            .unwrap_or(own)
    }
}

/// The values of a template's parameters in `segment`, by the documented
/// rule, found the slow way: of every split into non-empty parameters,
/// the one whose parameter lengths, first to last, are largest in
/// lexicographic order; then every constraint must accept its value.
fn split_mixed(bits: &[Bit], segment: &str) -> Option<Vec<String>> {
    fn all(bits: &[Bit], rest: &str, out: &mut Vec<String>, found: &mut Vec<Vec<String>>) {
        match bits.split_first() {
            None if rest.is_empty() => found.push(out.clone()),
            None => {}
            Some((Bit::Text(text), more)) => {
                if let Some(after) = rest.strip_prefix(text.as_str()) {
                    all(more, after, out, found);
                }
            }
            Some((_, more)) => {
                let ends = rest.char_indices().skip(1).chain([(rest.len(), ' ')]);
                for (end, _) in ends.filter(|&(end, _)| end > 0) {
                    out.push(rest[..end].to_owned());
                    all(more, &rest[end..], out, found);
                    out.pop();
                }
            }
        }
    }
    let mut found = Vec::new();
    all(bits, segment, &mut Vec::new(), &mut found);
    let best = found.into_iter().max_by(|a, b| {
        let la: Vec<usize> = a.iter().map(String::len).collect();
        let lb: Vec<usize> = b.iter().map(String::len).collect();
        la.cmp(&lb)
    })?;
    let cons = bits.iter().filter(|b| !matches!(b, Bit::Text(_)));
    for (value, bit) in best.iter().zip(cons) {
        if let Bit::Con(name) = bit {
            if !constraint(name, value) {
                return None;
            }
        }
    }
    Some(best)
}

/// Whether the built-in constraint `name` accepts `value`; an unknown name
/// accepts nothing.
fn constraint(name: &str, value: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    match name {
        "u64" => digits(value) && value.parse::<u64>().is_ok(),
        "i64" => digits(value.strip_prefix('-').unwrap_or(value)) && value.parse::<i64>().is_ok(),
        "slug" => {
            !value.is_empty()
                && value
                    .chars()
                    .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'))
                && !value.starts_with('-')
                && !value.ends_with('-')
                && !value.contains("--")
        }
        "uuid" => {
            value.len() == 36
                && value.chars().enumerate().all(|(i, c)| {
                    if [8, 13, 18, 23].contains(&i) {
                        c == '-'
                    } else {
                        c.is_ascii_hexdigit()
                    }
                })
        }
        _ => false,
    }
}

/// Decodes `%XX` escapes; `None` for a bad escape or non-UTF-8 result.
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
