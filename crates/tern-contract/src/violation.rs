//! What a contract check finds: each broken rule, where and why.

use std::fmt;

use serde::Serialize;

/// Where a value is, as a JSON pointer (RFC 6901: `/tags/2`), built as
/// the validation walks the value: each step is a value on the stack that
/// borrows its parent, so a valid value costs a few stores and no
/// allocation; the text is written only when a rule is broken.
#[derive(Debug, Clone, Copy)]
pub struct Pointer<'a> {
    parent: Option<&'a Pointer<'a>>,
    segment: Segment<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    /// The whole value.
    Root,
    /// A struct's field: its name on the wire.
    Field(&'static str),
    /// A map's key.
    Key(&'a str),
    /// A list's index.
    Index(usize),
}

impl Pointer<'static> {
    /// The pointer to the whole value (`""`).
    pub const fn root() -> Self {
        Pointer {
            parent: None,
            segment: Segment::Root,
        }
    }
}

impl Default for Pointer<'static> {
    fn default() -> Self {
        Pointer::root()
    }
}

impl<'a> Pointer<'a> {
    /// The field `name` of the struct here.
    pub fn field(&'a self, name: &'static str) -> Pointer<'a> {
        self.child(Segment::Field(name))
    }

    /// The member `key` of the map here.
    pub fn key(&'a self, key: &'a str) -> Pointer<'a> {
        self.child(Segment::Key(key))
    }

    /// The item `index` of the array here.
    pub fn index(&'a self, index: usize) -> Pointer<'a> {
        self.child(Segment::Index(index))
    }

    fn child(&'a self, segment: Segment<'a>) -> Pointer<'a> {
        Pointer {
            parent: Some(self),
            segment,
        }
    }

    /// The pointer's text.
    pub fn render(&self) -> String {
        let mut text = String::new();
        self.write(&mut text);
        text
    }

    fn write(&self, text: &mut String) {
        if let Some(parent) = self.parent {
            parent.write(text);
        }
        match self.segment {
            Segment::Root => {}
            Segment::Field(name) => {
                text.push('/');
                escape(text, name);
            }
            Segment::Key(key) => {
                text.push('/');
                escape(text, key);
            }
            Segment::Index(i) => {
                text.push('/');
                text.push_str(&i.to_string());
            }
        }
    }
}

fn escape(text: &mut String, token: &str) {
    for c in token.chars() {
        match c {
            '~' => text.push_str("~0"),
            '/' => text.push_str("~1"),
            c => text.push(c),
        }
    }
}

/// One broken rule: where (`pointer`), which rule (`length`, `range`,
/// `email`, ...), and what was wrong (`detail`). The `errors` member of a
/// `422` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The JSON pointer of the value (`/tags/2`; `""` for the whole).
    pub pointer: String,
    /// The rule, as written in the contract (`length`, `range`, `pattern`,
    /// `email`, `uri`, `uuid`, `date_time`, or a custom rule's name).
    pub rule: &'static str,
    /// What is wrong, for a person (`must be at most 20 characters (it has
    /// 31)`). Never repeats a long value.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "the value"
        } else {
            &self.pointer
        };
        write!(f, "{at} {} ({})", self.detail, self.rule)
    }
}

/// Every rule a value breaks, in the order of its fields: the first
/// [`Violations::LISTED`] of them, and how many more were found.
///
/// The list is capped because a client controls how many there are: a
/// body of 10,000 bad items would otherwise make 20,000 violations (and
/// their pointers and details) from a few tens of kilobytes. Past the cap
/// a violation is counted, not kept, so a `422` stays small whatever the
/// body, and says how many were cut.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations {
    listed: Vec<Violation>,
    cut: usize,
}

impl Violations {
    /// How many violations are kept; the rest are counted
    /// ([`Violations::cut`]).
    pub const LISTED: usize = 100;

    /// Records that the value at `at` breaks `rule`.
    pub fn add(&mut self, at: &Pointer<'_>, rule: &'static str, detail: impl Into<String>) {
        if self.is_full() {
            // Counted only: neither the pointer nor the detail is written.
            self.cut += 1;
            return;
        }
        self.listed.push(Violation {
            pointer: at.render(),
            rule,
            detail: detail.into(),
        });
    }

    /// Records `violation` (counted only, past the cap).
    pub fn push(&mut self, violation: Violation) {
        if self.is_full() {
            self.cut += 1;
        } else {
            self.listed.push(violation);
        }
    }

    /// Whether the list is at its cap: what is found next is only
    /// counted. Lets a walk skip writing what would not be kept.
    pub fn is_full(&self) -> bool {
        self.listed.len() >= Self::LISTED
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.cut == 0
    }

    /// How many were found, listed or not.
    pub fn len(&self) -> usize {
        self.listed.len() + self.cut
    }

    /// How many were found past the cap and not listed.
    pub fn cut(&self) -> usize {
        self.cut
    }

    /// The listed violations, in the order they were found.
    pub fn as_slice(&self) -> &[Violation] {
        &self.listed
    }

    /// The listed violations.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.listed.iter()
    }

    /// Forgets what was found after the first `len` (a lenient read that
    /// gave up on a value).
    pub(crate) fn truncate(&mut self, len: usize) {
        if len <= self.listed.len() {
            self.listed.truncate(len);
            self.cut = 0;
        } else {
            self.cut = self.cut.min(len - self.listed.len());
        }
    }

    /// One line naming the violations (the first ten, and how many
    /// more), for a problem's `detail` or a log.
    pub fn summary(&self) -> String {
        const NAMED: usize = 10;
        let n = self.len();
        let mut list = self
            .listed
            .iter()
            .take(NAMED)
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        if n > NAMED {
            list.push_str(&format!("; and {} more", n - NAMED));
        }
        let cut = if self.cut > 0 {
            format!(
                " (the first {} are listed in `errors`, {} more were cut)",
                self.listed.len(),
                self.cut
            )
        } else {
            String::new()
        };
        if n == 1 {
            format!("1 value breaks its contract: {list}")
        } else {
            format!("{n} values break their contract{cut}: {list}")
        }
    }
}

impl<'a> IntoIterator for &'a Violations {
    type Item = &'a Violation;
    type IntoIter = std::slice::Iter<'a, Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.listed.iter()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())
    }
}

impl std::error::Error for Violations {}

/// Client text quoted in a detail, cut to a readable length.
pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_violations_are_counted_not_kept() {
        let mut errors = Violations::default();
        let root = Pointer::root();
        for i in 0..250 {
            errors.add(&root.index(i), "type", "is wrong");
        }
        assert_eq!(errors.len(), 250);
        assert_eq!(errors.as_slice().len(), Violations::LISTED);
        assert_eq!(errors.cut(), 150);
        assert_eq!(errors.as_slice()[99].pointer, "/99");
        let summary = errors.summary();
        assert!(
            summary.starts_with(
                "250 values break their contract (the first 100 are listed in `errors`, 150 more were cut): /0 is wrong (type)"
            ),
            "{summary}"
        );
        assert!(summary.ends_with("; and 240 more"), "{summary}");

        // A lenient read that gives up forgets what it found, cut or not.
        errors.truncate(120);
        assert_eq!((errors.len(), errors.cut()), (120, 20));
        errors.truncate(3);
        assert_eq!((errors.len(), errors.cut()), (3, 0));
        assert!(!errors.is_empty());
        errors.truncate(0);
        assert!(errors.is_empty());
    }
}
