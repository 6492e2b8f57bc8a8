//! Two showcase processes behind one API: a COSE message accepted by one
//! is a replay for the other when they share the replay store (Redis,
//! `COSE_REPLAY_STORE`); each process alone sees only its own messages.
//! Needs the `redis` feature and `REDIS_URL`, as `.ci/run` runs it:
//! `cargo test -p showcase --features redis --test processes`.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use base64::Engine as _;
use tern_contract::cose::{Keyring, Seal};

const BIN: &str = env!("CARGO_BIN_EXE_showcase");

fn keys() -> String {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    format!("k1:A256GCM:{}", b64(&[0x5a; 32]))
}

struct Showcase {
    child: Child,
    port: u16,
}

impl Showcase {
    fn start(envs: &[(&str, &str)]) -> Showcase {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(BIN)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("TERN_ADDR", format!("127.0.0.1:{port}"))
            .envs(envs.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
                panic!("the showcase exited with {status}: {stderr}");
            }
            assert!(Instant::now() < deadline, "the showcase did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Showcase { child, port }
    }

    /// `POST /items` with a COSE body: the status.
    fn post(&self, body: &[u8]) -> u16 {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "POST /items HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/cose\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        String::from_utf8_lossy(&out[9..12]).parse().unwrap()
    }
}

impl Drop for Showcase {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sealed_item(name: &str) -> Vec<u8> {
    let config = tern::Config::from_settings([("COSE_KEYS", keys())]).unwrap();
    let keyring: Keyring = tern::settings::load("cose", &config).unwrap();
    let mut payload = Vec::new();
    ciborium::into_writer(
        &serde_json::json!({"name": name, "qty": 1, "owner": "ada@example.com"}),
        &mut payload,
    )
    .unwrap();
    keyring.seal(Seal::Encrypt0, b"k1", &payload).unwrap()
}

#[test]
fn a_replay_to_another_process_is_refused_with_a_shared_store() {
    let Ok(redis) = std::env::var("REDIS_URL") else {
        println!("skipped: REDIS_URL is not set (.ci/run sets it and starts Redis)");
        return;
    };
    let keys = keys();
    let shared = [
        ("COSE_KEYS", keys.as_str()),
        ("COSE_REPLAY_STORE", redis.as_str()),
    ];
    let a = Showcase::start(&shared);
    let b = Showcase::start(&shared);
    // A fresh message per run: the store outlives the test.
    let message = sealed_item(&format!("shared-{}", std::process::id()));
    assert_eq!(a.post(&message), 200);
    assert_eq!(b.post(&message), 401, "the other process took a replay");
    assert_eq!(a.post(&message), 401);
    // A new message is fine on either.
    assert_eq!(b.post(&sealed_item("another")), 200);

    // Without the shared store each process remembers only its own.
    let alone = [("COSE_KEYS", keys.as_str())];
    let c = Showcase::start(&alone);
    let d = Showcase::start(&alone);
    let message = sealed_item("alone");
    assert_eq!(c.post(&message), 200);
    assert_eq!(d.post(&message), 200, "no shared store: d cannot know");
    assert_eq!(c.post(&message), 401);
}
