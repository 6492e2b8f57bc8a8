//! The differences between the engines that are expected, each with its
//! reason: where Tern's engine refuses what hyper's path accepts, because
//! RFC 9112 says the message is an error (or lets a server refuse it) and
//! a lax reading is what request smuggling is made of; where hyper's path
//! gets it wrong; and two of timing only.
//!
//! A row covers a difference only when its input holds what the row is
//! about (`applies`: for a refusal, the message Tern's codec refuses, found
//! with the codec's own verdict, `tern::__fuzz::H1::verdict`) *and* the
//! difference has the row's shape (`shape`: which side answered what, which
//! closed, what the app saw). Anything else is unexplained and fails the
//! test.

use crate::exchange::Outcome;

pub struct Known {
    pub name: &'static str,
    pub reason: &'static str,
    /// Whether the input holds what this row is about.
    pub applies: fn(&[u8]) -> bool,
    /// Whether the difference is the one this row explains: `(tern,
    /// hyper)`.
    pub shape: fn(&Outcome, &Outcome) -> bool,
    /// Whether it shows only when the bytes arrive at the wrong moment
    /// (so not on every run): the test does not require it to show.
    pub by_timing: bool,
}

pub const KNOWN: &[Known] = &[
    Known {
        name: "Transfer-Encoding with Content-Length",
        reason: "RFC 9112 §6.3: such a message \"ought to be handled as an error\" (llhttp's \
                 strict mode refuses it); hyper reads it chunked and closes after its answer. \
                 Tern's engine refuses it: 400, closed",
        applies: |input| {
            refused(input).is_some_and(|m| {
                let h = head(m);
                has_field(h, b"transfer-encoding") && has_field(h, b"content-length")
            })
        },
        shape: tern_refuses,
        by_timing: false,
    },
    Known {
        name: "a bare LF before a request line",
        reason: "RFC 9112 §2.2 lets a server skip empty lines (CRLF) before a request line; a \
                 bare LF is no line ending Tern accepts anywhere (issue 9: a front end that does \
                 not take it frames the stream differently). hyper skips it; Tern's engine \
                 refuses it: 400, closed. (A Content-Length one short makes one too: the body \
                 takes the CR of the CRLF after it.)",
        applies: |input| refused(input).is_some_and(|m| skip_empty_lines(m).starts_with(b"\n")),
        shape: tern_refuses,
        by_timing: false,
    },
    Known {
        name: "a CONNECT target without a port",
        reason: "RFC 9112 §3.2.3: a CONNECT request's target is authority-form, \
                 `uri-host \":\" port`; hyper's path hands it to the router (a 404 here); \
                 Tern's engine refuses it: 400, closed",
        applies: |input| {
            refused(input).is_some_and(|m| {
                let m = skip_empty_lines(m);
                m.starts_with(b"CONNECT ")
                    && !m
                        .split(|b| *b == b' ')
                        .nth(1)
                        .is_some_and(|t| t.contains(&b':'))
            })
        },
        shape: tern_refuses,
        by_timing: false,
    },
    Known {
        name: "the version of a refusal after an HTTP/1.0 request",
        reason: "a refused message's version is not known; Tern's engine answers HTTP/1.1, its \
                 own version (RFC 9110 §2.5: a server sends the highest version it conforms to \
                 whose major version is not above the request's); hyper repeats the version of \
                 the request before it. Same status, same close",
        applies: |input| input.windows(8).any(|w| w == b"HTTP/1.0"),
        shape: |tern, hyper| {
            let (Some(t), Some(h)) = (tern.answers.last(), hyper.answers.last()) else {
                return false;
            };
            let n = tern.answers.len();
            hyper.answers.len() == n
                && tern.answers[..n - 1] == hyper.answers[..n - 1]
                && t.strip_prefix("1.1 ").is_some_and(|s| s.starts_with('4'))
                && h.strip_prefix("1.0 ") == t.strip_prefix("1.1 ")
                && tern.seen == hyper.seen
                && tern.closed == hyper.closed
        },
        by_timing: false,
    },
    Known {
        name: "hyper's path loses the answers after an upgrade it did not grant",
        reason: "RFC 9110 §7.8: a server may ignore Upgrade, and the connection stays an HTTP/1.1 \
                 connection whose pipelined requests are answered in order (RFC 9112 §9.3.2). \
                 Tern's engine answers them. On hyper's path the app serves them but their \
                 answers never reach the client, and the connection closes: hyper hands the \
                 connection to the pending upgrade when it finishes (proto/h1/dispatch.rs, \
                 poll_inner), granted or not",
        applies: |input| {
            input
                .split(|b| *b == b'\n')
                .any(|line| line.len() > 8 && line[..8].eq_ignore_ascii_case(b"upgrade:"))
        },
        shape: |tern, hyper| {
            let n = hyper.answers.len();
            let seen = tern.seen.len().min(hyper.seen.len());
            hyper.closed
                && n < tern.answers.len()
                && tern.answers[..n] == hyper.answers[..]
                && tern.seen[..seen] == hyper.seen[..seen]
        },
        by_timing: false,
    },
    Known {
        name: "a chunk extension that is not `;name[=value]`",
        reason: "RFC 9112 §7.1.1: chunk-ext = *( BWS \";\" BWS chunk-ext-name [ BWS \"=\" BWS \
                 chunk-ext-val ] ), a name is a token and a value a token or a quoted string. \
                 hyper skips any bytes up to the CRLF; Tern's body decoder refuses them (the app \
                 reads a body error, here a 400, and the connection closes)",
        applies: |input| {
            refused(input).is_some_and(|m| m.split(|b| *b == b'\n').any(bad_chunk_extension))
        },
        shape: |tern, hyper| {
            let Some((last, before)) = tern.seen.split_last() else {
                return false;
            };
            let k = before.len();
            let n = tern.answers.len();
            last.body.is_err()
                && tern.closed
                && hyper.seen.len() > k
                && hyper.seen[..k] == *before
                && hyper.seen[k].body.is_ok()
                && hyper.answers.len() >= n
                && tern.answers[..n - 1] == hyper.answers[..n - 1]
        },
        by_timing: false,
    },
    Known {
        name: "a body left unread, its rest not yet arrived when the answer is written",
        reason: "timing only: a server that does not read a body must read and drop it or close \
                 (RFC 9112 §9.3); Tern's engine decides when it writes the answer: the rest of \
                 the body not in its buffer yet, the answer says `Connection: close` and the \
                 connection closes, so the client learns it before sending more; hyper's path \
                 drains the body for a while after the answer and goes on if the rest arrives \
                 meanwhile. Which happens depends on where the bytes are cut, and on how the \
                 reads of a loaded machine group them: the other way round too (the rest already \
                 in Tern's buffer, Tern goes on; hyper closes after an `Expect: 100-continue` \
                 body it never asked for)",
        // A request line naming the app's path that leaves bodies unread.
        applies: |input| input.windows(4).any(|w| w == b" /u/"),
        // Whichever side answered fewer closed, and the answers and the
        // requests the app saw agree up to there.
        shape: |tern, hyper| cut_short(tern, hyper) || cut_short(hyper, tern),
        by_timing: true,
    },
    Known {
        name: "an unfinished bad head: refused at once by hyper, waited for by Tern",
        reason: "timing of the refusal only: hyper's parser stops at the first byte it cannot \
                 take and answers 400; Tern's codec parses a head once its end is read (or its \
                 limit passed: step 1's scan), so a head that never ends is dropped at the \
                 header timeout, with no answer, like any unfinished head. No request is served \
                 either way",
        applies: |input| ends(input).0 == "incomplete",
        shape: |tern, hyper| {
            let n = tern.answers.len();
            !tern.closed
                && hyper.closed
                && hyper.answers.len() == n + 1
                && hyper.answers[..n] == tern.answers[..]
                // Its version may be the request before's (see the row on
                // the version of a refusal).
                && (hyper.answers[n].starts_with("1.1 4") || hyper.answers[n].starts_with("1.0 4"))
                && tern.seen == hyper.seen
        },
        by_timing: false,
    },
];

/// How Tern's codec (`tern::__fuzz::H1::verdict`, the one the engine
/// reads with) ends `input` when the app grants no upgrade: its state
/// (`valid`, `invalid`, `incomplete`, `closed`) and where the message it
/// ends on starts.
fn ends(input: &[u8]) -> (String, usize) {
    let limits = tern::config::Limits::default();
    let mut at = 0;
    loop {
        let json = tern::__fuzz::H1::verdict(&input[at..], &[], &limits);
        let v: serde_json::Value = serde_json::from_str(&json).expect("the verdict is JSON");
        let state = v["state"].as_str().expect("a state").to_owned();
        let read = usize::try_from(v["read"].as_u64().expect("read")).expect("read");
        if state == "upgrade" && read > 0 {
            // Not granted: the connection goes on after the answer.
            at += read;
            continue;
        }
        return (state, at + read);
    }
}

/// The message Tern's codec refuses in `input`, from its start to the
/// end of the input.
fn refused(input: &[u8]) -> Option<&[u8]> {
    let (state, at) = ends(input);
    (state == "invalid").then(|| &input[at..])
}

/// `message` after the empty lines (CRLF) a server skips before a request
/// line.
fn skip_empty_lines(mut message: &[u8]) -> &[u8] {
    while let Some(rest) = message.strip_prefix(b"\r\n") {
        message = rest;
    }
    message
}

/// The head at the start of `message`, up to its empty line.
fn head(message: &[u8]) -> &[u8] {
    let m = skip_empty_lines(message);
    let end = m
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(m.len());
    &m[..end]
}

/// A chunk-size line (hex digits, then `;`) whose extensions are not
/// `;name[=value]` pairs of tokens or quoted strings.
fn bad_chunk_extension(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let Some(mut rest) = line
        .get(digits..)
        .filter(|r| digits > 0 && r.starts_with(b";"))
    else {
        return false;
    };
    let token = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
    let ows = |r: &[u8]| -> usize { r.iter().take_while(|b| **b == b' ' || **b == b'\t').count() };
    while let Some(r) = rest.strip_prefix(b";") {
        let r = &r[ows(r)..];
        let name = r.iter().take_while(|b| token(b)).count();
        if name == 0 {
            return true;
        }
        let mut r = &r[name..];
        r = &r[ows(r)..];
        if let Some(v) = r.strip_prefix(b"=") {
            let v = &v[ows(v)..];
            let len = if v.starts_with(b"\"") {
                match v[1..].iter().position(|b| *b == b'"') {
                    Some(end) if v[1..=end].iter().all(|b| *b >= 0x20 || *b == b'\t') => end + 2,
                    _ => return true,
                }
            } else {
                v.iter().take_while(|b| token(b)).count()
            };
            if len == 0 {
                return true;
            }
            r = &v[len..];
            r = &r[ows(r)..];
        }
        rest = r;
    }
    !rest.is_empty()
}

fn has_field(head: &[u8], name: &[u8]) -> bool {
    head.split(|b| *b == b'\n').skip(1).any(|line| {
        line.len() > name.len()
            && line[..name.len()].eq_ignore_ascii_case(name)
            && line[name.len()] == b':'
    })
}

/// Whether the difference has a row's shape: Tern's engine refuses one
/// request hyper's path served (or framed otherwise), everything before
/// it the same, then closes.
pub fn tern_refuses(tern: &Outcome, hyper: &Outcome) -> bool {
    let Some((last, before)) = tern.answers.split_last() else {
        return false;
    };
    let refused = last.ends_with(" 400") || last.ends_with(" 501");
    let k = before.len();
    refused
        && tern.closed
        && hyper.answers.len() >= k
        && hyper.answers[..k] == *before
        && hyper.seen.len() >= tern.seen.len()
        && hyper.seen[..tern.seen.len()] == tern.seen[..]
}

/// `short` answered fewer requests than `long`, closed, and agrees with it
/// on every answer and every request the app saw up to there.
fn cut_short(short: &Outcome, long: &Outcome) -> bool {
    let n = short.answers.len();
    let seen = short.seen.len();
    short.closed
        && n < long.answers.len()
        && long.answers[..n] == short.answers[..]
        && seen <= long.seen.len()
        && long.seen[..seen] == short.seen[..]
}
