//! A small blocking HTTP/1.1 client for correctness checks (not a load
//! generator: loads come from wrk and h2load).

use std::{
    io::{BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

use anyhow::{bail, Context, Result};

/// A response read whole.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Header names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked (not decompressed).
    pub body: Vec<u8>,
}

impl Response {
    /// The first header with this (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One keep-alive connection.
pub struct Client {
    reader: BufReader<TcpStream>,
}

impl Client {
    /// Connects to `addr`.
    pub fn connect(addr: SocketAddr) -> Result<Client> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        stream.set_nodelay(true)?;
        Ok(Client {
            reader: BufReader::new(stream),
        })
    }

    /// Sends a request and reads its response.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Result<Response> {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\n");
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes())?;
        if let Some(body) = body {
            stream.write_all(body)?;
        }
        self.read_response(method == "HEAD")
    }

    fn read_line(&mut self) -> Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            bail!("the server closed the connection");
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    fn read_response(&mut self, head_only: bool) -> Result<Response> {
        let status_line = self.read_line()?;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .with_context(|| format!("bad status line: {status_line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let line = self.read_line()?;
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
            }
        }
        let mut response = Response {
            status,
            headers,
            body: Vec::new(),
        };
        if head_only || status == 204 || status == 304 {
            return Ok(response);
        }
        if response
            .header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
        {
            loop {
                let size_line = self.read_line()?;
                let size =
                    usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                        .with_context(|| format!("bad chunk size {size_line:?}"))?;
                if size == 0 {
                    // Trailers, then the blank line.
                    while !self.read_line()?.is_empty() {}
                    break;
                }
                let mut chunk = vec![0; size];
                self.reader.read_exact(&mut chunk)?;
                response.body.extend_from_slice(&chunk);
                self.read_line()?;
            }
        } else if let Some(len) = response.header("content-length") {
            let len: usize = len.parse().context("bad content-length")?;
            response.body = vec![0; len];
            self.reader.read_exact(&mut response.body)?;
        } else {
            self.reader.read_to_end(&mut response.body)?;
        }
        Ok(response)
    }
}
