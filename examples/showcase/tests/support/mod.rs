//! What the showcase's integration tests share: starting the binary with
//! settings and waiting until it answers, ports and scratch directories
//! of their own, and one HTTP/1.1 exchange over a raw socket with the
//! parts of its answer. Each test file takes it with `mod support;` (the
//! attacks, one target of several modules, with a `#[path]`).
// Each test target uses a part of it.
#![allow(dead_code)]

use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

/// The showcase binary cargo built for these tests.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_showcase");
/// A random 32-character secret key (as `showcase secret-key` makes one).
pub(crate) const STRONG: &str = "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ";

/// A port nothing listens on now (the OS's pick), and one this process
/// has not handed out before: the tests of a file run in parallel, and
/// the OS may pick a port again once its probe closed. Two showcases
/// given one port would pass as ready on the first one's answers (the
/// second cannot bind and exits), and the second test would meet a
/// closed port when the first one ends.
pub(crate) fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// A name no other run or test of this process has: `tern-NAME-PID-NANOS`.
pub(crate) fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("tern-{name}-{}-{nanos}", std::process::id())
}

/// An empty directory of its own (`tern-TAG-PID-N` in the temporary
/// directory): the tests of a file run in parallel, and one must not
/// delete another's database.
pub(crate) fn scratch(tag: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tern-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `DATABASE_URL` for a SQLite database in `dir`.
pub(crate) fn sqlite(dir: &Path) -> String {
    format!("sqlite://{}/app.db", dir.display())
}

/// A fresh PostgreSQL database of its own (`POSTGRES_URL`'s server), or
/// `None` (and a line saying so) when `POSTGRES_URL` is not set.
pub(crate) fn fresh_postgres() -> Option<String> {
    // .ci/run sets it.
    tern::test::service_url("POSTGRES_URL")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(tern_data::testing::fresh(tern_data::Backend::Postgres))
}

/// The showcase binary with no settings but `PATH`: what the test gives
/// it is all it reads.
pub(crate) fn isolated() -> Command {
    let mut command = Command::new(BIN);
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    command
}

/// Calls `ready` every 20 ms until it gives an answer, for at most
/// `limit`; panics, naming `what`, if `child` exits first (with its
/// stderr, when that is piped) or the time runs out.
pub(crate) fn wait_for<T>(
    child: &mut Child,
    what: &str,
    limit: Duration,
    mut ready: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(answer) = ready() {
            return answer;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{what} exited with {status}: {}", stderr_of(child));
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not answer within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits, at most `limit`, for `child` to exit: its status, or `None`
/// when it still runs.
pub(crate) fn exited_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What `child` wrote to its stderr, when that is piped (read to the
/// end: call it once the process has exited).
pub(crate) fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut stderr);
    }
    stderr
}

/// `Some` once `port` takes connections.
///
/// A connection whose two ends are the same address is not one: `port`
/// came from the ephemeral range, and while nothing listens on it a
/// connect can pick it as its own source port and connect to itself
/// (TCP's simultaneous open). Seen in CI: the wait ended before the
/// showcase listened, and the test's first request was refused.
pub(crate) fn listening(port: u16) -> Option<()> {
    let s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    (s.local_addr().ok()? != s.peer_addr().ok()?).then_some(())
}

/// A running showcase process on a port of its own, its files in `dir`;
/// killed, and `dir` removed, when dropped.
pub(crate) struct Showcase {
    pub(crate) child: Child,
    pub(crate) port: u16,
    pub(crate) dir: PathBuf,
}

impl Showcase {
    /// Spawns `command` (the showcase binary with its settings) on a free
    /// port (`TERN_ADDR`) and waits, at most 30 s, until it takes
    /// connections.
    pub(crate) fn spawn(command: Command, dir: PathBuf) -> Showcase {
        Showcase::spawn_until(command, dir, listening)
    }

    /// The showcase with this process's environment but `COSE_KEYS`
    /// (`cose_keys` instead, when given), on a SQLite database of its own
    /// in a scratch directory (`tag`); its output dropped.
    pub(crate) fn inheriting(tag: &str, cose_keys: Option<&str>) -> Showcase {
        let dir = scratch(tag);
        let mut command = Command::new(BIN);
        command
            .env("DATABASE_URL", sqlite(&dir))
            .env_remove("COSE_KEYS")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(keys) = cose_keys {
            command.env("COSE_KEYS", keys);
        }
        Showcase::spawn(command, dir)
    }

    /// [`Showcase::spawn`], waiting until `ready(port)` gives an answer.
    pub(crate) fn spawn_until<T>(
        mut command: Command,
        dir: PathBuf,
        mut ready: impl FnMut(u16) -> Option<T>,
    ) -> Showcase {
        let port = free_port();
        let mut child = command
            .env("TERN_ADDR", format!("127.0.0.1:{port}"))
            .spawn()
            .unwrap();
        wait_for(&mut child, "the showcase", Duration::from_secs(30), || {
            ready(port)
        });
        Showcase { child, port, dir }
    }
}

impl Drop for Showcase {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One request on a new connection (`raw`: its head and body, asking for
/// `Connection: close`); the whole answer, read until the server closes.
pub(crate) fn request_bytes(port: u16, raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.write_all(raw)?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    Ok(out)
}

/// [`request_bytes`] of a text request; the whole answer as text.
pub(crate) fn request(port: u16, raw: &str) -> std::io::Result<String> {
    let out = request_bytes(port, raw.as_bytes())?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// An answer's status, head (the status line and the headers) and body.
pub(crate) fn parts(answer: &[u8]) -> (u16, String, &[u8]) {
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("not an answer: {}", String::from_utf8_lossy(answer)));
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    (status(&head), head, &answer[split + 4..])
}

/// The status code of an answer (0 when there is none).
pub(crate) fn status(res: &str) -> u16 {
    res.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// The answer's head: the status line and the headers.
pub(crate) fn head(res: &str) -> &str {
    res.split_once("\r\n\r\n").map_or(res, |(h, _)| h)
}

/// A header's value (the first, names compared without case).
pub(crate) fn header<'a>(res: &'a str, name: &str) -> Option<&'a str> {
    head(res).lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The answer's body.
pub(crate) fn body(res: &str) -> &str {
    res.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("")
}

/// `name=value` of a `Set-Cookie` for `name`.
pub(crate) fn cookie(res: &str, name: &str) -> Option<String> {
    head(res).lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        if !n.trim().eq_ignore_ascii_case("set-cookie") {
            return None;
        }
        let pair = v.trim().split(';').next()?.trim();
        pair.starts_with(&format!("{name}="))
            .then(|| pair.to_owned())
    })
}

/// `application/x-www-form-urlencoded` of one value.
pub(crate) fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                (b as char).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `POST /auth/login` with a form `body` (`username=...&password=...`),
/// as a whole request.
pub(crate) fn login_form(body: &str) -> String {
    format!(
        "POST /auth/login HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}
