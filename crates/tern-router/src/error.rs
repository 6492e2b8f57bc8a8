//! Errors from inserting and matching routes.

use std::fmt;

/// Why [`Router::insert`](crate::Router::insert) refused a pattern.
///
/// An enum, unlike Tern's other errors, because callers building route
/// tables from configuration need to tell a clash from a typo. Nothing is
/// added to the router when an insert fails.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InsertError {
    /// The pattern matches exactly the same paths, with the same priority,
    /// as one already inserted: the same shape once parameter names are
    /// ignored, such as `/u/{id}` and `/u/{name}`.
    ///
    /// ```
    /// use tern_router::{InsertError, Router};
    ///
    /// let mut router = Router::new();
    /// router.insert("/u/{id}", 1)?;
    /// let err = router.insert("/u/{name}", 2).unwrap_err();
    /// assert!(matches!(err, InsertError::Conflict { .. }));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "route `/u/{name}` conflicts with existing route `/u/{id}`: \
    ///      they match the same paths with the same priority",
    /// );
    /// # Ok::<(), InsertError>(())
    /// ```
    Conflict {
        /// The pattern being inserted.
        pattern: String,
        /// The pattern already in the router that it clashes with.
        existing: String,
    },
    /// The pattern breaks the syntax; `reason` says how to fix it.
    InvalidPattern {
        /// The pattern being inserted.
        pattern: String,
        /// What is wrong, in words meant for the developer.
        reason: String,
    },
    /// The pattern names a constraint that was never registered with
    /// [`Router::constraint`](crate::Router::constraint).
    UnknownConstraint {
        /// The pattern being inserted.
        pattern: String,
        /// The constraint name as written in the pattern.
        constraint: String,
    },
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InsertError::Conflict { pattern, existing } => write!(
                f,
                "route `{pattern}` conflicts with existing route `{existing}`: \
                 they match the same paths with the same priority"
            ),
            InsertError::InvalidPattern { pattern, reason } => {
                write!(f, "invalid route pattern `{pattern}`: {reason}")
            }
            InsertError::UnknownConstraint {
                pattern,
                constraint,
            } => write!(
                f,
                "route `{pattern}` uses unknown constraint `{constraint}`; \
                 the built-ins are u64, i64, slug and uuid, \
                 and others must be registered before the route \
                 (`constraint` on the router, `App::constraint` in Tern)"
            ),
        }
    }
}

impl std::error::Error for InsertError {}

/// Why [`Router::at`](crate::Router::at) found no route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MatchError {
    /// No route matches the path.
    NotFound,
    /// The path has a `%` not followed by two hex digits, or a segment whose
    /// decoded bytes are not UTF-8. It is the client's fault: answer 400.
    ///
    /// Checked before matching, so a malformed path is reported even when no
    /// route would have matched it.
    MalformedPath,
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MatchError::NotFound => "no route matches the path",
            MatchError::MalformedPath => {
                "the path has a malformed percent-escape or is not UTF-8 once decoded"
            }
        })
    }
}

impl std::error::Error for MatchError {}

/// Why [`Router::url`](crate::Router::url) could not build a path.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// No route was inserted with exactly this pattern.
    UnknownRoute {
        /// The pattern asked for.
        pattern: String,
    },
    /// A parameter of the pattern was not given.
    MissingParam {
        /// The route's pattern.
        pattern: String,
        /// The parameter's name.
        name: String,
    },
    /// A parameter was given that the pattern does not have, or twice.
    UnknownParam {
        /// The route's pattern.
        pattern: String,
        /// The parameter's name.
        name: String,
    },
    /// A value is empty, or its constraint refuses it: the built path
    /// would not match the route.
    InvalidValue {
        /// The route's pattern.
        pattern: String,
        /// The parameter's name.
        name: String,
        /// The value given.
        value: String,
    },
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::UnknownRoute { pattern } => write!(f, "no route `{pattern}`"),
            UrlError::MissingParam { pattern, name } => {
                write!(f, "route `{pattern}` needs the parameter `{name}`")
            }
            UrlError::UnknownParam { pattern, name } => write!(
                f,
                "route `{pattern}` has no parameter `{name}` (or it was given twice)"
            ),
            UrlError::InvalidValue {
                pattern,
                name,
                value,
            } => write!(
                f,
                "`{value}` is not a valid `{name}` for route `{pattern}` (empty, or refused by its constraint)"
            ),
        }
    }
}

impl std::error::Error for UrlError {}
