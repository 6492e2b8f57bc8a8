//! An in-process test client: send requests to an app without a socket.
//!
//! The request goes through everything a real one does (host checks,
//! limits, middleware, routing, extractors, the problem renderer) except
//! the HTTP parser. Use it in your own tests.
//!
//! ```
//! use tern::{App, routing::get, test::TestClient};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let app = App::new().route("/", get(|| async { "hi" }));
//! let client = TestClient::new(app);
//! let res = client.get("/").send().await;
//! assert_eq!(res.status(), 200);
//! assert_eq!(res.text(), "hi");
//! # }
//! ```

use std::{fmt, net::SocketAddr};

use bytes::Bytes;
use http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use serde::{de::DeserializeOwned, Serialize};
use tern_core::{body::Body, Problem, Request};

use crate::app::{App, AppService};

/// Sends requests to an app in-process. Cheap to clone.
#[derive(Debug, Clone)]
pub struct TestClient {
    app: AppService,
    peer: SocketAddr,
}

impl TestClient {
    /// Builds `app` (with its own configuration, or the default
    /// development one).
    ///
    /// # Panics
    /// When the app does not build (conflicting routes): a test should
    /// fail loudly then.
    pub fn new<S: Clone + Send + Sync + 'static>(app: App<S>) -> Self {
        match app.build() {
            Ok(app) => TestClient::from_service(app),
            Err(e) => panic!("the app does not build: {e}"),
        }
    }

    /// A client for an already built app.
    pub fn from_service(app: AppService) -> Self {
        TestClient {
            app,
            peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
        }
    }

    /// Makes requests appear to come from `peer` (default `127.0.0.1`).
    pub fn with_peer(mut self, peer: SocketAddr) -> Self {
        self.peer = peer;
        self
    }

    /// One in-memory HTTP/1.1 connection to the app, served as a socket's
    /// would be but without one: write requests, read answers, and keep
    /// the stream after a `101 Switching Protocols` (a WebSocket client
    /// runs its handshake over it). Needs a Tokio runtime.
    ///
    /// The connection is served by the HTTP/1 engine the app's
    /// configuration names (`TERN_HTTP1`): Tern's own (`tern`), or hyper's
    /// (`hyper`, without the socket wrappers of the real server).
    pub fn connect(&self) -> tokio::io::DuplexStream {
        let (client, server) = tokio::io::duplex(64 * 1024);
        if self.app.config().http1 == crate::config::Http1Engine::Tern {
            crate::server::serve_in_memory(self.app.clone(), self.peer, server);
            return client;
        }
        let app = self.app.clone();
        let peer = self.peer;
        let max_body = app.config().limits.max_body_bytes;
        let service =
            hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                let req = req.map(|body| Body::from_incoming(body, max_body));
                let answer = app.call(req, Some(peer));
                async move { Ok::<_, std::convert::Infallible>(answer.await) }
            });
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(server), service)
                .with_upgrades();
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "in-memory test connection");
            }
        });
        client
    }

    /// A request of any method.
    pub fn request(&self, method: Method, uri: &str) -> TestRequest {
        TestRequest {
            client: self.clone(),
            method,
            uri: uri.to_owned(),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            error: None,
        }
    }

    /// A `GET` request.
    pub fn get(&self, uri: &str) -> TestRequest {
        self.request(Method::GET, uri)
    }

    /// A `POST` request.
    pub fn post(&self, uri: &str) -> TestRequest {
        self.request(Method::POST, uri)
    }

    /// A `PUT` request.
    pub fn put(&self, uri: &str) -> TestRequest {
        self.request(Method::PUT, uri)
    }

    /// A `PATCH` request.
    pub fn patch(&self, uri: &str) -> TestRequest {
        self.request(Method::PATCH, uri)
    }

    /// A `DELETE` request.
    pub fn delete(&self, uri: &str) -> TestRequest {
        self.request(Method::DELETE, uri)
    }

    /// A `HEAD` request.
    pub fn head(&self, uri: &str) -> TestRequest {
        self.request(Method::HEAD, uri)
    }
}

/// A request being built; [`send`](TestRequest::send) it.
#[must_use = "a request does nothing until it is sent"]
pub struct TestRequest {
    client: TestClient,
    method: Method,
    uri: String,
    headers: HeaderMap,
    body: Bytes,
    error: Option<String>,
}

impl fmt::Debug for TestRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestRequest")
            .field("method", &self.method)
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl TestRequest {
    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(n), Ok(v)) => {
                self.headers.append(n, v);
            }
            _ => self.error = Some(format!("invalid header {name}: {value}")),
        }
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets a JSON body and `Content-Type: application/json`.
    pub fn json<T: Serialize>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(bytes) => self.body = bytes.into(),
            Err(e) => self.error = Some(format!("cannot serialize the JSON body: {e}")),
        }
        self.header("content-type", "application/json")
    }

    /// Sets a urlencoded form body and its `Content-Type`.
    pub fn form(mut self, pairs: &[(&str, &str)]) -> Self {
        let mut body = String::new();
        for (k, v) in pairs {
            if !body.is_empty() {
                body.push('&');
            }
            crate::extract::form::encode_into(k, &mut body);
            body.push('=');
            crate::extract::form::encode_into(v, &mut body);
        }
        self.body = body.into();
        self.header("content-type", "application/x-www-form-urlencoded")
    }

    /// Sends the request and reads the whole response.
    ///
    /// # Panics
    /// When the request itself is invalid (a bad URI or header), which is
    /// a bug in the test.
    pub async fn send(self) -> TestResponse {
        if let Some(e) = self.error {
            panic!("{e}");
        }
        let mut req = Request::new(Body::from(self.body.clone()));
        *req.method_mut() = self.method;
        *req.uri_mut() = match self.uri.parse() {
            Ok(uri) => uri,
            Err(e) => panic!("invalid URI {}: {e}", self.uri),
        };
        *req.headers_mut() = self.headers;
        if !req.headers().contains_key(header::HOST) {
            req.headers_mut()
                .insert(header::HOST, HeaderValue::from_static("localhost"));
        }
        if !self.body.is_empty() && !req.headers().contains_key(header::CONTENT_LENGTH) {
            req.headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from(self.body.len()));
        }
        let res = self.client.app.call(req, Some(self.client.peer)).await;
        let (parts, body) = res.into_parts();
        let body = match body.collect_bytes().await {
            Ok(b) => b,
            Err(e) => panic!("the response body failed: {e}"),
        };
        TestResponse {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }
}

/// A response read whole.
#[derive(Debug, Clone)]
pub struct TestResponse {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl TestResponse {
    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// One header as text, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body.
    pub fn bytes(&self) -> &Bytes {
        &self.body
    }

    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON.
    ///
    /// # Panics
    /// When it is not the JSON of `T`, with the body in the message.
    pub fn json<T: DeserializeOwned>(&self) -> T {
        match serde_json::from_slice(&self.body) {
            Ok(v) => v,
            Err(e) => panic!("the body is not the expected JSON ({e}): {}", self.text()),
        }
    }

    /// The body as a problem document: `(status, title, detail)` and the
    /// whole JSON.
    ///
    /// # Panics
    /// When the response is not `application/problem+json`.
    pub fn problem(&self) -> serde_json::Value {
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "not a problem response: {} {}",
            self.status,
            self.text()
        );
        self.json()
    }

    /// The problem's `detail`, if this is a problem response.
    pub fn detail(&self) -> Option<String> {
        let v: serde_json::Value = serde_json::from_slice(&self.body).ok()?;
        v.get("detail")?.as_str().map(str::to_owned)
    }
}

#[allow(dead_code)]
fn _assert_problem_is_public(_: Problem) {}

/// Says that a test cannot run here, and why: prints `skipped: {why}` to
/// standard error so that plain `cargo test` passes on a machine without
/// the service or tool a test needs. Under continuous integration (the
/// `CI` environment variable set to anything but `""`, `0` or `false`, as
/// every CI service and Tern's `.ci/run` set it) it panics instead: a run
/// that was meant to exercise PostgreSQL must not pass because the
/// database's address was missing.
///
/// ```
/// fn redis_test() {
///     let Some(url) = tern::test::service_url("TERN_DOC_EXAMPLE_REDIS_URL") else {
///         return; // skipped here; a failure under CI
///     };
///     # let _ = url;
/// }
/// # if !tern::test::under_ci() { redis_test() }
/// ```
///
/// # Panics
/// Under CI, always.
#[track_caller]
pub fn skip(why: &str) {
    if under_ci() {
        panic!(
            "{why}; under CI (CI={:?}) a test that cannot run fails the run",
            ci_var()
        );
    }
    eprintln!("skipped: {why}");
}

/// The value of the environment variable `var` (a service's URL, say), or
/// `None` after [`skip`] said the test is skipped (which panics under CI).
#[track_caller]
pub fn service_url(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(value) if !value.is_empty() => Some(value),
        _ => {
            skip(&format!("{var} is not set"));
            None
        }
    }
}

/// Whether this process runs under continuous integration: `CI` is set
/// to anything but `""`, `0` or `false`.
pub fn under_ci() -> bool {
    !matches!(ci_var().as_deref(), None | Some("" | "0" | "false"))
}

fn ci_var() -> Option<String> {
    std::env::var("CI").ok()
}
