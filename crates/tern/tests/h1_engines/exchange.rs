//! One exchange on a real socket: the input written in pieces, the answers
//! read until the server closes or goes quiet, and what the app saw.

use std::{net::SocketAddr, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::app::{self, Seen};

/// What one engine did with one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The answers' status lines in order (`"1.1 200"`), interim `100
    /// Continue`s left out (see `answers`).
    pub answers: Vec<String>,
    /// The requests the app saw, in order.
    pub seen: Vec<Seen>,
    /// Whether the server closed the connection.
    pub closed: bool,
    /// The bytes the server wrote, for the failure message.
    pub raw: Vec<u8>,
}

/// Writes `bytes` cut at `cuts` (a short pause after each piece, so that
/// the pieces arrive as separate reads), then reads until the server
/// closes or writes nothing for `quiet`.
pub async fn exchange(
    (name, addr): (&'static str, SocketAddr),
    bytes: &[u8],
    cuts: &[usize],
    quiet: Duration,
) -> Outcome {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let _ = stream.set_nodelay(true);
    let me = stream.local_addr().expect("local address");
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        // The server may close before it has read everything (a refusal):
        // what it answered is still to be read.
        if stream.write_all(&bytes[at..cut]).await.is_err() {
            break;
        }
        at = cut;
        if cut < bytes.len() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let closed = loop {
        match tokio::time::timeout(quiet, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Err(_) => break false,
        }
    };
    let seen = app::take(name, me);
    Outcome {
        answers: answers(&raw),
        seen,
        closed,
        raw,
    }
}

/// The status lines in an answer stream, each `version status`. The app's
/// answers carry no request bytes, and Tern's refusals are problem+json
/// documents with no status line in them, so a status line is found by
/// looking for one.
///
/// Interim `100 Continue` answers are left out: whether one is sent
/// depends on whether the body had arrived when the handler asked for it
/// (RFC 9110 §10.1.1: a server MAY omit it when it has already received
/// some or all of the content), which is the timing of the cuts, not the
/// engine.
pub fn answers(raw: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 12 <= raw.len() {
        let w = &raw[i..i + 12];
        if w.starts_with(b"HTTP/1.")
            && (w[7] == b'0' || w[7] == b'1')
            && w[8] == b' '
            && w[9..12].iter().all(u8::is_ascii_digit)
        {
            let line = String::from_utf8_lossy(&w[5..12]).into_owned();
            if &w[9..12] != b"100" {
                out.push(line);
            }
            i += 12;
        } else {
            i += 1;
        }
    }
    out
}

/// Printable bytes, cut short.
pub fn show(bytes: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(bytes).escape_debug().collect();
    if text.len() > 600 {
        let cut = (0..=600)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}… ({} bytes)", &text[..cut], bytes.len())
    } else {
        text
    }
}
