//! The `h1_pipeline` fuzz target (`docs/plans/http1.md` §3.3): a whole
//! connection of Tern's engine, in memory, given a generated pipeline of
//! requests of every framing with garbage between them, written in pieces
//! cut anywhere, then half-closed.
//!
//! The check: the answers come in order, one per request before the
//! first bad garbage (and up to one that closes the connection), each
//! naming the request it answers; then at most one refusal (a 4xx), and
//! nothing after it; the connection ends, so no answer was lost before its
//! close; and the app saw exactly the generator's requests (method,
//! target, body bytes). Not a public API: `tern::__fuzz::H1::pipeline`.

use std::{cell::RefCell, net::SocketAddr, sync::Arc, time::Duration};

use http_body_util::BodyExt as _;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::{socket::Memory, H1Conn, Permitted, Settings};
use crate::{app::AppService, drain::DrainState, server::h1::buf::socket::Buffered};

mod generate;

use generate::Expected;

/// A request the app saw.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    method: String,
    target: String,
    body: Result<Vec<u8>, String>,
}

thread_local! {
    /// What the app saw in the connection being served on this thread
    /// (the runtime is this thread's, current-thread).
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
    static APP: AppService = app();
    static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
}

/// Answers every method on every path with `200` (`x-seen`: the
/// request's number on the connection), after reading the whole body.
fn app() -> AppService {
    async fn record(req: crate::Request) -> crate::Response {
        let (parts, body) = req.into_parts();
        let body = match body.collect().await {
            Ok(c) => Ok(c.to_bytes().to_vec()),
            Err(e) => Err(e.to_string()),
        };
        let n = SEEN.with(|s| {
            let mut s = s.borrow_mut();
            s.push(Seen {
                method: parts.method.to_string(),
                target: parts.uri.to_string(),
                body,
            });
            s.len()
        });
        let mut res = crate::Response::new(crate::body::Body::from("seen"));
        res.headers_mut()
            .insert("x-seen", http::HeaderValue::from(n));
        res
    }
    let mut config = crate::Config::default();
    config.timeouts.request = Duration::from_secs(5);
    crate::App::new()
        .route("/", crate::routing::any(record))
        .route("/{*rest}", crate::routing::any(record))
        .build_with(config)
        .expect("the fuzz app builds")
}

/// Serves `input`, written in pieces cut at `cuts` then half-closed, on
/// one in-memory connection of Tern's engine; the bytes written back, and
/// whether the connection ended.
async fn serve(app: AppService, input: &[u8], cuts: &[usize]) -> (Vec<u8>, bool) {
    let (mut client, server) = tokio::io::duplex(64 * 1024);
    let (_stop_tx, stop) = tokio::sync::watch::channel(false);
    let settings = Arc::new(Settings {
        limits: (&app.config().limits).into(),
        timeouts: app.config().timeouts.clone(),
        drain: DrainState::new(stop.clone()),
        app,
    });
    let io = Permitted::new(Buffered::new(Memory(server)), None);
    let peer = SocketAddr::from(([127, 0, 0, 1], 1));
    let conn = H1Conn::new(io, &[], settings, peer, stop);
    let (mut reader, mut writer) = tokio::io::split(&mut client);
    let write = async {
        let mut at = 0;
        for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
            let cut = cut.clamp(at, input.len());
            // The connection may close before it has read everything.
            if writer.write_all(&input[at..cut]).await.is_err() {
                return;
            }
            at = cut;
            // Let the connection read this piece on its own.
            tokio::task::yield_now().await;
        }
        let _ = writer.shutdown().await;
    };
    let read = async {
        let mut out = Vec::new();
        // A connection that waits for nothing (every request is sent and
        // the client half-closed) ends at once; this bounds a bug's hang.
        let ended = tokio::time::timeout(Duration::from_secs(10), reader.read_to_end(&mut out))
            .await
            .is_ok();
        (out, ended)
    };
    let ((), (), (out, ended)) = tokio::join!(conn, write, read);
    (out, ended)
}

/// One answer read back.
#[derive(Debug)]
struct Answer {
    http10: bool,
    status: u16,
    seen: Option<usize>,
}

/// The answers in `out`, interim `100 Continue`s left out; panics on
/// bytes that are not an answer with a `content-length`.
fn answers(mut out: &[u8]) -> Vec<Answer> {
    let mut answers = Vec::new();
    while !out.is_empty() {
        let end = out
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("an unfinished answer: {:?}", String::from_utf8_lossy(out)));
        let head = std::str::from_utf8(&out[..end]).expect("an answer's head is text");
        out = &out[end + 4..];
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let (http10, rest) = match status_line.split_at_checked(9) {
            Some(("HTTP/1.0 ", rest)) => (true, rest),
            Some(("HTTP/1.1 ", rest)) => (false, rest),
            _ => panic!("not a status line: {status_line:?}"),
        };
        let status: u16 = rest
            .get(..3)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not a status: {status_line:?}"));
        if status == 100 {
            continue;
        }
        let field = |name: &str| {
            head.split("\r\n").skip(1).find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
        };
        let length: usize = field("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("an answer without content-length: {head:?}"));
        assert!(out.len() >= length, "an answer cut short: {head:?}");
        out = &out[length..];
        answers.push(Answer {
            http10,
            status,
            seen: field("x-seen").and_then(|v| v.parse().ok()),
        });
    }
    answers
}

/// What one run exercised, for the tests to see that the check is not
/// vacuous (read by the tests only).
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    served: usize,
    cuts: usize,
    refusals: usize,
}

/// Checks what the connection did with `pipeline`; panics on a violation.
fn check(pipeline: &generate::Pipeline, out: &[u8], ended: bool) -> Tally {
    let shown = || {
        format!(
            "\n  sent: {:?}\n  cuts: {:?}\n  wrote: {:?}",
            String::from_utf8_lossy(&pipeline.bytes),
            pipeline.cuts,
            String::from_utf8_lossy(out)
        )
    };
    assert!(ended, "the connection did not end{}", shown());
    let seen = SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let want: Vec<Seen> = pipeline.served.iter().map(Expected::seen).collect();
    assert_eq!(seen, want, "what the app saw{}", shown());
    let answers = answers(out);
    let served = pipeline.served.len();
    assert!(
        answers.len() >= served,
        "{} answers for {served} requests{}",
        answers.len(),
        shown()
    );
    for (i, (answer, req)) in answers.iter().zip(&pipeline.served).enumerate() {
        assert!(
            answer.status == 200 && answer.seen == Some(i + 1) && answer.http10 == req.http10,
            "answer {i} is {answer:?}{}",
            shown()
        );
    }
    let refusals = match &answers[served..] {
        [] => 0,
        [refusal] if pipeline.refused => {
            assert!(
                (400..500).contains(&refusal.status) && refusal.seen.is_none(),
                "the refusal is {refusal:?}{}",
                shown()
            );
            1
        }
        more => panic!("answers after the last request: {more:?}{}", shown()),
    };
    Tally {
        served,
        cuts: pipeline.cuts.len(),
        refusals,
    }
}

/// Generates, serves and checks the pipeline `data` chooses.
fn run(data: &[u8]) -> Tally {
    let pipeline = generate::pipeline(data);
    let app = APP.with(Clone::clone);
    SEEN.with(|s| s.borrow_mut().clear());
    let (out, ended) = RT.with(|rt| rt.block_on(serve(app, &pipeline.bytes, &pipeline.cuts)));
    check(&pipeline, &out, ended)
}

impl Expected {
    fn seen(&self) -> Seen {
        Seen {
            method: self.method.clone(),
            target: self.target.clone(),
            body: Ok(self.body.clone()),
        }
    }
}

impl crate::__fuzz::H1 {
    /// The `h1_pipeline` fuzz target: `data` chooses a pipeline of
    /// requests of every framing with garbage between them and the cuts to
    /// write it with; one in-memory connection of Tern's engine serves it
    /// to an app that records what it sees; panics if the answers, the
    /// close or what the app saw are not what the pipeline says (see
    /// `server/h1/conn/fuzz.rs`). Not a public API.
    pub fn pipeline(data: &[u8]) {
        run(data);
    }
}

#[cfg(test)]
mod tests {
    use super::{run, Tally};

    fn add(total: &mut Tally, t: Tally) {
        total.served += t.served;
        total.cuts += t.cuts;
        total.refusals += t.refusals;
    }

    /// The fuzz target's check over the committed seed corpus (each file's
    /// bytes read as the generator's choices), so that the check cannot
    /// rot between fuzz runs.
    #[test]
    fn the_pipeline_check_holds_on_the_seed_corpus() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../hardening/corpus/h1");
        let mut files = 0;
        let mut total = Tally::default();
        for entry in std::fs::read_dir(dir).expect("hardening/corpus/h1") {
            let input = std::fs::read(entry.expect("entry").path()).expect("read");
            add(&mut total, run(&input));
            files += 1;
        }
        assert!(files >= 40, "{files} files");
        assert!(total.served >= 40 && total.refusals >= 1, "{total:?}");
    }

    /// The check on seeded random choices: a few thousand pipelines.
    #[test]
    fn the_pipeline_check_holds_on_seeded_choices() {
        let mut state = 0x2026_1204_5eed_u64;
        let mut total = Tally::default();
        for len in 0..2000 {
            let data: Vec<u8> = (0..len % 400)
                .map(|_| {
                    state ^= state >> 12;
                    state ^= state << 25;
                    state ^= state >> 27;
                    (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
                })
                .collect();
            add(&mut total, run(&data));
        }
        // Requests served, pieces written and refusals answered, by the
        // thousand: the check had something to check.
        println!("{total:?}");
        assert!(
            total.served >= 3000 && total.cuts >= 2000 && total.refusals >= 300,
            "{total:?}"
        );
    }
}
