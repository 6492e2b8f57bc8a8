//! Bench peer: a WebSocket echo on bare hyper 1 and fastwebsockets 0.10
//! (`upgrade` feature for the handshake on a hyper 1 request), used the
//! way its documentation shows: a `FragmentCollector` (whole messages,
//! text checked as UTF-8 across fragments), auto close and auto pong on,
//! frames up to 20 MiB. Every path answers the handshake and echoes every
//! text and binary message.
//!
//! fastwebsockets' size limit (`set_max_message_size`) bounds one frame,
//! not a message assembled from fragments: `FragmentCollector` grows its
//! buffer without a bound, and offers no hook to add one. The peer cannot
//! enforce a 20 MiB message limit; the Autobahn cases (16 MiB at most)
//! do not reach it.
//!
//! What the library leaves to the caller on a protocol error is done as
//! `tern_realtime::WebSocket` does it: a close frame with `1002`, `1007`
//! or `1009`, then the socket is dropped.
//!
//! `BENCH_ADDR` or `TERN_ADDR` is the address, `BENCH_WORKERS` or
//! `TERN_WORKERS` the worker threads of its one multi-thread tokio runtime
//! (by default one per core). Prints `listening on ADDR` once bound;
//! `SIGTERM` or Ctrl-C stops it.

use std::{convert::Infallible, io, time::Duration};

use bytes::Bytes;
use fastwebsockets::{
    upgrade::{self, UpgradeFut},
    FragmentCollector, Frame, OpCode, WebSocketError,
};
use http::{header, HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::Empty;
use hyper::{body::Incoming, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use tokio::{
    net::TcpListener,
    signal::unix::{signal, SignalKind},
};

/// The frame limit: Autobahn's case 9 sends up to 16 MiB.
const MAX_FRAME: usize = 20 * 1024 * 1024;

/// How long a close waits to be written (`WEBSOCKET_CLOSE_TIMEOUT`).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

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

/// RFC 6455's handshake: the checks fastwebsockets leaves to the caller
/// (method, `Upgrade`, `Connection`), then its `upgrade` (version and
/// key), the socket served in a task of its own.
async fn handshake(mut req: Request<Incoming>) -> Result<Res, Infallible> {
    if req.method() != Method::GET {
        return Ok(refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            Some(("allow", "GET")),
        ));
    }
    let headers = req.headers();
    if !has_token(headers, header::UPGRADE, "websocket")
        || !has_token(headers, header::CONNECTION, "upgrade")
    {
        return Ok(refuse(
            StatusCode::UPGRADE_REQUIRED,
            Some(("upgrade", "websocket")),
        ));
    }
    match upgrade::upgrade(&mut req) {
        Ok((res, socket)) => {
            tokio::spawn(echo(socket));
            Ok(res)
        }
        Err(WebSocketError::InvalidSecWebsocketVersion) => Ok(refuse(
            StatusCode::UPGRADE_REQUIRED,
            Some(("sec-websocket-version", "13")),
        )),
        Err(_) => Ok(refuse(StatusCode::BAD_REQUEST, None)),
    }
}

async fn echo(socket: UpgradeFut) {
    let Ok(mut ws) = socket.await else { return };
    ws.set_auto_close(true);
    ws.set_auto_pong(true);
    // The check is `len >= limit`: one more, so that 20 MiB itself passes.
    ws.set_max_message_size(MAX_FRAME + 1);
    let mut ws = FragmentCollector::new(ws);
    loop {
        match ws.read_frame().await {
            Ok(frame) => match frame.opcode {
                // Answered by the library (auto close) before it is returned.
                OpCode::Close => return,
                OpCode::Text | OpCode::Binary => {
                    let Ok(()) = ws.write_frame(frame).await else {
                        return;
                    };
                }
                _ => {}
            },
            Err(e) => {
                let code = match e {
                    WebSocketError::ConnectionClosed
                    | WebSocketError::UnexpectedEOF
                    | WebSocketError::IoError(_) => return,
                    WebSocketError::FrameTooLarge => 1009,
                    WebSocketError::InvalidUTF8 => 1007,
                    _ => 1002,
                };
                let reason: String = e.to_string().chars().take(100).collect();
                let close = Frame::close(code, reason.as_bytes());
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, ws.write_frame(close)).await;
                return;
            }
        }
    }
}
