//! A problem renderer's choice of an HTML page follows `Accept` as every
//! Tern crate reads it (`tern::accept`, issue 27): the same header that
//! has `tern-contract` answer JSON has the renderer answer JSON too.
//! Over a real socket.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use bytes::Bytes;
use common::{request, send};
use http_body_util::Full;
use tern::{routing::get, App, IntoResponse, Problem};

#[tokio::test]
async fn the_renderer_reads_accept_as_every_crate_does() {
    let app = App::new()
        .route("/", get(|| async { "home" }))
        .problem_renderer(|p: &Problem, r: &tern::Requested| {
            if r.prefers_html() {
                format!("<p>{}</p>", p.status().as_u16()).into_response()
            } else {
                p.clone().into_response()
            }
        });
    let server = common::spawn(app).await;
    let client = common::client();
    let table: &[(&str, bool)] = &[
        ("text/html,application/xhtml+xml,*/*;q=0.8", true),
        ("application/json;Q=0.5, text/html", true),
        ("text/html;Q=0.5, application/json", false),
        // Before: JSON counted only when named, so HTML at 0.5 beat the
        // JSON that `*/*` accepts at 1 (and `tern-contract` answers).
        ("text/html;q=0.5, */*", false),
        // Before: the quoted comma split the range, which lost its weight.
        (r#"text/html;x="a,b";q=0.1, application/json"#, false),
        // A malformed weight drops its range: HTML is not asked for.
        ("text/html;q=1.5, */*;q=0.1", false),
        ("text/html;q=1.000, application/json;q=0.999", true),
        ("*/*", false),
        ("text/*", false),
    ];
    for &(accept, html) in table {
        let res = send(
            &client,
            request("GET", &server.url("/nope"))
                .header("accept", accept)
                .body(Full::new(Bytes::new()))
                .unwrap(),
        )
        .await;
        assert_eq!(res.status, 404, "Accept: {accept}");
        assert_eq!(res.text().starts_with("<p>404"), html, "Accept: {accept}");
    }
    server.shutdown().await;
}
