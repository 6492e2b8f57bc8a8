//! The route tree and the backtracking walk over it.
//!
//! One node per pattern segment. Parameter names are not part of the tree
//! (they live on the route), so `/u/{id}` and `/u/{name}/posts` share the
//! node for their second segment.

use std::borrow::Cow;

use crate::constraint::{ConstraintId, Constraints};
use crate::decode::{decode, Malformed};
use crate::params::{InlineVec, INLINE};
use crate::statics::Statics;

/// The shape of one pattern segment, names left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Static(String),
    Mixed(Template),
    Constrained(ConstraintId),
    Param,
    Glob,
}

/// A segment of text and parameters (`img-{id}.png`), names left out.
///
/// Text and parameters alternate. A segment matches when it starts with
/// the first text (if the template starts with text) and ends with the
/// last; the parameters between are split at the texts between them,
/// found from the right: each parameter but the first takes the shortest
/// non-empty text that ends where its following text begins (the end of
/// the segment for the last), so `{name}.{ext}` splits `a.tar.gz` into
/// `a.tar` and `gz`. Then each parameter's constraint must accept its
/// text; a refusal is a mismatch (no other split is tried).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pub(crate) parts: Box<[Part]>,
}

/// A part of a [`Template`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    Text(Box<str>),
    Param(Option<ConstraintId>),
}

impl Template {
    /// Bytes of static text: more text is tried first.
    pub(crate) fn static_len(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Text(t) => t.len(),
                Part::Param(_) => 0,
            })
            .sum()
    }

    /// The parameters' byte ranges in `segment` (at most [`INLINE`]
    /// parameters per template are split here; more is refused at
    /// insert), or `None` when the segment does not fit.
    pub(crate) fn split(
        &self,
        segment: &str,
        constraints: &Constraints,
    ) -> Option<InlineVec<(usize, usize), INLINE>> {
        let bytes = segment.as_bytes();
        let mut parts: &[Part] = &self.parts;
        let mut start = 0;
        let mut end = bytes.len();
        if let [Part::Text(first), rest @ ..] = parts {
            if !bytes.starts_with(first.as_bytes()) {
                return None;
            }
            start = first.len();
            parts = rest;
        }
        if let [rest @ .., Part::Text(last)] = parts {
            if end < start + last.len() || !bytes[..end].ends_with(last.as_bytes()) {
                return None;
            }
            end -= last.len();
            parts = rest;
        }
        // `parts` is now `Param (Text Param)*`: split from the right.
        let mut ranges = InlineVec::<(usize, usize), INLINE>::new();
        let mut stack = [(0usize, 0usize); INLINE];
        let mut n = 0;
        let mut right = end;
        let mut i = parts.len();
        while i >= 3 {
            let Part::Text(text) = &parts[i - 2] else {
                return None;
            };
            // The text must end at least one byte before `right` (the
            // parameter after it is not empty) and start at least one byte
            // after `start` (nor is the one before it).
            if right < start + 2 {
                return None;
            }
            let at = rfind(&bytes[start + 1..right - 1], text.as_bytes())? + start + 1;
            *stack.get_mut(n)? = (at + text.len(), right);
            n += 1;
            right = at;
            i -= 2;
        }
        if right <= start {
            return None;
        }
        *stack.get_mut(n)? = (start, right);
        n += 1;
        // Pushed right to left; the constraints, left to right.
        let params = parts.iter().filter_map(|p| match p {
            Part::Param(c) => Some(*c),
            Part::Text(_) => None,
        });
        for (range, constraint) in stack[..n].iter().rev().zip(params) {
            if let Some(id) = constraint {
                if !constraints.accepts(id, &segment[range.0..range.1]) {
                    return None;
                }
            }
            ranges.push(*range);
        }
        Some(ranges)
    }
}

/// The last position of `needle` in `haystack`.
fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() > haystack.len() {
        return None;
    }
    (0..=haystack.len() - needle.len())
        .rev()
        .find(|&i| haystack[i..].starts_with(needle))
}

/// Capture ranges pushed while walking: `(cursor of the first segment,
/// cursor after the last)`, one per parameter on the current branch.
pub(crate) type Captures = InlineVec<(usize, usize), INLINE>;

#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// Found by exact text, hashed once there are more than a few.
    statics: Statics<Node>,
    /// Text and parameters in one segment; more static text first, then
    /// the order first inserted.
    mixed: Vec<(Template, Node)>,
    /// In the order they were first inserted, which is the order tried.
    constrained: Vec<(ConstraintId, Node)>,
    param: Option<Box<Node>>,
    glob: Option<Box<Node>>,
    /// Index of the route that ends at this node.
    pub(crate) route: Option<usize>,
    /// Whether any child is not static (one test on the walk's hot loop).
    dynamic: bool,
}

impl Node {
    /// The node reached by `keys`, if it exists; never modifies the tree.
    pub(crate) fn get(&self, keys: &[Key]) -> Option<&Node> {
        let Some((key, rest)) = keys.split_first() else {
            return Some(self);
        };
        let child = match key {
            Key::Static(text) => self.statics.get(text),
            Key::Mixed(t) => self.mixed.iter().find(|(m, _)| m == t).map(|(_, n)| n),
            Key::Constrained(id) => self
                .constrained
                .iter()
                .find(|(c, _)| c == id)
                .map(|(_, n)| n),
            Key::Param => self.param.as_deref(),
            Key::Glob => self.glob.as_deref(),
        };
        child?.get(rest)
    }

    /// The node reached by `keys`, creating missing nodes on the way.
    pub(crate) fn get_or_insert(&mut self, keys: &[Key]) -> &mut Node {
        let Some((key, rest)) = keys.split_first() else {
            return self;
        };
        if !matches!(key, Key::Static(_)) {
            self.dynamic = true;
        }
        let child = match key {
            Key::Static(text) => self.statics.get_or_insert_with(text, Node::default),
            Key::Mixed(t) => {
                let i = match self.mixed.iter().position(|(m, _)| m == t) {
                    Some(i) => i,
                    None => {
                        // After every template with as much text or more.
                        let len = t.static_len();
                        let at = self
                            .mixed
                            .iter()
                            .position(|(m, _)| m.static_len() < len)
                            .unwrap_or(self.mixed.len());
                        self.mixed.insert(at, (t.clone(), Node::default()));
                        at
                    }
                };
                &mut self.mixed[i].1
            }
            Key::Constrained(id) => {
                let i = match self.constrained.iter().position(|(c, _)| c == id) {
                    Some(i) => i,
                    None => {
                        self.constrained.push((*id, Node::default()));
                        self.constrained.len() - 1
                    }
                };
                &mut self.constrained[i].1
            }
            Key::Param => self.param.get_or_insert_with(Box::default),
            Key::Glob => self.glob.get_or_insert_with(Box::default),
        };
        child.get_or_insert(rest)
    }

    fn is_leaf(&self) -> bool {
        self.statics.is_empty()
            && self.mixed.is_empty()
            && self.constrained.is_empty()
            && self.param.is_none()
            && self.glob.is_none()
    }

    /// [`find`](Node::find), without a call when the path is used up: most
    /// lookups end on a leaf, and the call would only return its route.
    #[inline(always)]
    fn enter<S: Segments>(
        &self,
        path: &S,
        cursor: usize,
        constraints: &Constraints,
        captures: &mut Captures,
    ) -> Option<usize> {
        if path.is_end(cursor) {
            self.route
        } else {
            self.find(path, cursor, constraints, captures)
        }
    }

    /// Finds the route for the segments from `cursor` on, trying children
    /// in priority order and backtracking when a branch fails.
    ///
    /// On success `captures` holds exactly the winning branch's parameters.
    /// Recursion depth is bounded by the longest pattern, not by the path.
    pub(crate) fn find<S: Segments>(
        &self,
        path: &S,
        mut cursor: usize,
        constraints: &Constraints,
        captures: &mut Captures,
    ) -> Option<usize> {
        let mut node = self;
        // A node with only static children has nothing to fall back on if
        // its static child fails, so it is walked in this loop rather than
        // with a recursive call that would only pass the answer up.
        let (node, segment, cursor, next) = loop {
            let Some((segment, next)) = path.next(cursor) else {
                return node.route;
            };
            if !node.is_static_only() {
                break (node, segment, cursor, next);
            }
            let child = node.statics.get(segment)?;
            if path.is_end(next) {
                return child.route;
            }
            node = child;
            cursor = next;
        };
        node.find_dynamic(path, segment, cursor, next, constraints, captures)
    }

    fn is_static_only(&self) -> bool {
        !self.dynamic
    }

    /// [`find`](Node::find) at a node with constrained, parameter or glob
    /// children, given the segment at `cursor` and the cursor after it.
    fn find_dynamic<S: Segments>(
        &self,
        path: &S,
        segment: &str,
        cursor: usize,
        next: usize,
        constraints: &Constraints,
        captures: &mut Captures,
    ) -> Option<usize> {
        if let Some(child) = self.statics.get(segment) {
            let found = child.enter(path, next, constraints, captures);
            if found.is_some() {
                return found;
            }
        }
        // Templates, constraints, parameters and globs all need a
        // non-empty segment.
        if segment.is_empty() {
            return None;
        }
        if !self.mixed.is_empty() {
            let found = self.find_mixed(path, segment, cursor, next, constraints, captures);
            if found.is_some() {
                return found;
            }
        }
        for (id, child) in &self.constrained {
            if constraints.accepts(*id, segment) {
                captures.push((cursor, next));
                let found = child.enter(path, next, constraints, captures);
                if found.is_some() {
                    return found;
                }
                captures.pop();
            }
        }
        if let Some(child) = &self.param {
            captures.push((cursor, next));
            let found = child.enter(path, next, constraints, captures);
            if found.is_some() {
                return found;
            }
            captures.pop();
        }
        if let Some(glob) = &self.glob {
            if glob.is_leaf() {
                // Nothing follows the glob: it takes the whole remainder.
                if glob.route.is_some() {
                    captures.push((cursor, path.end()));
                }
                return glob.route;
            }
            // Shortest first: one segment, then two, ...; the glob node's own
            // route (if any) is reached only once the path is used up.
            let mut end = next;
            loop {
                captures.push((cursor, end));
                let found = glob.enter(path, end, constraints, captures);
                if found.is_some() {
                    return found;
                }
                captures.pop();
                match path.next(end) {
                    Some((_, after)) => end = after,
                    None => break,
                }
            }
        }
        None
    }
}

impl Node {
    /// The template children's turn in [`find_dynamic`](Node::find_dynamic),
    /// out of line: most tables have none, and the walk stays small.
    #[inline(never)]
    fn find_mixed<S: Segments>(
        &self,
        path: &S,
        segment: &str,
        cursor: usize,
        next: usize,
        constraints: &Constraints,
        captures: &mut Captures,
    ) -> Option<usize> {
        for (template, child) in &self.mixed {
            if let Some(ranges) = template.split(segment, constraints) {
                let before = captures.len();
                for &(start, end) in ranges.iter() {
                    captures.push(path.within(cursor, start, end));
                }
                let found = child.enter(path, next, constraints, captures);
                if found.is_some() {
                    return found;
                }
                while captures.len() > before {
                    captures.pop();
                }
            }
        }
        None
    }
}

/// A path cut into decoded segments, addressed by cursors.
pub(crate) trait Segments {
    /// The segment at `cursor` and the cursor after it, or `None` at the end.
    fn next(&self, cursor: usize) -> Option<(&str, usize)>;
    /// The cursor after the last segment.
    fn end(&self) -> usize;
    /// Whether `cursor` is past the last segment: `next(cursor)` is `None`.
    fn is_end(&self, cursor: usize) -> bool {
        cursor >= self.end()
    }
    /// The capture of bytes `start..end` of the segment at `cursor`.
    fn within(&self, cursor: usize, start: usize, end: usize) -> (usize, usize);
}

/// A path without `%`: segments are slices of it and cursors byte offsets.
///
/// The segment at cursor `c` runs from `c` to the next `/`; the cursor after
/// the last segment is `len + 1`, so `"a/"` has the segments `"a"` and `""`.
pub(crate) struct Raw<'p>(pub(crate) &'p str);

impl Segments for Raw<'_> {
    fn next(&self, cursor: usize) -> Option<(&str, usize)> {
        let rest = self.0.get(cursor..)?;
        // A plain byte loop: segments are a few bytes, `str::find` sets up a
        // searcher built for long haystacks, and a word-at-a-time search
        // measured no faster here.
        Some(match rest.bytes().position(|b| b == b'/') {
            Some(len) => (&rest[..len], cursor + len + 1),
            None => (rest, self.0.len() + 1),
        })
    }

    fn end(&self) -> usize {
        self.0.len() + 1
    }

    fn within(&self, cursor: usize, start: usize, end: usize) -> (usize, usize) {
        // Byte offsets, in the `span` convention (one past the end).
        (cursor + start, cursor + end + 1)
    }
}

impl<'p> Raw<'p> {
    /// The text captured between two cursors, borrowed from the path.
    pub(crate) fn value(&self, range: (usize, usize)) -> Cow<'p, str> {
        let (start, end) = self.span(range);
        Cow::Borrowed(&self.0[start..end])
    }

    /// The byte range of the text captured between two cursors.
    pub(crate) fn span(&self, (start, end): (usize, usize)) -> (usize, usize) {
        (start, end - 1)
    }
}

/// A path with `%` escapes, decoded up front: cursors index segments.
pub(crate) struct Decoded<'p> {
    path: &'p str,
    /// Decoded text and the byte range of the raw segment in `path`.
    segments: Vec<(Cow<'p, str>, usize, usize)>,
}

impl<'p> Decoded<'p> {
    /// Decodes every segment, so a malformed path is reported whether or not
    /// a route would have matched it.
    pub(crate) fn new(path: &'p str) -> Result<Self, Malformed> {
        let mut segments = Vec::new();
        let mut start = 0;
        for raw in path.split('/') {
            segments.push((decode(raw)?, start, start + raw.len()));
            start += raw.len() + 1;
        }
        Ok(Decoded { path, segments })
    }

    /// The decoded values of `captures`, in order, in the segment vector
    /// itself (so decoding allocates nothing more): entry `i` holds the text
    /// of capture `i` (its byte range is stale), and nothing follows.
    pub(crate) fn into_values(mut self, captures: &Captures) -> Vec<(Cow<'p, str>, usize, usize)> {
        if captures.iter().any(|(start, _)| start & WITHIN != 0) {
            // Parts of segments: copied out (a path with `%` and a
            // template; several values may come from one segment).
            return captures
                .iter()
                .map(|&range| match range {
                    (start, packed) if start & WITHIN != 0 => {
                        let text = &self.segments[start & !WITHIN].0;
                        let (from, to) = (packed >> HALF, packed & ((1 << HALF) - 1));
                        (Cow::Owned(text[from..to].to_owned()), 0, 0)
                    }
                    whole => (self.copy(whole), 0, 0),
                })
                .collect();
        }
        let mut len = 0;
        for &range in captures.iter() {
            let value = self.take(range);
            // The walk's captures are ordered, disjoint and at least one
            // segment each, so capture `len` starts at segment `len` or
            // later: this slot has been taken or belongs to no capture.
            self.segments[len].0 = value;
            len += 1;
        }
        self.segments.truncate(len);
        self.segments
    }

    /// The decoded text captured between two cursors, copied.
    fn copy(&self, (start, end): (usize, usize)) -> Cow<'p, str> {
        let texts: Vec<&str> = self.segments[start..end]
            .iter()
            .map(|(text, _, _)| &**text)
            .collect();
        Cow::Owned(texts.join("/"))
    }

    /// The decoded text captured between two cursors.
    ///
    /// Each segment may be taken once: the walk never captures a segment
    /// twice, so a single-segment value moves out instead of being copied.
    fn take(&mut self, (start, end): (usize, usize)) -> Cow<'p, str> {
        let span = &mut self.segments[start..end];
        if let [(single, _, _)] = span {
            return std::mem::take(single);
        }
        if span
            .iter()
            .all(|(text, _, _)| matches!(text, Cow::Borrowed(_)))
        {
            return Cow::Borrowed(&self.path[span[0].1..span[span.len() - 1].2]);
        }
        let mut joined = String::new();
        for (i, (text, _, _)) in span.iter().enumerate() {
            if i > 0 {
                joined.push('/');
            }
            joined.push_str(text);
        }
        Cow::Owned(joined)
    }
}

impl Segments for Decoded<'_> {
    fn next(&self, cursor: usize) -> Option<(&str, usize)> {
        self.segments
            .get(cursor)
            .map(|(text, _, _)| (&**text, cursor + 1))
    }

    fn end(&self) -> usize {
        self.segments.len()
    }

    fn within(&self, cursor: usize, start: usize, end: usize) -> (usize, usize) {
        // A segment index with the top bit set, and the byte range packed
        // in half words (a segment of 4 GiB is not a concern on 64-bit;
        // on 32-bit, segments over 64 KiB cannot reach a template).
        (WITHIN | cursor, (start << HALF) | end)
    }
}

const WITHIN: usize = 1 << (usize::BITS - 1);
const HALF: u32 = usize::BITS / 2;
