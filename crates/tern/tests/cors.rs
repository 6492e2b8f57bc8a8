//! CORS as a setting (issue 28): `CORS_ALLOWED_ORIGINS` and the other
//! `CORS_` settings put tower-http's `CorsLayer` outermost of the app,
//! before routing. Unset, no CORS header is sent (as before).
#![cfg(feature = "cors")]
#![allow(clippy::unwrap_used, missing_docs)]

use tern::{routing::get, test::TestClient, App, Config, Method, StatusCode};

const ORIGIN: &str = "https://app.example.com";

fn app(settings: &[(&str, &str)]) -> TestClient {
    let config = Config::from_settings(settings.iter().copied()).unwrap();
    config.validate().unwrap();
    let app = App::new().route("/articles", get(|| async { "articles" }));
    TestClient::from_service(app.build_with(config).unwrap())
}

#[tokio::test]
async fn preflight_from_an_allowed_origin() {
    let client = app(&[(
        "CORS_ALLOWED_ORIGINS",
        "https://app.example.com, http://localhost:5173",
    )]);
    // Any path, a route or not: the layer answers before routing.
    for path in ["/articles", "/nowhere"] {
        let res = client
            .request(Method::OPTIONS, path)
            .header("origin", ORIGIN)
            .header("access-control-request-method", "PUT")
            .header("access-control-request-headers", "content-type")
            .send()
            .await;
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        assert_eq!(res.header("access-control-allow-origin"), Some(ORIGIN));
        assert_eq!(
            res.header("access-control-allow-methods"),
            Some("GET,HEAD,POST,PUT,PATCH,DELETE")
        );
        assert_eq!(
            res.header("access-control-allow-headers"),
            Some("content-type,authorization")
        );
        assert_eq!(res.header("access-control-max-age"), Some("600"));
        assert_eq!(res.header("access-control-allow-credentials"), None);
    }
}

#[tokio::test]
async fn another_origin_gets_no_allow_origin() {
    let client = app(&[("CORS_ALLOWED_ORIGINS", ORIGIN)]);
    let res = client
        .request(Method::OPTIONS, "/articles")
        .header("origin", "https://evil.example.net")
        .header("access-control-request-method", "POST")
        .send()
        .await;
    assert_eq!(res.header("access-control-allow-origin"), None);
    let res = client
        .get("/articles")
        .header("origin", "https://evil.example.net")
        .send()
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.header("access-control-allow-origin"), None);
}

#[tokio::test]
async fn simple_requests_carry_it_also_on_a_404() {
    let client = app(&[("CORS_ALLOWED_ORIGINS", ORIGIN), ("CORS_MAX_AGE", "1h")]);
    let res = client
        .get("/articles")
        .header("origin", ORIGIN)
        .send()
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.text(), "articles");
    assert_eq!(res.header("access-control-allow-origin"), Some(ORIGIN));
    let res = client.get("/nowhere").header("origin", ORIGIN).send().await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert_eq!(res.header("access-control-allow-origin"), Some(ORIGIN));
    let res = client
        .request(Method::OPTIONS, "/articles")
        .header("origin", ORIGIN)
        .header("access-control-request-method", "GET")
        .send()
        .await;
    assert_eq!(res.header("access-control-max-age"), Some("3600"));
}

#[tokio::test]
async fn no_settings_no_headers() {
    let client = app(&[]);
    let res = client
        .get("/articles")
        .header("origin", ORIGIN)
        .send()
        .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.header("access-control-allow-origin"), None);
    let res = client
        .request(Method::OPTIONS, "/articles")
        .header("origin", ORIGIN)
        .header("access-control-request-method", "GET")
        .send()
        .await;
    assert_eq!(res.header("access-control-allow-origin"), None);
    assert_eq!(res.header("access-control-allow-methods"), None);
    assert!(res
        .headers()
        .keys()
        .all(|k| !k.as_str().starts_with("access-control-")));
}

#[tokio::test]
async fn credentials() {
    let client = app(&[
        ("CORS_ALLOWED_ORIGINS", ORIGIN),
        ("CORS_ALLOW_CREDENTIALS", "true"),
        ("CORS_ALLOWED_METHODS", "GET, POST"),
        ("CORS_ALLOWED_HEADERS", "x-token"),
    ]);
    let res = client
        .request(Method::OPTIONS, "/articles")
        .header("origin", ORIGIN)
        .header("access-control-request-method", "POST")
        .send()
        .await;
    assert_eq!(res.header("access-control-allow-origin"), Some(ORIGIN));
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
    assert_eq!(res.header("access-control-allow-methods"), Some("GET,POST"));
    assert_eq!(res.header("access-control-allow-headers"), Some("x-token"));
    let res = client
        .get("/articles")
        .header("origin", ORIGIN)
        .send()
        .await;
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
}

/// Development: `*` with credentials sends the request's origin back
/// (tower-http would panic on `Any` with credentials).
#[tokio::test]
async fn any_with_credentials_mirrors_in_development() {
    let client = app(&[
        ("CORS_ALLOWED_ORIGINS", "*"),
        ("CORS_ALLOW_CREDENTIALS", "true"),
    ]);
    let res = client
        .get("/articles")
        .header("origin", "http://localhost:5173")
        .send()
        .await;
    assert_eq!(
        res.header("access-control-allow-origin"),
        Some("http://localhost:5173")
    );
    assert_eq!(res.header("access-control-allow-credentials"), Some("true"));
    // Without credentials, `*` is `*`.
    let client = app(&[("CORS_ALLOWED_ORIGINS", "*")]);
    let res = client
        .get("/articles")
        .header("origin", ORIGIN)
        .send()
        .await;
    assert_eq!(res.header("access-control-allow-origin"), Some("*"));
}
