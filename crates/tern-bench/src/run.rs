//! Layer 3: real sockets. Each server is a separate process pinned to its
//! cores, the load generator another pinned to the others; every server's
//! answers are checked first, then rounds of trials rotate the server
//! order.

use std::{
    net::TcpStream,
    path::{Path, PathBuf},
    time::Duration,
};

use anyhow::{bail, Context, Result};
use tern_bench_workload as w;

use crate::{
    client::Client,
    console::{progress, progress_end},
    evidence::{Evidence, IdleConnections, Row, ServerInfo, Settings, Trial, WorkloadInfo},
    machine::{unix_now, Machine},
    process::{sha256, ServerProcess},
    stats::{median, summarize},
    wrk::{self, TableRequest},
};

/// Every server the lab knows; `tern` first.
pub const SERVERS: &[&str] = &["tern", "hyper", "axum", "actix"];

/// How a workload drives its server.
#[derive(Debug, Clone)]
pub enum Drive {
    /// wrk replaying a table.
    Wrk {
        /// The requests, replayed in order.
        table: Vec<TableRequest>,
        /// Requests per write (1: no pipelining).
        pipeline: usize,
    },
    /// h2load on one path (HTTP/2 by prior knowledge).
    H2load {
        /// The path.
        path: String,
    },
}

/// A workload: its name, description and driver.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Name in evidence files.
    pub name: String,
    /// What it requests.
    pub description: String,
    /// How it is driven.
    pub drive: Drive,
}

fn get(path: &str, headers: &[(&str, &str)]) -> TableRequest {
    TableRequest {
        method: "GET".into(),
        path: path.into(),
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        body: None,
    }
}

/// Every workload, in report order.
pub fn workloads() -> Vec<Workload> {
    let mut out = vec![Workload {
        name: "pipeline".into(),
        description: "GET /plaintext, 16 requests pipelined per write".into(),
        drive: Drive::Wrk {
            table: vec![get("/plaintext", &[])],
            pipeline: 16,
        },
    }];
    for f in w::fixed() {
        let (table, description) = if f.compressible {
            (
                vec![
                    get(&f.path, &[("Accept-Encoding", "gzip")]),
                    get(&f.path, &[("Accept-Encoding", "br")]),
                ],
                format!(
                    "GET {} ({} bytes), gzip and brotli alternately",
                    f.path,
                    f.body.len()
                ),
            )
        } else {
            (
                vec![get(&f.path, &[])],
                format!(
                    "GET {} ({} bytes of {})",
                    f.path,
                    f.body.len(),
                    f.content_type
                ),
            )
        };
        out.push(Workload {
            name: f.name.to_owned(),
            description,
            drive: Drive::Wrk { table, pipeline: 1 },
        });
    }
    out.push(Workload {
        name: "h2".into(),
        description: "GET /plaintext over HTTP/2 (h2c, prior knowledge), 10 streams per connection"
            .into(),
        drive: Drive::H2load {
            path: "/plaintext".into(),
        },
    });
    let table = w::mixed_requests()
        .into_iter()
        .map(|r| TableRequest {
            method: r.method.as_str().to_owned(),
            path: r.path,
            headers: if r.body.is_some() {
                vec![("Content-Type".into(), "application/json".into())]
            } else {
                vec![]
            },
            body: r.body,
        })
        .collect();
    out.push(Workload {
        name: "mixed".into(),
        description: format!(
            "{} requests over {} routes (shapes and methods as in bench/workload), JSON bodies decoded into typed structs",
            w::MIXED_REQUESTS,
            w::MIXED_ROUTES
        ),
        drive: Drive::Wrk { table, pipeline: 1 },
    });
    out
}

fn fnv(bytes: &[u8], mut h: u64) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn table_hash(table: &[TableRequest]) -> u64 {
    table.iter().fold(0xcbf29ce484222325, |h, r| {
        let h = fnv(r.method.as_bytes(), h);
        let h = fnv(r.path.as_bytes(), h);
        fnv(r.body.as_deref().unwrap_or_default(), h)
    })
}

/// Whether `server` can serve `workload` (actix-web has no h2c).
pub fn supports(server: &str, workload: &str) -> bool {
    !(server == "actix" && workload == "h2")
}

/// Checks every answer of `server` byte for byte; an error names the
/// first wrong one.
pub fn check(server: &ServerProcess) -> Result<()> {
    let mut c = Client::connect(server.addr)?;
    for f in w::fixed() {
        let res = c.send("GET", &f.path, &[], None)?;
        if res.status != 200
            || res.body != *f.body
            || res.header("content-type") != Some(f.content_type)
        {
            bail!(
                "GET {}: got {} {:?} with {} bytes, expected 200 {} with {} bytes",
                f.path,
                res.status,
                res.header("content-type"),
                res.body.len(),
                f.content_type,
                f.body.len()
            );
        }
        if f.compressible {
            for coding in ["gzip", "br"] {
                let res = c.send("GET", &f.path, &[("Accept-Encoding", coding)], None)?;
                if res.status != 200
                    || res.header("content-encoding") != Some(coding)
                    || res.body.len() >= f.body.len()
                {
                    bail!(
                        "GET {} with Accept-Encoding {coding}: got {} {:?}, {} bytes",
                        f.path,
                        res.status,
                        res.header("content-encoding"),
                        res.body.len()
                    );
                }
            }
        }
    }
    for (i, r) in w::mixed_requests().iter().enumerate() {
        let headers: &[(&str, &str)] = if r.body.is_some() {
            &[("Content-Type", "application/json")]
        } else {
            &[]
        };
        let res = c.send(r.method.as_str(), &r.path, headers, r.body.as_deref())?;
        if res.status != r.status || res.body != r.expected {
            bail!(
                "mixed request #{i} {} {}: got {} {:?}, expected {} {:?}",
                r.method,
                r.path,
                res.status,
                String::from_utf8_lossy(&res.body),
                r.status,
                String::from_utf8_lossy(&r.expected)
            );
        }
    }
    Ok(())
}

/// Options of a run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Repository root.
    pub root: PathBuf,
    /// Servers to run.
    pub servers: Vec<String>,
    /// Workloads to run (names).
    pub workloads: Vec<String>,
    /// The run's settings.
    pub settings: Settings,
    /// Idle connections for the memory stage (0 skips it).
    pub idle_connections: usize,
    /// Cargo profile of the peers (`release`, or `dev` in quick mode).
    pub profile: String,
    /// Where evidence and reports go.
    pub out_dir: PathBuf,
}

fn binary(root: &Path, server: &str, profile: &str) -> PathBuf {
    let dir = if profile == "dev" { "debug" } else { profile };
    root.join("bench/peers/target")
        .join(dir)
        .join(format!("peer-{server}"))
}

/// Builds the peers workspace.
pub fn build_peers(root: &Path, profile: &str) -> Result<()> {
    let status = std::process::Command::new("cargo")
        .args(["build", "--locked", "--profile", profile, "--manifest-path"])
        .arg(root.join("bench/peers/Cargo.toml"))
        .args(["--bins"])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("building bench/peers failed");
    }
    Ok(())
}

/// `[#####.....] 12/40  ETA 3m20s`: a progress bar for the trial loop.
fn bar(done: usize, total: usize, started: std::time::Instant) -> String {
    const WIDTH: usize = 24;
    let total = total.max(1);
    let filled = done * WIDTH / total;
    let eta = if done > 1 {
        let per = started.elapsed().as_secs_f64() / (done - 1) as f64;
        let left = (per * (total - done + 1) as f64) as u64;
        format!("  ETA {}m{:02}s", left / 60, left % 60)
    } else {
        String::new()
    };
    format!(
        "[{}{}] {done}/{total}{eta}",
        "#".repeat(filled),
        ".".repeat(WIDTH - filled)
    )
}

fn idle_rss(server: &ServerProcess, n: usize) -> Result<(u64, u64)> {
    let before = server.usage()?.rss_kib;
    let mut conns = Vec::with_capacity(n);
    for _ in 0..n {
        let mut c = Client::connect(server.addr)?;
        let res = c.send("GET", "/plaintext", &[], None)?;
        if res.status != 200 {
            bail!(
                "idle-connection stage: GET /plaintext answered {}",
                res.status
            );
        }
        conns.push(c);
    }
    std::thread::sleep(Duration::from_millis(500));
    let after = server.usage()?.rss_kib;
    drop(conns);
    Ok((before, after))
}

/// Runs the whole lab and returns its evidence.
pub fn run(opts: &Options) -> Result<Evidence> {
    // The commit and dirty flag are read now, when the binaries are about
    // to be checked, not at the end: edits made while a long run goes on do
    // not change what was measured.
    let machine = Machine::detect();
    let started_unix = unix_now();
    let all = workloads();
    let chosen: Vec<&Workload> = all
        .iter()
        .filter(|w| opts.workloads.iter().any(|n| n == &w.name))
        .collect();
    if chosen.is_empty() {
        bail!(
            "no workload selected; they are: {}",
            all.iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut servers = Vec::new();
    for s in &opts.servers {
        let bin = binary(&opts.root, s, &opts.profile);
        servers.push(ServerInfo {
            name: s.clone(),
            sha256: sha256(&bin)?,
            binary: bin.display().to_string(),
        });
    }
    let env: &[(&str, &str)] = &[];
    // Correctness first: a wrong body fails the run before any figure.
    for s in &servers {
        progress(&format!("checking {} ...", s.name));
        let server = ServerProcess::start(Path::new(&s.binary), &opts.settings.server_cores, env)?;
        check(&server).with_context(|| format!("{} answered wrongly", s.name))?;
        server.stop()?;
    }
    let scripts = tempdir()?;
    let mut script_paths = Vec::new();
    for w in &chosen {
        if let Drive::Wrk { table, pipeline } = &w.drive {
            let path = scripts.join(format!("{}.lua", w.name));
            std::fs::write(&path, wrk::script(table, *pipeline))?;
            script_paths.push((w.name.clone(), path));
        }
    }
    let mut trials = Vec::new();
    let total =
        opts.settings.rounds * chosen.len() * opts.settings.connections.len() * servers.len();
    let mut done = 0;
    let loop_started = std::time::Instant::now();
    for round in 0..opts.settings.rounds {
        let mut order: Vec<&ServerInfo> = servers.iter().collect();
        let len = order.len();
        order.rotate_left(round % len.max(1));
        for w in &chosen {
            for &conns in &opts.settings.connections {
                for s in &order {
                    done += 1;
                    if !supports(&s.name, &w.name) {
                        continue;
                    }
                    progress(&format!(
                        "{} round {round} {} {} c={conns}",
                        bar(done, total, loop_started),
                        w.name,
                        s.name
                    ));
                    let server = ServerProcess::start(
                        Path::new(&s.binary),
                        &opts.settings.server_cores,
                        env,
                    )?;
                    let load = |seconds: f64| -> Result<wrk::LoadResult> {
                        match &w.drive {
                            Drive::Wrk { .. } => {
                                let script = &script_paths
                                    .iter()
                                    .find(|(n, _)| *n == w.name)
                                    .context("script")?
                                    .1;
                                wrk::run_wrk(
                                    script,
                                    server.addr,
                                    &opts.settings.load_cores,
                                    conns,
                                    seconds,
                                )
                            }
                            Drive::H2load { path } => wrk::run_h2load(
                                path,
                                server.addr,
                                &opts.settings.load_cores,
                                conns,
                                seconds,
                            ),
                        }
                    };
                    if opts.settings.warmup_s > 0.0 {
                        load(opts.settings.warmup_s)?;
                    }
                    let before = server.usage()?;
                    let result = load(opts.settings.duration_s)?;
                    let after = server.usage()?;
                    server.stop()?;
                    let n = result.requests.max(1) as f64;
                    trials.push(Trial {
                        round,
                        server: s.name.clone(),
                        workload: w.name.clone(),
                        connections: conns,
                        rps: result.rps(),
                        cpu_user_us_per_req: (after.user_s - before.user_s) * 1e6 / n,
                        cpu_system_us_per_req: (after.system_s - before.system_s) * 1e6 / n,
                        peak_rss_kib: after.peak_rss_kib,
                        load: result,
                    });
                }
            }
        }
    }
    let mut idle = Vec::new();
    if opts.idle_connections > 0 {
        let _ = rlimit::increase_nofile_limit(opts.idle_connections as u64 + 1024);
        for s in &servers {
            progress(&format!(
                "idle connections: {} x {}",
                s.name, opts.idle_connections
            ));
            let server =
                ServerProcess::start(Path::new(&s.binary), &opts.settings.server_cores, env)?;
            let (before, after) = idle_rss(&server, opts.idle_connections)?;
            server.stop()?;
            idle.push(IdleConnections {
                server: s.name.clone(),
                connections: opts.idle_connections,
                rss_before_kib: before,
                rss_after_kib: after,
                per_connection_kib: after.saturating_sub(before) as f64
                    / opts.idle_connections as f64,
            });
        }
    }
    progress_end();
    let summary = summarize_trials(&trials, &servers, &chosen, &opts.settings.connections);
    let workloads = chosen
        .iter()
        .map(|w| match &w.drive {
            Drive::Wrk { table, .. } => WorkloadInfo {
                name: w.name.clone(),
                description: w.description.clone(),
                table_len: table.len(),
                // The mixed table's canonical hash is the workload crate's.
                table_hash: if w.name == "mixed" {
                    format!("{:016x}", w::mixed_table_hash())
                } else {
                    format!("{:016x}", table_hash(table))
                },
            },
            Drive::H2load { path } => WorkloadInfo {
                name: w.name.clone(),
                description: w.description.clone(),
                table_len: 1,
                table_hash: format!("{:016x}", fnv(path.as_bytes(), 0xcbf29ce484222325)),
            },
        })
        .collect();
    Ok(Evidence {
        schema: "tern-bench/1".into(),
        started_unix,
        machine,
        settings: opts.settings.clone(),
        servers,
        workloads,
        trials,
        idle_connections: idle,
        summary,
        limitations: limitations(&opts.settings),
    })
}

fn summarize_trials(
    trials: &[Trial],
    servers: &[ServerInfo],
    workloads: &[&Workload],
    conns: &[usize],
) -> Vec<Row> {
    let mut rows = Vec::new();
    for w in workloads {
        for &c in conns {
            let mut block = Vec::new();
            for s in servers {
                let t: Vec<&Trial> = trials
                    .iter()
                    .filter(|t| t.server == s.name && t.workload == w.name && t.connections == c)
                    .collect();
                if t.is_empty() {
                    continue;
                }
                let rps: Vec<f64> = t.iter().map(|t| t.rps).collect();
                let split = rps.len().min(3);
                block.push(Row {
                    server: s.name.clone(),
                    workload: w.name.clone(),
                    connections: c,
                    rps: summarize(&rps).into(),
                    p99_us: summarize(&t.iter().map(|t| t.load.p99_us).collect::<Vec<_>>()).into(),
                    cpu_us_per_req: summarize(
                        &t.iter()
                            .map(|t| t.cpu_user_us_per_req + t.cpu_system_us_per_req)
                            .collect::<Vec<_>>(),
                    )
                    .into(),
                    cpu_user_us_per_req: median(
                        &t.iter().map(|t| t.cpu_user_us_per_req).collect::<Vec<_>>(),
                    ),
                    peak_rss_kib: t.iter().map(|t| t.peak_rss_kib).max().unwrap_or(0),
                    first3_vs_rest_rps: (
                        median(&rps[..split]),
                        if rps.len() > split {
                            median(&rps[split..])
                        } else {
                            f64::NAN
                        },
                    ),
                    errors: t
                        .iter()
                        .map(|t| t.load.socket_errors() + t.load.non_2xx)
                        .sum(),
                    tern_ratio: None,
                });
            }
            let tern = block
                .iter()
                .find(|r| r.server == "tern")
                .map(|r| r.rps.median);
            for r in &mut block {
                r.tern_ratio = tern.map(|t| t / r.rps.median);
            }
            rows.extend(block);
        }
    }
    // JSON has no NaN: a drift check without "rest" trials reads as 0.
    for r in &mut rows {
        if r.first3_vs_rest_rps.1.is_nan() {
            r.first3_vs_rest_rps.1 = 0.0;
        }
    }
    rows
}

fn limitations(s: &Settings) -> Vec<String> {
    let mut l = vec![
        "One machine, loopback only: no network, no NIC, no TLS; figures are not comparable across machines.".to_owned(),
        format!("The server runs on core(s) {} and the load generator on {}: at the top rates wrk on one core can be the bottleneck, which is why server CPU time per request is reported.", s.server_cores, s.load_cores),
        "CPU time comes from /proc at the kernel's tick (usually 10 ms): per-request CPU is an average over each whole trial.".to_owned(),
        "h2load reports no latency percentiles: for h2 only the mean and maximum are recorded (p50/p90/p99 are 0).".to_owned(),
        "actix-web serves no cleartext HTTP/2 (h2c): it has no h2 figures.".to_owned(),
        "Compression results include each framework's default compression levels, which differ.".to_owned(),
        "Router lookups (criterion, crates/tern-router) and in-process overhead (tern-bench inprocess) are separate layers and are not requests per second.".to_owned(),
    ];
    if s.quick {
        l.insert(0, "QUICK MODE: one short trial per server and workload, to check correctness; the figures mean nothing.".to_owned());
    }
    l
}

fn tempdir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("tern-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Whether something listens at `addr` (used by tests). A connection to
/// itself (a free port picked as the connect's own source port, TCP's
/// simultaneous open) is not something listening.
pub fn listening(addr: std::net::SocketAddr) -> bool {
    listening_within(addr, Duration::from_millis(200))
}

/// [`listening`], waiting at most `timeout` for the connection.
pub fn listening_within(addr: std::net::SocketAddr, timeout: Duration) -> bool {
    TcpStream::connect_timeout(&addr, timeout).is_ok_and(|s| s.local_addr().ok() != Some(addr))
}
