//! Every answer the writer writes is read back by an independent reader:
//! httparse for the heads, a naive reader of RFC 9112 §6.3's framing
//! rules for the bodies (below), and hyper's own HTTP/1 client over an
//! in-memory pipe for a sequence of answers of every framing.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, Version};
use http_body::SizeHint;

use super::*;

/// Field lines as read: name, value.
type Fields = Vec<(String, String)>;

/// A head as httparse reads it.
#[derive(Debug)]
struct Read {
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    version: u8,
    code: u16,
    reason: String,
    fields: Fields,
    /// Bytes of the head, the empty line included.
    len: usize,
}

impl Read {
    fn all(&self, name: &str) -> Vec<&str> {
        self.fields
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn one(&self, name: &str) -> Option<&str> {
        let all = self.all(name);
        assert!(
            all.len() <= 1,
            "{name} written {} times: {self:?}",
            all.len()
        );
        all.first().copied()
    }
}

/// Parses one complete head with httparse, which must accept it.
fn parse(bytes: &[u8]) -> Read {
    let mut fields = [httparse::EMPTY_HEADER; 64];
    let mut res = httparse::Response::new(&mut fields);
    let status = res
        .parse(bytes)
        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(bytes)));
    let httparse::Status::Complete(len) = status else {
        panic!("partial head: {:?}", String::from_utf8_lossy(bytes));
    };
    Read {
        version: res.version.unwrap(),
        code: res.code.unwrap(),
        reason: res.reason.unwrap().to_owned(),
        fields: res
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_owned(),
                    String::from_utf8(h.value.to_vec()).unwrap(),
                )
            })
            .collect(),
        len,
    }
}

fn parts(status: u16, fields: &[(&str, &str)]) -> Parts {
    let mut res = Response::new(());
    *res.status_mut() = StatusCode::from_u16(status).unwrap();
    for (name, value) in fields {
        res.headers_mut().append(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    res.into_parts().0
}

fn req(version: Version, method: Method, keep_alive: bool) -> For {
    For {
        version,
        method,
        keep_alive,
    }
}

const V10: Version = Version::HTTP_10;
const V11: Version = Version::HTTP_11;

fn exact(n: u64) -> SizeHint {
    SizeHint::with_exact(n)
}

fn unknown() -> SizeHint {
    SizeHint::default()
}

/// Writes one head and reads it back.
fn write(parts: &Parts, hint: SizeHint, req: For) -> (Written, Read, Vec<u8>) {
    let mut buf = Vec::new();
    let written = head(&mut buf, parts, &hint, &req, None);
    let read = parse(&buf);
    assert_eq!(read.len, buf.len(), "bytes after the head");
    (written, read, buf)
}

#[test]
fn the_status_tables_lines_are_the_general_paths() {
    let mut known = 0;
    for code in 100..=999 {
        let status = StatusCode::from_u16(code).unwrap();
        if let Some(line) = known_line(status) {
            let mut general = Vec::new();
            formatted_line(&mut general, status);
            assert_eq!(
                String::from_utf8_lossy(line),
                String::from_utf8_lossy(&general),
                "{code}"
            );
            known += 1;
        }
    }
    assert_eq!(known, 33);
    for code in [
        200, 201, 204, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405, 408, 409, 413, 414,
        415, 422, 429, 431, 500, 501, 503,
    ] {
        assert!(
            known_line(StatusCode::from_u16(code).unwrap()).is_some(),
            "{code}"
        );
    }
}

#[test]
fn other_codes_get_their_canonical_reason_or_none() {
    for (code, reason) in [
        (418, "I'm a teapot"),
        (299, ""),
        (599, ""),
        (207, "Multi-Status"),
    ] {
        let (_, read, buf) = write(&parts(code, &[]), exact(0), req(V11, Method::Other, true));
        assert_eq!((read.code, read.reason.as_str()), (code, reason));
        assert!(buf.starts_with(format!("HTTP/1.1 {code} {reason}\r\n").as_bytes()));
    }
}

#[test]
fn an_http10_request_gets_an_http10_status_line() {
    for code in [200, 404, 418, 299] {
        for version in [V10, V11] {
            let (_, read, buf) = write(
                &parts(code, &[]),
                exact(2),
                req(version, Method::Other, true),
            );
            let expect = if version == V10 { 0 } else { 1 };
            assert_eq!(read.version, expect, "{code}");
            let line = if version == V10 {
                "HTTP/1.0 "
            } else {
                "HTTP/1.1 "
            };
            assert!(buf.starts_with(line.as_bytes()));
        }
    }
}

/// One row of the framing table: what the writer must write.
struct Row {
    name: &'static str,
    status: u16,
    version: Version,
    method: Method,
    keep_alive: bool,
    hint: SizeHint,
    app: &'static [(&'static str, &'static str)],
    length: Option<&'static str>,
    chunked: bool,
    connection: Option<&'static str>,
    framing: Framing,
    stays_open: bool,
}

#[rustfmt::skip]
fn framing_rows() -> Vec<Row> {
    vec![
        Row { name: "exact", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: exact(12), app: &[], length: Some("12"), chunked: false, connection: None, framing: Framing::Length(12), stays_open: true },
        Row { name: "exact 0", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: exact(0), app: &[], length: Some("0"), chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "unknown 1.1", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: unknown(), app: &[], length: None, chunked: true, connection: None, framing: Framing::Chunked, stays_open: true },
        Row { name: "unknown 1.0", status: 200, version: V10, method: Method::Other, keep_alive: true, hint: unknown(), app: &[], length: None, chunked: false, connection: Some("close"), framing: Framing::Close, stays_open: false },
        Row { name: "unknown, bounded", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: { let mut h = SizeHint::new(); h.set_upper(10); h }, app: &[], length: None, chunked: true, connection: None, framing: Framing::Chunked, stays_open: true },
        Row { name: "unknown, app length", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: unknown(), app: &[("content-length", "7")], length: Some("7"), chunked: false, connection: None, framing: Framing::Length(7), stays_open: true },
        Row { name: "unknown, app length 1.0", status: 200, version: V10, method: Method::Other, keep_alive: true, hint: unknown(), app: &[("content-length", "7")], length: Some("7"), chunked: false, connection: Some("keep-alive"), framing: Framing::Length(7), stays_open: true },
        Row { name: "unknown, app lengths differ", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: unknown(), app: &[("content-length", "7"), ("content-length", "8")], length: None, chunked: true, connection: None, framing: Framing::Chunked, stays_open: true },
        Row { name: "unknown, app length not a number", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: unknown(), app: &[("content-length", "7, 7")], length: None, chunked: true, connection: None, framing: Framing::Chunked, stays_open: true },
        Row { name: "exact wins over the app's", status: 200, version: V11, method: Method::Other, keep_alive: true, hint: exact(3), app: &[("content-length", "9")], length: Some("3"), chunked: false, connection: None, framing: Framing::Length(3), stays_open: true },
        Row { name: "1.0 keep-alive", status: 200, version: V10, method: Method::Other, keep_alive: true, hint: exact(1), app: &[], length: Some("1"), chunked: false, connection: Some("keep-alive"), framing: Framing::Length(1), stays_open: true },
        Row { name: "1.0 close", status: 200, version: V10, method: Method::Other, keep_alive: false, hint: exact(1), app: &[], length: Some("1"), chunked: false, connection: Some("close"), framing: Framing::Length(1), stays_open: false },
        Row { name: "1.1 close", status: 200, version: V11, method: Method::Other, keep_alive: false, hint: exact(1), app: &[], length: Some("1"), chunked: false, connection: Some("close"), framing: Framing::Length(1), stays_open: false },
        Row { name: "1.1 close, chunked", status: 200, version: V11, method: Method::Other, keep_alive: false, hint: unknown(), app: &[], length: None, chunked: true, connection: Some("close"), framing: Framing::Chunked, stays_open: false },
        Row { name: "app says close", status: 413, version: V11, method: Method::Other, keep_alive: true, hint: exact(5), app: &[("connection", "close")], length: Some("5"), chunked: false, connection: Some("close"), framing: Framing::Length(5), stays_open: false },
        Row { name: "app says Close among others", status: 200, version: V10, method: Method::Other, keep_alive: true, hint: exact(5), app: &[("connection", "x-a, Close")], length: Some("5"), chunked: false, connection: Some("close"), framing: Framing::Length(5), stays_open: false },
        Row { name: "app says keep-alive, request closes", status: 200, version: V11, method: Method::Other, keep_alive: false, hint: exact(5), app: &[("connection", "keep-alive")], length: Some("5"), chunked: false, connection: Some("close"), framing: Framing::Length(5), stays_open: false },
        Row { name: "204", status: 204, version: V11, method: Method::Other, keep_alive: true, hint: exact(0), app: &[("content-length", "0")], length: None, chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "204 unknown", status: 204, version: V11, method: Method::Other, keep_alive: true, hint: unknown(), app: &[("transfer-encoding", "chunked")], length: None, chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "304 with the app's length", status: 304, version: V11, method: Method::Other, keep_alive: true, hint: exact(0), app: &[("content-length", "1234"), ("etag", "\"x\"")], length: None, chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "304 1.0", status: 304, version: V10, method: Method::Other, keep_alive: true, hint: unknown(), app: &[], length: None, chunked: false, connection: Some("keep-alive"), framing: Framing::Empty, stays_open: true },
        Row { name: "HEAD, exact", status: 200, version: V11, method: Method::Head, keep_alive: true, hint: exact(13), app: &[], length: Some("13"), chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "HEAD, empty, declared", status: 200, version: V11, method: Method::Head, keep_alive: true, hint: exact(0), app: &[("content-length", "13")], length: Some("13"), chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "HEAD, empty", status: 200, version: V11, method: Method::Head, keep_alive: true, hint: exact(0), app: &[], length: None, chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "HEAD, unknown", status: 200, version: V11, method: Method::Head, keep_alive: true, hint: unknown(), app: &[], length: None, chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "HEAD, unknown 1.0", status: 200, version: V10, method: Method::Head, keep_alive: true, hint: unknown(), app: &[], length: None, chunked: false, connection: Some("keep-alive"), framing: Framing::Empty, stays_open: true },
        Row { name: "HEAD 404", status: 404, version: V11, method: Method::Head, keep_alive: false, hint: exact(40), app: &[], length: Some("40"), chunked: false, connection: Some("close"), framing: Framing::Empty, stays_open: false },
        Row { name: "101", status: 101, version: V11, method: Method::Other, keep_alive: true, hint: exact(0), app: &[("connection", "upgrade"), ("upgrade", "websocket")], length: None, chunked: false, connection: Some("upgrade"), framing: Framing::Empty, stays_open: true },
        Row { name: "CONNECT 200", status: 200, version: V11, method: Method::Connect, keep_alive: true, hint: unknown(), app: &[("content-length", "5")], length: None, chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
        Row { name: "CONNECT 403", status: 403, version: V11, method: Method::Connect, keep_alive: true, hint: exact(5), app: &[], length: Some("5"), chunked: false, connection: None, framing: Framing::Length(5), stays_open: true },
        Row { name: "1xx as final", status: 103, version: V11, method: Method::Other, keep_alive: true, hint: exact(4), app: &[("link", "</a>")], length: Some("0"), chunked: false, connection: None, framing: Framing::Empty, stays_open: true },
    ]
}

#[test]
fn the_framing_table() {
    let rows = framing_rows();
    for row in rows {
        let (written, read, _) = write(
            &parts(row.status, row.app),
            row.hint,
            req(row.version, row.method, row.keep_alive),
        );
        let name = row.name;
        assert_eq!(
            written,
            Written {
                framing: row.framing,
                keep_alive: row.stays_open
            },
            "{name}"
        );
        assert_eq!(read.one("content-length"), row.length, "{name}");
        assert_eq!(
            read.one("transfer-encoding"),
            row.chunked.then_some("chunked"),
            "{name}"
        );
        assert_eq!(read.one("connection"), row.connection, "{name}");
        assert_eq!(read.all("date").len(), 1, "{name}");
    }
}

#[test]
fn http10_answers_are_never_chunked() {
    let apps: [&[(&str, &str)]; 3] = [
        &[],
        &[("transfer-encoding", "chunked")],
        &[("trailer", "x-sum")],
    ];
    for status in [101, 200, 204, 206, 304, 404, 500, 599] {
        for method in [Method::Head, Method::Connect, Method::Other] {
            for keep_alive in [false, true] {
                for hint in [exact(0), exact(5), unknown()] {
                    for app in apps {
                        let (written, read, _) =
                            write(&parts(status, app), hint, req(V10, method, keep_alive));
                        assert_eq!(read.version, 0);
                        assert_eq!(read.one("transfer-encoding"), None);
                        assert_eq!(read.one("trailer"), None);
                        assert_ne!(written.framing, Framing::Chunked);
                        if written.framing == Framing::Close {
                            assert!(!written.keep_alive);
                            assert_eq!(read.one("connection"), Some("close"));
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_apps_framing_fields_are_replaced() {
    let app = [
        ("content-length", "99"),
        ("transfer-encoding", "gzip, chunked"),
        ("connection", "keep-alive"),
        ("x-kept", "1"),
        ("content-length", "98"),
    ];
    for (hint, version, length, chunked) in [
        (exact(4), V11, Some("4"), false),
        (unknown(), V11, None, true),
        (unknown(), V10, None, false),
    ] {
        let (_, read, _) = write(&parts(200, &app), hint, req(version, Method::Other, true));
        assert_eq!(read.one("content-length"), length);
        assert_eq!(read.one("transfer-encoding"), chunked.then_some("chunked"));
        assert_ne!(
            read.one("connection"),
            Some("keep-alive").filter(|_| version == V11)
        );
        assert_eq!(read.one("x-kept"), Some("1"));
    }
}

#[test]
fn fields_are_written_in_the_maps_order_every_value_on_its_own_line() {
    let app = [
        ("set-cookie", "a=1"),
        ("x-one", "1"),
        ("set-cookie", "b=2"),
        ("vary", "accept"),
        ("set-cookie", "c=3; Path=/"),
        ("vary", "origin"),
        ("x-obs", "caf\u{e9}"),
    ];
    let parts = parts(200, &app);
    let (_, read, buf) = write(&parts, exact(0), req(V11, Method::Other, true));
    let expect: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8(v.as_bytes().to_vec()).unwrap(),
            )
        })
        .collect();
    assert_eq!(&read.fields[..expect.len()], &expect[..]);
    assert_eq!(read.all("set-cookie"), ["a=1", "b=2", "c=3; Path=/"]);
    assert_eq!(read.all("vary"), ["accept", "origin"]);
    // Names as `HeaderName` holds them: lowercase.
    assert!(String::from_utf8_lossy(&buf).contains("\r\nx-one: 1\r\n"));
}

#[test]
fn date_is_added_unless_the_app_set_one() {
    date::tick();
    let (_, read, buf) = write(&parts(200, &[]), exact(0), req(V11, Method::Other, true));
    let date = read.one("date").unwrap().to_owned();
    assert!(buf.ends_with(&date::line()));
    let parsed = httpdate::parse_http_date(&date).unwrap();
    let age = std::time::SystemTime::now().duration_since(parsed).unwrap();
    assert!(age < Duration::from_secs(2), "{date}");

    let app = [("date", "Sun, 06 Nov 1994 08:49:37 GMT")];
    let (_, read, buf) = write(&parts(200, &app), exact(0), req(V11, Method::Other, true));
    assert_eq!(read.all("date"), ["Sun, 06 Nov 1994 08:49:37 GMT"]);
    assert!(buf.ends_with(b"\r\n\r\n"));
}

#[test]
fn a_trailer_field_is_kept_only_on_a_chunked_answer() {
    let app = [("trailer", "x-sum")];
    let (_, read, _) = write(&parts(200, &app), unknown(), req(V11, Method::Other, true));
    assert_eq!(read.one("trailer"), Some("x-sum"));
    let (_, read, _) = write(&parts(200, &app), exact(3), req(V11, Method::Other, true));
    assert_eq!(read.one("trailer"), None);
}

#[test]
fn data_under_each_framing() {
    let mut buf = Vec::new();
    data(&mut buf, Framing::Empty, b"lost");
    assert!(buf.is_empty());
    data(&mut buf, Framing::Length(5), b"abcde");
    data(&mut buf, Framing::Close, b"fg");
    assert_eq!(buf, b"abcdefg");
    buf.clear();
    data(&mut buf, Framing::Chunked, b"");
    assert!(buf.is_empty(), "an empty chunk would end the body");
    data(&mut buf, Framing::Chunked, b"hello");
    data(&mut buf, Framing::Chunked, &[b'x'; 26]);
    end_chunked(&mut buf, None);
    let mut expect = b"5\r\nhello\r\n1a\r\n".to_vec();
    expect.extend_from_slice(&[b'x'; 26]);
    expect.extend_from_slice(b"\r\n0\r\n\r\n");
    assert_eq!(buf, expect);
}

#[test]
fn chunk_size_lines_are_lowercase_hex() {
    for len in [
        1,
        9,
        10,
        15,
        16,
        255,
        256,
        4095,
        16 * 1024,
        65_537,
        1 << 31,
        usize::MAX,
    ] {
        let mut buf = Vec::new();
        chunk_prefix(&mut buf, len);
        assert_eq!(String::from_utf8(buf).unwrap(), format!("{len:x}\r\n"));
    }
}

#[test]
fn trailers_are_written_except_those_a_trailer_section_cannot_carry() {
    let mut trailers = HeaderMap::new();
    trailers.append("x-sum", HeaderValue::from_static("abc"));
    trailers.append("content-length", HeaderValue::from_static("5"));
    trailers.append("x-sum", HeaderValue::from_static("def"));
    trailers.append("set-cookie", HeaderValue::from_static("a=1"));
    trailers.append("server-timing", HeaderValue::from_static("db;dur=5"));
    let mut buf = Vec::new();
    end_chunked(&mut buf, Some(&trailers));
    assert_eq!(
        String::from_utf8(buf).unwrap(),
        "0\r\nx-sum: abc\r\nx-sum: def\r\nserver-timing: db;dur=5\r\n\r\n"
    );
}

#[test]
fn trailers_are_sent_only_to_a_request_with_te_trailers() {
    let cases: [(&[&str], bool); 7] = [
        (&[], false),
        (&["trailers"], true),
        (&["Trailers"], true),
        (&["gzip;q=0.5, trailers"], true),
        (&["gzip", " trailers "], true),
        (&["trailersx"], false),
        (&["deflate"], false),
    ];
    for (values, expect) in cases {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(header::TE, HeaderValue::from_str(v).unwrap());
        }
        assert_eq!(accepts_trailers(&headers), expect, "{values:?}");
    }
}

#[test]
fn method_of() {
    assert_eq!(Method::of(&http::Method::HEAD), Method::Head);
    assert_eq!(Method::of(&http::Method::CONNECT), Method::Connect);
    assert_eq!(Method::of(&http::Method::GET), Method::Other);
    assert_eq!(
        Method::of(&http::Method::from_bytes(b"HEADX").unwrap()),
        Method::Other
    );
}

#[test]
fn continue_is_an_interim_head() {
    let read = parse(CONTINUE);
    assert_eq!(
        (read.version, read.code, read.len),
        (1, 100, CONTINUE.len())
    );
}

/// One answer of a pipelined sequence: the request it is for, the app's
/// answer, and its body chunks.
struct Case {
    method: http::Method,
    version: Version,
    status: u16,
    app: &'static [(&'static str, &'static str)],
    /// Whether the body's size hint is exact (else unknown).
    exact: bool,
    body: &'static [&'static [u8]],
    trailers: &'static [(&'static str, &'static str)],
}

impl Case {
    fn body(&self) -> Vec<u8> {
        self.body.concat()
    }

    /// Writes the answer as the connection will: head, data, end.
    fn write(&self, buf: &mut Vec<u8>, keep_alive: bool) -> Written {
        let len = self.body().len() as u64;
        let hint = if self.exact { exact(len) } else { unknown() };
        let req = For {
            version: self.version,
            method: Method::of(&self.method),
            keep_alive,
        };
        let written = head(buf, &parts(self.status, self.app), &hint, &req, None);
        for chunk in self.body {
            data(buf, written.framing, chunk);
        }
        if written.framing == Framing::Chunked {
            let mut trailers = HeaderMap::new();
            for (n, v) in self.trailers {
                trailers.append(HeaderName::from_static(n), HeaderValue::from_static(v));
            }
            end_chunked(buf, Some(&trailers));
        }
        written
    }

    /// What a reader must get for the body.
    fn expected_body(&self, written: Written) -> Vec<u8> {
        if written.framing == Framing::Empty {
            Vec::new()
        } else {
            self.body()
        }
    }
}

/// Every framing, pipelined: lengths, chunks with trailers, 204, 304,
/// `HEAD`, and a close-delimited answer to HTTP/1.0 last.
#[rustfmt::skip]
fn sequence() -> Vec<Case> {
    use http::Method as M;
    vec![
        Case { method: M::GET, version: V11, status: 200, app: &[("content-type", "text/plain")], exact: true, body: &[b"Hello, World!"], trailers: &[] },
        Case { method: M::GET, version: V11, status: 200, app: &[("trailer", "x-sum")], exact: false, body: &[b"first ", b"", b"second ", &[b'z'; 300], b"end"], trailers: &[("x-sum", "42"), ("x-more", "yes")] },
        Case { method: M::DELETE, version: V11, status: 204, app: &[("content-length", "0")], exact: true, body: &[], trailers: &[] },
        Case { method: M::GET, version: V11, status: 304, app: &[("etag", "\"v1\""), ("content-length", "13")], exact: true, body: &[], trailers: &[] },
        Case { method: M::HEAD, version: V11, status: 200, app: &[], exact: true, body: &[b"Hello, World!"], trailers: &[] },
        Case { method: M::HEAD, version: V11, status: 200, app: &[("content-length", "13")], exact: true, body: &[], trailers: &[] },
        Case { method: M::POST, version: V11, status: 201, app: &[("location", "/x/1")], exact: true, body: &[], trailers: &[] },
        Case { method: M::GET, version: V11, status: 404, app: &[], exact: false, body: &[b"not ", b"here"], trailers: &[] },
        Case { method: M::GET, version: V10, status: 200, app: &[], exact: false, body: &[b"until ", b"the end"], trailers: &[] },
    ]
}

/// The naive reader: RFC 9112 §6.3's rules, in order, on a whole
/// pipelined buffer. Returns, per answer, the status, the body and the
/// trailer fields.
fn read_sequence(mut bytes: &[u8], cases: &[Case]) -> Vec<(u16, Vec<u8>, Fields)> {
    let mut out = Vec::new();
    for case in cases {
        let head = parse(bytes);
        bytes = &bytes[head.len..];
        let no_body =
            case.method == http::Method::HEAD || matches!(head.code, 100..=199 | 204 | 304);
        let mut trailers = Vec::new();
        let body = if no_body {
            Vec::new()
        } else if let Some(te) = head.one("transfer-encoding") {
            assert_eq!(te, "chunked");
            let mut body = Vec::new();
            loop {
                let line_end = bytes.windows(2).position(|w| w == b"\r\n").unwrap();
                let size =
                    usize::from_str_radix(std::str::from_utf8(&bytes[..line_end]).unwrap(), 16)
                        .unwrap();
                bytes = &bytes[line_end + 2..];
                if size == 0 {
                    let mut fields = [httparse::EMPTY_HEADER; 16];
                    let httparse::Status::Complete((n, fields)) =
                        httparse::parse_headers(bytes, &mut fields).unwrap()
                    else {
                        panic!("partial trailers");
                    };
                    trailers = fields
                        .iter()
                        .map(|f| {
                            (
                                f.name.to_owned(),
                                String::from_utf8(f.value.to_vec()).unwrap(),
                            )
                        })
                        .collect();
                    bytes = &bytes[n..];
                    break;
                }
                body.extend_from_slice(&bytes[..size]);
                assert_eq!(&bytes[size..size + 2], b"\r\n");
                bytes = &bytes[size + 2..];
            }
            body
        } else if let Some(len) = head.one("content-length") {
            let len: usize = len.parse().unwrap();
            let (body, rest) = bytes.split_at(len);
            bytes = rest;
            body.to_vec()
        } else {
            let body = bytes.to_vec();
            bytes = &[];
            body
        };
        out.push((head.code, body, trailers));
    }
    assert!(bytes.is_empty(), "bytes after the last answer");
    out
}

#[test]
fn a_pipelined_sequence_read_by_the_naive_reader() {
    let cases = sequence();
    let mut buf = Vec::new();
    let mut written = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        written.push(case.write(&mut buf, i + 1 < cases.len()));
    }
    assert_eq!(written.last().unwrap().framing, Framing::Close);
    let read = read_sequence(&buf, &cases);
    for ((case, written), (code, body, trailers)) in cases.iter().zip(written).zip(read) {
        assert_eq!(code, case.status);
        assert_eq!(body, case.expected_body(written), "{}", case.status);
        let expect: Vec<(String, String)> = if written.framing == Framing::Chunked {
            case.trailers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        } else {
            Vec::new()
        };
        assert_eq!(trailers, expect);
    }
}

/// hyper's HTTP/1 client reads the same sequence: the answers written
/// into one buffer, each answer's bytes sent once its request arrived (a
/// client must not receive an answer before its request: hyper's refuses
/// bytes that come while it has no request in flight). A framing error
/// shows as a wrong body, a parse error of the next answer, or bytes left
/// over.
#[tokio::test]
async fn a_pipelined_sequence_read_by_hypers_client() {
    use http_body_util::BodyExt as _;
    use hyper_util::rt::TokioIo;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let cases = sequence();
    let mut buf = Vec::new();
    let mut ends = Vec::new();
    let mut written = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        written.push(case.write(&mut buf, i + 1 < cases.len()));
        ends.push(buf.len());
    }

    let (client, mut server) = tokio::io::duplex(64 * 1024);
    let serve = tokio::spawn(async move {
        let mut start = 0;
        let mut seen = Vec::new();
        for end in ends {
            // Wait for one request head (the client sends no bodies).
            let mut req = Vec::new();
            while !req.ends_with(b"\r\n\r\n") {
                let mut byte = [0u8; 1];
                assert_eq!(
                    server.read(&mut byte).await.unwrap(),
                    1,
                    "the client closed early"
                );
                req.push(byte[0]);
            }
            seen.push(String::from_utf8(req).unwrap());
            server.write_all(&buf[start..end]).await.unwrap();
            start = end;
        }
        // The last answer is close-delimited.
        server.shutdown().await.unwrap();
        seen
    });

    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(client))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    for (case, written) in cases.iter().zip(&written) {
        sender.ready().await.unwrap();
        let mut req = http::Request::builder()
            .method(case.method.clone())
            .uri("/")
            .version(case.version)
            .body(http_body_util::Empty::<Bytes>::new())
            .unwrap();
        req.headers_mut()
            .insert("host", HeaderValue::from_static("x"));
        let res = tokio::time::timeout(Duration::from_secs(5), sender.send_request(req))
            .await
            .expect("an answer")
            .unwrap();
        assert_eq!(res.status().as_u16(), case.status);
        let collected = tokio::time::timeout(Duration::from_secs(5), res.into_body().collect())
            .await
            .expect("the whole body")
            .unwrap();
        let trailers = collected.trailers().cloned();
        assert_eq!(
            collected.to_bytes(),
            case.expected_body(*written),
            "{}",
            case.status
        );
        if written.framing == Framing::Chunked && !case.trailers.is_empty() {
            let trailers = trailers.expect("trailers");
            for (n, v) in case.trailers {
                assert_eq!(trailers.get(*n).unwrap(), v);
            }
        }
    }
    let seen = serve.await.unwrap();
    assert_eq!(seen.len(), cases.len());
    assert!(seen.last().unwrap().starts_with("GET / HTTP/1.0\r\n"));
    // The connection ends cleanly: no bytes left unread, no error.
    tokio::time::timeout(Duration::from_secs(5), conn)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

/// A large chunk goes out as [`chunk_prefix`] + the data + [`CHUNK_END`]
/// (vectored, not copied): the same bytes as [`data`] writes.
#[test]
fn a_chunk_written_in_pieces_is_the_chunk_data_writes() {
    for len in [1, COPY_MAX, COPY_MAX + 1, 3 * COPY_MAX] {
        let body = vec![b'q'; len];
        let mut copied = Vec::new();
        data(&mut copied, Framing::Chunked, &body);
        let mut pieces = Vec::new();
        chunk_prefix(&mut pieces, len);
        pieces.extend_from_slice(&body);
        pieces.extend_from_slice(CHUNK_END);
        assert_eq!(copied, pieces, "{len}");
    }
}

/// A field the writer is handed (`set`, the request ID) reads as the
/// same field inserted into the answer's map: it replaces the map's
/// fields of its name. Every answer below, with and without its own
/// fields of that name, for the names `may_set` allows; the framing,
/// persistence and `date` names it refuses (the app inserts such a
/// request ID field into the map, `app/finish.rs`).
#[test]
fn a_set_field_reads_as_one_inserted_into_the_map() {
    let sets = [
        ("x-request-id", "0123456789abcdef0123456789abcdef"),
        ("x-trace", "abc"),
        ("content-length", "7"),
        ("connection", "close"),
        ("date", "Thu, 01 Jan 1970 00:00:00 GMT"),
        ("trailer", "x-t"),
        ("transfer-encoding", "chunked"),
    ];
    let answers: [&[(&str, &str)]; 4] = [
        &[],
        &[("content-type", "text/plain")],
        &[
            ("x-request-id", "app"),
            ("x-trace", "app"),
            ("content-type", "text/plain"),
        ],
        &[
            ("x-request-id", "a"),
            ("x-request-id", "b"),
            ("connection", "close"),
            ("date", "x"),
        ],
    ];
    for (set_name, set_value) in sets {
        let name = HeaderName::from_static(set_name);
        if set_name.starts_with("x-") {
            assert!(may_set(&name), "{set_name}");
        } else {
            assert!(!may_set(&name), "{set_name}");
            continue;
        }
        let value = HeaderValue::from_static(set_value);
        for fields in answers {
            for hint in [exact(5), unknown()] {
                for version in [V10, V11] {
                    let given = parts(200, fields);
                    let mut inserted = parts(200, fields);
                    inserted.headers.insert(name.clone(), value.clone());
                    let request = req(version, Method::Other, true);
                    let mut buf = Vec::new();
                    let w1 = head(&mut buf, &given, &hint, &request, Some((&name, &value)));
                    let (w2, read, _) = write(&inserted, hint, request);
                    let mut read_set = parse(&buf);
                    assert_eq!(w1, w2, "{set_name} {fields:?}");
                    read_set.fields.sort();
                    let mut read_fields = read.fields;
                    read_fields.sort();
                    assert_eq!(read_set.fields, read_fields, "{set_name} {fields:?}");
                }
            }
        }
    }
}
