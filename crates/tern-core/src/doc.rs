//! What an operation takes and answers, for API documents (OpenAPI):
//! extractors and responses describe themselves into an [`Operation`]
//! when the app is built.
//!
//! Values are OpenAPI 3.1 objects as JSON; schemas they refer to by
//! `#/components/schemas/Name` go in [`Operation::schemas`].

use std::collections::BTreeMap;

use serde_json::Value;

/// One operation (a method on a path), as its extractors and its
/// response type describe it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Operation {
    /// OpenAPI Parameter Objects (query, header; path parameters come
    /// from the route).
    pub parameters: Vec<Value>,
    /// The OpenAPI Request Body Object, if the operation reads a body it
    /// can describe.
    pub request_body: Option<Value>,
    /// OpenAPI Response Objects by status (`"200"`, `"422"`).
    pub responses: BTreeMap<String, Value>,
    /// The named schemas the others refer to.
    pub schemas: BTreeMap<String, Value>,
}
