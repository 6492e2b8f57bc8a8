//! HTTP/1 rules on the bytes of a connection, before and around hyper's
//! parser: the bare-LF rule Tern adds, the framing rules of hyper that
//! [`Framing`](crate::server) mirrors to follow a connection, and the shape
//! of hyper's own refusal. See the [catalogue](super).

/// **Bare LF** (Tern's rule): a LF not preceded by CR in a request line, a
/// header section or a trailer section is refused with 400, and the
/// connection closed; nothing after it on the connection is read.
///
/// Why: httparse (and so hyper) ends a line at a bare LF, as RFC 9112 §2.2
/// allows a recipient to. A front end that ends lines only at CRLF reads
/// `X: y\nContent-Length: 23` as one header where Tern would read two, and
/// the two then disagree on where the next request starts (request
/// smuggling).
///
/// How: the LF at `buf[at]` becomes a NUL, a byte httparse refuses in a
/// head, and the caller hands on `buf[..=at]` and then the returned bytes,
/// which end the head (or trailer section) so that hyper parses it at
/// once, answers its own 400 and closes. Enforced by the HTTP/1 framing
/// follower (`server/framing.rs`, `Framing::bare_lf`).
#[inline]
pub(crate) fn refuse_bare_lf(buf: &mut [u8], at: usize) -> &'static [u8] {
    buf[at] = 0;
    b"\r\n\r\n"
}

/// hyper's `Content-Length` rule (`headers::content_length_parse`): the
/// value, without the spaces and tabs around it, is digits only: no sign,
/// no list, no overflow of `u64`. Anything else is refused by hyper (400).
/// `None` for a value hyper refuses.
pub(crate) fn content_length(value: &[u8]) -> Option<u64> {
    let s = trim_ows(value);
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| match b {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(b - b'0')),
        _ => None,
    })
}

/// hyper's `Transfer-Encoding` rule (`headers::is_chunked_`): a request
/// whose (last) `Transfer-Encoding` field does not end with the coding
/// `chunked` is refused by hyper (400); one that does has a chunked body,
/// whatever codings come before (those Tern refuses later, with 501:
/// `request::check_transfer_coding`).
pub(crate) fn ends_chunked(value: &[u8]) -> bool {
    trim_ows(value)
        .rsplit(|&b| b == b',')
        .next()
        .is_some_and(|last| trim_ows(last).eq_ignore_ascii_case(b"chunked"))
}

/// A field value without the optional whitespace (SP, HTAB) around it.
pub(crate) fn trim_ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// The longest answer that can be hyper's own refusal. Every answer of
/// the app carries a request ID, and so is longer: for them the check
/// costs a length comparison.
pub(crate) const MAX_HYPER_REFUSAL: usize = 128;

/// Whether `buf`, a write hyper makes on an HTTP/1 connection, can be its
/// own refusal (then checked whole by [`hyper_refusal`]).
#[inline]
pub(crate) fn may_be_hyper_refusal(buf: &[u8]) -> bool {
    buf.len() <= MAX_HYPER_REFUSAL && buf.starts_with(b"HTTP/1.1 4")
}

/// hyper's own answer to a request head it cannot parse, recognised by its
/// bytes: `HTTP/1.1 400 Bad Request` (or 414, 431), then only
/// `connection: close`, `content-length: 0` and `date: ...`, and no body.
/// Returns the status and the `date` line. No answer of the app has this
/// shape: each carries a request ID.
///
/// Why by its bytes: hyper writes this answer itself
/// (`proto/h1/conn.rs`, `on_parse_error`, with `role.rs`'s `on_error`)
/// and then closes; neither the published hyper nor its builders offer a
/// hook to render or suppress it, and the service never sees the request.
/// Parsing heads ahead of hyper to answer first would be a second HTTP/1
/// parser that must agree with httparse on every byte (the disagreement
/// this module exists to prevent); patching hyper would reach only builds
/// inside this repository (`vendor/hyper/TERN-PATCH.md`). So the watched
/// socket (`server/watchdog/io.rs`, `WatchedIo::replaces`) swaps these
/// bytes for `AppService::unparsable_answer`.
///
/// What pins the bytes: `tests::hyper_refusals_are_recognised` below runs
/// hyper's HTTP/1 server on malformed heads and checks that each refusal
/// (400, 414, 431) is recognised here; `tests/hostile.rs`
/// (`unparsable_requests_get_problem_json`) checks the replaced answer
/// over a socket. A hyper release that changes the bytes fails the first;
/// the client would then get hyper's bare answer, not a wrong one.
pub(crate) fn hyper_refusal(buf: &[u8]) -> Option<(http::StatusCode, &[u8])> {
    let head = buf.strip_suffix(b"\r\n\r\n")?;
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let status_line = lines.next()?;
    let status = http::StatusCode::from_bytes(status_line.get(9..12)?).ok()?;
    let mut date: &[u8] = &[];
    for line in lines {
        match line {
            b"connection: close" | b"content-length: 0" => {}
            _ if line.starts_with(b"date: ") => date = line,
            _ => return None,
        }
    }
    Some((status, date))
}

#[cfg(test)]
mod tests {
    use std::{convert::Infallible, time::Duration};

    use http_body_util::Empty;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// What hyper's HTTP/1 server (configured as Tern's is, with a head
    /// limit of `max_head` bytes) writes for `request`, up to its close.
    async fn hyper_answer(request: Vec<u8>, max_head: usize) -> Vec<u8> {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let service = hyper::service::service_fn(|_req: http::Request<_>| async {
            Ok::<_, Infallible>(http::Response::new(Empty::<bytes::Bytes>::new()))
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder.max_buf_size(max_head).max_headers(100);
        tokio::spawn(async move {
            let _ = builder
                .serve_connection(TokioIo::new(server), service)
                .await;
        });
        client.write_all(&request).await.expect("write");
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), client.read_to_end(&mut out))
            .await
            .expect("hyper answers and closes within 5 s")
            .expect("read");
        out
    }

    #[tokio::test]
    async fn hyper_refusals_are_recognised() {
        let long_target = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(70_000));
        let big_head = format!(
            "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
            "a".repeat(20_000)
        );
        // A target over 65,534 bytes is a 414 when the head limit
        // (`TERN_MAX_HEAD_BYTES`) lets it be read whole, a 431 otherwise.
        for (request, max_head, status) in [
            (b"HELLO THERE\r\n\r\n".to_vec(), 16 * 1024, 400),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\nX: y\0\r\n\r\n".to_vec(),
                16 * 1024,
                400,
            ),
            (
                b"GET / HTTP/1.1\r\nbad header\r\n\r\n".to_vec(),
                16 * 1024,
                400,
            ),
            (long_target.into_bytes(), 128 * 1024, 414),
            (big_head.into_bytes(), 16 * 1024, 431),
        ] {
            let answer = hyper_answer(request, max_head).await;
            let text = String::from_utf8_lossy(&answer).into_owned();
            assert!(may_be_hyper_refusal(&answer), "{text}");
            let (got, date) = hyper_refusal(&answer).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(got.as_u16(), status, "{text}");
            assert!(date.starts_with(b"date: "), "{text}");
        }
    }

    #[test]
    fn an_answer_of_the_app_is_not_a_refusal() {
        let answer = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\nx-request-id: 1\r\ncontent-length: 0\r\n\r\n";
        assert!(may_be_hyper_refusal(answer));
        assert_eq!(hyper_refusal(answer), None);
        let with_body = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\nno";
        assert_eq!(hyper_refusal(with_body), None);
    }

    #[test]
    fn content_length_and_chunked_follow_hyper() {
        assert_eq!(content_length(b" 42\t"), Some(42));
        for bad in [
            &b""[..],
            b"+1",
            b"-1",
            b"1,1",
            b"0x10",
            b"18446744073709551616",
        ] {
            assert_eq!(content_length(bad), None, "{bad:?}");
        }
        assert!(ends_chunked(b"chunked"));
        assert!(ends_chunked(b"gzip, Chunked "));
        assert!(!ends_chunked(b"chunked, gzip"));
        assert!(!ends_chunked(b"chunkedx"));
    }
}
