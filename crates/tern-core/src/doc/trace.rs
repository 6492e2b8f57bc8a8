//! How a type's shape is learnt: its `Deserialize` impl is run against
//! a [`Probe`] once per part, each run following a path of [`Step`]s down
//! to the part and recording what it asks for there.

use std::cell::RefCell;

use serde::de::DeserializeOwned;

use super::{
    probe::Probe,
    schema::{Field, Node},
};

/// How deep a type may nest before it is taken for a recursive one.
const MAX_DEPTH: usize = 24;

/// One step down into a type, to the part being learnt.
#[derive(Debug, Clone, Copy)]
pub(super) enum Step {
    Some,
    Elem(usize),
    Field(&'static str),
    MapValue,
    Newtype,
}

/// What the part at the end of the steps does there.
#[derive(Clone, Copy)]
pub(super) enum Act {
    /// Record its first request.
    Record,
    /// Hand its struct visitor every field but these (each a valid
    /// filler), plus an unknown one if `extra`; record how that went.
    Fill {
        skip: Option<&'static str>,
        extra: bool,
    },
    /// Choose this variant of its enum; record whether it is a unit one.
    Variant(&'static str),
}

/// The first request a type makes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Seen {
    Bool,
    Int(&'static str, i128, u128),
    Float(&'static str),
    Char,
    Str,
    Unit,
    Option,
    Seq,
    Tuple(usize),
    Map,
    Struct(&'static [&'static str]),
    Newtype,
    Enum(&'static [&'static str]),
    Any(&'static str),
}

/// How a filled struct went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Filled {
    Ok,
    Missing(&'static str),
    Unknown,
    Other,
}

/// What the probe learnt on one run.
#[derive(Default)]
pub(super) struct Log {
    pub(super) seen: Option<Seen>,
    pub(super) filled: Option<Filled>,
}

/// Runs `T`'s `Deserialize` impl once, against a probe that follows
/// `path` and does `act` there; what the run learnt.
fn probe<T: DeserializeOwned>(path: &[Step], act: Act) -> Log {
    let log = RefCell::new(Log::default());
    let _ = T::deserialize(Probe {
        path,
        act,
        log: &log,
    });
    log.into_inner()
}

/// The first request of the part at `path`.
fn seen<T: DeserializeOwned>(path: &[Step]) -> Option<Seen> {
    probe::<T>(path, Act::Record).seen
}

/// How the struct at `path` takes every field but `skip` (and an unknown
/// one if `extra`).
fn filled<T: DeserializeOwned>(path: &[Step], skip: Option<&'static str>, extra: bool) -> Filled {
    let filled = probe::<T>(path, Act::Fill { skip, extra }).filled;
    filled.unwrap_or(Filled::Other)
}

pub(super) fn trace<T: DeserializeOwned>(path: &mut Vec<Step>) -> Result<Node, String> {
    if path.len() > MAX_DEPTH {
        return Err("it nests too deep (a recursive type?)".to_owned());
    }
    let down = |step: Step, path: &mut Vec<Step>| {
        path.push(step);
        let node = trace::<T>(path);
        path.pop();
        node
    };
    Ok(match seen::<T>(path) {
        None => return Err("its Deserialize impl asks for nothing it can be given".to_owned()),
        Some(Seen::Any(why)) => return Err(format!("a part of it reads {why}")),
        Some(Seen::Bool) => Node::Bool,
        Some(Seen::Int(format, min, max)) => Node::Int { format, min, max },
        Some(Seen::Float(f)) => Node::Float(f),
        Some(Seen::Char) => Node::Char,
        Some(Seen::Str) => Node::Str,
        Some(Seen::Unit) => Node::Unit,
        Some(Seen::Option) => Node::Option(Box::new(down(Step::Some, path)?)),
        Some(Seen::Seq) => Node::Seq(Box::new(down(Step::Elem(0), path)?)),
        Some(Seen::Tuple(n)) => Node::Tuple(
            (0..n)
                .map(|i| down(Step::Elem(i), path))
                .collect::<Result<_, _>>()?,
        ),
        Some(Seen::Map) => Node::Map(Box::new(down(Step::MapValue, path)?)),
        Some(Seen::Newtype) => down(Step::Newtype, path)?,
        Some(Seen::Enum(variants)) => {
            if !variants.iter().all(|v| unit_variant::<T>(path, v)) {
                return Err("an enum with data in its variants".to_owned());
            }
            Node::Enum(variants)
        }
        Some(Seen::Struct(names)) => {
            let mut fields = Vec::with_capacity(names.len());
            for &name in names {
                let node = down(Step::Field(name), path)?;
                // Left out, the field is missing (required) or not; any
                // other answer (a filler refused) leaves it required.
                let required = filled::<T>(path, Some(name), false) != Filled::Ok;
                fields.push(Field {
                    name,
                    node,
                    required,
                });
            }
            let closed = filled::<T>(path, None, true) == Filled::Unknown;
            Node::Struct { fields, closed }
        }
    })
}

/// Whether `variant` of the enum at `path` is a unit variant.
fn unit_variant<T: DeserializeOwned>(path: &[Step], variant: &'static str) -> bool {
    probe::<T>(path, Act::Variant(variant)).filled == Some(Filled::Ok)
}
