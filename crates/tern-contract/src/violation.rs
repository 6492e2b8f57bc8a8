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

/// Every rule a value breaks, in the order of its fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations(pub Vec<Violation>);

impl Violations {
    /// Records that the value at `at` breaks `rule`.
    pub fn add(&mut self, at: &Pointer<'_>, rule: &'static str, detail: impl Into<String>) {
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
