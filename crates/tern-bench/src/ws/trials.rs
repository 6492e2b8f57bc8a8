//! A run: a fresh server per trial, its answers checked, then the load.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};
use tokio::runtime::Runtime;

use super::report::{figures, Report, ServerInfo, Trial};
use super::sockets::{check, close_all, drive, echo_once, open_many, LARGE_READS, SMALL_READS};
use super::{
    Options, Workload, LARGE_CONNECTIONS, LARGE_LEN, MAX_MESSAGE, SERVERS, SMALL_LEN, WORKLOADS,
};
use crate::{
    console::{progress, progress_end},
    load_client::{client_runtime, cores_in, pin_self, raise_open_files},
    machine::{unix_now, Machine},
    process::{sha256, OwnCpu, ServerProcess},
    workloads::choose,
};

/// `held`: sockets opened and closed before the measure.
const HELD_WARM: usize = 16;

/// Runs the lab.
pub fn run(opts: &Options) -> Result<Report> {
    ensure!(opts.rounds > 0, "at least one round");
    ensure!(opts.workers > 0, "at least one worker");
    let chosen: Vec<Workload> = choose(&WORKLOADS, &opts.workloads)?;
    let machine = Machine::detect();
    let started_unix = unix_now();
    let binaries = [
        opts.tern.clone(),
        opts.peers.join("peer-ws-tungstenite"),
        opts.peers.join("peer-ws-fastwebsockets"),
    ];
    let mut servers = Vec::new();
    for (name, binary) in SERVERS.iter().zip(&binaries) {
        ensure!(
            binary.exists(),
            "{} not found: build Tern's with `cargo build --release -p example-websocket`, \
             the peers with `cargo build --release` in bench/peers",
            binary.display()
        );
        servers.push(ServerInfo {
            name: (*name).to_owned(),
            binary: binary.display().to_string(),
            sha256: sha256(binary)?,
        });
    }
    // The client and the servers (children inherit it) each hold every
    // connection of `held`, plus the ones of the checks.
    raise_open_files(opts.held as u64 + 1024, "`held` needs")?;
    pin_self(&opts.load_cores)?;
    let rt = client_runtime(cores_in(&opts.load_cores))?;
    let mut trials = Vec::new();
    for round in 0..opts.rounds {
        for (i, w) in chosen.iter().enumerate() {
            for j in 0..SERVERS.len() {
                let k = (round + i + j) % SERVERS.len();
                progress(&format!(
                    "ws: round {}/{} {} {} ...",
                    round + 1,
                    opts.rounds,
                    w.name,
                    SERVERS[k]
                ));
                let t = trial(&rt, opts, &servers[k], w.name, round)
                    .with_context(|| format!("round {}, {}, {}", round + 1, w.name, SERVERS[k]))?;
                trials.push(t);
            }
        }
    }
    progress_end();
    let (figures, ratios) = figures(&trials, opts.rounds);
    Ok(Report {
        schema: "tern-bench-ws/1".into(),
        started_unix,
        machine,
        servers,
        rounds: opts.rounds,
        seconds: opts.seconds,
        warmup_s: opts.warmup_s,
        connections: opts.connections,
        large_connections: LARGE_CONNECTIONS,
        held: opts.held,
        workers: opts.workers,
        server_cores: opts.server_cores.clone(),
        load_cores: opts.load_cores.clone(),
        quick: opts.quick,
        workloads: chosen
            .iter()
            .map(|w| (w.name.to_owned(), w.description.to_owned()))
            .collect(),
        trials,
        figures,
        ratios,
    })
}

/// What each server is given: the same worker count, and for Tern the
/// limits the peers have built in (and room for `held`'s connections
/// above its default of 10,000).
fn start(opts: &Options, server: &ServerInfo) -> Result<ServerProcess> {
    let workers = opts.workers.to_string();
    let max = MAX_MESSAGE.to_string();
    let connections = (opts.held + 1024).max(10_000).to_string();
    let mut env = vec![("TERN_WORKERS", workers.as_str())];
    if server.name == "tern" {
        env.extend([
            ("WEBSOCKET_MAX_MESSAGE", max.as_str()),
            ("WEBSOCKET_MAX_FRAME", max.as_str()),
            ("TERN_MAX_CONNECTIONS", connections.as_str()),
        ]);
    }
    ServerProcess::start_with(
        Path::new(&server.binary),
        &[],
        &opts.server_cores,
        "TERN_ADDR",
        &env,
    )
}

fn trial(
    rt: &Runtime,
    opts: &Options,
    server: &ServerInfo,
    workload: &str,
    round: usize,
) -> Result<Trial> {
    let process = start(opts, server)?;
    let addr = process.addr;
    rt.block_on(check(addr))
        .with_context(|| format!("{} answered wrongly", server.name))?;
    let mut t = Trial {
        round,
        server: server.name.clone(),
        workload: workload.to_owned(),
        connections: 0,
        messages: 0,
        seconds: 0.0,
        messages_per_s: None,
        mb_per_s: None,
        cpu_us_per_msg: None,
        server_busy: None,
        client_busy: None,
        rss_before_kib: None,
        rss_after_kib: None,
        kib_per_connection: None,
        unclean_closes: 0,
    };
    match workload {
        "echo-small" | "echo-large" => {
            let (connections, len) = if workload == "echo-small" {
                (opts.connections, SMALL_LEN)
            } else {
                (LARGE_CONNECTIONS, LARGE_LEN)
            };
            let reads = if len == LARGE_LEN {
                LARGE_READS
            } else {
                SMALL_READS
            };
            let mut sockets = rt.block_on(open_many(addr, connections, reads))?;
            if opts.warmup_s > 0.0 {
                sockets = rt.block_on(drive(sockets, len, opts.warmup_s))?.0;
            }
            let client = OwnCpu::new();
            let before = process.usage()?;
            let client_before = client.seconds()?;
            let (sockets, messages, seconds) = rt.block_on(drive(sockets, len, opts.seconds))?;
            let after = process.usage()?;
            let client_cpu = client.seconds()? - client_before;
            t.unclean_closes = rt.block_on(close_all(sockets));
            let cpu = after.cpu_s_since(&before);
            t.connections = connections;
            t.messages = messages;
            t.seconds = seconds;
            t.messages_per_s = Some(messages as f64 / seconds);
            t.mb_per_s = Some(messages as f64 * len as f64 / seconds / 1e6);
            t.cpu_us_per_msg = Some(cpu * 1e6 / messages.max(1) as f64);
            t.server_busy = Some(cpu / seconds);
            t.client_busy = Some(client_cpu / seconds);
        }
        "held" => {
            // A few short-lived sockets first, for what a server sets up
            // once (its first handshake, the first upgraded task); more
            // would leave freed memory that the held sockets reuse.
            let warm = rt.block_on(open_many(addr, HELD_WARM, SMALL_READS))?;
            let warm = rt.block_on(echo_once(warm))?;
            rt.block_on(close_all(warm));
            std::thread::sleep(Duration::from_millis(500));
            let before = process.usage()?.rss_kib;
            let started = Instant::now();
            let sockets = rt.block_on(open_many(addr, opts.held, SMALL_READS))?;
            let sockets = rt.block_on(echo_once(sockets))?;
            t.seconds = started.elapsed().as_secs_f64();
            std::thread::sleep(Duration::from_millis(500));
            let after = process.usage()?.rss_kib;
            t.unclean_closes = rt.block_on(close_all(sockets));
            t.connections = opts.held;
            t.rss_before_kib = Some(before);
            t.rss_after_kib = Some(after);
            t.kib_per_connection =
                Some(after.saturating_sub(before) as f64 / opts.held.max(1) as f64);
        }
        other => bail!("unknown workload {other}"),
    }
    process.stop()?;
    Ok(t)
}
