//! `tern::serve` serves whatever the process's arguments are (issue 27):
//! a binary with flags of its own (`--verbose`, a config path) must not
//! get a usage error from Tern's command line. Before, `serve` parsed argv
//! as the app's commands and refused anything it did not know.
//!
//! A test cannot choose its own process's arguments, so the test starts
//! this test binary again, running only [`child_serves`], with arguments
//! Tern does not know: the test's name and libtest's flags, exactly what
//! a binary with its own command line looks like to Tern.
#![allow(clippy::unwrap_used)]

use std::{
    io::{Read, Write},
    net::TcpStream,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

/// Set (to the port) only in the child process.
const CHILD_PORT: &str = "TERN_TEST_SERVE_ARGV_CHILD_PORT";

/// In the child: serves on the port the parent chose, with this binary's
/// arguments (`child_serves --exact --nocapture ...`) in argv. In a plain
/// test run: nothing.
#[tokio::test]
async fn child_serves() {
    let Ok(port) = std::env::var(CHILD_PORT) else {
        return;
    };
    let mut config = tern::Config::default();
    config.addr = format!("127.0.0.1:{port}").parse().unwrap();
    let app = tern::App::new()
        .route("/", tern::routing::get(|| async { "served" }))
        .config(config);
    if let Err(e) = tern::serve(app).await {
        panic!("tern::serve failed: {e}");
    }
}

#[test]
fn serve_ignores_arguments_it_does_not_know() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(std::env::current_exe().unwrap())
        // The name and libtest's flags: a subcommand and flags that Tern's
        // command line has never heard of.
        .args(["child_serves", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_PORT, port.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let answer = loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            let _ = child.stdout.take().unwrap().read_to_string(&mut out);
            let _ = child.stderr.take().unwrap().read_to_string(&mut out);
            panic!("the child stopped ({status}) instead of serving:\n{out}");
        }
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            break out;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the child did not listen on {port} within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("served"), "{answer}");
}
