//! Tern's route table: maps request paths to values, with static,
//! parameter, typed-constraint and glob segments.
//!
//! ```
//! use tern_router::{MatchError, Router};
//!
//! let mut router = Router::new();
//! router.insert("/", "home")?;
//! router.insert("/users/new", "new user form")?;
//! router.insert("/users/{id:u64}", "user by id")?;
//! router.insert("/users/{name}", "user by name")?;
//! router.insert("/users/{user_id}/posts", "posts of a user")?;
//! router.insert("/static/{*path}", "static file")?;
//!
//! let m = router.at("/users/42")?;
//! assert_eq!(*m.value, "user by id");
//! assert_eq!(m.pattern, "/users/{id:u64}");
//! assert_eq!(m.params.get("id"), Some("42"));
//!
//! assert_eq!(*router.at("/users/new")?.value, "new user form");
//! assert_eq!(router.at("/users/ada")?.params.get("name"), Some("ada"));
//! assert_eq!(router.at("/users/ada/posts")?.params.get("user_id"), Some("ada"));
//! assert_eq!(router.at("/static/css/site.css")?.params.get("path"), Some("css/site.css"));
//! assert_eq!(router.at("/nope").unwrap_err(), MatchError::NotFound);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Syntax
//!
//! A pattern starts with `/` and is split into segments on `/`. Each
//! segment is one of:
//!
//! | segment            | matches                                                    |
//! |--------------------|------------------------------------------------------------|
//! | `users`            | exactly `users`                                            |
//! | `{name}`           | any non-empty segment                                      |
//! | `{name:u64}`       | a non-empty segment the constraint accepts                 |
//! | `{*name}`          | one or more whole segments, possibly with `/` between them |
//! | `img-{id:u64}.png`, `v{version}`, `{name}.{ext}` | a segment of that text with non-empty parameters in it (a *template*) |
//!
//! Write `{{` and `}}` for literal braces in static text. Parameter names
//! must be non-empty and unique within a pattern, and a pattern holds at
//! most one glob, which is a whole segment.
//!
//! In a template, static text separates every two parameters (`{a}{b}` is
//! refused: where one would end is a guess), and a segment holds at most
//! eight. A segment fits a template when it starts with the template's
//! first text and ends with its last; the parameters between are split at
//! the texts between them, found **from the right**: each parameter but
//! the first takes the shortest non-empty text before the next separator
//! (or the end), so `{name}.{ext}` splits `archive.tar.gz` into
//! `archive.tar` and `gz`, and `v{major}.{minor}` splits `v1.2.3` into
//! `1.2` and `3`. The split is made once; then each parameter's
//! constraint must accept its text, or the template does not match (the
//! next sibling is tried). Templates match the decoded segment, like
//! everything else: `/a%2Eb` fits `{x}.{y}`.
//!
//! Built-in constraints:
//!
//! | name   | accepts                                                  |
//! |--------|----------------------------------------------------------|
//! | `u64`  | ASCII digits, no sign, value fits in a `u64`             |
//! | `i64`  | an optional `-` then ASCII digits, value fits in an `i64`|
//! | `slug` | `[a-z0-9]+(-[a-z0-9]+)*`                                 |
//! | `uuid` | `8-4-4-4-12` hex digits, either case                     |
//!
//! Add your own with [`Router::constraint`] before inserting routes that
//! use them.
//!
//! # Matching
//!
//! The path is split on `/` and each segment percent-decoded before it is
//! compared, so `/caf%C3%A9` matches the static pattern `/café`, and
//! parameter values come out decoded. Splitting happens first: `%2F`
//! becomes a `/` *inside* one segment's value and never separates segments,
//! so `/files/a%2Fb` matches `/files/{name}` with `name = "a/b"` and never
//! `/files/{dir}/{name}`. Pattern text is taken literally and never decoded.
//! A bad escape (`%zz`, `%4`) or a segment that is not UTF-8 once decoded is
//! [`MatchError::MalformedPath`].
//!
//! Paths are not normalized:
//!
//! - the trailing slash is significant: `/a` and `/a/` are different routes
//!   (`/a/` ends in an empty segment);
//! - empty segments (`/a//b`) are kept; since parameters, constraints and
//!   globs never match an empty segment, only a pattern with the same empty
//!   static segment matches such a path;
//! - `.` and `..` are ordinary segments matched literally, so
//!   `/files/{name}` matches `/files/..`. Check values before using them as
//!   file-system paths.
//!
//! A glob value is its segments joined by `/`, so it may contain empty
//! segments (`/static/a//b/` gives `a//b/`), but its first segment must be
//! non-empty: a glob value never starts with `/`.
//!
//! # Priority
//!
//! At every segment, children are tried from most to least specific, and
//! the first complete match wins:
//!
//! ```text
//! /users/new               1. static         (exact text)
//! /users/{id}.json         2. template       (more static text first, then the order first inserted here)
//! /users/v{id}                ...
//! /users/{id:u64}          3. constrained    (constraints in the order first inserted here)
//! /users/{id:slug}            ...
//! /users/{name}            4. parameter
//! /users/{*rest}           5. glob           (shortest span first)
//! ```
//!
//! Matching backtracks: when a more specific branch fails further down the
//! path, the next less specific one is tried. With the tree
//!
//! ```text
//! /users
//! ├── new                  route /users/new
//! └── {}                   route /users/{id}
//!     └── edit             route /users/{id}/edit
//! ```
//!
//! `/users/new/edit` first follows `new`, finds no `edit` below it, and then
//! matches `/users/{id}/edit` with `id = "new"`. Parameter names are not
//! part of the tree, so `/users/{id}` and `/users/{user_id}/posts` share the
//! `{}` node and both match.
//!
//! A glob tries the **shortest** span first: one segment, then two, and so
//! on, until the rest of the pattern matches. With `/repos/{*path}/blob` and
//! `/repos/{*path}`, the path `/repos/a/blob` gives the first with
//! `path = "a"`, and `/repos/a/blob/b/blob` gives the first with
//! `path = "a/blob/b"` (the only span that fits). A glob that ends its
//! pattern takes whatever the more specific routes left over. Put another
//! way: of all routes matching a path, the winner is the one whose
//! per-segment kinds (static < template < constrained < parameter < glob, each path
//! segment ranked by the pattern segment that consumed it) come first
//! lexicographically.
//!
//! # Conflicts
//!
//! Conflicts are found by [`Router::insert`], never while matching. Two
//! patterns conflict when they have the same shape once parameter names are
//! ignored, because they would match the same paths with the same priority:
//! `/u/{id}` and `/u/{name}`, `/f/{*a}` and `/f/{*b}`, `/n/{a:u64}` and
//! `/n/{b:u64}`, or the same pattern twice. Different constraints at the
//! same position (`/n/{a:u64}` and `/n/{a:slug}`) do not conflict, nor do
//! different templates (`/{a}.json` and `/{a}.{b}`), even where both fit
//! a segment: the priority decides.
//!
//! # Building URLs
//!
//! [`Router::url`] is the inverse of a match: given a pattern as inserted
//! and its parameters, it builds the path, percent-encoding each value as
//! one segment (a glob value keeps its `/`; the dots of a `.` or `..` value
//! are escaped so clients do not normalize them away) and checking each
//! constraint, so the built path matches the route back with the same
//! decoded parameters.
//!
//! ```
//! let mut router = tern_router::Router::new();
//! router.insert("/users/{id:u64}/files/{*path}", ())?;
//! let url = router.url("/users/{id:u64}/files/{*path}", &[("id", "7"), ("path", "a b/c")])?;
//! assert_eq!(url, "/users/7/files/a%20b/c");
//! assert_eq!(router.at(&url)?.params.get("path"), Some("a b/c"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Cost
//!
//! A path without `%` that is exactly a route made only of static
//! segments is found first, by one hash of the whole path in a table of
//! those routes (such a route always wins where it matches); a path that
//! is not costs that one hash more. Otherwise matching walks a tree with
//! one node per pattern segment. At each node
//! the static child is found by exact text: a scan when the node has at
//! most four, otherwise one hash of the segment and (usually) one probe of
//! an open-addressing table, so the cost does not grow with the number of
//! siblings. Then come the constrained children, one parameter child and
//! one glob child, with recursion no deeper than the longest pattern. It
//! never scans all routes. A path without `%` is read in place: one
//! word-at-a-time check for `%`, then one byte scan per segment visited;
//! parameters are kept as byte ranges of the path and sliced when asked
//! for. Nothing is allocated when the path has no `%` and the route has at
//! most eight parameters; a path with `%` is decoded once, segment by
//! segment, into one vector (plus one string per escaped segment) that the
//! parameters then reuse.

mod bytes;
mod constraint;
mod decode;
mod error;
mod params;
mod pattern;
pub mod reference;
mod router;
mod statics;
mod tree;
mod url;

pub use error::{InsertError, MatchError, UrlError};
pub use params::Params;
pub use router::{Match, Router};
