//! The OpenAPI 3.1 document of an app, made from its routes and its
//! contracts, and the routes that serve it.
//!
//! Every route is in the document, contracts or not: its path with typed
//! parameters (`{id:u64}` is an integer), its methods, and what its
//! extractors and answer describe (`Valid<T>` gives the body's and the
//! answer's schema in JSON and CBOR, and the problems it answers). Every
//! operation lists the `application/problem+json` errors.
//!
//! ```
//! use tern::{App, routing::get, test::TestClient};
//! use tern_contract::{contract, openapi::OpenApi, Valid};
//!
//! #[contract]
//! struct Item { #[contract(length(min = 1))] name: String }
//!
//! async fn item() -> Valid<Item> { Valid(Item { name: "hammer".into() }) }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let app = OpenApi::new("Shop", "1.0.0").serve(App::new().route("/items/{id:u64}", get(item)));
//! let client = TestClient::new(app);
//! let doc: serde_json::Value = client.get("/openapi.json").send().await.json();
//! assert_eq!(doc["openapi"], "3.1.0");
//! let get = &doc["paths"]["/items/{id}"]["get"];
//! assert_eq!(get["parameters"][0]["schema"]["type"], "integer");
//! assert_eq!(
//!     get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
//!     "#/components/schemas/Item"
//! );
//! # }
//! ```

use serde_json::{json, Map, Value};
use tern::{
    doc::Operation,
    http::{header, HeaderValue, StatusCode},
    routing::{get, ApiRoute},
    App, IntoResponse, Problem, Response,
};

use crate::{Contract, Definitions};

/// Where the document is served.
pub const DOCUMENT_PATH: &str = "/openapi.json";
/// Where the docs page is served.
pub const DOCS_PATH: &str = "/docs";

/// The document's `info`, and the routes that serve it.
#[derive(Debug, Clone)]
pub struct OpenApi {
    title: String,
    version: String,
    description: Option<String>,
}

impl OpenApi {
    /// A document titled `title`, for version `version` of the API.
    pub fn new(title: impl Into<String>, version: impl Into<String>) -> Self {
        OpenApi {
            title: title.into(),
            version: version.into(),
            description: None,
        }
    }

    /// A description (Markdown) for the document's `info`.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// The document for `routes` (from
    /// [`AppService::api_routes`](tern::AppService::api_routes)). Routes
    /// under a host pattern are left out (OpenAPI has no host per path),
    /// as are the document and docs routes themselves.
    ///
    /// Two kinds of operation are named in `info.description` instead of
    /// being silently wrong: those whose input an extractor could not
    /// describe ([`Operation::undescribed`]: in `paths`, the input left
    /// open, `x-tern-undescribed` saying why), and WebSocket routes
    /// ([`Operation::upgrade`]: left out of `paths`, since OpenAPI has no
    /// way to say "a GET that switches protocols", and a client or a
    /// tester made from the document could only send a plain GET).
    pub fn document(&self, routes: &[ApiRoute]) -> Value {
        let mut paths = Map::new();
        let mut undescribed = Vec::new();
        let mut upgrades = Vec::new();
        let mut schemas = Map::new();
        schemas.insert("Problem".to_owned(), problem_schema());
        for route in routes {
            if route.host.is_some() || route.path == DOCUMENT_PATH || route.path == DOCS_PATH {
                continue;
            }
            let (path, parameters) = path_and_parameters(&route.path);
            let mut item = Map::new();
            for (method, op) in &route.operations {
                let method = method.as_str().to_ascii_lowercase();
                if !matches!(
                    method.as_str(),
                    "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace"
                ) {
                    continue;
                }
                let label = format!("`{} {}`", method.to_ascii_uppercase(), path);
                if let Some(protocol) = &op.upgrade {
                    upgrades.push(format!("{label} ({protocol})"));
                    continue;
                }
                if !op.undescribed.is_empty() {
                    undescribed.push(format!("{label}: {}", op.undescribed.join("; ")));
                }
                for (name, schema) in &op.schemas {
                    schemas.insert(name.clone(), schema.clone());
                }
                item.insert(method.clone(), operation(&method, &path, &parameters, op));
            }
            if !item.is_empty() {
                paths.insert(path, Value::Object(item));
            }
        }
        let mut info = json!({ "title": self.title, "version": self.version });
        let mut description = self.description.clone().unwrap_or_default();
        for (list, heading) in [
            (
                &undescribed,
                "Routes that cannot describe themselves (their input is left open here):",
            ),
            (
                &upgrades,
                "Routes that switch protocols, left out of `paths` (OpenAPI describes no \
                 WebSocket exchange; connect with a WebSocket client):",
            ),
        ] {
            if list.is_empty() {
                continue;
            }
            if !description.is_empty() {
                description.push_str("\n\n");
            }
            description.push_str(heading);
            for line in list {
                description.push_str("\n- ");
                description.push_str(line);
            }
        }
        if !description.is_empty() {
            info["description"] = json!(description);
        }
        json!({
            "openapi": "3.1.0",
            "info": info,
            "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
            "paths": paths,
            "components": { "schemas": schemas },
        })
    }

    /// Adds `GET /openapi.json` (the document of the app it is served by)
    /// and `GET /docs` (a page that renders it, with no script or style
    /// from elsewhere) to `app`. Both answer in development; in production
    /// only when `TERN_OPENAPI` is on (else `404`).
    pub fn serve<S: Clone + Send + Sync + 'static>(self, app: App<S>) -> App<S> {
        let api = std::sync::Arc::new(self);
        let document = {
            let api = std::sync::Arc::clone(&api);
            move || {
                let api = std::sync::Arc::clone(&api);
                async move { serve_document(&api) }
            }
        };
        app.route(DOCUMENT_PATH, get(document))
            .route(DOCS_PATH, get(serve_docs))
    }
}

/// Whether the document may be served to this request's app.
fn enabled() -> bool {
    tern::__private::current_config(|c| c.openapi_enabled()).unwrap_or(true)
}

fn not_found() -> Response {
    Problem::new(StatusCode::NOT_FOUND)
        .with_detail("the API document is not served in production unless TERN_OPENAPI is on")
        .into_response()
}

fn serve_document(api: &OpenApi) -> Response {
    if !enabled() {
        return not_found();
    }
    let Some(document) = tern::__private::current_api_routes(|routes| api.document(routes)) else {
        return Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail("the API document is served by a Tern app only")
            .into_response();
    };
    tern::Json(document).into_response()
}

async fn serve_docs() -> Response {
    if !enabled() {
        return not_found();
    }
    let mut res = tern::response::Html(DOCS_PAGE).into_response();
    res.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; \
             connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
    );
    res
}

/// The docs page: renders `/openapi.json` with a few lines of script of
/// its own; nothing is fetched from elsewhere.
const DOCS_PAGE: &str = include_str!("docs.html");

/// `/users/{id:u64}/files/{*rest}` → `/users/{id}/files/{rest}` and its
/// path parameters, typed by their constraints.
fn path_and_parameters(pattern: &str) -> (String, Vec<Value>) {
    let mut path = String::with_capacity(pattern.len());
    let mut parameters = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        path.push_str(&rest[..open]);
        if rest[open..].starts_with("{{") {
            path.push('{');
            rest = &rest[open + 2..];
            continue;
        }
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let inner = &rest[open + 1..open + close];
        let glob = inner.starts_with('*');
        let inner = inner.trim_start_matches('*');
        let (name, constraint) = inner.split_once(':').unwrap_or((inner, ""));
        path.push('{');
        path.push_str(name);
        path.push('}');
        let schema = match constraint {
            "u64" => json!({ "type": "integer", "format": "uint64", "minimum": 0 }),
            "i64" => json!({ "type": "integer", "format": "int64" }),
            "uuid" => json!({ "type": "string", "format": "uuid" }),
            "slug" => json!({ "type": "string", "pattern": "^[a-z0-9]+(?:-[a-z0-9]+)*$" }),
            _ => json!({ "type": "string", "minLength": 1 }),
        };
        let mut parameter = json!({
            "name": name,
            "in": "path",
            "required": true,
            "schema": schema,
        });
        if glob {
            parameter["description"] = json!("the rest of the path: one or more segments");
        }
        parameters.push(parameter);
        rest = &rest[open + close + 1..];
    }
    path.push_str(&rest.replace("}}", "}"));
    (path, parameters)
}

fn operation(method: &str, path: &str, path_parameters: &[Value], op: &Operation) -> Value {
    let id: String = std::iter::once(method)
        .chain(path.split('/').filter(|s| !s.is_empty()))
        .map(|s| {
            s.chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("_");
    let mut responses = Map::new();
    for (status, response) in &op.responses {
        responses.insert(status.clone(), response.clone());
    }
    if !responses
        .keys()
        .any(|s| s.starts_with('2') || s.starts_with('3'))
    {
        responses.insert("200".to_owned(), json!({ "description": "The answer." }));
    }
    responses.insert(
        "default".to_owned(),
        json!({
            "description": "An error, as RFC 9457 problem details.",
            "content": { "application/problem+json": {
                "schema": { "$ref": "#/components/schemas/Problem" } } },
        }),
    );
    let mut operation = json!({ "operationId": id, "responses": responses });
    // A `Path` extractor's typed parameters take the place of the
    // pattern's, by name or by position.
    let typed_path: Vec<&Value> = op.parameters.iter().filter(|p| p["in"] == "path").collect();
    let parameters: Vec<Value> = path_parameters
        .iter()
        .enumerate()
        .map(|(i, pattern)| {
            let typed = typed_path.iter().find(|t| {
                t["name"] == pattern["name"] || t["x-tern-position"].as_u64() == Some(i as u64)
            });
            match typed {
                Some(typed) => {
                    let mut parameter = pattern.clone();
                    parameter["schema"] = typed["schema"].clone();
                    parameter
                }
                None => pattern.clone(),
            }
        })
        .chain(op.parameters.iter().filter(|p| p["in"] != "path").cloned())
        .collect();
    if !parameters.is_empty() {
        operation["parameters"] = Value::Array(parameters);
    }
    if let Some(body) = &op.request_body {
        operation["requestBody"] = body.clone();
    }
    if !op.undescribed.is_empty() {
        operation["x-tern-undescribed"] = json!(op.undescribed);
    }
    operation
}

/// RFC 9457 problem details, with Tern's members.
fn problem_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "type": { "type": "string" },
            "title": { "type": "string" },
            "status": { "type": "integer", "minimum": 100, "maximum": 599 },
            "detail": { "type": "string" },
            "instance": { "type": "string" },
            "field": { "type": "string", "description": "the query, form or path parameter at fault" },
            "pointer": { "type": "string", "description": "the JSON pointer of the body's value at fault" },
            "errors": {
                "type": "array",
                "description": "every rule of a contract the input breaks",
                "items": {
                    "type": "object",
                    "properties": {
                        "pointer": { "type": "string" },
                        "rule": { "type": "string" },
                        "detail": { "type": "string" },
                    },
                    "required": ["pointer", "rule", "detail"],
                },
            },
        },
        "required": ["title", "status"],
    })
}

/// `T`'s schema as a `$ref`, with the schemas it needs added to `op`.
pub(crate) fn schema_of<T: Contract>(op: &mut Operation) -> Value {
    let mut defs = Definitions::openapi();
    let schema = T::schema(&mut defs);
    op.schemas.extend(defs.into_schemas());
    schema
}

/// Adds a problem+json answer for `status`, unless the operation has one.
pub(crate) fn problem_response(op: &mut Operation, status: &str, description: &str) {
    op.responses.entry(status.to_owned()).or_insert_with(|| {
        json!({
            "description": description,
            "content": { "application/problem+json": {
                "schema": { "$ref": "#/components/schemas/Problem" } } },
        })
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn patterns_become_openapi_paths() {
        let (path, params) = path_and_parameters("/users/{id:u64}/files/{*rest}");
        assert_eq!(path, "/users/{id}/files/{rest}");
        assert_eq!(params.len(), 2);
        assert_eq!(params[0]["schema"]["type"], "integer");
        assert_eq!(params[1]["name"], "rest");
        let (path, params) = path_and_parameters("/plain");
        assert_eq!((path.as_str(), params.len()), ("/plain", 0));
    }

    /// An extractor that stands for a WebSocket upgrade.
    struct Upgrade;

    impl<S: Send + Sync> tern::__private::FromRequestParts<S> for Upgrade {
        type Rejection = std::convert::Infallible;

        async fn from_request_parts(
            _: &mut tern::http::request::Parts,
            _: &S,
        ) -> Result<Self, Self::Rejection> {
            Ok(Upgrade)
        }

        fn describe(op: &mut Operation) {
            op.upgrade = Some("websocket".into());
        }
    }

    /// Reads any JSON value or a number: serde cannot say which.
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    #[allow(dead_code)]
    enum Loose {
        N(u32),
        S(String),
    }

    #[test]
    fn what_cannot_be_described_is_named_not_hidden() {
        use tern::{extract::Path, routing::get, routing::post, Json};
        let app = tern::App::new()
            .route("/open", post(|Json(_): Json<Loose>| async { "" }))
            .route("/socket", get(|_: Upgrade| async { "" }))
            .route("/users/{id}", get(|Path(_): Path<u32>| async { "" }))
            .build()
            .unwrap();
        let doc = OpenApi::new("t", "1")
            .description("Mine.")
            .document(app.api_routes());
        let description = doc["info"]["description"].as_str().unwrap();
        assert!(description.starts_with("Mine.\n\n"), "{description}");
        assert!(
            description.contains("- `POST /open`: the application/json body"),
            "{description}"
        );
        assert!(
            description.contains("- `GET /socket` (websocket)"),
            "{description}"
        );
        let open = &doc["paths"]["/open"]["post"];
        assert!(open["x-tern-undescribed"].is_array(), "{open}");
        assert_eq!(
            open["requestBody"]["content"]["application/json"]["schema"],
            json!({})
        );
        assert!(doc["paths"]["/socket"].is_null());
        // `Path<u32>` types `{id}`, in place of the pattern's string.
        let id = &doc["paths"]["/users/{id}"]["get"]["parameters"];
        assert_eq!(id.as_array().unwrap().len(), 1, "{id}");
        assert_eq!(id[0]["name"], "id");
        assert_eq!(id[0]["schema"]["format"], "uint32");
    }
}
