//! Middleware three ways: `cargo run -p example-middleware`.
//!
//! - global: tower-http's CORS and compression layers, unchanged, and an
//!   async fn that times every request;
//! - per scope: an API-key check on everything under `/admin`;
//! - per route: a header added by one route only.

use std::time::Instant;

use tern::{
    http::HeaderValue,
    middleware::{from_fn, from_fn_with_state, Next},
    routing::get,
    App, IntoResponse, Problem, Request, Response, StatusCode,
};
use tower_http::{compression::CompressionLayer, cors::CorsLayer};

async fn timing(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let mut res = next.run(req).await;
    let micros = start.elapsed().as_micros().to_string();
    if let Ok(value) = HeaderValue::from_str(&micros) {
        res.headers_mut().insert("x-response-micros", value);
    }
    res
}

async fn require_key(key: &'static str, req: Request, next: Next) -> Response {
    match req.headers().get("x-api-key") {
        Some(sent) if sent.as_bytes() == key.as_bytes() => next.run(req).await,
        _ => Problem::new(StatusCode::UNAUTHORIZED)
            .with_detail("send a valid `x-api-key` header")
            .into_response(),
    }
}

async fn cache_forever(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    res.headers_mut().insert(
        "cache-control",
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    res
}

fn app(api_key: &'static str) -> App {
    App::new()
        .route("/", get(|| async { "public" }))
        .route(
            "/logo.svg",
            get(|| async { "<svg/>" }).layer(from_fn(cache_forever)),
        )
        .scope("/admin", |admin| {
            admin
                .route("/stats", get(|| async { "42 users" }))
                .route_layer(from_fn_with_state(api_key, require_key))
        })
        .layer(from_fn(timing))
        .layer(CompressionLayer::new())
        .layer(CorsLayer::permissive())
}

fn main() -> Result<(), tern::Error> {
    // A real app reads its key from configuration; this is an example.
    tern::run(app("example-key"))
}

#[cfg(test)]
mod tests {
    use tern::test::TestClient;

    #[tokio::test]
    async fn layers_apply_where_attached() {
        let client = TestClient::new(super::app("k"));
        let res = client.get("/").send().await;
        assert!(res.header("x-response-micros").is_some());
        assert_eq!(res.header("cache-control"), None);
        assert!(client
            .get("/logo.svg")
            .send()
            .await
            .header("cache-control")
            .is_some());
        assert_eq!(client.get("/admin/stats").send().await.status(), 401);
        let res = client
            .get("/admin/stats")
            .header("x-api-key", "k")
            .send()
            .await;
        assert_eq!(res.text(), "42 users");
        let res = client
            .get("/")
            .header("origin", "https://a.example")
            .send()
            .await;
        assert_eq!(res.header("access-control-allow-origin"), Some("*"));
    }
}
