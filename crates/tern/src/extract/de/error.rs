//! [`DeError`]: what went wrong, and under which key.

use std::{borrow::Cow, fmt};

use serde::de;

/// A deserialization error, with the key path where it happened. Boxed:
/// errors are rare, and every `Result` a value passes through on its
/// way out of a deserializer (several per value) stays the value's size.
#[derive(Debug, PartialEq)]
pub(crate) struct DeError(pub(crate) Box<Details>);

/// What a [`DeError`] says.
#[derive(Debug, PartialEq)]
pub(crate) struct Details {
    pub(crate) path: String,
    pub(crate) message: String,
    /// A limit was exceeded (the answer names the setting).
    pub(crate) limit: bool,
    /// A tuple or sequence got another number of values than its type
    /// holds: for route parameters, the route and the handler disagree.
    pub(crate) arity: Option<(usize, String)>,
}

impl std::ops::Deref for DeError {
    type Target = Details;
    fn deref(&self) -> &Details {
        &self.0
    }
}

impl std::ops::DerefMut for DeError {
    fn deref_mut(&mut self) -> &mut Details {
        &mut self.0
    }
}

impl DeError {
    /// The same error, one level up: `key` goes in front of the path
    /// (`age` under `user` is `user[age]`; `[0]` under `tag` is `tag[0]`).
    pub(super) fn at(mut self, key: &str) -> Self {
        let key = shorten(key);
        self.path = if self.path.is_empty() {
            key.into_owned()
        } else if self.path.starts_with('[') {
            format!("{key}{}", self.path)
        } else {
            format!("{key}[{}]", self.path)
        };
        self
    }

    pub(super) fn limit(message: String) -> Self {
        DeError(Box::new(Details {
            path: String::new(),
            message,
            limit: true,
            arity: None,
        }))
    }
}

/// Client text quoted in an error, cut to a readable length: a 2 MiB key
/// is not echoed back.
pub(crate) fn shorten(text: &str) -> Cow<'_, str> {
    const MAX: usize = 64;
    if text.len() <= MAX {
        return Cow::Borrowed(text);
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}...", &text[..end]))
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError(Box::new(Details {
            path: String::new(),
            message: msg.to_string(),
            limit: false,
            arity: None,
        }))
    }

    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Self {
        let mut e: DeError =
            de::Error::custom(format_args!("invalid length {len}, expected {exp}"));
        e.arity = Some((len, exp.to_string()));
        e
    }
}
