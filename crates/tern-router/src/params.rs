//! Captured parameters, kept inline for small counts.

use std::borrow::Cow;
use std::fmt;

/// How many entries live inline before an [`InlineVec`] spills to the heap.
pub(crate) const INLINE: usize = 8;

/// A vector whose first `N` entries need no allocation.
///
/// Invariant: `len <= N` implies `spill` is empty; unused inline slots hold
/// `T::default()`.
#[derive(Clone)]
pub(crate) struct InlineVec<T, const N: usize> {
    inline: [T; N],
    len: usize,
    spill: Vec<T>,
}

impl<T: Default, const N: usize> InlineVec<T, N> {
    pub(crate) fn new() -> Self {
        InlineVec {
            inline: std::array::from_fn(|_| T::default()),
            len: 0,
            spill: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len < N {
            self.inline[self.len] = value;
        } else {
            self.spill.push(value);
        }
        self.len += 1;
    }

    pub(crate) fn pop(&mut self) {
        if self.len > N {
            self.spill.pop();
        } else if self.len > 0 {
            self.inline[self.len - 1] = T::default();
        }
        self.len = self.len.saturating_sub(1);
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.inline[..self.len.min(N)].iter().chain(&self.spill)
    }
}

/// The parameters captured by a match, in pattern order.
///
/// Values are percent-decoded. A value borrows from the matched path when its
/// segments held no `%` escape and owns its decoded text otherwise. Up to
/// eight parameters are stored inline, so a match never allocates for them.
///
/// ```
/// let mut router = tern_router::Router::new();
/// router.insert("/users/{user}/posts/{post:u64}", ())?;
///
/// let params = router.at("/users/ada/posts/7")?.params;
/// assert_eq!(params.get("user"), Some("ada"));
/// assert_eq!(params.get("post"), Some("7"));
/// assert_eq!(params.get("nope"), None);
/// assert_eq!(
///     params.iter().collect::<Vec<_>>(),
///     [("user", "ada"), ("post", "7")],
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Params<'r, 'p> {
    /// The route's parameter names; value `i` belongs to `names[i]`.
    names: &'r [Box<str>],
    values: Values<'p>,
}

/// Where the values live. Kept apart from the names so a match copies a few
/// words and builds no `Cow` unless the path needed decoding.
#[derive(Clone)]
enum Values<'p> {
    /// Byte ranges of `path`, one per name: the common case, a path without
    /// `%` and at most eight parameters.
    Spans {
        path: &'p str,
        spans: [(u32, u32); INLINE],
    },
    /// One value per name: more than eight parameters, or a path longer
    /// than `u32` can index.
    Owned(Vec<Cow<'p, str>>),
    /// A path with `%`: value `i` is `decoded[i].0` (the vector of decoded
    /// segments, reused; see `Decoded::into_values`).
    Decoded(Vec<(Cow<'p, str>, usize, usize)>),
}

impl<'r, 'p> Params<'r, 'p> {
    /// Values sliced from `path`, `spans[i]` for `names[i]`.
    ///
    /// Callers guarantee `names.len() <= INLINE`, and every span a range of
    /// `path` on character boundaries.
    pub(crate) fn borrowed(
        names: &'r [Box<str>],
        path: &'p str,
        spans: [(u32, u32); INLINE],
    ) -> Self {
        debug_assert!(names.len() <= INLINE);
        Params {
            names,
            values: Values::Spans { path, spans },
        }
    }

    /// One value per name, in order.
    pub(crate) fn owned(names: &'r [Box<str>], values: Vec<Cow<'p, str>>) -> Self {
        debug_assert_eq!(names.len(), values.len());
        Params {
            names,
            values: Values::Owned(values),
        }
    }

    /// Values decoded from a path with `%`, `values[i].0` for `names[i]`.
    pub(crate) fn decoded(
        names: &'r [Box<str>],
        values: Vec<(Cow<'p, str>, usize, usize)>,
    ) -> Self {
        debug_assert_eq!(names.len(), values.len());
        Params {
            names,
            values: Values::Decoded(values),
        }
    }

    fn value(&self, i: usize) -> &str {
        match &self.values {
            Values::Spans { path, spans } => {
                let (start, end) = spans[i];
                &path[start as usize..end as usize]
            }
            Values::Owned(values) => &values[i],
            Values::Decoded(values) => &values[i].0,
        }
    }

    /// The decoded value of parameter `name`, if the matched pattern has it.
    ///
    /// Names are unique within a pattern, so at most one value exists.
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = self.names.iter().position(|n| **n == *name)?;
        Some(self.value(i))
    }

    /// `(name, decoded value)` pairs in the order they appear in the pattern.
    pub fn iter(&self) -> impl Iterator<Item = (&'r str, &str)> + use<'_, 'r, 'p> {
        let names: &'r [Box<str>] = self.names;
        names
            .iter()
            .enumerate()
            .map(move |(i, name)| (&**name, self.value(i)))
    }

    /// The number of parameters captured.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the matched pattern has no parameters.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

impl Default for Params<'_, '_> {
    fn default() -> Self {
        Params::owned(&[], Vec::new())
    }
}

impl fmt::Debug for Params<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_vec_spills_and_pops() {
        let mut v: InlineVec<usize, 2> = InlineVec::new();
        for i in 0..5 {
            v.push(i);
        }
        assert_eq!(v.iter().copied().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        for _ in 0..4 {
            v.pop();
        }
        assert_eq!(v.iter().copied().collect::<Vec<_>>(), [0]);
        v.pop();
        v.pop();
        assert_eq!(v.len(), 0);
        v.push(9);
        assert_eq!(v.iter().copied().collect::<Vec<_>>(), [9]);
    }
}
