//! Memory under a burst of logins (issue 25, item 2): a server process
//! of its own (this test binary, run again as the server) takes 300
//! parallel failed logins for unknown users, each verified against the
//! decoy hash; its resident memory is read from `/proc` throughout.
//! Argon2id needs 19 MiB per hash: the growth stays under the hashers'
//! memory (concurrency x 19 MiB) plus 32 MB during and after the burst,
//! and a second burst leaves the process where the first did.
#![allow(clippy::unwrap_used, missing_docs)]

use std::{
    io::{BufRead as _, BufReader, Read as _},
    process::{Child, Command, Stdio},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use tern::{App, Config};
use tern_data::{testing::fresh, Backend, Database};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{TcpListener, TcpStream},
};

const SECRET: &str = "a-secret-key-for-the-memory-tests-0123456789";
/// Set in the server process: where its SQLite database goes.
const SERVER: &str = "TERN_AUTH_MEMORY_SERVER";
const MIB: u64 = 1024 * 1024;

/// The server process of [`a_burst_of_logins_keeps_memory_bounded`]:
/// that test runs this binary again with only this test and [`SERVER`]
/// set. It prints `listening on PORT`, and serves until its standard
/// input closes.
#[test]
#[ignore = "the server process of a_burst_of_logins_keeps_memory_bounded, which runs it"]
fn memory_server() {
    let url = std::env::var(SERVER).expect("run by a_burst_of_logins_keeps_memory_bounded");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let config =
            Config::from_settings([("DATABASE_URL", url.as_str()), ("SECRET_KEY", SECRET)])
                .unwrap();
        let service = tern_auth::install(App::new().settings::<Database>("database"))
            .build_with(config)
            .unwrap();
        let db = service.settings::<Database>().unwrap();
        db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("listening on {}", listener.local_addr().unwrap().port());
        let stdin_closed = tokio::task::spawn_blocking(|| {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
        });
        tern::Server::new(service)
            .serve_with_shutdown(listener, async move {
                let _ = stdin_closed.await;
            })
            .await
            .unwrap();
    });
}

/// The server process, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    async fn start() -> Server {
        let url = fresh(Backend::Sqlite).await.unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["memory_server", "--exact", "--ignored", "--nocapture"])
            .env(SERVER, url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let port = tokio::task::spawn_blocking(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .find_map(|l| l.strip_prefix("listening on ").map(str::to_owned))
                .expect("the server process printed its port")
                .parse::<u16>()
                .unwrap()
        })
        .await
        .unwrap();
        Server { child, port }
    }

    /// Resident memory in bytes (`VmRSS` of `/proc/PID/status`).
    fn rss(&self) -> u64 {
        rss_of(self.child.id())
    }

    async fn send(&self, raw: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        s.write_all(raw.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut out))
            .await
            .expect("an answer within 60 s")
            .unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    async fn login(&self, username: &str) -> String {
        let body = format!("username={username}&password=a+wrong+password");
        self.send(&format!(
            "POST /auth/login HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ))
        .await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rss_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kib * 1024
}

/// 300 parallel failed logins, each for another unknown user (so that
/// no throttle stops any: every one reaches the hasher); the statuses
/// and the highest resident memory seen while they ran.
async fn burst(server: &Arc<Server>, round: usize) -> (Vec<u16>, u64) {
    let running = Arc::new(AtomicBool::new(true));
    let peak = Arc::new(AtomicU64::new(server.rss()));
    let sampler = {
        let (running, peak, pid) = (running.clone(), peak.clone(), server.child.id());
        tokio::task::spawn_blocking(move || {
            while running.load(Ordering::Relaxed) {
                peak.fetch_max(rss_of(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let tasks: Vec<_> = (0..300)
        .map(|i| {
            let server = server.clone();
            tokio::spawn(async move {
                let answer = server.login(&format!("nobody-{round}-{i}")).await;
                let status: u16 = answer[9..12].parse().unwrap();
                match status {
                    401 => {}
                    503 => {
                        let head = answer.split("\r\n\r\n").next().unwrap().to_lowercase();
                        assert!(head.contains("\r\nretry-after: "), "{answer}");
                        assert!(head.contains("application/problem+json"), "{answer}");
                    }
                    _ => panic!("a failed login answers 401, or 503 when busy: {answer}"),
                }
                status
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    running.store(false, Ordering::Relaxed);
    sampler.await.unwrap();
    peak.fetch_max(server.rss(), Ordering::Relaxed);
    (statuses, peak.load(Ordering::Relaxed))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_logins_keeps_memory_bounded() {
    let server = Arc::new(Server::start().await);
    // The server warmed up without hashing anything: the baseline.
    for _ in 0..3 {
        let a = server
            .send("GET /auth/session HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await;
        assert!(a.starts_with("HTTP/1.1 401"), "{a}");
    }
    let base = server.rss();
    let hashers = u64::try_from(tern_auth::password::concurrency()).unwrap();
    // 19 MiB per hash at once, and 32 MB for the rest.
    let bound = hashers * 19 * MIB + 32 * 1_000_000;

    let (statuses, peak) = burst(&server, 1).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = server.rss();
    let verified = statuses.iter().filter(|s| **s == 401).count();
    eprintln!(
        "hashers {hashers}: base {} MiB, peak {} MiB, after {} MiB; {verified} of 300 verified, \
         the rest 503",
        base / MIB,
        peak / MIB,
        after / MIB
    );
    assert!(
        verified >= 20,
        "a burst is queued, not refused at once: {verified} verified"
    );
    assert!(
        peak.saturating_sub(base) < bound,
        "the burst grew the process by {} MiB (bound {} MiB)",
        (peak - base) / MIB,
        bound / MIB
    );
    assert!(
        after.saturating_sub(base) < bound,
        "after the burst: {} MiB more than before (bound {} MiB)",
        (after - base) / MIB,
        bound / MIB
    );

    // A second burst: the memory is reused, not added to.
    let (_, peak2) = burst(&server, 2).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after2 = server.rss();
    eprintln!(
        "second burst: peak {} MiB, after {} MiB",
        peak2 / MIB,
        after2 / MIB
    );
    assert!(
        peak2.saturating_sub(base) < bound,
        "the second burst grew the process by {} MiB (bound {} MiB)",
        (peak2 - base) / MIB,
        bound / MIB
    );
    let growth = after.saturating_sub(base).max(MIB);
    assert!(
        after2.saturating_sub(base) <= growth + growth / 10,
        "a second burst left {} MiB more than the first ({} MiB)",
        after2.saturating_sub(base) / MIB,
        growth / MIB
    );
}
