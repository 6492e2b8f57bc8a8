//! [`Operation`]: what one operation takes and answers, as its
//! extractors and its response type describe it.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::{fields_of, schema_of, Format};

/// One operation (a method on a path), as its extractors and its
/// response type describe it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Operation {
    /// OpenAPI Parameter Objects (query, header; path parameters come
    /// from the route, and a `Path` extractor may type them: a parameter
    /// `in: path` here replaces the route's of the same name).
    pub parameters: Vec<Value>,
    /// The OpenAPI Request Body Object, if the operation reads a body it
    /// can describe.
    pub request_body: Option<Value>,
    /// OpenAPI Response Objects by status (`"200"`, `"422"`).
    pub responses: BTreeMap<String, Value>,
    /// The named schemas the others refer to.
    pub schemas: BTreeMap<String, Value>,
    /// What the document cannot say of this operation's input, one line
    /// per extractor that could not describe itself (`"the JSON body
    /// (app::Payload): it reads any value"`). An operation with any is
    /// listed by name in the document's description, its input left open:
    /// a reader (or a tester) is told, not misled.
    pub undescribed: Vec<String>,
    /// The protocol the operation switches to (`"websocket"`): not a
    /// request and an answer that OpenAPI can describe. Documents leave
    /// such an operation out of `paths` and list it in their description.
    pub upgrade: Option<String>,
}

impl Operation {
    /// Adds an `application/problem+json` answer for `status` (`"400"`),
    /// unless the operation lists one already (an extractor that knows
    /// more about it described it first).
    pub fn problem(&mut self, status: &str, description: &str) {
        self.responses.entry(status.to_owned()).or_insert_with(|| {
            json!({
                "description": description,
                "content": { "application/problem+json": {
                    "schema": { "$ref": "#/components/schemas/Problem" } } },
            })
        });
    }
}

impl Operation {
    /// Describes a query string read into `T`: one parameter per field
    /// (a nested struct as a `deepObject`), or, when `T`'s shape cannot be
    /// learnt, a line in [`undescribed`](Self::undescribed).
    pub fn query_of<T: DeserializeOwned>(&mut self) {
        match fields_of::<T>(Format::Urlencoded) {
            Ok(fields) => {
                for (name, mut schema, required) in fields {
                    // An `Option` reads an empty value as `None`: OpenAPI
                    // says so of a query parameter with `allowEmptyValue`.
                    let empty = json!({ "type": "string", "maxLength": 0 });
                    let mut allow_empty = false;
                    if let Some([inner, alt]) = schema["anyOf"].as_array().map(Vec::as_slice) {
                        if alt == &empty {
                            (schema, allow_empty) = (inner.clone(), true);
                        }
                    }
                    let mut parameter = json!({
                        "name": name, "in": "query", "required": required, "schema": schema,
                    });
                    if allow_empty {
                        parameter["allowEmptyValue"] = json!(true);
                    }
                    if parameter["schema"]["type"] == "object" {
                        parameter["style"] = json!("deepObject");
                        parameter["explode"] = json!(true);
                    }
                    self.parameters.push(parameter);
                }
            }
            Err(why) => self.undescribed.push(format!(
                "the query string (`{}`): {why}",
                std::any::type_name::<T>()
            )),
        }
    }

    /// Describes a required body read into `T`, in each of `media_types`:
    /// `T`'s schema, or, when it cannot be learnt, an open schema (`{}`)
    /// and a line in [`undescribed`](Self::undescribed). A body already
    /// described gains the media types.
    pub fn body_of<T: DeserializeOwned>(&mut self, media_types: &[&str], format: Format) {
        // `serde_json::Value` reads any JSON: the open schema is exact.
        let any_json = std::any::type_name::<T>() == "serde_json::value::Value";
        let schema = match schema_of::<T>(format) {
            Ok(schema) => schema,
            Err(_) if any_json && format == Format::Json => json!({}),
            Err(why) => {
                self.undescribed.push(format!(
                    "the {} body (`{}`): {why}",
                    media_types.join(" or "),
                    std::any::type_name::<T>()
                ));
                json!({})
            }
        };
        let body = self
            .request_body
            .get_or_insert_with(|| json!({ "required": true, "content": {} }));
        for media_type in media_types {
            body["content"][*media_type] = json!({ "schema": schema });
        }
    }

    /// Adds JSON Schema keywords (`minLength`, `pattern`) to the property
    /// `field` of the request body's schema, in each of its media types:
    /// the rules a handler checks beyond the type, which no `Deserialize`
    /// impl tells. Call it after the body's extractor has described it.
    ///
    /// ```
    /// # use tern_core::doc::{Format, Operation};
    /// # #[derive(serde::Deserialize)] struct Note { text: String }
    /// let mut op = Operation::default();
    /// op.body_of::<Note>(&["application/json"], Format::Json);
    /// op.body_rules("text", serde_json::json!({ "minLength": 1, "maxLength": 500 }));
    /// let schema = &op.request_body.unwrap()["content"]["application/json"]["schema"];
    /// assert_eq!(schema["properties"]["text"]["maxLength"], 500);
    /// ```
    pub fn body_rules(&mut self, field: &str, keywords: Value) {
        let (Some(body), Value::Object(keywords)) = (self.request_body.as_mut(), keywords) else {
            return;
        };
        let Some(content) = body["content"].as_object_mut() else {
            return;
        };
        for media in content.values_mut() {
            if let Some(property) = media["schema"]["properties"][field].as_object_mut() {
                property.extend(keywords.clone());
            }
        }
    }

    /// Types the route's path parameters by `T` (a struct by field name,
    /// a tuple or one value by position: `x-tern-position`) where `T`
    /// says more than "a string"; documents put these in place of the
    /// route's. Nothing when `T`'s shape cannot be learnt: the route's
    /// pattern still types each parameter.
    pub fn path_of<T: DeserializeOwned>(&mut self) {
        let Ok(schema) = schema_of::<T>(Format::Urlencoded) else {
            return;
        };
        let plain = |s: &Value| s == &json!({ "type": "string" });
        let mut add = |name: Option<&str>, position: usize, schema: &Value| {
            if plain(schema) {
                return;
            }
            let mut parameter = json!({ "in": "path", "required": true, "schema": schema });
            match name {
                Some(name) => parameter["name"] = json!(name),
                None => parameter["x-tern-position"] = json!(position),
            }
            self.parameters.push(parameter);
        };
        if let Some(properties) = schema["properties"].as_object() {
            for (i, (name, schema)) in properties.iter().enumerate() {
                add(Some(name), i, schema);
            }
        } else if let Some(items) = schema["prefixItems"].as_array() {
            for (i, schema) in items.iter().enumerate() {
                add(None, i, schema);
            }
        } else {
            add(None, 0, &schema);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, dead_code)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::Operation;
    use crate::doc::{schema::URLENCODED_KEY, Format};

    #[derive(Deserialize)]
    struct Search {
        q: String,
        page: Option<u32>,
        #[serde(default)]
        tag: Vec<String>,
    }

    #[test]
    fn a_query_is_one_parameter_per_field() {
        let mut op = Operation::default();
        op.query_of::<Search>();
        let p = |name: &str| op.parameters.iter().find(|p| p["name"] == name).unwrap();
        assert_eq!(p("q")["required"], true);
        assert_eq!(p("q")["schema"], json!({ "type": "string" }));
        // `?page=` reads as `None`.
        assert_eq!(p("page")["required"], false);
        assert_eq!(p("page")["allowEmptyValue"], true);
        assert_eq!(p("page")["schema"]["type"], "integer");
        assert_eq!(p("tag")["schema"]["type"], "array");
        assert!(p("tag").get("allowEmptyValue").is_none());
        assert!(op.undescribed.is_empty());

        let mut op = Operation::default();
        op.query_of::<serde_json::Value>();
        assert!(op.parameters.is_empty());
        assert_eq!(op.undescribed.len(), 1, "{:?}", op.undescribed);
    }

    #[test]
    fn a_form_s_unknown_keys_are_still_keys() {
        let mut op = Operation::default();
        op.body_of::<Search>(&["application/x-www-form-urlencoded"], Format::Urlencoded);
        op.body_rules("q", json!({ "minLength": 1 }));
        let body = op.request_body.unwrap();
        let schema = &body["content"]["application/x-www-form-urlencoded"]["schema"];
        assert_eq!(schema["properties"]["q"]["minLength"], 1);
        assert_eq!(schema["propertyNames"]["pattern"], URLENCODED_KEY);
        let mut op = Operation::default();
        op.body_of::<Search>(&["application/json"], Format::Json);
        let body = op.request_body.unwrap();
        assert!(body["content"]["application/json"]["schema"]["propertyNames"].is_null());
    }

    #[test]
    fn a_path_types_only_what_the_pattern_cannot() {
        let mut op = Operation::default();
        op.path_of::<(String, u32)>();
        assert_eq!(op.parameters.len(), 1, "{:?}", op.parameters);
        assert_eq!(op.parameters[0]["x-tern-position"], 1);
        assert_eq!(op.parameters[0]["schema"]["format"], "uint32");
    }
}
