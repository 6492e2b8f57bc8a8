//! The admin's workloads: Tern's admin (`peer-admin-tern`: tern-admin over
//! tern-auth and tern-data) on PostgreSQL, each page's req/s as a ratio to
//! the same process's `GET /ping` in the same round (the Kyrux seed's
//! table, issue 29).
//!
//! The run makes a PostgreSQL schema at `POSTGRES_URL` (dropped after, on
//! success and on failure), has the peer make its tables
//! (`peer-admin-tern migrate`: tern-auth's, tern-admin's, `bench_rows`),
//! seeds 200 rows, a superuser and a staff user with `view`, `add` and
//! `change` rows on `bench_rows` (both made with tern-auth's `NewUser`),
//! and logs each in through `POST /auth/login`: every admin workload
//! sends its session cookie. Every page is checked (status 200 and a
//! marker in the body) before and after the load; a wrk answer outside
//! 2xx and 3xx, or a failed check, fails the run.
//!
//! Each trial reads the server's CPU time from `/proc/PID/stat`, and
//! PostgreSQL's: the backends serving the peer (found by its
//! `application_name` in `pg_stat_activity`), read the same way. The
//! two CPUs per request say where a page's time goes on this machine.
//!
//! Statements per page are counted outside the timed load: a second
//! process of the peer, started with `PEER_COUNT_QUERIES=1`, counts sqlx's
//! statement events, read from its `/__queries` around single requests.
//! With `--callgrind`, a third process runs under callgrind for list
//! requests only, and the instructions are split by where they are spent.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context, Result};
use serde::Serialize;
use tern_data::{testing::fresh, with_pool, Backend, Database};

use crate::{
    client::Client,
    console::{progress, progress_end},
    machine::{unix_now, Machine},
    process::{cpu_seconds_of, ServerProcess},
    stats::{summarize, Summary},
    wrk::{self, TableRequest},
};

/// Rows seeded.
pub const ROWS: i64 = 200;

/// Strong enough for production's check (random, not a pattern).
const SECRET: &str = "admin-bench-4q9ZxT7mKc2VwR8pLs3NhY6bJf0DgE1u";
const PASSWORD: &str = "the admin bench's own password";
/// What a browser sends.
const BROWSER: &str = "text/html,application/xhtml+xml,*/*;q=0.8";

/// Whose session a workload sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Who {
    /// No cookie.
    Anonymous,
    /// The superuser (no permission query).
    Superuser,
    /// A staff user with permission rows on `bench_rows` (one query).
    Staff,
}

/// A workload: its name, what it measures, whose session, its page.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// `ping`, `welcome`, `login`, `add`, `dashboard`, `row`, `list`, and
    /// the staff user's `*-staff`.
    pub name: &'static str,
    /// The route, as in the issue's table.
    pub route: &'static str,
    /// Whose cookie.
    pub who: Who,
    /// The path (`row`: the ids 1 to 200 in turn).
    path: &'static str,
    /// What the body must contain.
    marker: &'static str,
    /// The issue's goal: req/s over `/ping`'s (0: the reference).
    pub goal: f64,
    /// Kyrux's figure (req/s and its ratio to its `/ping`).
    pub kyrux: (f64, f64),
}

const ROW_PATH: &str = "/admin/bench_rows/{id}";

/// The workloads, in table order: the issue's seven, then the admin pages
/// again as the staff user.
pub const WORKLOADS: [Workload; 11] = [
    Workload {
        name: "ping",
        route: "GET /ping",
        who: Who::Anonymous,
        path: "/ping",
        marker: "pong",
        goal: 0.0,
        kyrux: (39_250.0, 1.0),
    },
    Workload {
        name: "welcome",
        route: "welcome page (GET /)",
        who: Who::Anonymous,
        path: "/",
        marker: "<h1>Welcome</h1>",
        goal: 0.95,
        kyrux: (37_914.0, 0.97),
    },
    Workload {
        name: "login",
        route: "login form, no session (GET /admin/login)",
        who: Who::Anonymous,
        path: "/admin/login",
        marker: r#"name="password""#,
        goal: 0.8,
        kyrux: (24_957.0, 0.64),
    },
    Workload {
        name: "add",
        route: "empty creation form (GET /admin/bench_rows/add)",
        who: Who::Superuser,
        path: "/admin/bench_rows/add",
        marker: r#"name="title""#,
        goal: 0.5,
        kyrux: (14_162.0, 0.36),
    },
    Workload {
        name: "dashboard",
        route: "dashboard (GET /admin/)",
        who: Who::Superuser,
        path: "/admin/",
        marker: r#"href="/admin/bench_rows/""#,
        goal: 0.5,
        kyrux: (17_878.0, 0.46),
    },
    Workload {
        name: "row",
        route: "one row by primary key (GET /admin/bench_rows/{1..200})",
        who: Who::Superuser,
        path: ROW_PATH,
        marker: r#"value="row {id:03}""#,
        goal: 0.4,
        kyrux: (9_812.0, 0.25),
    },
    Workload {
        name: "list",
        route: "list of 200 rows, SELECT + COUNT (GET /admin/bench_rows/?per_page=200)",
        who: Who::Superuser,
        path: "/admin/bench_rows/?per_page=200",
        marker: ">row 200<",
        goal: 0.15,
        kyrux: (1_920.0, 0.049),
    },
    Workload {
        name: "add-staff",
        route: "empty creation form, staff user",
        who: Who::Staff,
        path: "/admin/bench_rows/add",
        marker: r#"name="title""#,
        goal: 0.5,
        kyrux: (f64::NAN, f64::NAN),
    },
    Workload {
        name: "dashboard-staff",
        route: "dashboard, staff user",
        who: Who::Staff,
        path: "/admin/",
        marker: r#"href="/admin/bench_rows/""#,
        goal: 0.5,
        kyrux: (f64::NAN, f64::NAN),
    },
    Workload {
        name: "row-staff",
        route: "one row by primary key, staff user",
        who: Who::Staff,
        path: ROW_PATH,
        marker: r#"value="row {id:03}""#,
        goal: 0.4,
        kyrux: (f64::NAN, f64::NAN),
    },
    Workload {
        name: "list-staff",
        route: "list of 200 rows, staff user",
        who: Who::Staff,
        path: "/admin/bench_rows/?per_page=200",
        marker: ">row 200<",
        goal: 0.15,
        kyrux: (f64::NAN, f64::NAN),
    },
];

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where `peer-admin-tern` is.
    pub peers: PathBuf,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per workload.
    pub warmup_s: f64,
    /// wrk connections.
    pub connections: usize,
    /// `taskset` cores of the server.
    pub server_cores: String,
    /// `taskset` cores of wrk.
    pub load_cores: String,
    /// List requests measured under callgrind (0: none).
    pub callgrind_requests: usize,
    /// Where callgrind's output file is kept (for `callgrind_annotate`).
    pub callgrind_out: PathBuf,
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
    /// PostgreSQL's CPU per request: its backends serving the peer
    /// (`application_name`), microseconds.
    pub db_cpu_us_per_req: f64,
    /// wrk's p99 latency, microseconds.
    pub p99_us: f64,
}

/// One workload's results.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The workload.
    pub workload: String,
    /// The route.
    pub route: String,
    /// Whose session.
    pub who: Who,
    /// Every trial, in round order.
    pub trials: Vec<Trial>,
    /// Requests per second over the rounds.
    pub rps: Summary,
    /// Req/s over `/ping`'s of the same round: the median of the rounds'
    /// ratios, and their range.
    pub ratio: Summary,
    /// The goal (0 for the reference).
    pub goal: f64,
    /// Kyrux's req/s and ratio (NaN where it has none).
    pub kyrux: (f64, f64),
    /// CPU per request over the rounds.
    pub cpu_us_per_req: Summary,
    /// PostgreSQL's CPU per request over the rounds.
    pub db_cpu_us_per_req: Summary,
    /// `/ping`'s CPU per request over this one's, the server's and
    /// PostgreSQL's added (medians): the ratio to `/ping` were the
    /// machine's CPU the only limit, steadier than req/s on a shared
    /// machine.
    pub cpu_ratio: f64,
    /// Statements per request (sqlx's events), each request counted.
    pub queries: Vec<u64>,
}

/// Where a list request's instructions go (callgrind, inclusive costs of
/// disjoint parts of the request).
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    /// List requests measured.
    pub requests: usize,
    /// Instructions per request, in all.
    pub total: f64,
    /// `(part, instructions per request, what the part is)`.
    pub parts: Vec<(String, f64, String)>,
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
    /// Cores of the server.
    pub server_cores: String,
    /// Cores of wrk.
    pub load_cores: String,
    /// Quick mode.
    pub quick: bool,
    /// The peer's settings that matter.
    pub settings: Vec<(String, String)>,
    /// Every workload.
    pub rows: Vec<Row>,
    /// The list under callgrind, when asked.
    pub profile: Option<Profile>,
}

/// The peer's environment besides `DATABASE_URL` and `TERN_ADDR`:
/// production (security headers, `Secure` cookies, the host check), one
/// worker thread.
const SETTINGS: [(&str, &str); 5] = [
    ("TERN_ENV", "production"),
    ("SECRET_KEY", SECRET),
    ("ALLOWED_HOSTS", "127.0.0.1,localhost"),
    ("TERN_WORKERS", "1"),
    ("ADMIN_PER_PAGE", "50"),
];

/// Runs the lab on the PostgreSQL database at `POSTGRES_URL`.
pub fn run(opts: &Options) -> Result<Report> {
    let binary = opts.peers.join("peer-admin-tern");
    ensure!(
        binary.exists(),
        "{} not found: build the peers with `cargo build --release` in bench/peers",
        binary.display()
    );
    ensure!(
        std::env::var("POSTGRES_URL").is_ok_and(|u| !u.is_empty()),
        "POSTGRES_URL is not set: the admin's bench runs on PostgreSQL"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let url = rt
        .block_on(fresh(Backend::Postgres))
        .context("POSTGRES_URL is not set")?;
    let outcome = seed(&rt, &binary, &url).and_then(|()| measure(opts, &binary, &url));
    rt.block_on(cleanup(&url));
    progress_end();
    let (rows, profile) = outcome?;
    Ok(Report {
        schema: "tern-bench-admin/1".into(),
        started_unix: unix_now(),
        machine: Machine::detect(),
        rounds: opts.rounds,
        seconds: opts.seconds,
        connections: opts.connections,
        server_cores: opts.server_cores.clone(),
        load_cores: opts.load_cores.clone(),
        quick: opts.quick,
        settings: SETTINGS
            .iter()
            .filter(|(k, _)| *k != "SECRET_KEY")
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        rows,
        profile,
    })
}

fn seed(rt: &tokio::runtime::Runtime, binary: &Path, url: &str) -> Result<()> {
    progress("making the tables (peer-admin-tern migrate) ...");
    let status = std::process::Command::new(binary)
        .arg("migrate")
        .env("DATABASE_URL", url)
        .status()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    ensure!(status.success(), "peer-admin-tern migrate failed: {status}");
    progress(&format!("seeding {ROWS} rows and two users ..."));
    rt.block_on(async {
        let db = Database::from_url(url)?;
        let pool = db.pool();
        for id in 1..=ROWS {
            let sql = "INSERT INTO bench_rows (id, title, published, stars, created_at) \
                       VALUES ($1, $2, $3, $4, TIMESTAMPTZ '2026-01-01 00:00:00+00' + $1 * INTERVAL '1 hour')";
            let title = format!("row {id:03}");
            let stars = i32::try_from(id % 5).unwrap_or(0);
            with_pool!(pool, p => {
                tern_data::sqlx::query(sql)
                    .bind(id)
                    .bind(&title)
                    .bind(id % 2 == 0)
                    .bind(stars)
                    .execute(p)
                    .await?
                    .rows_affected()
            });
        }
        let passwords = tern_auth::Passwords::default();
        tern_auth::NewUser::new("admin", PASSWORD)
            .staff(true)
            .superuser(true)
            .create(pool, &passwords)
            .await
            .map_err(|e| anyhow::anyhow!("the superuser: {e}"))?;
        let staff = tern_auth::NewUser::new("staff", PASSWORD)
            .staff(true)
            .create(pool, &passwords)
            .await
            .map_err(|e| anyhow::anyhow!("the staff user: {e}"))?;
        for action in ["view", "add", "change"] {
            let sql = "INSERT INTO tern_admin_permissions (user_id, model, action) \
                       VALUES ($1, 'bench_rows', $2)";
            with_pool!(pool, p => {
                tern_data::sqlx::query(sql)
                    .bind(staff.id)
                    .bind(action)
                    .execute(p)
                    .await?
                    .rows_affected()
            });
        }
        pool.close().await;
        Ok(())
    })
}

async fn cleanup(url: &str) {
    let (Ok(admin), Some(schema)) = (
        std::env::var("POSTGRES_URL"),
        url.rsplit_once("search_path]=").map(|(_, s)| s.to_owned()),
    ) else {
        return;
    };
    if !schema
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return;
    }
    if let Ok(pool) = tern_data::sqlx::PgPool::connect(&admin).await {
        let _ = tern_data::sqlx::raw_sql(tern_data::sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE"
        )))
        .execute(&pool)
        .await;
        pool.close().await;
    }
}

/// The peer's `application_name`: its PostgreSQL backends are found by it.
const APPLICATION: &str = "peer-admin-tern";

/// The peer's `DATABASE_URL`: the run's schema, named connections.
fn peer_url(url: &str) -> String {
    format!("{url}&application_name={APPLICATION}")
}

fn start(binary: &Path, cores: &str, url: &str, extra: &[(&str, &str)]) -> Result<ServerProcess> {
    let url = peer_url(url);
    let mut env = SETTINGS.to_vec();
    env.push(("DATABASE_URL", &url));
    env.extend_from_slice(extra);
    ServerProcess::start_with(binary, &[], cores, "TERN_ADDR", &env)
}

/// Logs `username` in through `POST /auth/login` (JSON): the cookie.
fn login(server: &ServerProcess, username: &str) -> Result<String> {
    let mut c = Client::connect(server.addr)?;
    let body = serde_json::json!({"username": username, "password": PASSWORD}).to_string();
    let res = c.send(
        "POST",
        "/auth/login",
        &[("Content-Type", "application/json")],
        Some(body.as_bytes()),
    )?;
    ensure!(
        res.status == 200,
        "login of {username} answered {}: {}",
        res.status,
        String::from_utf8_lossy(&res.body)
    );
    Ok(res
        .header("set-cookie")
        .and_then(|c| c.split(';').next())
        .context("no session cookie")?
        .to_owned())
}

/// The cookies of the two users on `server`.
struct Cookies {
    superuser: String,
    staff: String,
}

impl Cookies {
    fn login(server: &ServerProcess) -> Result<Cookies> {
        Ok(Cookies {
            superuser: login(server, "admin")?,
            staff: login(server, "staff")?,
        })
    }

    fn of(&self, who: Who) -> Option<&str> {
        match who {
            Who::Anonymous => None,
            Who::Superuser => Some(&self.superuser),
            Who::Staff => Some(&self.staff),
        }
    }
}

/// A workload's requests (`row`: one per id), with the marker each
/// answer must contain.
fn table(w: &Workload, cookies: &Cookies) -> Vec<(TableRequest, String)> {
    let ids: Vec<i64> = if w.path == ROW_PATH {
        (1..=ROWS).collect()
    } else {
        vec![0]
    };
    ids.into_iter()
        .map(|id| {
            let mut headers = vec![("Accept".to_owned(), BROWSER.to_owned())];
            if let Some(c) = cookies.of(w.who) {
                headers.push(("Cookie".to_owned(), c.to_owned()));
            }
            let req = TableRequest {
                method: "GET".to_owned(),
                path: w.path.replace("{id}", &id.to_string()),
                headers,
                body: None,
            };
            (req, w.marker.replace("{id:03}", &format!("{id:03}")))
        })
        .collect()
}

/// Every request of `table`: 200 and its marker.
fn check(server: &ServerProcess, name: &str, table: &[(TableRequest, String)]) -> Result<()> {
    let mut c = Client::connect(server.addr)?;
    for (r, marker) in table {
        let headers: Vec<(&str, &str)> = r
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let res = c.send(&r.method, &r.path, &headers, None)?;
        let body = String::from_utf8_lossy(&res.body);
        ensure!(
            res.status == 200,
            "{name}: GET {} answered {}: {body}",
            r.path,
            res.status
        );
        ensure!(
            body.contains(marker.as_str()),
            "{name}: GET {}: no `{marker}` in:\n{body}",
            r.path
        );
    }
    Ok(())
}

type Measured = (Vec<Row>, Option<Profile>);

fn measure(opts: &Options, binary: &Path, url: &str) -> Result<Measured> {
    let queries = count_queries(opts, binary, url)?;
    progress("starting the peer ...");
    let server = start(binary, &opts.server_cores, url, &[])?;
    let cookies = Cookies::login(&server)?;
    let tables: Vec<Vec<(TableRequest, String)>> =
        WORKLOADS.iter().map(|w| table(w, &cookies)).collect();
    progress("checking every page ...");
    for (w, t) in WORKLOADS.iter().zip(&tables) {
        check(&server, w.name, t).context("before the load")?;
    }
    let dir = std::env::temp_dir().join(format!("tern-bench-admin-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut scripts = Vec::new();
    for (w, t) in WORKLOADS.iter().zip(&tables) {
        let path = dir.join(format!("{}.lua", w.name));
        let requests: Vec<TableRequest> = t.iter().map(|(r, _)| r.clone()).collect();
        std::fs::write(&path, wrk::script(&requests, 1))?;
        scripts.push(path);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let admin_url = std::env::var("POSTGRES_URL")?;
    let pg = rt.block_on(tern_data::sqlx::PgPool::connect(&admin_url))?;
    // The peer's backends and the CPU each has used so far.
    let backends = || -> Result<Vec<(u32, f64)>> {
        let pids: Vec<i32> = rt.block_on(
            tern_data::sqlx::query_scalar(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
            )
            .bind(APPLICATION)
            .fetch_all(&pg),
        )?;
        Ok(pids
            .into_iter()
            .filter_map(|p| u32::try_from(p).ok())
            .filter_map(|p| cpu_seconds_of(p).map(|s| (p, s)))
            .collect())
    };
    let load = |i: usize, seconds: f64| -> Result<Trial> {
        let db_before = backends()?;
        let m = wrk::measure(
            &server,
            &scripts[i],
            &opts.load_cores,
            opts.connections,
            seconds,
        )?;
        if let Some(failures) = m.load.failures() {
            bail!("{}: {failures}", WORKLOADS[i].name);
        }
        // A backend opened during the trial counts whole; one closed
        // during it is lost (the pool keeps its connections for minutes).
        let db_s: f64 = backends()?
            .iter()
            .map(|(pid, after)| {
                let before = db_before
                    .iter()
                    .find(|(p, _)| p == pid)
                    .map_or(0.0, |(_, s)| *s);
                after - before
            })
            .sum();
        Ok(Trial {
            rps: m.load.rps(),
            cpu_us_per_req: m.cpu_us_per_req(),
            db_cpu_us_per_req: db_s * 1e6 / m.load.requests.max(1) as f64,
            p99_us: m.load.p99_us,
        })
    };
    if opts.warmup_s > 0.0 {
        for (i, w) in WORKLOADS.iter().enumerate() {
            progress(&format!("warm-up {} ...", w.name));
            load(i, opts.warmup_s)?;
        }
    }
    let n = WORKLOADS.len();
    let mut trials: Vec<Vec<Trial>> = vec![Vec::new(); n];
    for round in 0..opts.rounds {
        // Every workload once a round, the order rotated each round.
        for k in 0..n {
            let i = (k + round) % n;
            progress(&format!(
                "round {}/{} {} ...",
                round + 1,
                opts.rounds,
                WORKLOADS[i].name
            ));
            trials[i].push(load(i, opts.seconds)?);
        }
    }
    progress("checking every page again ...");
    for (w, t) in WORKLOADS.iter().zip(&tables) {
        check(&server, w.name, t).context("after the load")?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    server.stop()?;
    rt.block_on(pg.close());
    let profile = if opts.callgrind_requests > 0 {
        Some(profile_list(opts, binary, url)?)
    } else {
        None
    };
    // Each round's ratio to the `/ping` trial of the same round.
    let ping: Vec<f64> = trials[0].iter().map(|t| t.rps).collect();
    let mut rows = WORKLOADS
        .iter()
        .zip(trials)
        .zip(queries)
        .map(|((w, t), queries)| {
            let ratios: Vec<f64> = t.iter().zip(&ping).map(|(a, p)| a.rps / p).collect();
            Row {
                workload: w.name.to_owned(),
                route: w.route.to_owned(),
                who: w.who,
                rps: summarize(&t.iter().map(|t| t.rps).collect::<Vec<_>>()),
                ratio: summarize(&ratios),
                goal: w.goal,
                kyrux: w.kyrux,
                cpu_us_per_req: summarize(&t.iter().map(|t| t.cpu_us_per_req).collect::<Vec<_>>()),
                db_cpu_us_per_req: summarize(
                    &t.iter().map(|t| t.db_cpu_us_per_req).collect::<Vec<_>>(),
                ),
                cpu_ratio: f64::NAN,
                trials: t,
                queries,
            }
        })
        .collect::<Vec<_>>();
    let cpu = |r: &Row| r.cpu_us_per_req.median + r.db_cpu_us_per_req.median;
    let ping_cpu = cpu(&rows[0]);
    for r in &mut rows {
        r.cpu_ratio = ping_cpu / cpu(r);
    }
    Ok((rows, profile))
}

/// Statements per request of each workload: a peer started with
/// `PEER_COUNT_QUERIES=1`, each page requested once to warm it (the
/// pool's connections, the statement cache), then three times, each
/// between two reads of `/__queries`.
fn count_queries(opts: &Options, binary: &Path, url: &str) -> Result<Vec<Vec<u64>>> {
    progress("counting each page's statements ...");
    let server = start(
        binary,
        &opts.server_cores,
        url,
        &[("PEER_COUNT_QUERIES", "1")],
    )?;
    let cookies = Cookies::login(&server)?;
    let mut c = Client::connect(server.addr)?;
    let count = |c: &mut Client| -> Result<u64> {
        let res = c.send("GET", "/__queries", &[], None)?;
        ensure!(res.status == 200, "/__queries answered {}", res.status);
        Ok(String::from_utf8_lossy(&res.body).trim().parse()?)
    };
    let mut all = Vec::new();
    for w in &WORKLOADS {
        let t = table(w, &cookies);
        check(&server, w.name, &t[..1])?;
        let mut counts = Vec::new();
        for (r, _) in t.iter().take(3) {
            let before = count(&mut c)?;
            check(&server, w.name, &[(r.clone(), String::new())])?;
            counts.push(count(&mut c)? - before);
        }
        all.push(counts);
    }
    server.stop()?;
    Ok(all)
}

mod profile;
mod report;

pub use report::terminal;
#[cfg(test)]
mod tests;

use profile::profile_list;
