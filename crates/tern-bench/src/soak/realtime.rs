//! The soak's chat traffic: WebSockets held on `/chat/socket`, each in
//! the room and publishing every few seconds, and server-sent event
//! readers on `/chat/events`; every reader counts the room's messages,
//! and each should see every message published.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use anyhow::{bail, ensure, Context, Result};
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
    sync::watch,
    task::JoinHandle,
};
use tokio_tungstenite::tungstenite::Message;

use crate::ws::{close_all, next_message, open, Ws, SMALL_READS};

/// The showcase's one room.
const ROOM: &str = "chat:lobby";

/// Where the clients are: publishing, quiet (the last messages arriving),
/// or done.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Publishing,
    Quiet,
    Done,
}

/// What the chat clients counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChatCounts {
    /// WebSockets held.
    pub sockets: usize,
    /// SSE readers.
    pub readers: usize,
    /// Messages the sockets published.
    pub published: u64,
    /// Publishes the server answered with an error (refused).
    pub refused: u64,
    /// Room messages the sockets should have received (each socket every
    /// message published and not refused).
    pub socket_expected: u64,
    /// Room messages the sockets received.
    pub socket_received: u64,
    /// The same for the SSE readers.
    pub reader_expected: u64,
    /// Room messages the SSE readers received.
    pub reader_received: u64,
    /// Sockets whose close handshake was not answered.
    pub unclean_closes: u64,
    /// What went wrong, one line each.
    pub failures: Vec<String>,
}

impl ChatCounts {
    /// Failures of any kind: refused publishes, sockets or streams ended
    /// early, unanswered closes, deliveries missing or extra.
    pub fn errors(&self) -> u64 {
        self.failures.len() as u64
    }
}

/// The clients, running on a runtime of their own.
pub(super) struct Chat {
    rt: tokio::runtime::Runtime,
    phase: watch::Sender<Phase>,
    published: Arc<AtomicU64>,
    sockets: Vec<JoinHandle<SocketEnd>>,
    readers: Vec<JoinHandle<ReaderEnd>>,
}

struct SocketEnd {
    ws: Option<Ws>,
    received: u64,
    refused: u64,
    failures: Vec<String>,
}

struct ReaderEnd {
    received: u64,
    failure: Option<String>,
}

impl Chat {
    /// Opens `sockets` WebSockets (each joins the room) and `readers`
    /// event streams through `addr`, then starts publishing: each socket
    /// every `every`, the sockets spread evenly over that time. Every
    /// one is a request to the showcase (counted by the caller).
    pub(super) fn start(
        addr: SocketAddr,
        sockets: usize,
        readers: usize,
        every: Duration,
    ) -> Result<Chat> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let (phase, watching) = watch::channel(Phase::Publishing);
        let published = Arc::new(AtomicU64::new(0));
        let (opened, streams) = rt.block_on(async {
            let mut opened = Vec::with_capacity(sockets);
            for i in 0..sockets {
                let mut ws = open(addr, &format!("/chat/socket?name=soak-{i}"), SMALL_READS)
                    .await
                    .with_context(|| format!("chat socket {i}"))?;
                join(&mut ws)
                    .await
                    .with_context(|| format!("chat socket {i}"))?;
                opened.push(ws);
            }
            let mut streams = Vec::with_capacity(readers);
            for i in 0..readers {
                streams.push(
                    open_events(addr)
                        .await
                        .with_context(|| format!("event reader {i}"))?,
                );
            }
            Ok::<_, anyhow::Error>((opened, streams))
        })?;
        let readers = streams
            .into_iter()
            .enumerate()
            .map(|(i, (stream, rest))| rt.spawn(read_events(i, stream, rest, watching.clone())))
            .collect();
        let n = opened.len().max(1) as u32;
        let sockets = opened
            .into_iter()
            .enumerate()
            .map(|(i, ws)| {
                let offset = every * i as u32 / n;
                rt.spawn(hold(
                    i,
                    ws,
                    offset,
                    every,
                    watching.clone(),
                    Arc::clone(&published),
                ))
            })
            .collect();
        Ok(Chat {
            rt,
            phase,
            published,
            sockets,
            readers,
        })
    }

    /// Stops publishing, waits `quiet` for the last messages, closes
    /// every socket and stream, and counts.
    pub(super) fn stop(self, quiet: Duration) -> ChatCounts {
        let Chat {
            rt,
            phase,
            published,
            sockets,
            readers,
        } = self;
        let _ = phase.send(Phase::Quiet);
        rt.block_on(async move {
            tokio::time::sleep(quiet).await;
            let _ = phase.send(Phase::Done);
            let mut counts = ChatCounts {
                sockets: sockets.len(),
                readers: readers.len(),
                ..ChatCounts::default()
            };
            let mut open = Vec::new();
            for task in sockets {
                match task.await {
                    Ok(end) => {
                        counts.socket_received += end.received;
                        counts.refused += end.refused;
                        counts.failures.extend(end.failures);
                        open.extend(end.ws);
                    }
                    Err(e) => counts.failures.push(format!("a socket's task failed: {e}")),
                }
            }
            for task in readers {
                match task.await {
                    Ok(end) => {
                        counts.reader_received += end.received;
                        counts.failures.extend(end.failure);
                    }
                    Err(e) => counts.failures.push(format!("a reader's task failed: {e}")),
                }
            }
            counts.unclean_closes = close_all(open).await as u64;
            if counts.unclean_closes > 0 {
                counts.failures.push(format!(
                    "{} sockets' close handshakes were not answered",
                    counts.unclean_closes
                ));
            }
            counts.published = published.load(Ordering::Relaxed);
            let each = counts.published.saturating_sub(counts.refused);
            counts.socket_expected = each * counts.sockets as u64;
            counts.reader_expected = each * counts.readers as u64;
            for (who, expected, received) in [
                ("sockets", counts.socket_expected, counts.socket_received),
                (
                    "event readers",
                    counts.reader_expected,
                    counts.reader_received,
                ),
            ] {
                if received != expected {
                    counts.failures.push(format!(
                        "the {who} received {received} room messages, {expected} expected"
                    ));
                }
            }
            counts
        })
    }
}

async fn join(ws: &mut Ws) -> Result<()> {
    ws.send(Message::text(format!(
        r#"{{"op":"join","topic":"{ROOM}"}}"#
    )))
    .await?;
    let answer = next_message(ws).await.context("the join's answer")?;
    let text = answer.to_text()?;
    ensure!(
        text.starts_with(r#"{"op":"joined""#),
        "joining {ROOM} answered {text}"
    );
    Ok(())
}

/// A socket in the room: publishes every `every` (the first after
/// `offset`) until quiet, and counts the room's messages until done.
async fn hold(
    i: usize,
    mut ws: Ws,
    offset: Duration,
    every: Duration,
    mut phase: watch::Receiver<Phase>,
    published: Arc<AtomicU64>,
) -> SocketEnd {
    let mut end = SocketEnd {
        ws: None,
        received: 0,
        refused: 0,
        failures: Vec::new(),
    };
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + offset, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seq = 0u64;
    loop {
        let publishing = *phase.borrow() == Phase::Publishing;
        tokio::select! {
            changed = phase.changed() => {
                if changed.is_err() || *phase.borrow() == Phase::Done {
                    break;
                }
            }
            _ = tick.tick(), if publishing => {
                seq += 1;
                let command = format!(
                    r#"{{"op":"publish","topic":"{ROOM}","event":"message","data":{{"text":"soak {i}.{seq}"}}}}"#
                );
                match ws.send(Message::text(command)).await {
                    Ok(()) => {
                        published.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        end.failures.push(format!("socket {i}: publishing failed: {e}"));
                        return end;
                    }
                }
            }
            m = ws.next() => match m {
                Some(Ok(Message::Text(text))) => {
                    let v: serde_json::Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                    if v["op"] == "error" {
                        end.refused += 1;
                        end.failures.push(format!("socket {i}: refused: {text}"));
                    } else if v["event"] == "message" {
                        end.received += 1;
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    end.failures.push(format!("socket {i}: closed by the server: {frame:?}"));
                    return end;
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    end.failures.push(format!("socket {i}: failed: {e}"));
                    return end;
                }
                None => {
                    end.failures.push(format!("socket {i}: ended"));
                    return end;
                }
            },
        }
    }
    end.ws = Some(ws);
    end
}

/// `GET /chat/events` through `addr`: the stream after a `200` head, and
/// the body bytes read with the head.
async fn open_events(addr: SocketAddr) -> Result<(TcpStream, Vec<u8>)> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let head =
        format!("GET /chat/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
    stream.write_all(head.as_bytes()).await?;
    let mut buf = Vec::new();
    let end = loop {
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .context("no answer within 10 s")??;
        if n == 0 {
            bail!("the connection closed before the answer's head");
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        ensure!(buf.len() < 16 * 1024, "an answer head over 16 KiB");
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    ensure!(
        head.starts_with("http/1.1 200"),
        "the stream answered {}",
        head.lines().next().unwrap_or_default()
    );
    ensure!(
        head.contains("content-type: text/event-stream"),
        "the stream is not text/event-stream: {head}"
    );
    ensure!(
        head.contains("transfer-encoding: chunked"),
        "the stream is not chunked: {head}"
    );
    Ok((stream, buf[end..].to_vec()))
}

/// Reads an event stream until done, counting the room's messages
/// (`event: message`).
async fn read_events(
    i: usize,
    mut stream: TcpStream,
    rest: Vec<u8>,
    mut phase: watch::Receiver<Phase>,
) -> ReaderEnd {
    let mut events = Events::default();
    if let Err(e) = events.feed(&rest) {
        return ReaderEnd {
            received: 0,
            failure: Some(format!("event reader {i}: {e}")),
        };
    }
    let mut chunk = vec![0u8; 16 * 1024];
    let failure = loop {
        tokio::select! {
            changed = phase.changed() => {
                if changed.is_err() || *phase.borrow() == Phase::Done {
                    break None;
                }
            }
            n = stream.read(&mut chunk) => match n {
                Ok(0) => break Some(format!("event reader {i}: the stream ended")),
                Ok(n) => {
                    if let Err(e) = events.feed(&chunk[..n]) {
                        break Some(format!("event reader {i}: {e}"));
                    }
                    if events.ended {
                        break Some(format!("event reader {i}: the stream ended"));
                    }
                }
                Err(e) => break Some(format!("event reader {i}: {e}")),
            },
        }
    };
    ReaderEnd {
        received: events.messages,
        failure,
    }
}

/// A chunked event stream, decoded as it comes: the room's messages
/// counted.
#[derive(Default)]
struct Events {
    raw: Vec<u8>,
    state: Chunk,
    text: Vec<u8>,
    messages: u64,
    ended: bool,
}

/// Where the decoder is in the chunked body.
#[derive(Default, Clone, Copy)]
enum Chunk {
    /// Reading a size line.
    #[default]
    Size,
    /// This many bytes of data left in the chunk.
    Data(usize),
    /// This many bytes left of the CRLF after the data.
    End(usize),
}

impl Events {
    fn feed(&mut self, bytes: &[u8]) -> Result<()> {
        self.raw.extend_from_slice(bytes);
        while !self.ended {
            match self.state {
                Chunk::Size => {
                    let Some(at) = self.raw.windows(2).position(|w| w == b"\r\n") else {
                        ensure!(self.raw.len() < 64, "a bad chunk size line");
                        break;
                    };
                    let line = String::from_utf8_lossy(&self.raw[..at]).into_owned();
                    let size =
                        usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
                            .with_context(|| format!("bad chunk size {line:?}"))?;
                    self.raw.drain(..at + 2);
                    if size == 0 {
                        self.ended = true;
                    } else {
                        self.state = Chunk::Data(size);
                    }
                }
                Chunk::Data(_) | Chunk::End(_) if self.raw.is_empty() => break,
                Chunk::Data(left) => {
                    let take = left.min(self.raw.len());
                    self.text.extend(self.raw.drain(..take));
                    self.state = if take == left {
                        Chunk::End(2)
                    } else {
                        Chunk::Data(left - take)
                    };
                    self.lines();
                }
                Chunk::End(left) => {
                    let take = left.min(self.raw.len());
                    self.raw.drain(..take);
                    self.state = if take == left {
                        Chunk::Size
                    } else {
                        Chunk::End(left - take)
                    };
                }
            }
        }
        Ok(())
    }

    fn lines(&mut self) {
        while let Some(at) = self.text.iter().position(|&b| b == b'\n') {
            if &self.text[..at] == b"event: message" {
                self.messages += 1;
            }
            self.text.drain(..=at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_events_are_counted_wherever_the_reads_split() {
        let events = "id: 1\nevent: message\ndata: {}\n\n: keep-alive\n\nevent: presence.join\ndata: {}\n\nid: 2\nevent: message\ndata: {}\n\n";
        // Two chunks, the boundary inside `event: message`.
        let (a, b) = events.split_at(30);
        let body = format!("{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n", a.len(), b.len());
        for step in [1, 3, 7, body.len()] {
            let mut e = Events::default();
            for piece in body.as_bytes().chunks(step) {
                assert!(e.feed(piece).is_ok());
            }
            assert_eq!(e.messages, 2, "reads of {step}");
            assert!(e.ended);
        }
    }
}
