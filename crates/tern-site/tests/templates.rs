//! Pages from templates over a real socket: layouts, partials, loops, the
//! headers, and hostile strings escaped in text and in attributes.
#![allow(clippy::unwrap_used, missing_docs)]

use tern::{routing::get, App};
use tern_site::Page;

mod common;

#[derive(askama::Template)]
#[template(path = "page.html")]
struct Hello {
    title: String,
    name: String,
    items: Vec<String>,
    trusted: &'static str,
}

const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "\" onmouseover=\"alert(1)",
    "' onload='alert(1)",
    "</title><script>alert(1)</script>",
    "&lt;already&gt; & more",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(1)",
];

async fn page(name: String) -> Page<Hello> {
    Page(Hello {
        title: name.clone(),
        name,
        items: HOSTILE.iter().map(|s| (*s).to_owned()).collect(),
        trusted: "<em>marked safe by the template</em>",
    })
}

#[tokio::test]
async fn a_layout_a_partial_and_every_hostile_string_escaped() {
    let app = App::new().route(
        "/hello",
        get(|| page("<script>alert(\"name\")</script>".to_owned())),
    );
    let addr = common::serve(app).await;
    let (head, body) =
        common::exchange(addr, &common::head("GET", "/hello", "HTTP/1.1", &[])).await;
    let body = String::from_utf8(body).unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let head = head.to_ascii_lowercase();
    assert!(
        head.contains("content-type: text/html; charset=utf-8"),
        "{head}"
    );
    assert!(
        head.contains(&format!("content-length: {}\r\n", body.len())),
        "{head}"
    );

    // The layout, the partial, the loop.
    assert!(body.starts_with("<!doctype html>"));
    assert!(body.contains("<nav><a href=\"/\">Home</a>"));
    assert_eq!(body.matches("<li data-item=").count(), HOSTILE.len());
    assert!(body.contains("<em>marked safe by the template</em>"));
    // Nothing hostile got through as markup, in text or in attributes.
    assert_eq!(body.matches("<script").count(), 0, "{body}");
    assert!(!body.contains("<img"));
    assert!(!body.contains("\" onmouseover=\""));
    assert!(!body.contains("' onload='"));
    assert!(!body.contains("</title><"));
    assert!(
        body.contains("&#60;script&#62;alert(1)&#60;/script&#62;")
            || body.contains("&lt;script&gt;"),
        "{body}"
    );
    // Already-escaped text is escaped again (shown as typed).
    assert!(
        body.contains("&#38;lt;already&#38;gt;") || body.contains("&amp;lt;already&amp;gt;"),
        "{body}"
    );
    // The title holds the escaped name too.
    let title = &body[body.find("<title>").unwrap()..body.find("</title>").unwrap()];
    assert!(!title.contains("<script"), "{title}");
}
