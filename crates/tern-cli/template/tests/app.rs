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
