//! Layer 2: one request through the whole app, no socket, against a
//! hand-written hyper-style handler doing the same work.
//!
//! Both sides get an `http::Request` with a fixed body and return an
//! `http::Response` with its body collected, on the same current-thread
//! runtime, so the difference is the framework: context, routing,
//! extractors, middleware chain, response building.

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde::{Deserialize, Serialize};
use tern::{
    extract::Path,
    routing::{get, post},
    App, AppService, Json,
};

/// A user, as `GET /user/{id}` returns it.
#[derive(Serialize)]
pub struct User {
    id: u64,
    name: &'static str,
}

/// The JSON POST's body and response.
#[derive(Serialize, Deserialize)]
pub struct Item {
    name: String,
    qty: u32,
    tags: Vec<String>,
}

/// The scenarios, by name.
pub const SCENARIOS: &[&str] = &["plaintext", "get_user", "json_post", "mixed_1000"];

/// The plaintext scenario's answer (`text/plain`).
pub const PLAINTEXT: &str = "Hello, World!";

/// The request of a scenario, `i` varying the mixed one.
pub fn request(scenario: &str, i: usize) -> Request<Bytes> {
    match scenario {
        "json_post" => Request::post("/items")
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Bytes::from_static(
                br#"{"name":"tea","qty":2,"tags":["green","loose"]}"#,
            ))
            .unwrap_or_default(),
        "plaintext" => Request::get("/plaintext")
            .header(header::HOST, "localhost")
            .body(Bytes::new())
            .unwrap_or_default(),
        "mixed_1000" => {
            let n = i % 1000;
            let path = if n.is_multiple_of(2) {
                format!("/s{n}/list")
            } else {
                format!("/r{n}/{}", 1000 + i % 97)
            };
            Request::get(path)
                .header(header::HOST, "localhost")
                .body(Bytes::new())
                .unwrap_or_default()
        }
        _ => Request::get("/user/42")
            .header(header::HOST, "localhost")
            .body(Bytes::new())
            .unwrap_or_default(),
    }
}

/// The Tern app of the scenarios: the two single routes and a
/// 1,000-route table (half static, half `/r{n}/{id}`).
pub fn tern_app() -> AppService {
    let app = App::new()
        .route(
            "/user/{id}",
            get(|Path(id): Path<u64>| async move { Json(User { id, name: "ada" }) }),
        )
        .route(
            "/items",
            post(|Json(item): Json<Item>| async move { Json(item) }),
        )
        .route("/plaintext", get(|| async { PLAINTEXT }));
    let mut config = tern::Config::default();
    config.health_path = None;
    match route_table(app).build_with(config) {
        Ok(app) => app,
        Err(e) => panic!("the bench app does not build: {e}"),
    }
}

/// `app` with the 1,000-route table added: 500 static `/s{n}/list`
/// routes (even `n`) and 500 `/r{n}/{id}` routes (odd `n`), each a GET
/// answering a number in JSON.
pub fn route_table(mut app: App) -> App {
    for n in 0..1000 {
        app = if n % 2 == 0 {
            app.route(&format!("/s{n}/list"), get(move || async move { Json(n) }))
        } else {
            app.route(
                &format!("/r{n}/{{id}}"),
                get(move |Path(id): Path<u64>| async move { Json(id + n) }),
            )
        };
    }
    app
}

/// The hand-written baseline: a `match` for the single routes, matchit
/// for the 1,000-route table (what a careful hyper user writes).
pub struct Handwritten {
    router: matchit::Router<u32>,
}

impl Default for Handwritten {
    fn default() -> Self {
        let mut router = matchit::Router::new();
        for n in 0..1000u32 {
            let path = if n % 2 == 0 {
                format!("/s{n}/list")
            } else {
                format!("/r{n}/{{id}}")
            };
            let _ = router.insert(path, n);
        }
        Handwritten { router }
    }
}

fn json_response(body: Vec<u8>) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::new(Bytes::from(body)));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut res = Response::new(Full::default());
    *res.status_mut() = code;
    res
}

impl Handwritten {
    /// Answers a request.
    pub async fn call(&self, req: Request<Full<Bytes>>) -> Response<Full<Bytes>> {
        let path = req.uri().path();
        if req.method() == Method::GET {
            if path == "/plaintext" {
                let mut res = Response::new(Full::new(Bytes::from_static(PLAINTEXT.as_bytes())));
                res.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                return res;
            }
            if let Some(id) = path.strip_prefix("/user/") {
                return match id.parse::<u64>() {
                    Ok(id) => json_response(
                        serde_json::to_vec(&User { id, name: "ada" }).unwrap_or_default(),
                    ),
                    Err(_) => status(StatusCode::BAD_REQUEST),
                };
            }
            if let Ok(m) = self.router.at(path) {
                let n = u64::from(*m.value);
                return match m.params.get("id") {
                    Some(id) => match id.parse::<u64>() {
                        Ok(id) => json_response(serde_json::to_vec(&(id + n)).unwrap_or_default()),
                        Err(_) => status(StatusCode::BAD_REQUEST),
                    },
                    None => json_response(serde_json::to_vec(&n).unwrap_or_default()),
                };
            }
        } else if req.method() == Method::POST && path == "/items" {
            let body = match req.into_body().collect().await {
                Ok(b) => b.to_bytes(),
                Err(_) => return status(StatusCode::BAD_REQUEST),
            };
            return match serde_json::from_slice::<Item>(&body) {
                Ok(item) => json_response(serde_json::to_vec(&item).unwrap_or_default()),
                Err(_) => status(StatusCode::UNPROCESSABLE_ENTITY),
            };
        }
        status(StatusCode::NOT_FOUND)
    }
}

/// One request through Tern, body collected.
pub async fn tern_once(app: &AppService, req: Request<Bytes>) -> (StatusCode, Bytes) {
    let res = app.call(req.map(tern::body::Body::from), None).await;
    let status = res.status();
    (
        status,
        res.into_body().collect_bytes().await.unwrap_or_default(),
    )
}

/// One request through the hand-written handler, body collected.
pub async fn handwritten_once(h: &Handwritten, req: Request<Bytes>) -> (StatusCode, Bytes) {
    let res = h.call(req.map(Full::new)).await;
    let status = res.status();
    (
        status,
        res.into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn both_sides_answer_the_same() {
        let app = tern_app();
        let h = Handwritten::default();
        for scenario in SCENARIOS {
            for i in 0..50 {
                let a = tern_once(&app, request(scenario, i)).await;
                let b = handwritten_once(&h, request(scenario, i)).await;
                assert_eq!(a, b, "{scenario} #{i}");
                assert_eq!(a.0, StatusCode::OK, "{scenario} #{i}");
            }
        }
    }
}
