//! The answer's format follows `Accept` as every Tern crate reads it
//! (`tern_core::accept`, issue 27): `Q=0.5` is a weight like `q=0.5`, a
//! malformed weight drops its range, quoted commas split nothing. Over a
//! real socket.
#![allow(clippy::unwrap_used, missing_docs)]

use std::net::SocketAddr;

use tern::{routing::post, App, Config};
use tern_contract::{contract, Valid};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
};

#[contract]
struct Echo {
    #[contract(length(max = 40))]
    word: String,
}

async fn echo(Valid(e): Valid<Echo>) -> Valid<Echo> {
    Valid(e)
}

struct Server {
    addr: SocketAddr,
    _stop: oneshot::Sender<()>,
}

async fn spawn() -> Server {
    let service = App::new()
        .route("/echo", post(echo))
        .build_with(Config::default())
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(
        tern::Server::new(service).serve_with_shutdown(listener, async move {
            let _ = stopped.await;
        }),
    );
    Server { addr, _stop: stop }
}

/// A JSON `POST /echo` with `accept`: the status and the answer's
/// `Content-Type`.
async fn ask(server: &Server, accept: &str) -> (u16, String) {
    let body = r#"{"word":"tern"}"#;
    let request = format!(
        "POST /echo HTTP/1.1\r\nhost: test\r\ncontent-type: application/json\r\n\
         accept: {accept}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    let status = answer[9..12].parse().unwrap();
    let content_type = answer
        .lines()
        .find_map(|l| l.strip_prefix("content-type: "))
        .unwrap_or("")
        .to_owned();
    (status, content_type)
}

#[tokio::test]
async fn the_answer_format_reads_accept_as_every_crate_does() {
    let server = spawn().await;
    let table: &[(&str, u16, &str)] = &[
        // Before: `Q=` was not read as a weight, JSON tied CBOR at q=1,
        // and the request's own format (JSON) won.
        (
            "application/json;Q=0.5, application/cbor",
            200,
            "application/cbor",
        ),
        (
            "application/json;q=0.5, application/cbor",
            200,
            "application/cbor",
        ),
        (
            "application/cbor;Q=0.5, application/json",
            200,
            "application/json",
        ),
        // Before: the quoted comma split the range, which lost its weight.
        (
            r#"application/json;x="a,b";q=0.1, application/cbor"#,
            200,
            "application/cbor",
        ),
        // A malformed weight drops its range: CBOR, named, stays.
        (
            "application/json;q=1.5, application/cbor;q=0.2",
            200,
            "application/cbor",
        ),
        (
            "application/json;q=1.000, application/cbor;q=0.999",
            200,
            "application/json",
        ),
        ("application/json;q=0, */*", 200, "application/cbor"),
        (
            "application/json;q=0, application/cbor;q=0",
            406,
            "application/problem+json",
        ),
    ];
    for &(accept, status, content_type) in table {
        assert_eq!(
            ask(&server, accept).await,
            (status, content_type.to_owned()),
            "Accept: {accept}"
        );
    }
}
