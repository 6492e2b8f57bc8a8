//! Typed constraints: the built-ins and the registry of user ones.

use std::fmt;
use std::sync::Arc;

/// Index into [`Constraints::checks`]; a name may be re-bound, an id never is.
pub(crate) type ConstraintId = usize;

type UserCheck = Arc<dyn Fn(&str) -> bool + Send + Sync>;

#[derive(Clone)]
enum Check {
    U64,
    I64,
    Slug,
    Uuid,
    User(UserCheck),
}

/// Every constraint a router knows, by name.
#[derive(Clone)]
pub(crate) struct Constraints {
    checks: Vec<Check>,
    /// Name bindings, latest last; a later binding shadows an earlier one.
    names: Vec<(Box<str>, ConstraintId)>,
}

impl Constraints {
    pub(crate) fn new() -> Self {
        let builtins = [
            ("u64", Check::U64),
            ("i64", Check::I64),
            ("slug", Check::Slug),
            ("uuid", Check::Uuid),
        ];
        let mut constraints = Constraints {
            checks: Vec::new(),
            names: Vec::new(),
        };
        for (name, check) in builtins {
            constraints.add(name, check);
        }
        constraints
    }

    pub(crate) fn register(&mut self, name: &str, f: UserCheck) {
        self.add(name, Check::User(f));
    }

    fn add(&mut self, name: &str, check: Check) {
        self.names.push((name.into(), self.checks.len()));
        self.checks.push(check);
    }

    /// The id currently bound to `name`.
    pub(crate) fn lookup(&self, name: &str) -> Option<ConstraintId> {
        self.names
            .iter()
            .rev()
            .find(|(bound, _)| **bound == *name)
            .map(|&(_, id)| id)
    }

    /// Whether constraint `id` accepts the decoded segment `value`.
    pub(crate) fn accepts(&self, id: ConstraintId, value: &str) -> bool {
        match self.checks.get(id) {
            Some(Check::U64) => is_u64(value),
            Some(Check::I64) => is_i64(value),
            Some(Check::Slug) => is_slug(value),
            Some(Check::Uuid) => is_uuid(value),
            Some(Check::User(f)) => f(value),
            None => false,
        }
    }
}

impl fmt::Debug for Constraints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.names.iter().map(|(name, _)| name))
            .finish()
    }
}

/// ASCII digits only (no sign), and the value fits in a `u64`.
fn is_u64(s: &str) -> bool {
    // `str::parse` alone would also accept a leading `+`.
    is_digits(s) && s.parse::<u64>().is_ok()
}

/// An optional `-`, ASCII digits, and the value fits in an `i64`.
fn is_i64(s: &str) -> bool {
    is_digits(s.strip_prefix('-').unwrap_or(s)) && s.parse::<i64>().is_ok()
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `[a-z0-9]+(-[a-z0-9]+)*`.
fn is_slug(s: &str) -> bool {
    s.split('-').all(|word| {
        !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    })
}

/// `8-4-4-4-12` hex digits, either case.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    type Case = (fn(&str) -> bool, &'static str);

    #[test]
    fn builtins() {
        let yes: &[Case] = &[
            (is_u64, "0"),
            (is_u64, "007"),
            (is_u64, "18446744073709551615"),
            (is_i64, "-1"),
            (is_i64, "-0"),
            (is_i64, "9223372036854775807"),
            (is_i64, "-9223372036854775808"),
            (is_slug, "a"),
            (is_slug, "hello-world-2"),
            (is_uuid, "67e55044-10b1-426f-9247-bb680e5fe0c8"),
            (is_uuid, "67E55044-10B1-426F-9247-BB680E5FE0C8"),
        ];
        let no: &[Case] = &[
            (is_u64, ""),
            (is_u64, "+1"),
            (is_u64, "-1"),
            (is_u64, "1a"),
            (is_u64, "18446744073709551616"),
            (is_u64, "١"),
            (is_i64, "-"),
            (is_i64, "+1"),
            (is_i64, "--1"),
            (is_i64, "9223372036854775808"),
            (is_i64, "-9223372036854775809"),
            (is_slug, ""),
            (is_slug, "-a"),
            (is_slug, "a-"),
            (is_slug, "a--b"),
            (is_slug, "Abc"),
            (is_slug, "a_b"),
            (is_uuid, "67e55044-10b1-426f-9247-bb680e5fe0c"),
            (is_uuid, "67e55044x10b1-426f-9247-bb680e5fe0c8"),
            (is_uuid, "67e5504410b1426f9247bb680e5fe0c8"),
            (is_uuid, "g7e55044-10b1-426f-9247-bb680e5fe0c8"),
        ];
        for &(check, value) in yes {
            assert!(check(value), "{value:?} should pass");
        }
        for &(check, value) in no {
            assert!(!check(value), "{value:?} should fail");
        }
    }

    #[test]
    fn later_binding_shadows() {
        let mut constraints = Constraints::new();
        let builtin = constraints.lookup("u64");
        constraints.register("u64", Arc::new(|s: &str| s == "x"));
        let user = constraints.lookup("u64");
        assert_ne!(builtin, user);
        assert_eq!(constraints.lookup("nope"), None);
    }
}
