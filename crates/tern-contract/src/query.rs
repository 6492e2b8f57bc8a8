//! `ValidQuery<T>`: a query string read as a contract, described in the
//! OpenAPI document as one parameter per field.

use serde_json::{json, Value};
use tern::{extract::Query, http::request::Parts, http::StatusCode, IntoResponse, Response};
use tern_core::{doc::Operation, extract::FromRequestParts};

use crate::{
    integer::TextIntegers, openapi::problem_response, shape::Collected, valid::invalid, Contract,
    Definitions,
};

/// A query string that keeps its contract.
///
/// Reads the query as [`Query`] does (lists as `tag=a&tag=b`; integer
/// fields read decimal text) and answers one `422` listing **every**
/// parameter that breaks the contract, each with its pointer (`/limit`)
/// and rule, as [`Valid`](crate::Valid) does for a body: a missing one
/// (`required`), one of the wrong type (`type`, `enum`), one the contract
/// does not have (`additionalProperties`), a broken rule (`range`, ...).
/// Only a query string that cannot be read at all (a malformed
/// percent-escape, text that is not UTF-8 once decoded, more parameters
/// or deeper keys than the limits) is a `400`. In the OpenAPI document
/// each field is a query parameter with its schema and constraints.
///
/// ```
/// use tern::{App, routing::get, test::TestClient};
/// use tern_contract::{contract, ValidQuery};
///
/// #[contract]
/// struct Page {
///     #[contract(range(min = 1, max = 100))]
///     limit: Option<u32>,
///     #[contract(length(max = 40))]
///     q: Option<String>,
/// }
///
/// async fn list(ValidQuery(page): ValidQuery<Page>) -> String {
///     format!("{} {}", page.limit.unwrap_or(20), page.q.unwrap_or_default())
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let client = TestClient::new(App::new().route("/items", get(list)));
/// assert_eq!(client.get("/items?limit=5&q=tea").send().await.text(), "5 tea");
/// let res = client.get("/items?limit=500").send().await;
/// assert_eq!(res.status(), 422);
/// assert_eq!(res.json::<serde_json::Value>()["errors"][0]["pointer"], "/limit");
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValidQuery<T>(pub T);

impl<T> std::ops::Deref for ValidQuery<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<S, T> FromRequestParts<S> for ValidQuery<T>
where
    S: Send + Sync,
    T: Contract + Send,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let rejection = match Query::<TextIntegers<T>>::from_request_parts(parts, state).await {
            Ok(Query(TextIntegers(value))) => {
                return match value.validate() {
                    Ok(()) => Ok(ValidQuery(value)),
                    Err(violations) => Err(invalid(StatusCode::UNPROCESSABLE_ENTITY, &violations)),
                };
            }
            Err(rejection) => rejection,
        };
        // The error path: read again, each parameter on its own, for every
        // one that is missing, unknown, of the wrong type or breaking a
        // rule. What does not parse at all (a malformed percent-escape,
        // past the limits) fails here too, and stays the `400`.
        let collected = Query::<TextIntegers<Collected<T>>>::from_request_parts(parts, state).await;
        match collected.map(|Query(TextIntegers(c))| c.found()) {
            Ok(Some(violations)) => Err(invalid(StatusCode::UNPROCESSABLE_ENTITY, &violations)),
            Ok(None) => Err(rejection.into_response()),
            Err(unparsable) => Err(unparsable.into_response()),
        }
    }

    fn describe(op: &mut Operation) {
        let mut defs = Definitions::openapi();
        let object = T::object_schema(&mut defs);
        op.schemas.extend(defs.into_schemas());
        op.parameters.extend(parameters(&object, &op.schemas));
        problem_response(
            op,
            "400",
            "The query string cannot be read (a malformed percent-escape, not UTF-8, past the limits).",
        );
        problem_response(
            op,
            "422",
            "Parameters break the contract (missing, of the wrong type, unknown, or breaking a rule): `errors` lists each, with its JSON pointer and rule.",
        );
    }
}

/// One OpenAPI query parameter per property of `object`.
fn parameters(object: &Value, schemas: &std::collections::BTreeMap<String, Value>) -> Vec<Value> {
    let is_object = |schema: &Value| {
        let named = schema["$ref"]
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .and_then(|name| schemas.get(name));
        named.unwrap_or(schema)["type"] == "object"
    };
    let required: Vec<&str> = object["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = object["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, schema)| {
            // Absent is how a query leaves out an optional value; an
            // `Option` also reads an empty value (`?limit=`) as `None`.
            let empty_is_none = schema != &non_null(schema.clone());
            let schema = non_null(schema.clone());
            let mut parameter = json!({
                "name": name,
                "in": "query",
                "required": required.contains(&name.as_str()),
                "schema": schema,
            });
            if is_object(&schema) {
                // `user[name]=x`, as `Query` reads nested values.
                parameter["style"] = json!("deepObject");
                parameter["explode"] = json!(true);
            } else if empty_is_none {
                parameter["allowEmptyValue"] = json!(true);
            }
            parameter
        })
        .collect()
}

/// `schema` without its `null` alternative.
fn non_null(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".to_owned(), only);
                }
                return Value::Object(map);
            }
            if let Some(Value::Array(any)) = map.get("anyOf") {
                let rest: Vec<Value> = any
                    .iter()
                    .filter(|s| s.get("type").is_none_or(|t| t != "null"))
                    .cloned()
                    .collect();
                if rest.len() == 1 && map.len() == 1 {
                    return rest.into_iter().next().unwrap_or_default();
                }
                map.insert("anyOf".to_owned(), Value::Array(rest));
            }
            Value::Object(map)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_schemas_lose_their_null() {
        assert_eq!(
            non_null(json!({"type": ["integer", "null"], "minimum": 1})),
            json!({"type": "integer", "minimum": 1})
        );
        assert_eq!(
            non_null(json!({"anyOf": [{"$ref": "#/x"}, {"type": "null"}]})),
            json!({"$ref": "#/x"})
        );
        assert_eq!(
            non_null(json!({"type": "string"})),
            json!({"type": "string"})
        );
    }
}
