//! `Option<T>` as an extractor is `None` only when what `T` reads is
//! absent; when it is there but invalid, the client gets `T`'s rejection
//! and the handler does not run (issue 26). `Result<T, R>` hands every
//! rejection to the handler.
//!
//! Each row is a request and what it must answer. Before the change a
//! rejected `T` read as `None`: every "invalid" row answered `200 none`.
#![allow(clippy::unwrap_used, missing_docs)]

use serde::Deserialize;
use tern::{
    extract::{Extension, Form, Host, PeerAddr, Query, Rejection, TypedHeader},
    headers::{authorization::Bearer, Authorization, IfModifiedSince},
    middleware::{from_fn, Next},
    routing::{get, post},
    test::TestClient,
    App, Json, Method, Request, StatusCode,
};

#[derive(Deserialize)]
struct Search {
    q: String,
    page: Option<u32>,
}

#[derive(Deserialize)]
struct User {
    name: String,
    age: u8,
}

fn app() -> App {
    App::new()
        .route(
            "/since",
            get(|h: Option<TypedHeader<IfModifiedSince>>| async move {
                h.map_or("none".to_owned(), |_| "some".to_owned())
            }),
        )
        .route(
            "/token",
            get(|h: Option<TypedHeader<Authorization<Bearer>>>| async move {
                h.map_or("none".to_owned(), |TypedHeader(a)| a.token().to_owned())
            }),
        )
        .route(
            "/search",
            get(|q: Option<Query<Search>>| async move {
                q.map_or("none".to_owned(), |Query(s)| {
                    format!("{} {:?}", s.q, s.page)
                })
            }),
        )
        .route(
            "/search-result",
            get(|q: Result<Query<Search>, Rejection>| async move {
                match q {
                    Ok(Query(s)) => (StatusCode::OK, s.q),
                    Err(e) => (StatusCode::IM_A_TEAPOT, format!("mine: {}", e.detail())),
                }
            }),
        )
        .route(
            "/json",
            post(|j: Option<Json<User>>| async move {
                j.map_or("none".to_owned(), |Json(u)| format!("{} {}", u.name, u.age))
            }),
        )
        .route(
            "/form",
            get(|f: Option<Form<User>>| async move {
                f.map_or("none".to_owned(), |Form(u)| format!("{} {}", u.name, u.age))
            })
            .post(|f: Option<Form<User>>| async move {
                f.map_or("none".to_owned(), |Form(u)| format!("{} {}", u.name, u.age))
            }),
        )
        .route(
            "/host",
            get(|h: Option<Host>| async move { h.map_or("none".to_owned(), |Host(h)| h) }),
        )
        .route(
            "/peer",
            get(|p: Option<PeerAddr>| async move {
                p.map_or("none".to_owned(), |PeerAddr(p)| p.ip().to_string())
            }),
        )
}

/// What a row expects: a `200` with this body, or a problem with this
/// status whose detail contains this text.
enum Want {
    Ok(&'static str),
    Problem(u16, &'static str),
}

struct Case {
    method: &'static str,
    uri: &'static str,
    headers: &'static [(&'static str, &'static str)],
    body: &'static str,
    want: Want,
}

const fn get_(
    uri: &'static str,
    headers: &'static [(&'static str, &'static str)],
    want: Want,
) -> Case {
    Case {
        method: "GET",
        uri,
        headers,
        body: "",
        want,
    }
}

const fn post_(
    uri: &'static str,
    headers: &'static [(&'static str, &'static str)],
    body: &'static str,
    want: Want,
) -> Case {
    Case {
        method: "POST",
        uri,
        headers,
        body,
        want,
    }
}

const JSON: &[(&str, &str)] = &[("content-type", "application/json")];
const FORM: &[(&str, &str)] = &[("content-type", "application/x-www-form-urlencoded")];

#[tokio::test]
async fn absent_is_none_and_invalid_is_the_rejection() {
    use Want::{Ok, Problem};
    let cases = [
        // A header: absent, valid, malformed.
        get_("/since", &[], Ok("none")),
        get_(
            "/since",
            &[("if-modified-since", "Sun, 06 Nov 1994 08:49:37 GMT")],
            Ok("some"),
        ),
        get_(
            "/since",
            &[("if-modified-since", "last tuesday")],
            Problem(400, "`if-modified-since` header is malformed"),
        ),
        get_("/token", &[], Ok("none")),
        get_("/token", &[("authorization", "Bearer abc")], Ok("abc")),
        get_(
            "/token",
            &[("authorization", "Basic YWRhOnB3")],
            Problem(400, "`authorization` header is malformed"),
        ),
        // A query string: none, empty, valid, one that does not parse.
        get_("/search", &[], Ok("none")),
        get_("/search?", &[], Ok("none")),
        get_("/search?q=tern&page=2", &[], Ok("tern Some(2)")),
        get_("/search?q=tern&page=two", &[], Problem(400, "`page`")),
        get_("/search?page=2", &[], Problem(400, "`q`")),
        // `Result`: the handler answers the rejection itself.
        get_("/search-result?q=tern", &[], Ok("tern")),
        // A JSON body: none at all, valid, malformed, wrong shape, a body
        // without a `Content-Type`, an empty one that says it is JSON.
        post_("/json", &[], "", Ok("none")),
        post_("/json", JSON, r#"{"name":"ada","age":36}"#, Ok("ada 36")),
        post_("/json", JSON, r#"{"name":"ada""#, Problem(400, "JSON")),
        post_(
            "/json",
            JSON,
            r#"{"name":"ada","age":-1}"#,
            Problem(422, "/age"),
        ),
        post_(
            "/json",
            &[],
            r#"{"name":"ada","age":36}"#,
            Problem(415, "JSON"),
        ),
        post_("/json", JSON, "", Problem(400, "JSON")),
        post_(
            "/json",
            &[("content-type", "text/plain")],
            "",
            Problem(415, "JSON"),
        ),
        // A form: in the body, or for GET in the query string.
        post_("/form", &[], "", Ok("none")),
        post_("/form", FORM, "name=ada&age=36", Ok("ada 36")),
        post_("/form", FORM, "name=ada&age=old", Problem(400, "`age`")),
        post_("/form", &[], "name=ada&age=36", Problem(415, "form")),
        get_("/form", &[], Ok("none")),
        get_("/form?name=ada&age=36", &[], Ok("ada 36")),
        get_("/form?name=ada&age=old", &[], Problem(400, "`age`")),
        // A host: an HTTP/1.1 request with an empty `Host` names none.
        get_(
            "/host",
            &[("host", "example.com:8080")],
            Ok("example.com:8080"),
        ),
        get_("/host", &[("host", "")], Ok("none")),
    ];
    let client = TestClient::new(app());
    for case in cases {
        let mut req = client.request(
            Method::from_bytes(case.method.as_bytes()).unwrap(),
            case.uri,
        );
        for (name, value) in case.headers {
            req = req.header(name, value);
        }
        let res = req.body(case.body).send().await;
        let what = format!(
            "{} {} {:?} {:?}",
            case.method, case.uri, case.headers, case.body
        );
        match case.want {
            Want::Ok(body) => {
                assert_eq!(res.status(), 200, "{what}: {}", res.text());
                assert_eq!(res.text(), body, "{what}");
            }
            Want::Problem(status, needle) => {
                assert_eq!(res.status(), status, "{what}: {}", res.text());
                let doc = res.problem();
                let detail = doc["detail"].as_str().unwrap_or_default();
                assert!(detail.contains(needle), "{what}: {doc}");
            }
        }
    }
}

#[tokio::test]
async fn a_malformed_header_is_named_in_the_problem() {
    let client = TestClient::new(app());
    let res = client
        .get("/since")
        .header("if-modified-since", "last tuesday")
        .send()
        .await;
    assert_eq!(res.status(), 400);
    assert_eq!(res.problem()["field"], "if-modified-since");
}

#[tokio::test]
async fn a_result_hands_the_rejection_to_the_handler() {
    let client = TestClient::new(app());
    let res = client.get("/search-result?page=2").send().await;
    assert_eq!(res.status(), StatusCode::IM_A_TEAPOT);
    assert!(res.text().starts_with("mine: "), "{}", res.text());
    assert!(res.text().contains("`q`"), "{}", res.text());
}

#[tokio::test]
async fn an_unknown_peer_is_none() {
    let service = app().build().unwrap();
    let client = TestClient::from_service(service.clone());
    assert_eq!(client.get("/peer").send().await.text(), "127.0.0.1");
    // An app handed a request in process, with no peer at all.
    let req = Request::builder()
        .uri("/peer")
        .header("host", "localhost")
        .body(tern::body::Body::empty())
        .unwrap();
    let res = service.call(req, None).await;
    assert_eq!(res.status(), 200);
    let body = res.into_body().collect_bytes().await.unwrap();
    assert_eq!(&body[..], b"none");
}

#[derive(Clone)]
struct Tag(&'static str);

#[tokio::test]
async fn an_extension_no_middleware_added_is_none() {
    let read = |e: Option<Extension<Tag>>| async move { e.map_or("none", |Extension(t)| t.0) };
    let app = App::new().route("/plain", get(read)).route(
        "/tagged",
        get(read).layer(from_fn(|mut req: Request, next: Next| async move {
            req.extensions_mut().insert(Tag("tagged"));
            next.run(req).await
        })),
    );
    let client = TestClient::new(app);
    assert_eq!(client.get("/plain").send().await.text(), "none");
    assert_eq!(client.get("/tagged").send().await.text(), "tagged");
}
