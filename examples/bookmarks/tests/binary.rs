//! The real binary, as a user runs it: it serves over a socket and stops
//! on SIGTERM with exit status 0; it reads `[bookmarks]` from `tern.toml`;
//! and a wrong setting stops the start with an error naming it.
#![allow(missing_docs)]

use std::{
    fs,
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    time::{Duration, Instant},
};

const BIN: &str = env!("CARGO_BIN_EXE_example-bookmarks");
const TOKEN: &str = "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ";
/// Production's `SECRET_KEY`: 32 random-looking bytes.
const SECRET_KEY: &str = "Zt3pQ9wLx2Nc8RvB5mKj7HdF4sGy6UaE";

/// An empty working directory of its own for one test.
fn work_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("example-bookmarks-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create the working directory");
    dir
}

/// The binary in `dir` with only these variables: the tests' own
/// environment (a `BOOKMARKS_API_TOKEN` of the developer's, say) stays out.
fn command(dir: &Path, envs: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir)
        .env_clear()
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn wait_for_exit(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("wait for the binary") {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn stderr_of(child: &mut Child) -> String {
    // Standard output too: the log (`tern listening ...`) goes there.
    let mut out = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        let _ = pipe.read_to_string(&mut out);
    }
    if let Some(mut pipe) = child.stderr.take() {
        let _ = pipe.read_to_string(&mut out);
    }
    out
}

/// Runs the binary expecting it to refuse to start; its stderr.
fn startup_error(dir: &Path, envs: &[(&str, &str)]) -> String {
    let mut child = command(dir, envs)
        .env("TERN_ADDR", "127.0.0.1:0")
        .spawn()
        .expect("spawn the binary");
    let Some(status) = wait_for_exit(&mut child, Duration::from_secs(20)) else {
        let _ = child.kill();
        panic!("the server started with {envs:?}");
    };
    let stderr = stderr_of(&mut child);
    assert!(!status.success(), "{envs:?} exited with {status}: {stderr}");
    stderr
}

/// The binary, serving on a port of its own; killed if the test fails
/// before it is stopped.
struct Server {
    child: Child,
    port: u16,
}

/// An answer: the status and the head and body as text.
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

impl Server {
    fn start(dir: &Path, envs: &[(&str, &str)]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = command(dir, envs)
            .env("TERN_ADDR", format!("127.0.0.1:{port}"))
            .spawn()
            .expect("spawn the binary");
        let mut server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = server.child.try_wait().expect("wait for the binary") {
                panic!(
                    "the server exited with {status}: {}",
                    stderr_of(&mut server.child)
                );
            }
            assert!(Instant::now() < deadline, "the server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// One HTTP/1.1 request on a connection of its own.
    fn request(&self, method: &str, path: &str, token: Option<&str>, json: Option<&str>) -> Reply {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("set a timeout");
        let mut request =
            format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
        if let Some(token) = token {
            request += &format!("Authorization: Bearer {token}\r\n");
        }
        let body = json.unwrap_or_default();
        if json.is_some() {
            request += &format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            );
        }
        request += "\r\n";
        request += body;
        stream.write_all(request.as_bytes()).expect("send");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).expect("read the answer");
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"));
        Reply {
            status,
            head: head.to_owned(),
            body: body.to_owned(),
        }
    }

    /// Sends SIGTERM (what `kill`, systemd and Kubernetes send); the exit
    /// status and stderr.
    fn stop(&mut self) -> (ExitStatus, String) {
        let sent = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success());
        let status = wait_for_exit(&mut self.child, Duration::from_secs(20))
            .expect("the server did not stop on SIGTERM");
        (status, stderr_of(&mut self.child))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Already stopped in a test that passed; else, not left behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serves_over_a_socket_and_stops_on_sigterm() {
    let dir = work_dir("socket");
    let mut server = Server::start(&dir, &[("BOOKMARKS_API_TOKEN", TOKEN)]);

    let rust = r#"{"url": "https://www.rust-lang.org", "title": "Rust", "tags": ["rust", "lang"]}"#;
    let res = server.request("POST", "/bookmarks", Some(TOKEN), Some(rust));
    assert_eq!(res.status, 201, "{}", res.body);
    assert_eq!(res.header("location"), Some("/bookmarks/1"));

    let res = server.request("GET", "/bookmarks/1", None, None);
    assert_eq!(res.status, 200);
    assert!(res.body.contains(r#""title":"Rust""#), "{}", res.body);
    let res = server.request("GET", "/bookmarks?tag=rust&tag=lang&q=rust", None, None);
    assert!(res.body.contains(r#""total":1"#), "{}", res.body);

    let res = server.request("POST", "/bookmarks", None, Some(rust));
    assert_eq!(res.status, 401);
    assert_eq!(res.header("www-authenticate"), Some("Bearer"));
    assert_eq!(res.header("content-type"), Some("application/problem+json"));
    let res = server.request("POST", "/bookmarks", Some("wrong"), Some(rust));
    assert_eq!(res.status, 401);
    assert_eq!(server.request("DELETE", "/nope", None, None).status, 404);
    assert_eq!(
        server.request("DELETE", "/bookmarks", None, None).status,
        405
    );
    let res = server.request("DELETE", "/bookmarks/1", Some(TOKEN), None);
    assert_eq!(res.status, 204);

    let (status, stderr) = server.stop();
    assert!(status.success(), "exit {status}: {stderr}");
    assert!(!stderr.contains(TOKEN), "the token was printed: {stderr}");
    // No subscriber installed by the app: `tern::run` installs one, so
    // the start and the drain show.
    assert!(stderr.contains("tern listening"), "{stderr}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn reads_the_bookmarks_table_of_tern_toml() {
    let dir = work_dir("toml");
    fs::write(
        dir.join("tern.toml"),
        "[bookmarks]\napi_token = \"a-token-from-the-file\"\nmax_page_size = 2\n",
    )
    .expect("write tern.toml");
    let mut server = Server::start(&dir, &[]);
    let body = r#"{"url": "https://example.com", "title": "Example"}"#;
    let res = server.request(
        "POST",
        "/bookmarks",
        Some("a-token-from-the-file"),
        Some(body),
    );
    assert_eq!(res.status, 201, "{}", res.body);
    let res = server.request("GET", "/bookmarks?per_page=50", None, None);
    assert!(res.body.contains(r#""per_page":2"#), "{}", res.body);
    let (status, stderr) = server.stop();
    assert!(status.success(), "exit {status}: {stderr}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_wrong_setting_stops_the_start_and_is_named() {
    let dir = work_dir("errors");
    let production = [
        ("TERN_ENV", "production"),
        ("SECRET_KEY", SECRET_KEY),
        ("ALLOWED_HOSTS", "localhost"),
    ];
    for (envs, expected) in [
        (vec![], vec!["BOOKMARKS_API_TOKEN", "is not set"]),
        (
            vec![("BOOKMARKS_API_TOKN", TOKEN)],
            vec!["BOOKMARKS_API_TOKN", "did you mean `api_token`"],
        ),
        (
            vec![
                ("BOOKMARKS_API_TOKEN", TOKEN),
                ("BOOKMARKS_MAX_PAGE_SIZE", "lots"),
            ],
            vec!["BOOKMARKS_MAX_PAGE_SIZE"],
        ),
        (
            [&production[..], &[("BOOKMARKS_API_TOKEN", "short-token")]].concat(),
            vec!["BOOKMARKS_API_TOKEN", "shorter than 16 bytes"],
        ),
    ] {
        let stderr = startup_error(&dir, &envs);
        for part in expected {
            assert!(stderr.contains(part), "{envs:?}: no `{part}` in: {stderr}");
        }
        for secret in [TOKEN, SECRET_KEY, "short-token"] {
            assert!(!stderr.contains(secret), "a secret was printed: {stderr}");
        }
    }
    // The same production settings with a long token start.
    let mut server = Server::start(
        &dir,
        &[&production[..], &[("BOOKMARKS_API_TOKEN", TOKEN)]].concat(),
    );
    assert_eq!(server.request("GET", "/bookmarks", None, None).status, 200);
    let (status, stderr) = server.stop();
    assert!(status.success(), "exit {status}: {stderr}");
    let _ = fs::remove_dir_all(&dir);
}
