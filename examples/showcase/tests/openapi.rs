//! The composed showcase's OpenAPI document, as a client fetches it from
//! the binary (every battery installed): every route is in it or named
//! in its description, and the routes schemathesis once found wrong are
//! described as they behave (issue 26: `/search`'s `q`, `/auth/login`'s
//! body, `/static/{path}`'s rules, the WebSocket route).
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::process::{Command, Stdio};

use serde_json::{json, Value};
use support::{parts, request_bytes, Showcase, BIN};

impl Showcase {
    /// A showcase on a free port, with a database of its own.
    fn start() -> Showcase {
        Showcase::inheriting("openapi", None)
    }

    /// `GET target`: the status and the body.
    fn get(&self, target: &str) -> (u16, Vec<u8>) {
        let out = request_bytes(
            self.port,
            format!(
                "GET {target} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n\
                 Connection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .unwrap();
        let (status, _, body) = parts(&out);
        (status, body.to_vec())
    }

    fn document(&self) -> Value {
        let (status, body) = self.get("/openapi.json");
        assert_eq!(status, 200);
        serde_json::from_slice(&body).unwrap()
    }
}

/// Every route as `showcase routes` lists it (the app's own table): its
/// method and its pattern in OpenAPI's spelling (`/users/{id}`).
fn routes() -> Vec<(String, String)> {
    let out = Command::new(BIN)
        .arg("routes")
        .env_remove("COSE_KEYS")
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "`showcase routes` failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let routes: Vec<(String, String)> = text
        .lines()
        .skip(1)
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (method, pattern) = (words.next()?, words.next()?);
            pattern.starts_with('/').then(|| {
                let mut path = String::new();
                let mut rest = pattern;
                while let Some(open) = rest.find('{') {
                    let close = rest[open..].find('}').unwrap() + open;
                    let name = rest[open + 1..close].trim_start_matches('*');
                    path.push_str(&rest[..open]);
                    path.push('{');
                    path.push_str(name.split(':').next().unwrap());
                    path.push('}');
                    rest = &rest[close + 1..];
                }
                path.push_str(rest);
                (method.to_owned(), path)
            })
        })
        .collect();
    assert!(routes.len() > 20, "too few routes listed: {text}");
    routes
}

#[test]
fn every_route_is_in_the_document_or_named_in_its_description() {
    let showcase = Showcase::start();
    let doc = showcase.document();
    let description = doc["info"]["description"].as_str().unwrap_or_default();
    let mut missing = Vec::new();
    for (method, path) in routes() {
        // The document and its page leave themselves out (`OpenApi::document`),
        // and Tern's built-in readiness and metrics probes are not part of
        // any API document (`AppService::api_routes`).
        if path == "/openapi.json" || path == "/docs" || path == "/ready" || path == "/metrics" {
            continue;
        }
        let described = doc["paths"][&path][method.to_ascii_lowercase()].is_object();
        let named = description.contains(&format!("`{method} {path}`"));
        if !described && !named {
            missing.push(format!("{method} {path}"));
        }
    }
    assert!(
        missing.is_empty(),
        "routes neither in the document nor named in its description: {missing:?}"
    );
}

#[test]
fn the_routes_schemathesis_found_wrong_are_described_as_they_behave() {
    let showcase = Showcase::start();
    let doc = showcase.document();
    let description = doc["info"]["description"].as_str().unwrap();
    let param = |op: &Value, name: &str| -> Value {
        op["parameters"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no parameter `{name}` in {op}"))
    };

    // `GET /search` without `q` is a 400: `q` is a required parameter,
    // and the 400 is an answer of the operation.
    let search = &doc["paths"]["/search"]["get"];
    let q = param(search, "q");
    assert_eq!(
        (&q["in"], &q["required"], &q["schema"]["type"]),
        (&json!("query"), &json!(true), &json!("string"))
    );
    assert_eq!(param(search, "page")["required"], false);
    assert_eq!(param(search, "tag")["schema"]["type"], "array");
    assert!(search["responses"]["400"].is_object());
    assert_eq!(showcase.get("/search").0, 400);
    assert_eq!(showcase.get("/search?q=tern").0, 200);

    // `POST /auth/login`: its body, as JSON or a form, and its answers.
    let login = &doc["paths"]["/auth/login"]["post"];
    for media in ["application/json", "application/x-www-form-urlencoded"] {
        let schema = &login["requestBody"]["content"][media]["schema"];
        assert_eq!(
            schema["required"],
            json!(["username", "password"]),
            "{media}"
        );
        assert_eq!(
            schema["properties"]["username"]["maxLength"], 150,
            "{media}"
        );
    }
    assert_eq!(login["requestBody"]["required"], true);
    for status in ["200", "303", "400", "401", "429", "503"] {
        assert!(login["responses"][status].is_object(), "login: no {status}");
    }
    let session = &doc["paths"]["/auth/session"]["get"];
    assert!(session["responses"]["401"].is_object());

    // `GET /static/{path}`: the rules of `path`, and the 400 and 404 a
    // path that breaks them gets; the server does answer them.
    let files = &doc["paths"]["/static/{path}"]["get"];
    let path = param(files, "path");
    let pattern = path["schema"]["pattern"].as_str().unwrap();
    assert!(
        pattern.contains(r"\x7f-\x9f"),
        "C1 controls are refused: {pattern}"
    );
    assert!(
        pattern.starts_with("^[^./"),
        "a hidden name or `/` is refused: {pattern}"
    );
    for status in ["200", "304", "400", "404"] {
        assert!(
            files["responses"][status].is_object(),
            "static: no {status}"
        );
    }
    assert_eq!(showcase.get("/static/%C3%B5%C2%9A").0, 400);
    assert_eq!(showcase.get("/static/.hidden").0, 404);

    // The WebSocket route is left out and named; the SSE route is in,
    // as an event stream.
    assert!(doc["paths"]["/chat/socket"].is_null());
    assert!(
        description.contains("`GET /chat/socket` (websocket)"),
        "{description}"
    );
    let events = &doc["paths"]["/chat/events"]["get"];
    assert!(events["responses"]["200"]["content"]["text/event-stream"].is_object());

    // `POST /echo` takes any JSON: the open schema is exact, not a
    // route that cannot describe itself.
    let echo = &doc["paths"]["/echo"]["post"];
    assert_eq!(
        echo["requestBody"]["content"]["application/json"]["schema"],
        json!({})
    );
    assert!(echo["x-tern-undescribed"].is_null());
    assert!(!description.contains("`POST /echo`"));
}
