//! What an operation takes and answers, for API documents (OpenAPI):
//! extractors and responses describe themselves into an [`Operation`]
//! when the app is built.
//!
//! Values are OpenAPI 3.1 objects as JSON; schemas they refer to by
//! `#/components/schemas/Name` go in [`Operation::schemas`].
//!
//! A plain serde type has no schema of its own, but its `Deserialize`
//! impl says what it reads: [`schema_of`] asks it, without any data, and
//! gives the JSON Schema of what it accepts (field names, types, integer
//! bounds, which fields may be left out, whether unknown ones are
//! refused). What it cannot learn (a type that reads any value, such as
//! an untagged enum) it says, so the operation is marked
//! [`undescribed`](Operation::undescribed) rather than silently wrong.
//!
//! ```
//! use serde::Deserialize;
//! use tern_core::doc::{schema_of, Format};
//!
//! #[derive(Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct Search { q: String, page: Option<u32>, #[serde(default)] tag: Vec<String> }
//!
//! let schema = schema_of::<Search>(Format::Json).unwrap();
//! assert_eq!(schema["required"], serde_json::json!(["q"]));
//! assert_eq!(schema["properties"]["page"]["maximum"], u32::MAX);
//! assert_eq!(schema["additionalProperties"], false);
//! ```
//!
//! # What lives where
//! - `operation`: [`Operation`], what one operation takes and answers,
//!   and how an extractor describes its query, body or path into it.
//! - `schema`: [`Format`], [`schema_of`] and [`fields_of`]: a type traced
//!   into a tree of what it reads, rendered as JSON Schema.
//! - `trace`: how that tree is learnt: the type's `Deserialize` impl run
//!   once per part, each run following a path of steps down to the part
//!   and recording what the part asks for.
//! - `probe`: the recording deserializer that follows the path.
//! - `filler`: the deserializer that gives a small valid value to the
//!   parts that are not probed.
//! - `access`: the sequences, maps and enums those two hand a visitor.

mod access;
mod filler;
mod operation;
mod probe;
mod schema;
mod trace;

pub use operation::Operation;
pub use schema::{fields_of, schema_of, Format};
