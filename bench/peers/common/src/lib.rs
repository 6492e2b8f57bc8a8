//! What the bench peers share, so that they differ only in the
//! framework: the listening socket (same backlog and options), the startup
//! line the runner waits for, the serde types of the bodies each handler
//! decodes or serializes, and (for the WebSocket peers) the address and
//! worker count read the way a Tern app reads them.
//!
//! ```no_run
//! let listener = peer_common::bind().expect("BENCH_ADDR can be bound");
//! peer_common::announce(listener.local_addr().expect("a bound socket has an address"));
//! ```

use std::{
    io::{self, Write},
    net::{SocketAddr, TcpListener},
};

use serde::{Deserialize, Serialize};

pub use tern_bench_workload as workload;

/// The address in `BENCH_ADDR`, by default `127.0.0.1:8080`.
///
/// Exits the process with a message when `BENCH_ADDR` is not an address:
/// a peer is a benchmark binary, not a library.
pub fn addr() -> SocketAddr {
    addr_in(&["BENCH_ADDR"])
}

/// The address in the first of `vars` that is set, by default
/// `127.0.0.1:8080`; exits like [`addr`] when it is not an address.
///
/// The WebSocket peers read `BENCH_ADDR` then `TERN_ADDR`, so that tools
/// written for Tern apps (the Autobahn script) drive them unchanged.
pub fn addr_in(vars: &[&str]) -> SocketAddr {
    let found = vars
        .iter()
        .find_map(|var| std::env::var(var).ok().map(|raw| (*var, raw)));
    let Some((var, raw)) = found else {
        return SocketAddr::from(([127, 0, 0, 1], 8080));
    };
    match raw.parse() {
        Ok(addr) => addr,
        Err(e) => {
            eprintln!("{var}={raw:?} is not an address such as 127.0.0.1:8080: {e}");
            std::process::exit(2);
        }
    }
}

/// Binds [`addr`] the same way for every peer: `SO_REUSEADDR`, a backlog
/// of 4,096 (so the 1,000-connection stage is not limited by the kernel's
/// accept queue), non-blocking, ready for `tokio::net::TcpListener::from_std`
/// or actix-web's `HttpServer::listen`.
pub fn bind() -> io::Result<TcpListener> {
    bind_at(addr())
}

/// [`bind`] at `addr`.
pub fn bind_at(addr: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

/// Worker threads of a multi-thread runtime: `BENCH_WORKERS`, then
/// `TERN_WORKERS` (how a Tern app is told), by default the number of
/// cores (Tern's default). The WebSocket peers run on one multi-thread
/// runtime of this many workers, as a Tern app does.
pub fn workers() -> usize {
    for var in ["BENCH_WORKERS", "TERN_WORKERS"] {
        if let Ok(raw) = std::env::var(var) {
            match raw.parse::<usize>() {
                Ok(n) if n > 0 => return n,
                _ => {
                    eprintln!("{var}={raw:?} is not a positive number of threads");
                    std::process::exit(2);
                }
            }
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Prints `listening on ADDR` (the bound address, so a port 0 shows the
/// port chosen) to stdout and flushes: the line the runner and the smoke
/// test wait for.
pub fn announce(addr: SocketAddr) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "listening on {addr}");
    let _ = out.flush();
}

/// Whether a constrained route's parameter is acceptable: non-empty ASCII
/// digits (the routers without constraints check it in the handler and
/// answer `404` otherwise).
pub fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `GET /json`, serialized per request: `{"message":"Hello, World!"}`.
#[derive(Debug, Serialize)]
pub struct Message {
    /// Always [`workload::JSON_MESSAGE`].
    pub message: &'static str,
}

impl Message {
    /// The message of the workload.
    pub fn hello() -> Self {
        Message {
            message: workload::JSON_MESSAGE,
        }
    }
}

/// `GET /user/{id}`: `{"id":ID,"name":"user-ID"}`.
#[derive(Debug, Serialize)]
pub struct User {
    /// The path parameter, parsed.
    pub id: u64,
    /// `user-ID`.
    pub name: String,
}

impl User {
    /// The user of `id`.
    pub fn new(id: u64) -> Self {
        User {
            id,
            name: format!("user-{id}"),
        }
    }
}

/// The typed body of a mixed write (see
/// [`workload::Payload`], whose shape this mirrors).
#[derive(Debug, Deserialize)]
pub struct Payload {
    /// `u64`.
    pub id: u64,
    /// `i64`.
    pub delta: i64,
    /// `f64`.
    pub score: f64,
    /// `bool`.
    pub active: bool,
    /// `String`.
    pub name: String,
    /// `Vec<u32>`.
    pub tags: Vec<u32>,
    /// `Option<String>`.
    pub note: Option<String>,
    /// Nested object.
    pub owner: Owner,
}

/// The nested object of a [`Payload`].
#[derive(Debug, Deserialize)]
pub struct Owner {
    /// `u64`.
    pub id: u64,
    /// `String`.
    pub name: String,
}

impl Payload {
    /// `sum` of the response, from every numeric and boolean field (see
    /// [`workload::Payload::sum`]).
    pub fn sum(&self) -> i64 {
        self.id as i64
            + self.delta
            + (self.score * 4.0).round() as i64
            + i64::from(self.active)
            + self.tags.iter().map(|&t| i64::from(t)).sum::<i64>()
            + self.owner.id as i64
    }

    /// `len` of the response, from every string and the list (see
    /// [`workload::Payload::lengths`]).
    pub fn lengths(&self) -> u64 {
        (self.name.len() + self.note.as_ref().map_or(0, String::len) + self.owner.name.len()) as u64
            + self.tags.len() as u64
    }
}

/// A mixed read's answer: `{"route":N,"params":[...]}`.
#[derive(Debug, Serialize)]
pub struct ReadResponse<'a> {
    /// The route's index.
    pub route: usize,
    /// The route parameters, in path order.
    pub params: &'a [&'a str],
}

/// A mixed write's answer: `{"route":N,"params":[...],"sum":S,"len":L}`.
#[derive(Debug, Serialize)]
pub struct WriteResponse<'a> {
    /// The route's index.
    pub route: usize,
    /// The route parameters, in path order.
    pub params: &'a [&'a str],
    /// [`Payload::sum`].
    pub sum: i64,
    /// [`Payload::lengths`].
    pub len: u64,
}

impl<'a> WriteResponse<'a> {
    /// The answer to a write of `payload` to `route` with `params`.
    pub fn new(route: usize, params: &'a [&'a str], payload: &Payload) -> Self {
        WriteResponse {
            route,
            params,
            sum: payload.sum(),
            len: payload.lengths(),
        }
    }
}
