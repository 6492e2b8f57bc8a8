//! The soak test (`tern-bench soak`): two showcase processes behind nginx
//! on one PostgreSQL and one Redis, under mixed traffic at bounded rates
//! for a set time, watched for errors, leaks and counts that disagree.
//!
//! - **Stack** (`stack.rs`): a fresh schema of `POSTGRES_URL` (dropped
//!   after); two release showcases (`--features redis`) with sessions,
//!   the rate limit and the chat's bus in Redis (database `--redis-db` of
//!   `REDIS_URL`, keys and channel named after the run), `TERN_METRICS=on`
//!   behind `METRICS_TOKEN`, JSON logs and the access log in files; nginx
//!   in front on loopback with `docs/deployment/nginx.conf`'s settings on
//!   plain HTTP and `proxy_next_upstream off`.
//! - **Load**: wrk replaying a table of pages, the contract API (JSON and
//!   CBOR, reads and writes), a logged-in user's notes (cookie and CSRF
//!   token) and logins, each connection waiting between requests
//!   (`http.rs`); WebSockets in the chat room publishing every few seconds
//!   and SSE readers of the room, each counting every message
//!   (`realtime.rs`).
//! - **Watched** every `--sample-every` seconds per process: RSS, file
//!   descriptors and threads from `/proc/<pid>/`, and a scrape of
//!   `/metrics` (`watch.rs`).
//! - **Verdicts**: no error of any kind; after the load (and nginx's idle
//!   upstream connections) `tern_connections_open` back to 0 for every
//!   protocol and the file descriptors within 2 of the start; the
//!   processes' `tern_http_requests_total` grown by what wrk had answered
//!   plus the soak's own requests (and at most the few requests wrk had
//!   in flight when it stopped, which a process may have answered after
//!   wrk stopped reading); RSS grown under 5% from the end of the
//!   warm-up (the first 20%) to the end of the load, judged from 300 s on
//!   (reported below that).

mod http;
mod realtime;
mod stack;
mod watch;

use std::{
    collections::BTreeMap,
    fmt::Write as _,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use anyhow::{ensure, Context, Result};
use serde::Serialize;

use crate::{
    console::{group_thousands, progress, progress_end},
    machine::Machine,
};

pub use http::WrkCounts;
pub use realtime::ChatCounts;
pub use watch::{Sample, Scrape};

/// The soak's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// The showcase's release binary, built with `--features redis`.
    pub showcase: PathBuf,
    /// Seconds of load.
    pub duration_s: u64,
    /// HTTP requests per second wrk aims at, at most.
    pub rate: u32,
    /// wrk's connections.
    pub connections: usize,
    /// WebSockets held in the chat room, each publishing.
    pub sockets: usize,
    /// SSE readers of the chat room.
    pub readers: usize,
    /// Seconds between one socket's publishes.
    pub publish_every_s: f64,
    /// Seconds between readings of each process.
    pub sample_every_s: u64,
    /// The Redis database of the run (of `REDIS_URL`'s server).
    pub redis_db: u32,
    /// Where the run's logs go (a directory per run inside).
    pub logs: PathBuf,
}

/// The share of the run that is warm-up: RSS growth is measured from its
/// end.
const WARM_UP: f64 = 0.2;

/// The RSS growth allowed from the end of the warm-up to the end.
const RSS_GROWTH: f64 = 0.05;

/// Runs at least this long are judged on RSS growth.
const RSS_JUDGED_FROM_S: u64 = 300;

/// File descriptors allowed above the start once the load is gone.
const FDS_SLACK: u64 = 2;

/// How long the connections may take to close after the load.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);

/// One process's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessRow {
    /// `a` or `b`.
    pub name: String,
    /// Its PID.
    pub pid: u32,
    /// Its JSON log.
    pub log: String,
    /// RSS before the load, at the end of the warm-up, at the middle, at
    /// the end of the load and after it (KiB).
    pub rss_start_kib: u64,
    /// At the end of the warm-up.
    pub rss_warm_kib: u64,
    /// At the middle.
    pub rss_middle_kib: u64,
    /// At the end of the load.
    pub rss_end_kib: u64,
    /// After the load, the connections closed.
    pub rss_after_kib: u64,
    /// RSS at the end over RSS at the end of the warm-up, minus one.
    pub rss_growth: f64,
    /// File descriptors before the load and after it.
    pub fds_start: u64,
    /// After the load.
    pub fds_end: u64,
    /// Threads before and after.
    pub threads_start: u64,
    /// After the load.
    pub threads_end: u64,
    /// `tern_connections_open` by protocol after the load (`http1` less
    /// the scrape's own connection).
    pub connections_after: BTreeMap<String, u64>,
    /// Its `tern_http_requests_total` grew by this much.
    pub requests_counted: u64,
    /// Of which `5xx`.
    pub server_errors: u64,
    /// Its access log lines (`tern::access`).
    pub access_lines: u64,
    /// Its log's `ERROR` lines.
    pub log_errors: u64,
    /// Its log's `WARN` lines.
    pub log_warnings: u64,
    /// The first `ERROR` line, if any.
    pub first_log_error: Option<String>,
}

/// One verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// What is judged.
    pub name: String,
    /// Judged (false: reported only).
    pub judged: bool,
    /// Passed (meaningful when judged).
    pub passed: bool,
    /// The figures behind it.
    pub says: String,
}

/// What a soak run found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Format.
    pub schema: String,
    /// When.
    pub started_unix: u64,
    /// Where.
    pub machine: Machine,
    /// `/proc/loadavg` before and after.
    pub load_average: [String; 2],
    /// The settings asked for.
    pub duration_s: u64,
    /// wrk's bound, requests per second.
    pub rate: u32,
    /// wrk's connections.
    pub connections: usize,
    /// Seconds between a socket's publishes.
    pub publish_every_s: f64,
    /// The showcases' settings (secrets left out).
    pub settings: Vec<(String, String)>,
    /// Where the logs are.
    pub logs: String,
    /// What wrk counted.
    pub wrk: WrkCounts,
    /// What the chat clients counted.
    pub chat: ChatCounts,
    /// Requests the soak itself made to the processes after the first
    /// scrape (scrapes, the chat's handshakes), counted by them.
    pub own_requests: u64,
    /// The processes' `tern_http_requests_total` growth, summed.
    pub counted: u64,
    /// nginx's access log lines.
    pub nginx_lines: u64,
    /// Lines outside 1xx-3xx, `499` aside.
    pub nginx_errors: u64,
    /// `499` lines: the client left before the answer. wrk leaves the
    /// requests it has in flight when it stops: up to its sent less
    /// answered are expected, more are errors.
    pub nginx_left: u64,
    /// Per process.
    pub processes: Vec<ProcessRow>,
    /// Every reading.
    pub samples: Vec<Sample>,
    /// The verdicts.
    pub verdicts: Vec<Verdict>,
    /// Failed verdicts and anything else that went wrong.
    pub problems: Vec<String>,
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Runs the soak; the schema is dropped and every process stopped
/// whatever happens.
pub fn run(opts: &Options) -> Result<Report> {
    ensure!(
        opts.showcase.exists(),
        "{} not found: build it with `cargo build --release -p showcase --features redis`",
        opts.showcase.display()
    );
    ensure!(opts.duration_s >= 10, "--duration is 10 s at least");
    ensure!(
        opts.rate > 0 && opts.connections > 0,
        "--rate and --connections above 0"
    );
    ensure!(opts.publish_every_s > 0.0, "--publish-every above 0");
    let redis = std::env::var("REDIS_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .context("REDIS_URL is not set: the soak keeps sessions and the chat's bus in Redis")?;
    stack::nginx_binary()?;
    // The processes run in the run's directory.
    let showcase = opts.showcase.canonicalize()?;
    let database = stack::fresh_schema()?;
    let outcome = soak(
        opts,
        &showcase,
        &database,
        &stack::redis_url(&redis, opts.redis_db),
    );
    let dropped = stack::drop_schema(&database);
    progress_end();
    let mut report = outcome?;
    if let Err(e) = dropped {
        report
            .problems
            .push(format!("the schema was not dropped: {e}"));
    }
    Ok(report)
}

/// A reading of both processes: `/proc` and a scrape each.
fn sample_both(
    showcases: &[stack::Showcase],
    token: &str,
    t_s: f64,
    own: &mut u64,
) -> Result<Vec<Sample>> {
    let mut out = Vec::with_capacity(showcases.len());
    for (i, s) in showcases.iter().enumerate() {
        let (rss_kib, fds, threads) = watch::proc_figures(s.pid())?;
        *own += 1;
        let metrics = watch::scrape(s.addr, token)
            .with_context(|| format!("scraping process {}", name(i)))?;
        out.push(Sample {
            t_s,
            process: i,
            rss_kib,
            fds,
            threads,
            metrics,
        });
    }
    Ok(out)
}

fn name(i: usize) -> &'static str {
    ["a", "b"].get(i).copied().unwrap_or("?")
}

fn soak(opts: &Options, showcase: &Path, database: &str, redis: &str) -> Result<Report> {
    let started_unix = unix_now();
    let load_before = load_average();
    let tag = format!("tern_soak_{started_unix}_{}", std::process::id());
    let dir = opts.logs.join(&tag);
    std::fs::create_dir_all(&dir)?;
    let dir = dir.canonicalize()?;
    let shared = stack::Shared {
        database: database.to_owned(),
        redis: redis.to_owned(),
        tag: tag.clone(),
        token: format!("soak-metrics-token-{started_unix}-{}", std::process::id()),
        password: "the soak's admin password".to_owned(),
    };
    progress("starting two showcase processes and nginx ...");
    let showcases = vec![
        stack::Showcase::start(showcase, &shared, &dir, "showcase-a")?,
        stack::Showcase::start(showcase, &shared, &dir, "showcase-b")?,
    ];
    let addrs: Vec<_> = showcases.iter().map(|s| s.addr).collect();
    let pids: Vec<u32> = showcases.iter().map(|s| s.pid()).collect();
    let nginx = stack::Nginx::start(&dir, &addrs)?;

    progress("logging in, checking every request of the table ...");
    let session = http::login(nginx.addr, &shared.password)?;
    let table = http::table(&session, &shared.password)?;
    http::check(nginx.addr, &table)?;
    let delay_ms = (opts.connections as u64 * 1000 / u64::from(opts.rate)).max(1);
    let script = dir.join("soak.lua");
    std::fs::write(&script, http::script(&table, delay_ms))?;

    // From the first scrape on, every request the soak makes itself is
    // counted here, as the processes count it.
    let mut own = 0u64;
    let mut samples = sample_both(&showcases, &shared.token, 0.0, &mut own)?;
    let baseline = samples.clone();

    progress(&format!(
        "opening {} chat sockets and {} event readers ...",
        opts.sockets, opts.readers
    ));
    let chat = realtime::Chat::start(
        nginx.addr,
        opts.sockets,
        opts.readers,
        Duration::from_secs_f64(opts.publish_every_s),
    )?;
    own += (opts.sockets + opts.readers) as u64;

    let started = Instant::now();
    let (nginx_addr, connections, duration) = (nginx.addr, opts.connections, opts.duration_s);
    let script_path = script.clone();
    let wrk =
        std::thread::spawn(move || http::run_wrk(&script_path, nginx_addr, connections, duration));
    let every = Duration::from_secs(opts.sample_every_s.max(1));
    let mut next = every;
    let mut problems = Vec::new();
    while !wrk.is_finished() {
        std::thread::sleep(Duration::from_millis(200));
        let elapsed = started.elapsed();
        if elapsed >= next && elapsed.as_secs() < opts.duration_s {
            progress(&format!(
                "soak: {} s of {} ...",
                elapsed.as_secs(),
                opts.duration_s
            ));
            match sample_both(&showcases, &shared.token, elapsed.as_secs_f64(), &mut own) {
                Ok(s) => samples.extend(s),
                Err(e) => problems.push(format!(
                    "a reading at {} s failed: {e:#}",
                    elapsed.as_secs()
                )),
            }
            next += every;
        }
    }
    let wrk = wrk
        .join()
        .map_err(|_| anyhow::anyhow!("wrk's thread panicked"))??;
    let end_of_load = sample_both(
        &showcases,
        &shared.token,
        started.elapsed().as_secs_f64(),
        &mut own,
    )?;
    samples.extend(end_of_load.iter().cloned());

    progress("closing the chat, waiting for the connections to close ...");
    let chat = chat.stop(Duration::from_secs(3));
    // nginx's idle upstream connections close after UPSTREAM_IDLE.
    std::thread::sleep(stack::UPSTREAM_IDLE + Duration::from_secs(1));
    let drain_started = Instant::now();
    let last = loop {
        let reading = sample_both(
            &showcases,
            &shared.token,
            started.elapsed().as_secs_f64(),
            &mut own,
        )?;
        let open: u64 = reading
            .iter()
            .map(|s| open_after(&s.metrics).values().sum::<u64>())
            .sum();
        if open == 0 || drain_started.elapsed() >= DRAIN_TIMEOUT {
            break reading;
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    samples.extend(last.iter().cloned());
    // The last scrapes are not counted in what they read.
    let own_requests = own - last.len() as u64;
    let load_after = load_average();
    if let Err(e) = stack::forget_keys(redis, &tag) {
        problems.push(format!(
            "the run's sessions were left in Redis (they expire within the hour): {e:#}"
        ));
    }

    let (nginx_lines, nginx_errors, nginx_left) = nginx.access_counts();
    nginx.stop();
    let mut processes = Vec::new();
    for (i, showcase) in showcases.into_iter().enumerate() {
        let log = showcase.log.clone();
        showcase.stop();
        let rss_at = |share: f64| {
            let at = share * opts.duration_s as f64;
            samples
                .iter()
                .filter(|s| s.process == i && s.t_s >= at)
                .map(|s| s.rss_kib)
                .next()
                .unwrap_or(0)
        };
        let (first, end, after) = (&baseline[i], &end_of_load[i], &last[i]);
        let warm = rss_at(WARM_UP);
        let requests_counted = after
            .metrics
            .requests
            .saturating_sub(first.metrics.requests);
        let class = |s: &Sample, c: &str| s.metrics.requests_by_status.get(c).copied().unwrap_or(0);
        let lines = LogLines::read(&log);
        processes.push(ProcessRow {
            name: name(i).to_owned(),
            pid: pids[i],
            log: log.display().to_string(),
            rss_start_kib: first.rss_kib,
            rss_warm_kib: warm,
            rss_middle_kib: rss_at(0.5),
            rss_end_kib: end.rss_kib,
            rss_after_kib: after.rss_kib,
            rss_growth: if warm == 0 {
                0.0
            } else {
                end.rss_kib as f64 / warm as f64 - 1.0
            },
            fds_start: first.fds,
            fds_end: after.fds,
            threads_start: first.threads,
            threads_end: after.threads,
            connections_after: open_after(&after.metrics),
            requests_counted,
            server_errors: class(after, "5xx").saturating_sub(class(first, "5xx")),
            access_lines: lines.access,
            log_errors: lines.errors,
            log_warnings: lines.warnings,
            first_log_error: lines.first_error,
        });
    }
    let counted = processes.iter().map(|p| p.requests_counted).sum();
    let mut report = Report {
        schema: "tern-bench-soak/1".into(),
        started_unix,
        machine: Machine::detect(),
        load_average: [load_before, load_after],
        duration_s: opts.duration_s,
        rate: opts.rate,
        connections: opts.connections,
        publish_every_s: opts.publish_every_s,
        settings: shared.public_envs(),
        logs: dir.display().to_string(),
        wrk,
        chat,
        own_requests,
        counted,
        nginx_lines,
        nginx_errors,
        nginx_left,
        processes,
        samples,
        verdicts: Vec::new(),
        problems,
    };
    report.verdicts = verdicts(&report);
    let failed: Vec<String> = report
        .verdicts
        .iter()
        .filter(|v| v.judged && !v.passed)
        .map(|v| format!("{}: {}", v.name, v.says))
        .collect();
    report.problems.extend(failed);
    Ok(report)
}

/// `tern_connections_open` by protocol, `http1` less the scrape's own
/// connection.
fn open_after(s: &Scrape) -> BTreeMap<String, u64> {
    s.connections_open
        .iter()
        .map(|(p, &n)| {
            let n = if p == "http1" { n.saturating_sub(1) } else { n };
            (p.clone(), n)
        })
        .collect()
}

/// What a process's JSON log holds: access lines (`tern::access`),
/// `ERROR` and `WARN` lines.
#[derive(Default)]
struct LogLines {
    access: u64,
    errors: u64,
    warnings: u64,
    first_error: Option<String>,
}

impl LogLines {
    fn read(log: &Path) -> LogLines {
        let mut out = LogLines::default();
        let Ok(text) = std::fs::read_to_string(log) else {
            return out;
        };
        for line in text.lines() {
            if line.contains("\"target\":\"tern::access\"") {
                out.access += 1;
            } else if line.contains("\"level\":\"ERROR\"") {
                out.errors += 1;
                if out.first_error.is_none() {
                    out.first_error = Some(line.chars().take(400).collect());
                }
            } else if line.contains("\"level\":\"WARN\"") {
                out.warnings += 1;
            }
        }
        out
    }
}

fn verdicts(r: &Report) -> Vec<Verdict> {
    let mut out = Vec::new();
    let server_errors: u64 = r.processes.iter().map(|p| p.server_errors).sum();
    let in_flight = r.wrk.sent.saturating_sub(r.wrk.answered);
    let left_early = r.nginx_left.saturating_sub(in_flight);
    let errors = r.wrk.errors() + r.chat.errors() + server_errors + r.nginx_errors + left_early;
    let mut says = format!(
        "{errors}: wrk {} (socket {}, status {}), chat {}, 5xx counted {server_errors}, \
         nginx {} (and {} clients gone, {in_flight} in flight as wrk stopped)",
        r.wrk.errors(),
        r.wrk.connect_errors + r.wrk.read_errors + r.wrk.write_errors + r.wrk.timeouts,
        r.wrk.non_2xx_3xx.max(r.wrk.bad),
        r.chat.errors(),
        r.nginx_errors,
        r.nginx_left
    );
    if let Some(first) = r.chat.failures.first() {
        let _ = write!(says, "; first chat failure: {first}");
    }
    out.push(Verdict {
        name: "no errors".into(),
        judged: true,
        passed: errors == 0,
        says,
    });
    let open: Vec<String> = r
        .processes
        .iter()
        .flat_map(|p| {
            p.connections_after
                .iter()
                .filter(|(_, &n)| n > 0)
                .map(move |(proto, n)| format!("{} {proto} {n}", p.name))
        })
        .collect();
    out.push(Verdict {
        name: "connections closed".into(),
        judged: true,
        passed: open.is_empty(),
        says: if open.is_empty() {
            "tern_connections_open is 0 for every protocol on both processes".into()
        } else {
            format!("still open: {}", open.join(", "))
        },
    });
    let fds: Vec<String> = r
        .processes
        .iter()
        .map(|p| format!("{} {} -> {}", p.name, p.fds_start, p.fds_end))
        .collect();
    out.push(Verdict {
        name: "file descriptors".into(),
        judged: true,
        passed: r
            .processes
            .iter()
            .all(|p| p.fds_end <= p.fds_start + FDS_SLACK),
        says: format!("{} (allowed: start + {FDS_SLACK})", fds.join(", ")),
    });
    let low = r.wrk.answered + r.own_requests;
    let high = r.wrk.sent.max(r.wrk.answered) + r.own_requests;
    out.push(Verdict {
        name: "counts agree".into(),
        judged: true,
        passed: (low..=high).contains(&r.counted),
        says: format!(
            "the processes counted {}; wrk had {} answered ({} sent), the soak made {} itself: {}",
            r.counted,
            r.wrk.answered,
            r.wrk.sent,
            r.own_requests,
            if low == high {
                format!("{low} expected")
            } else {
                // Requests wrk sent as it stopped may have been answered
                // without wrk reading the answer.
                format!("{low} to {high} expected")
            }
        ),
    });
    // A failure the server handled without the client seeing it (the
    // rate limit's Redis slow under load, the request let through) is a
    // log line, not an error of the load: reported, not judged.
    let logged: Vec<String> = r
        .processes
        .iter()
        .map(|p| format!("{} {} ERROR, {} WARN", p.name, p.log_errors, p.log_warnings))
        .collect();
    let first = r
        .processes
        .iter()
        .find_map(|p| p.first_log_error.as_deref())
        .map(|l| format!("; the first: {l}"))
        .unwrap_or_default();
    out.push(Verdict {
        name: "log lines".into(),
        judged: false,
        passed: r.processes.iter().all(|p| p.log_errors == 0),
        says: format!("{}{first}", logged.join(", ")),
    });
    let growth: Vec<String> = r
        .processes
        .iter()
        .map(|p| format!("{} {:+.1}%", p.name, p.rss_growth * 100.0))
        .collect();
    let judged = r.duration_s >= RSS_JUDGED_FROM_S;
    out.push(Verdict {
        name: "RSS flat".into(),
        judged,
        passed: r.processes.iter().all(|p| p.rss_growth < RSS_GROWTH),
        says: format!(
            "from the end of the warm-up ({:.0}%) to the end: {} (allowed: under {:.0}%{})",
            WARM_UP * 100.0,
            growth.join(", "),
            RSS_GROWTH * 100.0,
            if judged {
                String::new()
            } else {
                format!("; reported, not judged, under {RSS_JUDGED_FROM_S} s")
            }
        ),
    });
    out
}

fn n(v: u64) -> String {
    group_thousands(&v.to_string(), false)
}

/// The soak's table and verdicts, for the terminal.
pub fn terminal(r: &Report) -> String {
    let mut s = String::new();
    let secs = r.wrk.duration_us as f64 / 1e6;
    let _ = writeln!(
        s,
        "soak: {} s of load, 2 showcase processes behind nginx (PostgreSQL, Redis); load average {} before, {} after",
        r.duration_s, r.load_average[0], r.load_average[1]
    );
    let _ = writeln!(
        s,
        "http: {} requests answered in {secs:.0} s ({:.0}/s, bound {}/s on {} connections), {} sent; p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        n(r.wrk.answered),
        r.wrk.answered as f64 / secs.max(1.0),
        r.rate,
        r.connections,
        n(r.wrk.sent),
        r.wrk.p50_us as f64 / 1e3,
        r.wrk.p99_us as f64 / 1e3,
        r.wrk.max_us as f64 / 1e3,
    );
    let c = &r.chat;
    let _ = writeln!(
        s,
        "chat: {} sockets publishing every {} s and {} SSE readers; {} published, {} of {} deliveries to the sockets, {} of {} to the readers",
        c.sockets,
        r.publish_every_s,
        c.readers,
        n(c.published),
        n(c.socket_received),
        n(c.socket_expected),
        n(c.reader_received),
        n(c.reader_expected),
    );
    let _ = writeln!(
        s,
        "requests counted by the processes: {} (wrk {} + the soak's own {}); nginx logged {}",
        n(r.counted),
        n(r.wrk.answered),
        n(r.own_requests),
        n(r.nginx_lines)
    );
    let _ = writeln!(
        s,
        "\n| process | requests | 5xx | RSS start | warm-up end | middle | end | growth | fds start | fds end | threads | connections after | log ERROR/WARN |"
    );
    let _ = writeln!(
        s,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
    );
    for p in &r.processes {
        let after: Vec<String> = p
            .connections_after
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} MiB | {} MiB | {} MiB | {} MiB | {:+.1}% | {} | {} | {} -> {} | {} | {}/{} |",
            p.name,
            n(p.requests_counted),
            p.server_errors,
            mib(p.rss_start_kib),
            mib(p.rss_warm_kib),
            mib(p.rss_middle_kib),
            mib(p.rss_end_kib),
            p.rss_growth * 100.0,
            p.fds_start,
            p.fds_end,
            p.threads_start,
            p.threads_end,
            after.join(", "),
            p.log_errors,
            p.log_warnings
        );
    }
    let _ = writeln!(s);
    for v in &r.verdicts {
        let mark = match (v.judged, v.passed) {
            (false, _) => "info",
            (true, true) => "ok",
            (true, false) => "FAIL",
        };
        let _ = writeln!(s, "{mark:>4}  {}: {}", v.name, v.says);
    }
    let _ = writeln!(s, "logs: {}", r.logs);
    s
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scrapes_own_connection_is_not_left_open() {
        let mut s = Scrape::default();
        for (p, n) in [("http1", 1), ("http2", 0), ("websocket", 0), ("sse", 2)] {
            s.connections_open.insert(p.to_owned(), n);
        }
        let after = open_after(&s);
        assert_eq!(after.get("http1"), Some(&0));
        assert_eq!(after.get("sse"), Some(&2));
    }

    #[test]
    fn log_lines_are_told_apart() {
        let log = std::env::temp_dir().join(format!("tern-soak-log-{}.log", std::process::id()));
        let text = r#"{"level":"INFO","message":"request","target":"tern::access"}
{"level":"INFO","message":"request","target":"tern::access"}
{"level":"ERROR","message":"the rate limit's Redis is unreachable","target":"tern_auth::rate_limit"}
{"level":"WARN","message":"slow","target":"tern"}
{"level":"INFO","message":"tern listening","target":"tern"}
"#;
        assert!(std::fs::write(&log, text).is_ok());
        let lines = LogLines::read(&log);
        let _ = std::fs::remove_file(&log);
        assert_eq!((lines.access, lines.errors, lines.warnings), (2, 1, 1));
        assert!(lines
            .first_error
            .is_some_and(|l| l.contains("rate limit's Redis")));
    }
}
