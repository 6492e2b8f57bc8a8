//! The client's sockets: opened, driven with checked echoes, closed.

use std::{
    net::SocketAddr,
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};
use bytes::Bytes;
use futures_util::{stream, SinkExt, StreamExt, TryStreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::{
    connect_async_with_config,
    tungstenite::{
        protocol::{frame::coding::CloseCode, CloseFrame, WebSocketConfig},
        Message,
    },
    MaybeTlsStream, WebSocketStream,
};

use super::{ANSWER_TIMEOUT, LARGE_LEN, MAX_MESSAGE, OPEN_AT_ONCE};

pub(crate) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The client's read buffer for small messages and held sockets: 4 KiB,
/// so that 10,000 held sockets cost the client little.
pub(crate) const SMALL_READS: usize = 4096;

/// The client's read buffer for `echo-large`: tokio-tungstenite's default
/// (128 KiB), read in one call where 4 KiB takes 16 per message; the
/// client is the bottleneck of this workload, and should be as cheap as
/// it can be.
pub(super) const LARGE_READS: usize = 128 * 1024;

/// The client's configuration, with a read buffer of `reads` bytes.
pub(crate) fn client_config(reads: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(reads)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

pub(crate) async fn open(addr: SocketAddr, path: &str, reads: usize) -> Result<Ws> {
    let url = format!("ws://{addr}{path}");
    let (ws, res) = tokio::time::timeout(
        ANSWER_TIMEOUT,
        connect_async_with_config(url.as_str(), Some(client_config(reads)), true),
    )
    .await
    .with_context(|| format!("{url}: no handshake within {ANSWER_TIMEOUT:?}"))?
    .with_context(|| format!("{url}: the handshake failed"))?;
    ensure!(
        res.status() == 101,
        "{url}: the handshake answered {}",
        res.status()
    );
    Ok(ws)
}

pub(super) async fn open_many(addr: SocketAddr, n: usize, reads: usize) -> Result<Vec<Ws>> {
    stream::iter(0..n)
        .map(|i| async move { open(addr, &format!("/bench/ws/{i}"), reads).await })
        .buffer_unordered(OPEN_AT_ONCE)
        .try_collect()
        .await
}

/// The next text or binary message (pings are answered by the library,
/// pongs ignored), within [`ANSWER_TIMEOUT`].
pub(crate) async fn next_message(ws: &mut Ws) -> Result<Message> {
    loop {
        let frame = tokio::time::timeout(ANSWER_TIMEOUT, ws.next())
            .await
            .context("no echo within 10 s")?;
        match frame {
            Some(Ok(m @ (Message::Text(_) | Message::Binary(_)))) => return Ok(m),
            Some(Ok(Message::Close(frame))) => bail!("the server closed the socket: {frame:?}"),
            Some(Ok(_)) => {}
            Some(Err(e)) => bail!("the socket failed: {e}"),
            None => bail!("the socket ended"),
        }
    }
}

/// Sends `message` and checks that its echo is the same message.
async fn round_trip(ws: &mut Ws, message: Message) -> Result<()> {
    ws.send(message.clone()).await.context("sending")?;
    let echo = next_message(ws).await?;
    if echo != message {
        bail!(
            "the echo differs from the message: sent {} bytes ({}), got {} bytes ({})",
            message.len(),
            kind(&message),
            echo.len(),
            kind(&echo)
        );
    }
    Ok(())
}

fn kind(m: &Message) -> &'static str {
    match m {
        Message::Text(_) => "text",
        Message::Binary(_) => "binary",
        _ => "control",
    }
}

/// `echo-small`'s text: the connection and the sequence number, 32 bytes.
fn small(connection: usize, seq: u64) -> Message {
    Message::text(format!("{connection:08x}{seq:024x}"))
}

/// `echo-large`'s two messages of a connection, sent in turn: the first
/// byte 0 or 1, the next 8 the connection, then a pattern. Built once (a
/// copy per message would cost the client, the bottleneck of this
/// workload, more than the check needs): an echo of another connection's
/// message, or of this connection's previous one, still differs from the
/// one expected.
fn large_pair(connection: usize) -> [Message; 2] {
    let mut pattern: Vec<u8> = (0..LARGE_LEN)
        .map(|i| (i as u8).wrapping_mul(31) ^ (connection as u8))
        .collect();
    pattern[1..9].copy_from_slice(&(connection as u64).to_le_bytes());
    [0u8, 1].map(|turn| {
        let mut payload = pattern.clone();
        payload[0] = turn;
        Message::binary(payload)
    })
}

/// Sends and checks messages of `len` bytes on every socket, each in its
/// own task, for `seconds`; returns the sockets, the echoes and the time
/// from the start to the last echo.
pub(super) async fn drive(
    sockets: Vec<Ws>,
    len: usize,
    seconds: f64,
) -> Result<(Vec<Ws>, u64, f64)> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = sockets
        .into_iter()
        .enumerate()
        .map(|(connection, mut ws)| {
            tokio::spawn(async move {
                let pair = (len == LARGE_LEN).then(|| large_pair(connection));
                let mut seq = 0u64;
                let mut result = Ok(());
                while Instant::now() < deadline {
                    let message = match &pair {
                        Some(pair) => pair[(seq % 2) as usize].clone(),
                        None => small(connection, seq),
                    };
                    if let Err(e) = round_trip(&mut ws, message).await {
                        result = Err(e.context(format!("connection {connection}, message {seq}")));
                        break;
                    }
                    seq += 1;
                }
                (ws, seq, result)
            })
        })
        .collect();
    let mut sockets = Vec::with_capacity(tasks.len());
    let mut messages = 0;
    for task in tasks {
        let (ws, n, result) = task.await.context("a client task panicked")?;
        result?;
        sockets.push(ws);
        messages += n;
    }
    Ok((sockets, messages, started.elapsed().as_secs_f64()))
}

/// One `echo-small` message echoed on every socket.
pub(super) async fn echo_once(sockets: Vec<Ws>) -> Result<Vec<Ws>> {
    stream::iter(sockets.into_iter().enumerate())
        .map(|(i, mut ws)| async move {
            round_trip(&mut ws, small(i, 0))
                .await
                .with_context(|| format!("connection {i}"))?;
            Ok::<_, anyhow::Error>(ws)
        })
        .buffer_unordered(OPEN_AT_ONCE)
        .try_collect()
        .await
}

/// Closes `ws` with `1000` and waits for the server's close and the end of
/// the stream; whether both came within [`ANSWER_TIMEOUT`].
async fn close(mut ws: Ws) -> bool {
    let done = async {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        if ws.close(Some(frame)).await.is_err() {
            return false;
        }
        let mut answered = false;
        loop {
            match ws.next().await {
                Some(Ok(Message::Close(_))) => answered = true,
                Some(Ok(_)) => {}
                Some(Err(tokio_tungstenite::tungstenite::Error::ConnectionClosed)) | None => {
                    return answered
                }
                Some(Err(_)) => return false,
            }
        }
    };
    tokio::time::timeout(ANSWER_TIMEOUT, done)
        .await
        .unwrap_or(false)
}

/// Closes every socket; the number whose close was not answered.
pub(crate) async fn close_all(sockets: Vec<Ws>) -> usize {
    stream::iter(sockets)
        .map(close)
        .buffer_unordered(OPEN_AT_ONCE * 4)
        .filter(|clean| std::future::ready(!clean))
        .count()
        .await
}

/// The answers, before any load: echoes of text and binary on two paths,
/// a 1 MiB message, the close handshake.
pub(super) async fn check(addr: SocketAddr) -> Result<()> {
    for path in ["/", "/bench/check?x=1"] {
        let mut ws = open(addr, path, LARGE_READS).await?;
        let messages = [
            Message::text(""),
            Message::text("héllo, wörld ✓"),
            Message::binary(Bytes::from((0..=255u8).collect::<Vec<_>>())),
            Message::binary(Bytes::from(vec![0x5a; 1 << 20])),
        ];
        for (i, m) in messages.into_iter().enumerate() {
            round_trip(&mut ws, m)
                .await
                .with_context(|| format!("{path}: check message {i}"))?;
        }
        ensure!(
            close(ws).await,
            "{path}: the server did not answer the close"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::SMALL_LEN;

    #[test]
    fn messages_have_their_sizes() {
        assert_eq!(small(u32::MAX as usize, u64::MAX).len(), SMALL_LEN);
        let [a, b] = large_pair(3);
        assert_eq!((a.len(), b.len()), (LARGE_LEN, LARGE_LEN));
        assert_ne!(a, b);
        assert_ne!(large_pair(3)[0], large_pair(4)[0]);
        assert_ne!(large_pair(3)[0], large_pair(3 + 256)[0]);
    }
}
