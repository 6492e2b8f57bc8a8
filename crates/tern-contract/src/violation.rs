//! What a contract check finds: each broken rule, where and why.

use std::fmt;

use serde::Serialize;
use smallvec::SmallVec;

/// Where a value is, as a JSON pointer (RFC 6901: `/tags/2`), kept as the
/// validation walks the value. Its text is written only when a rule is
/// broken: a valid value costs a few pushes onto an inline stack.
#[derive(Debug, Default, Clone)]
pub struct Pointer {
    segments: SmallVec<[Segment; 8]>,
}

#[derive(Debug, Clone)]
enum Segment {
    /// A struct's field: its name on the wire.
    Field(&'static str),
    /// A map's key.
    Key(Box<str>),
    /// A list's index.
    Index(usize),
}

impl Pointer {
    /// The pointer to the whole value (`""`).
    pub fn root() -> Self {
        Pointer::default()
    }

    /// Steps into the field `name` of a struct.
    pub fn push_field(&mut self, name: &'static str) {
        self.segments.push(Segment::Field(name));
    }

    /// Steps into the member `key` of a map.
    pub fn push_key(&mut self, key: &str) {
        self.segments.push(Segment::Key(key.into()));
    }

    /// Steps into the item `index` of an array.
    pub fn push_index(&mut self, index: usize) {
        self.segments.push(Segment::Index(index));
    }

    /// Steps back out of the last segment.
    pub fn pop(&mut self) {
        self.segments.pop();
    }

    /// The pointer's text.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for segment in &self.segments {
            text.push('/');
            match segment {
                Segment::Field(name) => escape(&mut text, name),
                Segment::Key(key) => escape(&mut text, key),
                Segment::Index(i) => text.push_str(&i.to_string()),
            }
        }
        text
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

/// Every rule a value breaks, in the order of its fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// Records that the value at `at` breaks `rule`.
    pub fn add(&mut self, at: &Pointer, rule: &'static str, detail: impl Into<String>) {
        self.0.push(Violation {
            pointer: at.render(),
            rule,
            detail: detail.into(),
        });
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// One line naming every violation, for a problem's `detail` or a log.
    pub fn summary(&self) -> String {
        let n = self.0.len();
        let list = self
            .0
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        if n == 1 {
            format!("1 value breaks its contract: {list}")
        } else {
            format!("{n} values break their contract: {list}")
        }
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
