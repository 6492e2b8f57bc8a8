//! The app through its whole pipeline, without a port.

use tern::test::TestClient;

#[tokio::test]
async fn the_page_greets_escapes_and_links_its_stylesheet() {
    let client = TestClient::new(__CRATE__::app());
    let page = client.get("/?name=Ada").send().await;
    assert_eq!(page.status(), 200);
    assert!(page.text().contains("<h1>Hello, Ada!</h1>"), "{}", page.text());
    // Values are HTML-escaped.
    let hostile = client.get("/?name=%3Cscript%3Ealert(1)%3C/script%3E").send().await;
    assert!(!hostile.text().contains("<script>"), "{}", hostile.text());
    // The stylesheet's URL carries its fingerprint: cached for a year.
    let text = page.text();
    let css = text.split("href=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or("");
    assert!(css.starts_with("/static/app.") && css.ends_with(".css"), "{css}");
    let sheet = client.get(css).send().await;
    assert_eq!(sheet.status(), 200);
    assert_eq!(sheet.header("cache-control"), Some("public, max-age=31536000, immutable"));
}

#[tokio::test]
async fn browsers_get_an_html_404_and_api_clients_problem_json() {
    let client = TestClient::new(__CRATE__::app());
    let page = client.get("/nope").header("accept", "text/html").send().await;
    assert_eq!(page.status(), 404);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    let api = client.get("/nope").send().await;
    assert_eq!(api.header("content-type"), Some("application/problem+json"));
}

#[tokio::test]
async fn operators_get_health_readiness_and_metrics() {
    // `TERN_METRICS=on` in the environment does the same (production
    // also needs `METRICS_TOKEN`, sent as `Authorization: Bearer`).
    let mut config = tern::Config::default();
    config.metrics = true;
    let app = __CRATE__::app().build_with(config).expect("the app builds");
    let client = TestClient::from_service(app);
    assert_eq!(client.get("/health").send().await.status(), 200);
    assert_eq!(client.get("/ready").send().await.status(), 200);
    assert_eq!(client.get("/?name=Ada").send().await.status(), 200);
    assert_eq!(client.get("/nope/42").send().await.status(), 404);
    let metrics = client.get("/metrics").send().await;
    assert_eq!(metrics.status(), 200);
    let text = metrics.text();
    // Counted by route pattern, never by raw path.
    assert!(
        text.contains(r#"tern_http_requests_total{route="/",method="GET",status="2xx"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"tern_http_requests_total{route="(unmatched)",method="GET",status="4xx"} 1"#),
        "{text}"
    );
    assert!(!text.contains("/nope/42"), "{text}");
}
