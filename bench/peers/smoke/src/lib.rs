//! The peers' smoke test harness: starts a peer binary on a port of its
//! own choosing, checks every fixed endpoint and every request of the
//! mixed table against `tern-bench-workload`, byte for byte (compressed
//! answers after decompression), checks HTTP/1.1 pipelining and, where the
//! peer has it, cleartext HTTP/2; then stops it with `SIGTERM` and requires
//! a clean exit.
//!
//! Run from `bench/peers`: `cargo test --release -p smoke` (all four
//! peers; add `-- tern` for one). The test builds the peer binaries
//! itself, in the profile it was built in.
//!
//! ```no_run
//! let bin = smoke::peer_binary("peer-hyper").expect("the peers build");
//! let report = smoke::check(&bin, smoke::Expect { h2c: true }).expect("hyper serves the workload");
//! println!("{report}");
//! ```

mod client;

use std::{
    fmt,
    io::{BufRead, BufReader, Read},
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{mpsc, Mutex},
    time::{Duration, Instant},
};

use tern_bench_workload as w;

pub use client::{Conn, Reply};

/// What a peer is expected to support beyond HTTP/1.1.
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    /// Cleartext HTTP/2 by prior knowledge (everyone but actix-web).
    pub h2c: bool,
}

/// What a successful check did.
#[derive(Debug, Clone)]
pub struct Report {
    /// The peer's binary.
    pub binary: PathBuf,
    /// Fixed-endpoint checks passed (each encoding counted).
    pub fixed: usize,
    /// Mixed requests answered exactly.
    pub mixed: usize,
    /// Constrained routes that answered `404` to a non-digit parameter.
    pub constrained_404: usize,
    /// Whether the HTTP/2 checks ran.
    pub h2c: bool,
    /// Wall time of the whole check, start to exit.
    pub elapsed: Duration,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} fixed checks, {}/{} mixed requests exact, {} constrained 404s, pipelining ok, h2c {}, SIGTERM exit 0, {:.1} s",
            self.binary.file_name().map_or_else(|| "?".into(), |n| n.to_string_lossy()),
            self.fixed,
            self.mixed,
            w::MIXED_REQUESTS,
            self.constrained_404,
            if self.h2c { "ok" } else { "skipped (not supported)" },
            self.elapsed.as_secs_f64(),
        )
    }
}

/// Builds the peers workspace (once per process) in the profile this code
/// was built in, and returns the path of binary `name` (`peer-hyper`,
/// `peer-axum`, `peer-actix`, `peer-tern`).
///
/// The whole workspace, as `cargo build --release` builds it: building
/// only some members would unify dependency features differently and
/// rebuild the binaries with other features.
///
/// Set `SMOKE_NO_BUILD=1` to use the binaries as they are.
pub fn peer_binary(name: &str) -> Result<PathBuf, String> {
    static BUILT: Mutex<Option<Result<PathBuf, String>>> = Mutex::new(None);
    let mut built = BUILT
        .lock()
        .map_err(|_| "a previous build panicked".to_owned())?;
    let dir = built.get_or_insert_with(build_peers).clone()?;
    let path = dir.join(name);
    match path.exists() {
        true => Ok(path),
        false => Err(format!("{} does not exist", path.display())),
    }
}

fn build_peers() -> Result<PathBuf, String> {
    // This test binary is target/<profile>/deps/<name>-<hash>.
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot find the target directory")?
        .to_owned();
    if std::env::var_os("SMOKE_NO_BUILD").is_some() {
        return Ok(dir);
    }
    let profile = match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_owned(),
        Some(other) => other.to_owned(),
        None => return Err("cannot tell the build profile".into()),
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let status = Command::new(cargo)
        .args(["build", "--profile", &profile, "--manifest-path"])
        .arg(&manifest)
        .args([
            "-p",
            "peer-hyper",
            "-p",
            "peer-axum",
            "-p",
            "peer-actix",
            "-p",
            "peer-tern",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    match status.success() {
        true => Ok(dir),
        false => Err(format!("building the peers failed: {status}")),
    }
}

/// A running peer, killed on drop if still running.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(binary: &Path) -> Result<Server, String> {
        let mut child = Command::new(binary)
            .env("BENCH_ADDR", "127.0.0.1:0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("listening on ") {
                    let _ = tx.send(addr.trim().to_owned());
                }
            }
        });
        let mut server = Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        let line = rx.recv_timeout(Duration::from_secs(30)).map_err(|_| {
            format!(
                "{} printed no `listening on ADDR` within 30 s",
                binary.display()
            )
        })?;
        server.addr = line
            .parse()
            .map_err(|e| format!("`listening on {line}`: not an address: {e}"))?;
        Ok(server)
    }

    /// `SIGTERM`, then a clean exit within 10 s.
    fn stop(mut self) -> Result<(), String> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        if !sent.is_ok_and(|s| s.success()) {
            return Err("cannot send SIGTERM".into());
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => return Err(format!("exited with {status} after SIGTERM")),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(e.to_string()),
            }
        }
        Err("still running 10 s after SIGTERM".into())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Starts `binary` and runs every check; the error names the first
/// request that was answered wrongly and how.
pub fn check(binary: &Path, expect: Expect) -> Result<Report, String> {
    let started = Instant::now();
    let server = Server::start(binary)?;
    let mut conn = Conn::open(server.addr)?;
    let fixed = check_fixed(&mut conn)?;
    let mixed = check_mixed(&mut conn)?;
    let constrained_404 = check_constrained(server.addr)?;
    check_pipelining(server.addr)?;
    if expect.h2c {
        client::h2c_check(server.addr)?;
    }
    drop(conn);
    server.stop()?;
    Ok(Report {
        binary: binary.to_owned(),
        fixed,
        mixed,
        constrained_404,
        h2c: expect.h2c,
        elapsed: started.elapsed(),
    })
}

fn check_fixed(conn: &mut Conn) -> Result<usize, String> {
    serde_json::from_slice::<serde_json::Value>(w::compression_json())
        .map_err(|e| format!("the workload's /compression/json is not JSON: {e}"))?;
    let mut checks = 0;
    for f in w::fixed() {
        let encodings: &[Option<&str>] = match f.compressible {
            true => &[None, Some("gzip"), Some("br")],
            // Not compressed even when the client would accept it.
            false => &[None, Some("gzip, br")],
        };
        for &enc in encodings {
            let mut headers = vec![];
            if let Some(enc) = enc {
                headers.push(("accept-encoding", enc));
            }
            let what = format!(
                "GET {} (accept-encoding: {})",
                f.path,
                enc.unwrap_or("none")
            );
            let reply = conn.send("GET", &f.path, &headers, None)?;
            reply.expect(200, f.content_type, &what)?;
            let got_enc = reply.header("content-encoding");
            let body = match (f.compressible, enc, got_enc) {
                (true, Some(want), Some(got)) if want == got => decode(got, &reply.body)?,
                (_, _, None) if !f.compressible || enc.is_none() => reply.body.clone(),
                (_, _, got) => {
                    return Err(format!(
                        "{what}: content-encoding {got:?}, expected {enc:?}"
                    ))
                }
            };
            if body != *f.body {
                return Err(format!(
                    "{what}: body differs ({} bytes, expected {}): {:?}",
                    body.len(),
                    f.body.len(),
                    String::from_utf8_lossy(&body[..body.len().min(120)])
                ));
            }
            checks += 1;
        }
    }
    for id in [0u64, 7, 123_456_789, u64::MAX] {
        let reply = conn.send("GET", &format!("/user/{id}"), &[], None)?;
        let what = format!("GET /user/{id}");
        reply.expect(200, w::APPLICATION_JSON, &what)?;
        if reply.body != w::user_body(id) {
            return Err(format!(
                "{what}: {:?}",
                String::from_utf8_lossy(&reply.body)
            ));
        }
        checks += 1;
    }
    Ok(checks)
}

fn decode(encoding: &str, body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let result = match encoding {
        "gzip" => flate2::read::GzDecoder::new(body).read_to_end(&mut out),
        "br" => brotli::Decompressor::new(body, 4096).read_to_end(&mut out),
        other => return Err(format!("unexpected content-encoding {other}")),
    };
    result.map_err(|e| format!("cannot decode {encoding}: {e}"))?;
    Ok(out)
}

fn check_mixed(conn: &mut Conn) -> Result<usize, String> {
    let reqs = w::mixed_requests();
    for q in &reqs {
        let mut headers = vec![];
        if q.body.is_some() {
            headers.push(("content-type", w::APPLICATION_JSON));
        }
        let reply = conn.send(q.method.as_str(), &q.path, &headers, q.body.as_deref())?;
        let what = format!("{} {} (route {})", q.method, q.path, q.route);
        reply.expect(q.status, w::APPLICATION_JSON, &what)?;
        if reply.body != q.expected {
            return Err(format!(
                "{what}: got {:?}, expected {:?}",
                String::from_utf8_lossy(&reply.body),
                String::from_utf8_lossy(&q.expected)
            ));
        }
    }
    Ok(reqs.len())
}

/// A constrained route given a parameter that is not all digits: `404`
/// from every peer (the router or the handler refuses it). A connection
/// each: a server may close one whose request body it did not read
/// (actix-web does, after a 404 to a write).
fn check_constrained(addr: SocketAddr) -> Result<usize, String> {
    let body = w::mixed_requests()
        .into_iter()
        .find_map(|q| q.body)
        .ok_or("the table has no write")?;
    let mut n = 0;
    for route in w::mixed_routes().iter().filter(|r| r.digits_only) {
        let path = route.pattern.replace("{id}", "12a");
        let (headers, body) = match route.method.is_write() {
            true => (vec![("content-type", w::APPLICATION_JSON)], Some(&body[..])),
            false => (vec![], None),
        };
        let reply = Conn::open(addr)?.send(route.method.as_str(), &path, &headers, body)?;
        if reply.status != 404 {
            return Err(format!(
                "{} {path}: status {}, expected 404 (the parameter is not digits)",
                route.method, reply.status
            ));
        }
        n += 1;
    }
    Ok(n)
}

/// 16 `GET /plaintext` in one write, as the `pipeline` workload sends
/// them: 16 answers, in order.
fn check_pipelining(addr: SocketAddr) -> Result<(), String> {
    let mut conn = Conn::open(addr)?;
    let replies = conn.pipeline("/plaintext", 16)?;
    for (i, reply) in replies.iter().enumerate() {
        reply.expect(
            200,
            w::TEXT_PLAIN,
            &format!("pipelined GET /plaintext #{i}"),
        )?;
        if reply.body != w::PLAINTEXT.as_bytes() {
            return Err(format!("pipelined GET /plaintext #{i}: wrong body"));
        }
    }
    Ok(())
}
