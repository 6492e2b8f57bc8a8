//! The listening port, over real sockets with `Server::run`: an address
//! already in use stops the start with an error naming `TERN_ADDR`, unless
//! every process sharing it opts in (`TERN_REUSE_PORT`); the per-core
//! runtime shares one socket among its workers without opening the port to
//! other processes (issue 9: a second app started on the same port used to
//! split the first one's requests silently).
//!
//! `Server::run` serves until `SIGINT`/`SIGTERM`, so the servers started
//! here run until the test's process exits (nextest runs each test in a
//! process of its own).
#![allow(clippy::unwrap_used, missing_docs)]

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use tern::{config::RuntimeMode, routing::get, App, Config, Server};

/// A port nobody listens on (the kernel's pick, released at once).
fn free_port() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

fn config(addr: SocketAddr, runtime: RuntimeMode, reuse_port: bool) -> Config {
    let mut c = Config::default();
    c.addr = addr;
    c.runtime = runtime;
    c.workers = 2;
    c.reuse_port = reuse_port;
    c
}

/// Starts `Server::run` in a thread with an app answering `name` and the
/// worker thread's name; the receiver gets what `run` returns.
fn start(name: &'static str, config: Config) -> mpsc::Receiver<Result<(), tern::Error>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let app = App::new().route(
            "/",
            get(move || async move {
                let thread = thread::current().name().unwrap_or("?").to_owned();
                format!("{name} {thread}")
            }),
        );
        let service = app.build_with(config).expect("the app builds");
        let _ = tx.send(Server::new(service).run());
    });
    rx
}

/// One request on a new connection; the body, or `None` when nothing
/// answers.
fn get_once(addr: SocketAddr) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut out = String::new();
    stream.read_to_string(&mut out).ok()?;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    Some(out.split("\r\n\r\n").nth(1)?.to_owned())
}

/// Waits until `addr` answers, failing if the server returned instead.
fn wait_listening(addr: SocketAddr, server: &mpsc::Receiver<Result<(), tern::Error>>) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(result) = server.try_recv() {
            panic!("the server stopped at once: {result:?}");
        }
        if get_once(addr).is_some() {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("the server did not answer on {addr} within 20 s");
}

const RUNTIMES: [RuntimeMode; 2] = [RuntimeMode::MultiThread, RuntimeMode::PerCore];

#[test]
fn a_second_server_on_a_taken_port_fails_to_start_naming_tern_addr() {
    for runtime in RUNTIMES {
        let addr = free_port();
        let first = start("first", config(addr, runtime, false));
        wait_listening(addr, &first);
        let second = start("second", config(addr, runtime, false));
        let err = match second.recv_timeout(Duration::from_secs(10)) {
            Ok(Err(err)) => err,
            Ok(Ok(())) => panic!("{runtime:?}: the second server returned Ok"),
            Err(_) => panic!(
                "{runtime:?}: the second server started on {addr}, which the first one holds"
            ),
        };
        assert!(err.is_bind(), "{runtime:?}: {err}");
        assert_eq!(err.setting(), Some("TERN_ADDR"), "{runtime:?}: {err}");
        let message = err.to_string();
        assert!(message.contains("in use"), "{runtime:?}: {message}");
        assert!(
            message.contains("TERN_REUSE_PORT"),
            "{runtime:?}: {message}"
        );
        // The first server still has every request.
        for _ in 0..16 {
            let body = get_once(addr).expect("the first server answers");
            assert!(body.starts_with("first "), "{runtime:?}: {body}");
        }
    }
}

#[test]
fn servers_that_both_opt_in_share_the_port() {
    for runtime in RUNTIMES {
        let addr = free_port();
        let first = start("first", config(addr, runtime, true));
        wait_listening(addr, &first);
        let second = start("second", config(addr, runtime, true));
        // The kernel spreads new connections over both sockets by their
        // addresses: in 200 connections both servers answer (the chance
        // that one gets none is about 2^-199).
        let deadline = Instant::now() + Duration::from_secs(20);
        let (mut firsts, mut seconds) = (0, 0);
        while (firsts == 0 || seconds == 0) && Instant::now() < deadline {
            if let Ok(result) = second.try_recv() {
                panic!("{runtime:?}: the second server stopped: {result:?}");
            }
            for _ in 0..200 {
                let body = get_once(addr).expect("an answer");
                if body.starts_with("first ") {
                    firsts += 1;
                } else {
                    seconds += 1;
                }
            }
        }
        assert!(
            firsts > 0 && seconds > 0,
            "{runtime:?}: first answered {firsts}, second {seconds}"
        );
    }
}

#[test]
fn per_core_workers_share_one_socket_and_serve() {
    let addr = free_port();
    let server = start("per-core", config(addr, RuntimeMode::PerCore, false));
    wait_listening(addr, &server);
    let clients: Vec<_> = (0..8)
        .map(|_| {
            thread::spawn(move || {
                (0..25)
                    .map(|_| get_once(addr).expect("an answer"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for client in clients {
        for body in client.join().unwrap() {
            // Answered on one of the per-core runtimes' threads.
            assert!(body.starts_with("per-core tern-worker-"), "{body}");
        }
    }
    // No other process may take the port while the server holds it.
    let mut intruder = Config::default();
    intruder.addr = addr;
    let err = match start("intruder", intruder).recv_timeout(Duration::from_secs(10)) {
        Ok(Err(err)) => err,
        other => panic!("a server started on the per-core server's port: {other:?}"),
    };
    assert_eq!(err.setting(), Some("TERN_ADDR"), "{err}");
}
