//! The client's side of a trial: the answers checked, sockets opened and
//! joined (or stalled), and every delivery stamped, counted and timed.

use std::{
    net::SocketAddr,
    ops::Range,
    sync::{
        atomic::{AtomicU32, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};
use futures_util::{stream, SinkExt, StreamExt, TryStreamExt};
use tokio::{
    net::TcpSocket,
    sync::{watch, Notify},
};
use tokio_tungstenite::{
    client_async_with_config,
    tungstenite::{self, Message},
    MaybeTlsStream,
};

use crate::{
    client::Client,
    ws::{
        client_config, close_all, next_message, open, Ws, ANSWER_TIMEOUT, OPEN_AT_ONCE, SMALL_READS,
    },
};

use super::trials::{Latency, Stalled};
use super::{
    DELIVERY_TIMEOUT, FAN_TOPIC, JSON_BODY, PROBE_TIMEOUT, PROBE_TOPIC, QUIET, STALLED_RCVBUF,
};

/// `GET /json`, byte for byte.
pub(super) fn check_json(addr: SocketAddr) -> Result<()> {
    let mut c = Client::connect(addr)?;
    let res = c.send("GET", "/json", &[], None)?;
    ensure!(
        res.status == 200
            && res.body == JSON_BODY
            && res.header("content-type") == Some("application/json"),
        "got {} {:?} {:?}",
        res.status,
        res.header("content-type"),
        String::from_utf8_lossy(&res.body)
    );
    Ok(())
}

pub(super) fn text_of(m: &Message) -> Result<&str> {
    match m {
        Message::Text(t) => Ok(t.as_str()),
        other => bail!("a {} message where text was expected", other.len()),
    }
}

/// The channel protocol: a join answered, a publish delivered to the
/// joined publisher with its data intact, a topic outside `bench:`
/// refused and the socket still open, the close answered.
pub(super) async fn check_channels(addr: SocketAddr) -> Result<()> {
    let mut ws = open(addr, "/socket", SMALL_READS).await?;
    join(&mut ws, "bench:check").await?;
    let data = serde_json::json!({"n": [1, 2.5, null], "s": "héllo ✓"});
    let publish = serde_json::json!({"op": "publish", "topic": "bench:check", "event": "check", "data": data});
    ws.send(Message::text(publish.to_string())).await?;
    let got = next_message(&mut ws).await.context("the publish")?;
    let got: serde_json::Value = serde_json::from_str(text_of(&got)?)?;
    ensure!(
        got["topic"] == "bench:check"
            && got["event"] == "check"
            && got["data"] == data
            && got["id"].is_string(),
        "the publish came back as {got}"
    );
    for op in ["join", "publish"] {
        let refused = serde_json::json!({"op": op, "topic": "other:x", "event": "e", "data": 1});
        let refused = if op == "join" {
            serde_json::json!({"op": "join", "topic": "other:x"})
        } else {
            refused
        };
        ws.send(Message::text(refused.to_string())).await?;
        let got = next_message(&mut ws).await.context("a refused command")?;
        let got: serde_json::Value = serde_json::from_str(text_of(&got)?)?;
        ensure!(
            got["op"] == "error" && got["topic"] == "other:x",
            "{op} on other:x answered {got}"
        );
    }
    ensure!(
        close_all(vec![ws]).await == 0,
        "the server did not answer the close"
    );
    Ok(())
}

pub(super) async fn join(ws: &mut Ws, topic: &str) -> Result<()> {
    let command = format!(r#"{{"op":"join","topic":"{topic}"}}"#);
    ws.send(Message::text(command)).await.context("joining")?;
    let answer = next_message(ws).await.context("the join's answer")?;
    let text = text_of(&answer)?;
    ensure!(
        text.starts_with(r#"{"op":"joined""#) && text.contains(topic),
        "joining {topic} answered {text}"
    );
    Ok(())
}

/// `n` sockets on `/socket`, each joined to `topic`.
pub(super) async fn open_joined(addr: SocketAddr, n: usize, topic: &str) -> Result<Vec<Ws>> {
    stream::iter(0..n)
        .map(|i| async move {
            let mut ws = open(addr, "/socket", SMALL_READS).await?;
            join(&mut ws, topic)
                .await
                .with_context(|| format!("socket {i}"))?;
            Ok::<_, anyhow::Error>(ws)
        })
        .buffer_unordered(OPEN_AT_ONCE)
        .try_collect()
        .await
}

/// A socket that joins `topic` and then never reads, with a small
/// receive buffer so that the server's writes block soon.
pub(super) async fn open_stalled(addr: SocketAddr, topic: &str) -> Result<Ws> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // Before connecting, so that the window offered is small from the
    // start.
    socket.set_recv_buffer_size(STALLED_RCVBUF)?;
    let stream = socket.connect(addr).await?;
    stream.set_nodelay(true)?;
    let url = format!("ws://{addr}/socket");
    let (mut ws, res) = tokio::time::timeout(
        ANSWER_TIMEOUT,
        client_async_with_config(
            url.as_str(),
            MaybeTlsStream::Plain(stream),
            Some(client_config(SMALL_READS)),
        ),
    )
    .await
    .context("the stalled socket: no handshake within 10 s")?
    .context("the stalled socket: the handshake failed")?;
    ensure!(
        res.status() == 101,
        "the stalled socket: the handshake answered {}",
        res.status()
    );
    join(&mut ws, topic).await?;
    Ok(ws)
}

/// Reads what the stalled client was sent, until the end or a quiet
/// second: whether the server had closed it.
pub(super) async fn read_stalled(mut ws: Ws, published: u64) -> Stalled {
    let mut received = 0;
    let mut code = None;
    let closed = loop {
        match tokio::time::timeout(QUIET, ws.next()).await {
            Err(_) => break false,
            Ok(Some(Ok(Message::Text(_) | Message::Binary(_)))) => received += 1,
            Ok(Some(Ok(Message::Close(frame)))) => {
                code = Some(frame.map_or(1005, |f| u16::from(f.code)));
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(tungstenite::Error::ConnectionClosed)) | None) => break true,
            Ok(Some(Err(_))) => break true,
        }
    };
    let how = match (closed, code) {
        (false, _) => "open".to_owned(),
        (true, Some(code)) => format!("close frame {code}"),
        (true, None) => "no close frame".to_owned(),
    };
    if !closed {
        // Still open: closed by the drop that follows.
        drop(ws);
    }
    Stalled {
        published,
        received,
        closed,
        how,
    }
}

/// A held socket: answers pings (the library does, when read), counts
/// messages (none are expected) until told to stop.
pub(super) async fn hold(mut ws: Ws, mut stop: watch::Receiver<bool>) -> (Ws, u64, bool) {
    let mut unexpected = 0;
    let ended = loop {
        tokio::select! {
            _ = stop.changed() => break false,
            m = ws.next() => match m {
                Some(Ok(Message::Text(_) | Message::Binary(_))) => unexpected += 1,
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break true,
            },
        }
    };
    (ws, unexpected, ended)
}

/// Publishes through the publisher, on the first server, to
/// [`PROBE_TOPIC`] until a socket on `other` gets one: the backend is
/// up both ways. Returns the milliseconds that took.
pub(super) async fn probe(publisher: &mut Ws, other: SocketAddr) -> Result<f64> {
    let mut probe = open(other, "/socket", SMALL_READS).await?;
    join(&mut probe, PROBE_TOPIC).await?;
    let started = Instant::now();
    let command = format!(r#"{{"op":"publish","topic":"{PROBE_TOPIC}","event":"probe","data":0}}"#);
    loop {
        ensure!(
            started.elapsed() < PROBE_TIMEOUT,
            "no message crossed the backend within {PROBE_TIMEOUT:?}"
        );
        publisher.send(Message::text(command.as_str())).await?;
        if let Ok(Some(Ok(Message::Text(_)))) =
            tokio::time::timeout(Duration::from_millis(100), probe.next()).await
        {
            break;
        }
    }
    let ms = started.elapsed().as_secs_f64() * 1e3;
    // Probes still in flight reach only `probe`, which closes now.
    close_all(vec![probe]).await;
    Ok(ms)
}

/// Counts of deliveries per message, and a signal when one is complete.
pub(super) struct Tally {
    pub(super) counts: Vec<AtomicU32>,
    pub(super) expected: u32,
    pub(super) complete: Notify,
}

impl Tally {
    pub(super) fn done(&self, seqs: Range<usize>) -> bool {
        self.counts[seqs]
            .iter()
            .all(|c| c.load(Ordering::Acquire) >= self.expected)
    }
}

/// What the subscribers recorded.
pub(super) struct Broadcasts {
    pub(super) sockets: Vec<Ws>,
    /// Per subscriber, per message: receive minus send time, us
    /// (`u32::MAX`: never came).
    pub(super) latencies: Vec<Vec<u32>>,
    pub(super) unexpected: u64,
}

/// The message's number and send time, read out of a delivery
/// (`..."data":[SEQ,SENT...`) without parsing the JSON.
pub(super) fn stamp(text: &str) -> Option<(usize, u64)> {
    const KEY: &str = "\"data\":[";
    let rest = &text[text.find(KEY)? + KEY.len()..];
    let (seq, rest) = rest.split_once(',')?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    Some((seq.parse().ok()?, rest[..end].parse().ok()?))
}

/// A publish command whose data is `[seq, sent]` and, with `pad` > 0, a
/// string of `pad` bytes.
pub(super) fn publish_command(seq: usize, sent: u64, pad: &str) -> String {
    if pad.is_empty() {
        format!(r#"{{"op":"publish","topic":"{FAN_TOPIC}","event":"b","data":[{seq},{sent}]}}"#)
    } else {
        format!(
            r#"{{"op":"publish","topic":"{FAN_TOPIC}","event":"b","data":[{seq},{sent},"{pad}"]}}"#
        )
    }
}

/// A subscriber: records each message's latency until told to stop.
pub(super) async fn subscribe(
    mut ws: Ws,
    base: Instant,
    tally: Arc<Tally>,
    mut stop: watch::Receiver<bool>,
) -> (Ws, Vec<u32>, u64) {
    let mut latencies = vec![u32::MAX; tally.counts.len()];
    let mut unexpected = 0;
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            m = ws.next() => match m {
                Some(Ok(Message::Text(text))) => {
                    let now = base.elapsed().as_micros() as u64;
                    match stamp(text.as_str()) {
                        Some((seq, sent)) if seq < latencies.len() && latencies[seq] == u32::MAX => {
                            latencies[seq] = now.saturating_sub(sent).min(u64::from(u32::MAX - 1)) as u32;
                            if tally.counts[seq].fetch_add(1, Ordering::AcqRel) + 1 == tally.expected {
                                tally.complete.notify_one();
                            }
                        }
                        _ => unexpected += 1,
                    }
                }
                Some(Ok(Message::Binary(_))) => unexpected += 1,
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
        }
    }
    (ws, latencies, unexpected)
}

/// Publishes `total` messages in bursts of `burst` (padded with `pad`
/// bytes), each burst after the one before reached every subscriber and
/// at least `interval` after it was sent; every subscriber records every
/// message's latency.
pub(super) async fn broadcast_to(
    sockets: Vec<Ws>,
    publisher: &mut Ws,
    total: usize,
    burst: usize,
    pad: usize,
    interval: Duration,
) -> Result<Broadcasts> {
    let base = Instant::now();
    let tally = Arc::new(Tally {
        counts: (0..total).map(|_| AtomicU32::new(0)).collect(),
        expected: u32::try_from(sockets.len()).context("too many subscribers")?,
        complete: Notify::new(),
    });
    let (stop, stopped) = watch::channel(false);
    let tasks: Vec<_> = sockets
        .into_iter()
        .map(|ws| tokio::spawn(subscribe(ws, base, Arc::clone(&tally), stopped.clone())))
        .collect();
    let pad = "x".repeat(pad);
    let mut seq = 0;
    while seq < total {
        let first = seq;
        let sent_at = tokio::time::Instant::now();
        while seq < total && seq < first + burst {
            let sent = base.elapsed().as_micros() as u64;
            publisher
                .send(Message::text(publish_command(seq, sent, &pad)))
                .await
                .context("publishing")?;
            seq += 1;
        }
        let deadline = sent_at + DELIVERY_TIMEOUT;
        while !tally.done(first..seq) {
            if tokio::time::timeout_at(deadline, tally.complete.notified())
                .await
                .is_err()
            {
                // Counted as missing below.
                break;
            }
        }
        tokio::time::sleep_until(sent_at + interval).await;
    }
    let _ = stop.send(true);
    let mut out = Broadcasts {
        sockets: Vec::with_capacity(tasks.len()),
        latencies: Vec::with_capacity(tasks.len()),
        unexpected: 0,
    };
    for t in tasks {
        let (ws, latencies, unexpected) = t.await.context("a subscriber task panicked")?;
        out.sockets.push(ws);
        out.latencies.push(latencies);
        out.unexpected += unexpected;
    }
    Ok(out)
}

/// The nearest-rank percentile `p` (0-100) of sorted values.
pub(super) fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Latency over the subscribers `lats`: every delivery of every message
/// in `groups`, and per group the time to its last delivery (a group is
/// one broadcast, or a burst, whose last delivery is its last message's).
pub(super) fn latency(lats: &[&[u32]], groups: &[Range<usize>]) -> Latency {
    let mut all = Vec::with_capacity(lats.len() * groups.iter().map(|g| g.len()).sum::<usize>());
    let mut last = Vec::with_capacity(groups.len());
    let mut missing = 0;
    for g in groups {
        let mut worst = 0;
        for l in lats {
            for &v in &l[g.clone()] {
                if v == u32::MAX {
                    missing += 1;
                } else {
                    all.push(v);
                    worst = worst.max(v);
                }
            }
        }
        last.push(worst);
    }
    all.sort_unstable();
    last.sort_unstable();
    Latency {
        subscribers: lats.len(),
        deliveries: all.len() as u64,
        missing,
        p50_us: percentile(&all, 50.0),
        p99_us: percentile(&all, 99.0),
        max_us: all.last().copied().unwrap_or(0),
        last_p50_us: percentile(&last, 50.0),
        last_max_us: last.last().copied().unwrap_or(0),
    }
}
