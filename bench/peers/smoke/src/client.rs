//! A minimal blocking HTTP/1.1 client (keep-alive, pipelining, chunked and
//! sized bodies) and an HTTP/2 prior-knowledge check with the `h2` crate.
//! Written small on purpose: it sees exactly what each server sends.

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

/// One keep-alive HTTP/1.1 connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// A response: status, headers (names lowercased) and the body as sent
/// (not decompressed).
#[derive(Debug, Clone)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Reply {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Checks the status and the exact `Content-Type`.
    pub fn expect(&self, status: u16, content_type: &str, what: &str) -> Result<(), String> {
        if self.status != status {
            return Err(format!(
                "{what}: status {}, expected {status}; body {:?}",
                self.status,
                String::from_utf8_lossy(&self.body[..self.body.len().min(200)])
            ));
        }
        match self.header("content-type") {
            Some(ct) if ct == content_type => Ok(()),
            other => Err(format!(
                "{what}: content-type {other:?}, expected {content_type:?}"
            )),
        }
    }
}

fn io(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl Conn {
    /// Connects, with a 10 s read timeout so a hung server fails the check.
    pub fn open(addr: SocketAddr) -> Result<Conn, String> {
        let stream = TcpStream::connect(addr).map_err(io("connect"))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(io("set_read_timeout"))?;
        let _ = stream.set_nodelay(true);
        let writer = stream.try_clone().map_err(io("clone"))?;
        Ok(Conn {
            reader: BufReader::new(stream),
            writer,
        })
    }

    fn request_bytes(
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Vec<u8> {
        let mut out = format!("{method} {path} HTTP/1.1\r\nhost: localhost\r\n");
        for (name, value) in headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body {
            out.push_str(&format!("content-length: {}\r\n", body.len()));
        }
        out.push_str("\r\n");
        let mut out = out.into_bytes();
        out.extend_from_slice(body.unwrap_or_default());
        out
    }

    /// Sends one request and reads its response.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Reply, String> {
        let bytes = Conn::request_bytes(method, path, headers, body);
        self.writer.write_all(&bytes).map_err(io("write"))?;
        self.read_reply(method == "HEAD")
            .map_err(|e| format!("{method} {path}: {e}"))
    }

    /// Sends `n` `GET path` in one write, then reads `n` responses.
    pub fn pipeline(&mut self, path: &str, n: usize) -> Result<Vec<Reply>, String> {
        let one = Conn::request_bytes("GET", path, &[], None);
        let all: Vec<u8> = one.iter().copied().cycle().take(one.len() * n).collect();
        self.writer.write_all(&all).map_err(io("write"))?;
        (0..n).map(|_| self.read_reply(false)).collect()
    }

    fn read_line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).map_err(io("read"))?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn read_reply(&mut self, head_only: bool) -> Result<Reply, String> {
        let status_line = self.read_line()?;
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {status_line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let line = self.read_line()?;
            if line.is_empty() {
                break;
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("bad header line {line:?}"))?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
        let mut reply = Reply {
            status,
            headers,
            body: Vec::new(),
        };
        if head_only || status == 204 || status == 304 {
            return Ok(reply);
        }
        let chunked = reply
            .header("transfer-encoding")
            .is_some_and(|te| te.eq_ignore_ascii_case("chunked"));
        if chunked {
            loop {
                let size_line = self.read_line()?;
                let size =
                    usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                        .map_err(|_| format!("bad chunk size {size_line:?}"))?;
                if size == 0 {
                    // Trailers, then the blank line.
                    while !self.read_line()?.is_empty() {}
                    break;
                }
                let start = reply.body.len();
                reply.body.resize(start + size, 0);
                self.reader
                    .read_exact(&mut reply.body[start..])
                    .map_err(io("read chunk"))?;
                self.read_line()?;
            }
        } else if let Some(len) = reply.header("content-length") {
            let len: usize = len
                .parse()
                .map_err(|_| format!("bad content-length {len:?}"))?;
            reply.body.resize(len, 0);
            self.reader
                .read_exact(&mut reply.body)
                .map_err(io("read body"))?;
        } else {
            return Err("a keep-alive response with neither content-length nor chunked".into());
        }
        Ok(reply)
    }
}

/// Cleartext HTTP/2 by prior knowledge (what h2load does): `/plaintext`,
/// `/json` and one mixed write, each exact. Uses the `h2` crate directly
/// (hyper's client feature would change the features the peers' own hyper
/// is built with).
pub fn h2c_check(addr: SocketAddr) -> Result<(), String> {
    use bytes::Bytes;
    use tern_bench_workload as w;

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io("runtime"))?;
    let write = w::mixed_requests()
        .into_iter()
        .find(|q| q.body.is_some())
        .ok_or("the table has no write")?;
    rt.block_on(async move {
        let run = async {
            let stream = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(io("connect"))?;
            let (client, conn) = h2::client::handshake(stream)
                .await
                .map_err(|e| format!("h2c handshake: {e}"))?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            // Method, path, body, expected answer.
            type Case<'a> = (&'a str, &'a str, Option<Vec<u8>>, Vec<u8>);
            let cases: [Case<'_>; 3] = [
                ("GET", "/plaintext", None, w::PLAINTEXT.as_bytes().to_vec()),
                ("GET", "/json", None, w::JSON.to_vec()),
                (
                    write.method.as_str(),
                    &write.path,
                    write.body.clone(),
                    write.expected.clone(),
                ),
            ];
            let mut client = client;
            for (method, path, body, expected) in cases {
                let fail = |e: h2::Error| format!("h2c {method} {path}: {e}");
                client = client.ready().await.map_err(fail)?;
                let mut req = http::Request::builder()
                    .method(method)
                    .uri(format!("http://{addr}{path}"));
                if body.is_some() {
                    req = req.header("content-type", w::APPLICATION_JSON);
                }
                let req = req.body(()).map_err(|e| e.to_string())?;
                let (res, mut send) = client.send_request(req, body.is_none()).map_err(fail)?;
                if let Some(body) = body {
                    send.send_data(Bytes::from(body), true).map_err(fail)?;
                }
                let res = res.await.map_err(fail)?;
                let status = res.status();
                let mut stream = res.into_body();
                let mut got = Vec::new();
                while let Some(chunk) = stream.data().await {
                    let chunk = chunk.map_err(fail)?;
                    got.extend_from_slice(&chunk);
                    let _ = stream.flow_control().release_capacity(chunk.len());
                }
                if status != 200 || got != expected {
                    return Err(format!(
                        "h2c {method} {path}: {status} {:?}",
                        String::from_utf8_lossy(&got)
                    ));
                }
            }
            Ok(())
        };
        tokio::time::timeout(Duration::from_secs(10), run)
            .await
            .map_err(|_| "h2c checks timed out".to_owned())?
    })
}
