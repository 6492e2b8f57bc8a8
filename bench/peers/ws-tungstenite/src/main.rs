//! Bench peer: a WebSocket echo on bare hyper 1 and tokio-tungstenite
//! 0.30, the protocol library under Tern's WebSockets, configured as
//! `tern-realtime` configures it: a 4 KiB read buffer, writes flushed
//! per message, messages and frames up to 20 MiB (the limit
//! `WEBSOCKET_MAX_MESSAGE` and `_MAX_FRAME` are given in the bench and the
//! Autobahn run). Every path answers the handshake and echoes every text
//! and binary message; pings are answered by the library.
//!
//! What Tern adds around the library is left out: the handshake checks
//! beyond RFC 6455's, the `Origin` check, the server's pings, the idle
//! timeout, the drain. What it does on a protocol error is kept, since the
//! library leaves it to the caller: a close frame with `1002`, `1007` or
//! `1009` (as `tern_realtime::WebSocket` sends), then the socket is
//! dropped.
//!
//! `BENCH_ADDR` or `TERN_ADDR` is the address, `BENCH_WORKERS` or
//! `TERN_WORKERS` the worker threads of its one multi-thread tokio runtime
//! (by default one per core). Prints `listening on ADDR` once bound;
//! `SIGTERM` or Ctrl-C stops it.

use std::{convert::Infallible, io, time::Duration};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Empty;
use hyper::{body::Incoming, server::conn::http1, service::service_fn, upgrade::Upgraded};
use hyper_util::rt::TokioIo;
use tokio::{
    net::TcpListener,
    signal::unix::{signal, SignalKind},
};
use tokio_tungstenite::{
    tungstenite::{
        self,
        handshake::derive_accept_key,
        protocol::{frame::coding::CloseCode, CloseFrame, Role, WebSocketConfig},
        Message,
    },
    WebSocketStream,
};

/// The message and frame limit: Autobahn's case 9 sends up to 16 MiB.
const MAX_MESSAGE: usize = 20 * 1024 * 1024;

/// How long a close waits to be written (`WEBSOCKET_CLOSE_TIMEOUT`).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// `tern_realtime`'s configuration (`socket::config`) at [`MAX_MESSAGE`].
fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_write_buffer_size(MAX_MESSAGE.saturating_mul(2).max(64 * 1024))
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

fn main() -> io::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(peer_common::workers())
        .enable_all()
        .build()?
        .block_on(serve())
}

async fn serve() -> io::Result<()> {
    let listener = peer_common::bind_at(peer_common::addr_in(&["BENCH_ADDR", "TERN_ADDR"]))?;
    let listener = TcpListener::from_std(listener)?;
    let mut term = signal(SignalKind::terminate())?;
    peer_common::announce(listener.local_addr()?);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of descriptors: back off rather than spin.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let conn = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(handshake))
                .with_upgrades();
            let _ = conn.await;
        });
    }
    Ok(())
}

type Res = Response<Empty<Bytes>>;

fn refuse(status: StatusCode, header: Option<(&'static str, &'static str)>) -> Res {
    let mut res = Response::new(Empty::new());
    *res.status_mut() = status;
    if let Some((name, value)) = header {
        res.headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    res
}

/// Whether the comma-separated header `name` has the token `token`.
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// RFC 6455's handshake: checked, answered `101`, the socket served in a
/// task of its own once hyper hands the connection over.
async fn handshake(mut req: Request<Incoming>) -> Result<Res, Infallible> {
    let headers = req.headers();
    if req.method() != Method::GET {
        return Ok(refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            Some(("allow", "GET")),
        ));
    }
    if !has_token(headers, header::UPGRADE, "websocket")
        || !has_token(headers, header::CONNECTION, "upgrade")
    {
        return Ok(refuse(
            StatusCode::UPGRADE_REQUIRED,
            Some(("upgrade", "websocket")),
        ));
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes)
        != Some(b"13")
    {
        return Ok(refuse(
            StatusCode::UPGRADE_REQUIRED,
            Some(("sec-websocket-version", "13")),
        ));
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return Ok(refuse(StatusCode::BAD_REQUEST, None));
    };
    let Ok(accept) = HeaderValue::from_str(&derive_accept_key(key.as_bytes())) else {
        return Ok(refuse(StatusCode::BAD_REQUEST, None));
    };
    let on_upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        if let Ok(io) = on_upgrade.await {
            echo(io).await;
        }
    });
    let mut res = refuse(StatusCode::SWITCHING_PROTOCOLS, None);
    let headers = res.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    Ok(res)
}

async fn echo(io: Upgraded) {
    let mut ws =
        WebSocketStream::from_raw_socket(TokioIo::new(io), Role::Server, Some(config())).await;
    while let Some(frame) = ws.next().await {
        match frame {
            Ok(message @ (Message::Text(_) | Message::Binary(_))) => {
                let Ok(()) = ws.send(message).await else {
                    return;
                };
            }
            // A close is answered by the library on the next read, which
            // then ends the stream; a ping is answered the same way.
            Ok(_) => {}
            Err(e) => {
                fail(&mut ws, &e).await;
                return;
            }
        }
    }
}

/// The close code an error calls for, sent if the socket still can.
async fn fail(ws: &mut WebSocketStream<TokioIo<Upgraded>>, e: &tungstenite::Error) {
    use tungstenite::Error as E;
    let code = match e {
        E::ConnectionClosed | E::AlreadyClosed | E::Io(_) => return,
        E::Capacity(_) | E::WriteBufferFull(_) => 1009,
        E::Utf8(_) => 1007,
        _ => 1002,
    };
    let frame = CloseFrame {
        code: CloseCode::from(code),
        reason: e.to_string().chars().take(100).collect::<String>().into(),
    };
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.close(Some(frame))).await;
}
