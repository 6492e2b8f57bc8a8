//! The database workloads: Tern (`peer-data-tern`: tern-data models,
//! tern-auth sessions) against axum + sqlx (`peer-data-axum`: the same
//! queries, the same session and CSRF checks by hand), on SQLite and on
//! PostgreSQL, side by side in each round.
//!
//! Each database is made for the run and dropped after it (a SQLite file
//! in a scratch directory; a PostgreSQL schema at `POSTGRES_URL`),
//! seeded with 200 rows and one user whose session both servers accept
//! (the same signed cookie: both derive the cookie key from the same
//! `SECRET_KEY`). Every workload is checked on both servers, answer for
//! answer, before and after the load; an answer outside 2xx fails the
//! run.

use std::path::PathBuf;

use anyhow::{bail, ensure, Context, Result};
use serde::Serialize;
use tern_data::{testing::fresh, with_pool, Backend, Database, Migrations};

use crate::{
    client::Client,
    console::{progress, progress_end},
    machine::{unix_now, Machine},
    process::ServerProcess,
    stats::{summarize, Summary},
    wrk::{self, TableRequest},
};

/// The bench's table: 200 rows.
static MIGRATIONS: Migrations = tern_data::migrations!("data-migrations");

/// Rows seeded.
pub const ROWS: i64 = 200;

const SECRET: &str = "the-bench-secret-key-not-for-production-0123456789";
const PASSWORD: &str = "the bench user's password";

/// A workload: a name, what it measures, its requests.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// `get`, `list`, `session`, `plain`.
    pub name: &'static str,
    /// What it measures.
    pub description: &'static str,
}

/// The workloads, in table order.
pub const WORKLOADS: [Workload; 4] = [
    Workload {
        name: "get",
        description: "GET /rows/{id}: one row by primary key (ids 1 to 200 in turn), JSON",
    },
    Workload {
        name: "list",
        description: "GET /rows?page=N: 20 of the 200 rows with the total count (pages 1 to 10 in turn), JSON",
    },
    Workload {
        name: "session",
        description: "POST /ping: signed session cookie, session and user looked up, CSRF token checked, the user as JSON",
    },
    Workload {
        name: "plain",
        description: "POST /plain: the same answer without a session (Tern's CSRF check runs and finds no cookie)",
    },
];

/// The servers compared.
pub const SERVERS: [&str; 2] = ["tern", "axum"];

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where `peer-data-tern` and `peer-data-axum` are.
    pub peers: PathBuf,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per server and workload.
    pub warmup_s: f64,
    /// wrk connections.
    pub connections: usize,
    /// `taskset` cores of the servers.
    pub server_cores: String,
    /// `taskset` cores of wrk.
    pub load_cores: String,
    /// Quick mode (CI): answers checked, figures not meaningful.
    pub quick: bool,
}

/// One trial.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// Requests per second.
    pub rps: f64,
    /// Server CPU (user + system, every thread) per request, microseconds.
    pub cpu_us_per_req: f64,
    /// wrk's p99 latency, microseconds.
    pub p99_us: f64,
}

/// One server on one workload.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// `tern` or `axum`.
    pub server: String,
    /// The workload.
    pub workload: String,
    /// Every trial, in round order.
    pub trials: Vec<Trial>,
    /// Requests per second over the rounds.
    pub rps: Summary,
    /// CPU per request over the rounds.
    pub cpu_us_per_req: Summary,
}

/// One database's results.
#[derive(Debug, Clone, Serialize)]
pub struct BackendResult {
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// Every server on every workload.
    pub cells: Vec<Cell>,
    /// Tern's req/s over axum's, per workload: the ratio of medians and
    /// the per-round range.
    pub ratios: Vec<Ratio>,
    /// What Tern's session check adds to a plain request: server CPU per
    /// request, session over plain, minus one (goal: at most 0.15).
    pub session_overhead_cpu: f64,
    /// The same in req/s: plain over session, minus one.
    pub session_overhead_rps: f64,
}

/// A ratio of medians and its spread.
#[derive(Debug, Clone, Serialize)]
pub struct Ratio {
    /// The workload.
    pub workload: String,
    /// Median req/s of Tern over that of axum.
    pub ratio: f64,
    /// Per-round ratios: smallest.
    pub min: f64,
    /// Per-round ratios: largest.
    pub max: f64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Format.
    pub schema: String,
    /// When.
    pub started_unix: u64,
    /// Where.
    pub machine: Machine,
    /// How.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// wrk connections.
    pub connections: usize,
    /// Quick mode.
    pub quick: bool,
    /// The workloads.
    pub workloads: Vec<(String, String)>,
    /// Per database.
    pub backends: Vec<BackendResult>,
    /// What was skipped and why.
    pub skipped: Vec<String>,
}

/// Runs the lab on SQLite and, when `POSTGRES_URL` is set, PostgreSQL.
pub fn run(opts: &Options) -> Result<Report> {
    let binary = |name: &str| opts.peers.join(format!("peer-data-{name}"));
    for s in SERVERS {
        ensure!(
            binary(s).exists(),
            "{} not found: build the peers with `cargo build --release` in bench/peers",
            binary(s).display()
        );
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut backends = Vec::new();
    let mut skipped = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let name = match backend {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        };
        let Some(url) = rt.block_on(fresh(backend)) else {
            skipped.push(format!("{name}: POSTGRES_URL is not set"));
            continue;
        };
        progress(&format!("{name}: seeding {ROWS} rows and a user ..."));
        rt.block_on(seed(&url))?;
        let outcome = measure(opts, name, &url, &binary("tern"), &binary("axum"));
        rt.block_on(cleanup(backend, &url));
        backends.push(outcome?);
    }
    progress_end();
    Ok(Report {
        schema: "tern-bench-data/1".into(),
        started_unix: unix_now(),
        machine: Machine::detect(),
        rounds: opts.rounds,
        seconds: opts.seconds,
        connections: opts.connections,
        quick: opts.quick,
        workloads: WORKLOADS
            .iter()
            .map(|w| (w.name.to_owned(), w.description.to_owned()))
            .collect(),
        backends,
        skipped,
    })
}

async fn seed(url: &str) -> Result<()> {
    let db = Database::from_url(url)?;
    db.migrate(&tern_auth::MIGRATIONS).await?;
    db.migrate(&MIGRATIONS).await?;
    let pool = db.pool();
    for id in 1..=ROWS {
        let sql = "INSERT INTO bench_rows (id, title, body, stars) VALUES ($1, $2, $3, $4)";
        let title = format!("row {id:03}");
        let body = format!("the body of row {id}, long enough to be a realistic text column");
        let stars = i32::try_from(id % 5).unwrap_or(0);
        with_pool!(pool, p => {
            tern_data::sqlx::query(sql)
                .bind(id)
                .bind(&title)
                .bind(&body)
                .bind(stars)
                .execute(p)
                .await?
                .rows_affected()
        });
    }
    tern_auth::create_user(
        pool,
        &tern_auth::Passwords::default(),
        "bench",
        PASSWORD,
        false,
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    pool.close().await;
    Ok(())
}

async fn cleanup(backend: Backend, url: &str) {
    match backend {
        Backend::Sqlite => {
            if let Some(dir) = url
                .strip_prefix("sqlite://")
                .and_then(|f| std::path::Path::new(f).parent())
                .and_then(|d| d.parent())
            {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
        Backend::Postgres => {
            let (Ok(admin), Some(schema)) = (
                std::env::var("POSTGRES_URL"),
                url.rsplit_once("search_path]=").map(|(_, s)| s.to_owned()),
            ) else {
                return;
            };
            if let Ok(pool) = tern_data::sqlx::PgPool::connect(&admin).await {
                if schema
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    let _ = tern_data::sqlx::raw_sql(tern_data::sqlx::AssertSqlSafe(format!(
                        "DROP SCHEMA IF EXISTS {schema} CASCADE"
                    )))
                    .execute(&pool)
                    .await;
                }
                pool.close().await;
            }
        }
    }
}

/// Logs the bench user in on `server`: the cookie and the CSRF token.
fn login(server: &ServerProcess) -> Result<(String, String)> {
    let mut c = Client::connect(server.addr)?;
    let body = serde_json::json!({"username": "bench", "password": PASSWORD}).to_string();
    let res = c.send(
        "POST",
        "/auth/login",
        &[("Content-Type", "application/json")],
        Some(body.as_bytes()),
    )?;
    ensure!(res.status == 200, "login answered {}", res.status);
    let cookie = res
        .header("set-cookie")
        .and_then(|c| c.split(';').next())
        .context("no session cookie")?
        .to_owned();
    let json: serde_json::Value = serde_json::from_slice(&res.body)?;
    let token = json["csrf_token"]
        .as_str()
        .context("no CSRF token")?
        .to_owned();
    Ok((cookie, token))
}

fn table(workload: &str, cookie: &str, token: &str) -> Vec<TableRequest> {
    let req = |method: &str, path: String, headers: Vec<(String, String)>| TableRequest {
        method: method.to_owned(),
        path,
        headers,
        body: None,
    };
    match workload {
        "get" => (1..=ROWS)
            .map(|id| req("GET", format!("/rows/{id}"), vec![]))
            .collect(),
        "list" => (1..=10)
            .map(|page| req("GET", format!("/rows?page={page}"), vec![]))
            .collect(),
        "session" => vec![req(
            "POST",
            "/ping".to_owned(),
            vec![
                ("Cookie".to_owned(), cookie.to_owned()),
                ("X-CSRF-Token".to_owned(), token.to_owned()),
                ("Content-Length".to_owned(), "0".to_owned()),
            ],
        )],
        _ => vec![req(
            "POST",
            "/plain".to_owned(),
            vec![("Content-Length".to_owned(), "0".to_owned())],
        )],
    }
}

/// Every request of every table on both servers: all 200, the same bytes.
fn check(servers: &[ServerProcess], tables: &[Vec<TableRequest>]) -> Result<()> {
    for table in tables {
        for r in table {
            let mut answers = Vec::new();
            for s in servers {
                let mut c = Client::connect(s.addr)?;
                let headers: Vec<(&str, &str)> = r
                    .headers
                    .iter()
                    .filter(|(k, _)| k != "Content-Length")
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect();
                let body: Option<&[u8]> = (r.method == "POST").then_some(&[]);
                let res = c.send(&r.method, &r.path, &headers, body)?;
                ensure!(
                    res.status == 200,
                    "{} {} answered {}: {}",
                    r.method,
                    r.path,
                    res.status,
                    String::from_utf8_lossy(&res.body)
                );
                answers.push(res.body);
            }
            if answers.windows(2).any(|w| w[0] != w[1]) {
                bail!(
                    "{} {}: the servers answer differently:\n{}\n{}",
                    r.method,
                    r.path,
                    String::from_utf8_lossy(&answers[0]),
                    String::from_utf8_lossy(&answers[1])
                );
            }
        }
    }
    Ok(())
}

fn measure(
    opts: &Options,
    backend: &str,
    url: &str,
    tern: &std::path::Path,
    axum: &std::path::Path,
) -> Result<BackendResult> {
    progress(&format!("{backend}: starting the servers ..."));
    let common = [("DATABASE_URL", url), ("SECRET_KEY", SECRET)];
    let mut tern_env = common.to_vec();
    tern_env.push(("TERN_WORKERS", "1"));
    let tern = ServerProcess::start_with(tern, &[], &opts.server_cores, "TERN_ADDR", &tern_env)?;
    let axum = ServerProcess::start(axum, &opts.server_cores, &common)?;
    let (cookie, token) = login(&tern)?;
    let tables: Vec<Vec<TableRequest>> = WORKLOADS
        .iter()
        .map(|w| table(w.name, &cookie, &token))
        .collect();
    let servers = [tern, axum];
    check(&servers, &tables).context("before the load")?;
    let dir = std::env::temp_dir().join(format!("tern-bench-data-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut scripts = Vec::new();
    for (w, t) in WORKLOADS.iter().zip(&tables) {
        let path = dir.join(format!("{}.lua", w.name));
        std::fs::write(&path, wrk::script(t, 1))?;
        scripts.push(path);
    }
    let load = |server: &ServerProcess, i: usize, seconds: f64| -> Result<Trial> {
        let m = wrk::measure(
            server,
            &scripts[i],
            &opts.load_cores,
            opts.connections,
            seconds,
        )?;
        if let Some(failures) = m.load.failures() {
            bail!("{}: {failures}", WORKLOADS[i].name);
        }
        Ok(Trial {
            rps: m.load.rps(),
            cpu_us_per_req: m.cpu_us_per_req(),
            p99_us: m.load.p99_us,
        })
    };
    if opts.warmup_s > 0.0 {
        for (i, w) in WORKLOADS.iter().enumerate() {
            for (s, server) in SERVERS.iter().zip(&servers) {
                progress(&format!("{backend}: warm-up {} {s} ...", w.name));
                load(server, i, opts.warmup_s)?;
            }
        }
    }
    let mut trials = vec![vec![Vec::new(); SERVERS.len()]; WORKLOADS.len()];
    for round in 0..opts.rounds {
        for i in 0..WORKLOADS.len() {
            // The two servers side by side, in turn first.
            let order: Vec<usize> = if (round + i) % 2 == 0 {
                vec![0, 1]
            } else {
                vec![1, 0]
            };
            for k in order {
                progress(&format!(
                    "{backend}: round {}/{} {} {} ...",
                    round + 1,
                    opts.rounds,
                    WORKLOADS[i].name,
                    SERVERS[k]
                ));
                trials[i][k].push(load(&servers[k], i, opts.seconds)?);
            }
        }
    }
    check(&servers, &tables).context("after the load")?;
    let _ = std::fs::remove_dir_all(&dir);
    for s in servers {
        s.stop()?;
    }
    let mut cells = Vec::new();
    let mut ratios = Vec::new();
    for (i, w) in WORKLOADS.iter().enumerate() {
        for (k, s) in SERVERS.iter().enumerate() {
            let t = &trials[i][k];
            cells.push(Cell {
                server: (*s).to_owned(),
                workload: w.name.to_owned(),
                rps: summarize(&t.iter().map(|t| t.rps).collect::<Vec<_>>()),
                cpu_us_per_req: summarize(&t.iter().map(|t| t.cpu_us_per_req).collect::<Vec<_>>()),
                trials: t.clone(),
            });
        }
        let per_round: Vec<f64> = trials[i][0]
            .iter()
            .zip(&trials[i][1])
            .map(|(t, a)| t.rps / a.rps)
            .collect();
        let median =
            |k: usize| summarize(&trials[i][k].iter().map(|t| t.rps).collect::<Vec<_>>()).median;
        ratios.push(Ratio {
            workload: w.name.to_owned(),
            ratio: median(0) / median(1),
            min: per_round.iter().copied().fold(f64::INFINITY, f64::min),
            max: per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        });
    }
    let tern_cell = |w: &str| {
        cells
            .iter()
            .find(|c| c.server == "tern" && c.workload == w)
            .map(|c| (c.rps.median, c.cpu_us_per_req.median))
            .unwrap_or((f64::NAN, f64::NAN))
    };
    let (session_rps, session_cpu) = tern_cell("session");
    let (plain_rps, plain_cpu) = tern_cell("plain");
    Ok(BackendResult {
        backend: backend.to_owned(),
        cells,
        ratios,
        session_overhead_cpu: session_cpu / plain_cpu - 1.0,
        session_overhead_rps: plain_rps / session_rps - 1.0,
    })
}

/// The report for a terminal.
pub fn terminal(r: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "machine: {}\nmethod: {} round(s) of {} s per server and workload, side by side, {} connections over loopback; servers on one core, wrk on another{}\n",
        r.machine.summary(true),
        r.rounds,
        r.seconds,
        r.connections,
        if r.quick { " (QUICK: figures mean nothing)" } else { "" }
    ));
    for b in &r.backends {
        out.push_str(&format!(
            "\n{}\n{:<9} {:>12} {:>12} {:>8} {:>15} {:>11} {:>11}\n",
            b.backend,
            "workload",
            "tern req/s",
            "axum req/s",
            "ratio",
            "per round",
            "tern CPU",
            "axum CPU"
        ));
        for ratio in &b.ratios {
            let cell = |s: &str| {
                b.cells
                    .iter()
                    .find(|c| c.server == s && c.workload == ratio.workload)
            };
            let (t, a) = (cell("tern"), cell("axum"));
            out.push_str(&format!(
                "{:<9} {:>12.0} {:>12.0} {:>8.3} {:>7.3}-{:<7.3} {:>9.2}us {:>9.2}us\n",
                ratio.workload,
                t.map_or(f64::NAN, |c| c.rps.median),
                a.map_or(f64::NAN, |c| c.rps.median),
                ratio.ratio,
                ratio.min,
                ratio.max,
                t.map_or(f64::NAN, |c| c.cpu_us_per_req.median),
                a.map_or(f64::NAN, |c| c.cpu_us_per_req.median),
            ));
        }
        out.push_str(&format!(
            "tern's session check over a plain request: +{:.1}% CPU per request, +{:.1}% in req/s (goal: at most 15%)\n",
            b.session_overhead_cpu * 100.0,
            b.session_overhead_rps * 100.0
        ));
    }
    for s in &r.skipped {
        out.push_str(&format!("skipped: {s}\n"));
    }
    out
}
