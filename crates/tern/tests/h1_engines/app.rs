//! The app both engines serve: every method on every path, each request
//! recorded under the connection it came on (its peer address), with its
//! method, target and body bytes, so that the test knows exactly which
//! requests the app saw, including those whose answers never left.
//!
//! The answers carry no request bytes (a fixed body, the request's number
//! on its connection in `x-seen`): an answer stream can then be cut into
//! answers by looking for status lines alone, whatever the bodies held.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Mutex, OnceLock, PoisonError},
};

use http_body_util::BodyExt;
use tern::{
    extract::PeerAddr,
    http::{HeaderName, HeaderValue},
    routing::any,
    App, IntoResponse, Request, Response, StatusCode,
};

/// One request the app saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub method: String,
    pub target: String,
    /// The body's bytes, or `Err` when reading it failed (the error's
    /// text is not compared: the engines word it differently).
    pub body: Result<Vec<u8>, ()>,
    /// Still being read when the connection was looked at.
    pub pending: bool,
}

/// A connection: the app that served it (its engine's name) and the
/// client's address. Not the address alone: the system gives a client the
/// same port for connections to two different servers at once.
type Key = (&'static str, SocketAddr);

fn registry() -> &'static Mutex<HashMap<Key, Vec<Seen>>> {
    static SEEN: OnceLock<Mutex<HashMap<Key, Vec<Seen>>>> = OnceLock::new();
    SEEN.get_or_init(Mutex::default)
}

/// Takes what the app `name` saw on the connection from `peer` (and
/// forgets it, so that a port the system gives out again starts empty).
pub fn take(name: &'static str, peer: SocketAddr) -> Vec<Seen> {
    registry()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&(name, peer))
        .unwrap_or_default()
}

async fn record(name: &'static str, peer: SocketAddr, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let seen = Seen {
        method: parts.method.to_string(),
        target: parts.uri.to_string(),
        body: Ok(Vec::new()),
        pending: true,
    };
    let index = {
        let mut map = registry().lock().unwrap_or_else(PoisonError::into_inner);
        let list = map.entry((name, peer)).or_default();
        list.push(seen);
        list.len() - 1
    };
    let read = body.collect().await.map(|c| c.to_bytes().to_vec());
    let status = if read.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    if let Some(seen) = registry()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_mut(&(name, peer))
        .and_then(|list| list.get_mut(index))
    {
        seen.body = read.map_err(|_| ());
        seen.pending = false;
    }
    let number = HeaderValue::from(index + 1);
    (
        status,
        [(HeaderName::from_static("x-seen"), number)],
        "seen",
    )
        .into_response()
}

/// Answers without reading the body (recorded as `Ok` and empty): the
/// connection must find the next request past a body nobody read.
async fn unread(name: &'static str, peer: SocketAddr, req: Request) -> Response {
    let seen = Seen {
        method: req.method().to_string(),
        target: req.uri().to_string(),
        body: Ok(Vec::new()),
        pending: false,
    };
    let n = {
        let mut map = registry().lock().unwrap_or_else(PoisonError::into_inner);
        let list = map.entry((name, peer)).or_default();
        list.push(seen);
        list.len()
    };
    (
        [(HeaderName::from_static("x-seen"), HeaderValue::from(n))],
        "unread",
    )
        .into_response()
}

/// The app, recording what it sees under `name`: `/u/...` leaves the
/// body unread, every other path reads it.
pub fn app(name: &'static str) -> App {
    let handler = move |PeerAddr(peer): PeerAddr, req: Request| record(name, peer, req);
    let unread = move |PeerAddr(peer): PeerAddr, req: Request| unread(name, peer, req);
    App::new()
        .route("/", any(handler))
        .route("/u/{*rest}", any(unread))
        .route("/{*rest}", any(handler))
}
