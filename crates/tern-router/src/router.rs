//! The route table.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::constraint::Constraints;
use crate::error::{InsertError, MatchError, UrlError};
use crate::params::{Params, INLINE};
use crate::pattern::{self, Piece, Segment};
use crate::statics::Statics;
use crate::tree::{Captures, Decoded, Key, Node, Part, Raw, Template};
use crate::url::{UrlPart, UrlPiece};

/// A route table mapping path patterns to values of type `T`.
///
/// Build it once with [`insert`](Router::insert), then look paths up with
/// [`at`](Router::at) from any number of threads; a lookup never modifies
/// the table and allocates nothing unless the path has `%` escapes (or a
/// route captures more than eight parameters). See the [crate docs](crate)
/// for the syntax and the matching rules.
///
/// ```
/// let mut router = tern_router::Router::new();
/// router.insert("/health", "ok")?;
/// assert_eq!(*router.at("/health")?.value, "ok");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Router<T> {
    root: Node,
    routes: Vec<Route<T>>,
    by_pattern: HashMap<Box<str>, usize>,
    /// The routes whose every segment is static, by their whole path
    /// (without its first `/`): a path without `%` that is exactly one of
    /// them is found with one hash, no walk. Such a route always wins
    /// where it matches (a static segment outranks every other kind at
    /// every position), so the shortcut answers what the walk would.
    exact: Statics<usize>,
    constraints: Constraints,
}

#[derive(Clone)]
struct Route<T> {
    pattern: Box<str>,
    /// The parsed pattern with constraints resolved, for URL building.
    shape: Box<[UrlPart]>,
    /// Parameter names in pattern order, paired with captures by position.
    names: Box<[Box<str>]>,
    value: T,
}

/// A successful lookup: the route's value, its pattern and the captured
/// parameters.
///
/// `'r` borrows from the router, `'p` from the path being matched.
#[derive(Debug)]
pub struct Match<'r, 'p, T> {
    /// The value inserted with the matching pattern.
    pub value: &'r T,
    /// The parameters captured, decoded, in pattern order.
    pub params: Params<'r, 'p>,
    /// The matching pattern, exactly as inserted.
    pub pattern: &'r str,
}

impl<T> Router<T> {
    /// An empty router that knows the built-in constraints `u64`, `i64`,
    /// `slug` and `uuid`.
    pub fn new() -> Self {
        Router {
            root: Node::default(),
            routes: Vec::new(),
            by_pattern: HashMap::new(),
            exact: Statics::default(),
            constraints: Constraints::new(),
        }
    }

    /// Registers a constraint usable as `{param:NAME}` in patterns inserted
    /// from now on.
    ///
    /// `f` receives the decoded, non-empty segment and decides whether the
    /// route may match it. Registering a name again (even a built-in one)
    /// re-binds it for later inserts; routes already inserted keep the
    /// function they were inserted with.
    ///
    /// ```
    /// let mut router = tern_router::Router::new();
    /// router.constraint("hex", |s| s.bytes().all(|b| b.is_ascii_hexdigit()));
    /// router.insert("/colors/{rgb:hex}", "color")?;
    ///
    /// assert_eq!(router.at("/colors/ff00aa")?.params.get("rgb"), Some("ff00aa"));
    /// assert!(router.at("/colors/red").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn constraint<F>(&mut self, name: &str, f: F) -> &mut Self
    where
        F: Fn(&str) -> bool + Send + Sync + 'static,
    {
        self.constraints.register(name, Arc::new(f));
        self
    }

    /// Adds a route.
    ///
    /// Fails, leaving the router unchanged, when the pattern is malformed,
    /// names an unknown constraint, or conflicts with an existing route (the
    /// same shape once parameter names are ignored). Insertion order matters
    /// only between different constraints at the same position: the one
    /// inserted first is tried first.
    ///
    /// ```
    /// use tern_router::{InsertError, Router};
    ///
    /// let mut router = Router::new();
    /// router.insert("/users/{id:u64}", "by id")?;
    /// router.insert("/users/{name}", "by name")?;
    /// assert!(matches!(
    ///     router.insert("/users/{a}{b}", "two parameters, no text between"),
    ///     Err(InsertError::InvalidPattern { .. }),
    /// ));
    /// # Ok::<(), InsertError>(())
    /// ```
    pub fn insert(&mut self, pattern: &str, value: T) -> Result<(), InsertError> {
        let segments = pattern::parse(pattern).map_err(|reason| InsertError::InvalidPattern {
            pattern: pattern.to_owned(),
            reason,
        })?;
        // The whole path of a route with only static segments.
        let exact = segments
            .iter()
            .map(|segment| match segment {
                Segment::Static(text) => Some(text.as_str()),
                _ => None,
            })
            .collect::<Option<Vec<&str>>>()
            .map(|texts| texts.join("/"));
        let mut keys = Vec::with_capacity(segments.len());
        let mut names = Vec::new();
        let mut shape = Vec::with_capacity(segments.len());
        for segment in segments {
            shape.push(match &segment {
                Segment::Static(text) => UrlPart::Static(text.clone().into()),
                Segment::Param(name) => UrlPart::Param(name.clone().into(), None),
                Segment::Constrained { name, constraint } => UrlPart::Param(
                    name.clone().into(),
                    self.constraints
                        .lookup(constraint)
                        .map(|id| (constraint.clone().into(), id)),
                ),
                Segment::Glob(name) => UrlPart::Glob(name.clone().into()),
                Segment::Mixed(pieces) => UrlPart::Mixed(
                    pieces
                        .iter()
                        .map(|piece| match piece {
                            Piece::Text(text) => UrlPiece::Text(text.clone().into()),
                            Piece::Param { name, constraint } => UrlPiece::Param(
                                name.clone().into(),
                                constraint.as_ref().and_then(|c| {
                                    self.constraints.lookup(c).map(|id| (c.clone().into(), id))
                                }),
                            ),
                        })
                        .collect(),
                ),
            });
            keys.push(match segment {
                Segment::Static(text) => Key::Static(text),
                Segment::Param(name) => {
                    names.push(name.into_boxed_str());
                    Key::Param
                }
                Segment::Constrained { name, constraint } => {
                    let id = self.constraints.lookup(&constraint).ok_or_else(|| {
                        InsertError::UnknownConstraint {
                            pattern: pattern.to_owned(),
                            constraint,
                        }
                    })?;
                    names.push(name.into_boxed_str());
                    Key::Constrained(id)
                }
                Segment::Glob(name) => {
                    names.push(name.into_boxed_str());
                    Key::Glob
                }
                Segment::Mixed(pieces) => {
                    let mut parts = Vec::with_capacity(pieces.len());
                    for piece in pieces {
                        parts.push(match piece {
                            Piece::Text(text) => Part::Text(text.into_boxed_str()),
                            Piece::Param { name, constraint } => {
                                let id = match constraint {
                                    None => None,
                                    Some(constraint) => {
                                        Some(self.constraints.lookup(&constraint).ok_or_else(
                                            || InsertError::UnknownConstraint {
                                                pattern: pattern.to_owned(),
                                                constraint,
                                            },
                                        )?)
                                    }
                                };
                                names.push(name.into_boxed_str());
                                Part::Param(id)
                            }
                        });
                    }
                    Key::Mixed(Template {
                        parts: parts.into_boxed_slice(),
                    })
                }
            });
        }
        // Check before creating nodes, so a refused route leaves no trace
        // (an empty constrained node would still change the order tried).
        if let Some(existing) = self.root.get(&keys).and_then(|node| node.route) {
            return Err(InsertError::Conflict {
                pattern: pattern.to_owned(),
                existing: self.routes[existing].pattern.to_string(),
            });
        }
        let index = self.routes.len();
        self.root.get_or_insert(&keys).route = Some(index);
        if let Some(exact) = exact {
            *self.exact.get_or_insert_with(&exact, || index) = index;
        }
        self.by_pattern.insert(pattern.into(), index);
        self.routes.push(Route {
            pattern: pattern.into(),
            shape: shape.into_boxed_slice(),
            names: names.into_boxed_slice(),
            value,
        });
        Ok(())
    }

    /// Finds the route for `path`, which must be the URI path alone (no
    /// query string) and is matched on its percent-decoded segments.
    ///
    /// Returns [`MatchError::MalformedPath`] when the path has a bad `%`
    /// escape or is not UTF-8 once decoded, and [`MatchError::NotFound`]
    /// when no route matches (including any path not starting with `/`,
    /// such as `*`). Allocates nothing when the path has no `%`
    /// and the route captures at most eight parameters.
    ///
    /// ```
    /// use tern_router::{MatchError, Router};
    ///
    /// let mut router = Router::new();
    /// router.insert("/files/{*path}", "files")?;
    ///
    /// let m = router.at("/files/a%20b/c.txt")?;
    /// assert_eq!(m.pattern, "/files/{*path}");
    /// assert_eq!(m.params.get("path"), Some("a b/c.txt"));
    /// assert_eq!(router.at("/other").unwrap_err(), MatchError::NotFound);
    /// assert_eq!(router.at("/files/%zz").unwrap_err(), MatchError::MalformedPath);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn at<'r, 'p>(&'r self, path: &'p str) -> Result<Match<'r, 'p, T>, MatchError> {
        let rest = path.strip_prefix('/').ok_or(MatchError::NotFound)?;
        let mut captures = Captures::new();
        let (route, params) = if crate::bytes::contains(rest.as_bytes(), b'%') {
            let decoded = Decoded::new(rest).map_err(|_| MatchError::MalformedPath)?;
            let route = self.find(&decoded, &mut captures)?;
            let values = decoded.into_values(&captures);
            (route, Params::decoded(&route.names, values))
        } else {
            if let Some(&index) = self.exact.get(rest) {
                let route = &self.routes[index];
                return Ok(Match {
                    value: &route.value,
                    params: Params::borrowed(&route.names, rest, [(0, 0); INLINE]),
                    pattern: &route.pattern,
                });
            }
            let raw = Raw(rest);
            let route = self.find(&raw, &mut captures)?;
            let names = &route.names;
            let params = if names.len() <= INLINE && u32::try_from(rest.len()).is_ok() {
                let mut spans = [(0, 0); INLINE];
                for (span, &range) in spans.iter_mut().zip(captures.iter()) {
                    let (start, end) = raw.span(range);
                    // Both fit: they are at most `rest.len()`, checked above.
                    *span = (start as u32, end as u32);
                }
                Params::borrowed(names, rest, spans)
            } else {
                let values = captures.iter().map(|&range| raw.value(range)).collect();
                Params::owned(names, values)
            };
            (route, params)
        };
        debug_assert_eq!(params.len(), route.names.len());
        debug_assert_eq!(captures.len(), route.names.len());
        Ok(Match {
            value: &route.value,
            params,
            pattern: &route.pattern,
        })
    }

    fn find<S: crate::tree::Segments>(
        &self,
        path: &S,
        captures: &mut Captures,
    ) -> Result<&Route<T>, MatchError> {
        self.root
            .find(path, 0, &self.constraints, captures)
            .map(|index| &self.routes[index])
            .ok_or(MatchError::NotFound)
    }

    /// The number of routes.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// Whether no route has been inserted.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// `(pattern, value)` for every route, in insertion order.
    ///
    /// ```
    /// let mut router = tern_router::Router::new();
    /// router.insert("/b", 2)?;
    /// router.insert("/a", 1)?;
    /// assert_eq!(router.iter().collect::<Vec<_>>(), [("/b", &2), ("/a", &1)]);
    /// # Ok::<(), tern_router::InsertError>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> + '_ {
        self.routes
            .iter()
            .map(|route| (&*route.pattern, &route.value))
    }

    /// The value of the route inserted with exactly this pattern string.
    ///
    /// `/u/{id}` does not find a route inserted as `/u/{name}`, even though
    /// the two have the same shape.
    ///
    /// ```
    /// let mut router = tern_router::Router::new();
    /// router.insert("/u/{id}", 1)?;
    /// *router.get_mut("/u/{id}").unwrap() += 1;
    /// assert_eq!(*router.at("/u/7")?.value, 2);
    /// assert!(router.get_mut("/u/{name}").is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn get_mut(&mut self, pattern: &str) -> Option<&mut T> {
        let index = *self.by_pattern.get(pattern)?;
        Some(&mut self.routes[index].value)
    }
}

impl<T> Router<T> {
    /// Builds the path of the route inserted as `pattern` with `params`,
    /// percent-encoding each value as one segment (a glob value keeps its
    /// `/`s), and checking every constraint. Every parameter must be given
    /// exactly once and no other; a value may not be empty.
    ///
    /// The result matches the route back: `router.at(&url)` finds
    /// `pattern` with the same, decoded, parameters (unless a
    /// higher-priority route also matches that path).
    ///
    /// ```
    /// let mut router = tern_router::Router::new();
    /// router.insert("/users/{id:u64}/files/{*path}", ())?;
    /// let url = router.url("/users/{id:u64}/files/{*path}", &[("id", "7"), ("path", "a b/c.txt")])?;
    /// assert_eq!(url, "/users/7/files/a%20b/c.txt");
    /// assert!(router.url("/users/{id:u64}/files/{*path}", &[("id", "x"), ("path", "a")]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn url(&self, pattern: &str, params: &[(&str, &str)]) -> Result<String, UrlError> {
        let route = self
            .by_pattern
            .get(pattern)
            .map(|&i| &self.routes[i])
            .ok_or_else(|| UrlError::UnknownRoute {
                pattern: pattern.to_owned(),
            })?;
        crate::url::build(pattern, &route.shape, params, &self.constraints)
    }
}

impl<T> Default for Router<T> {
    fn default() -> Self {
        Router::new()
    }
}

impl<T: fmt::Debug> fmt::Debug for Router<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn router_is_shareable_across_threads() {
        fn assert_send_sync_clone<T: Send + Sync + Clone>() {}
        assert_send_sync_clone::<Router<String>>();
        assert_send_sync_clone::<Params<'static, 'static>>();
    }
}
