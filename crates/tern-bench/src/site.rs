//! The website (issue 14): Tern's own site, served by the showcase
//! (`examples/showcase`), beside Tern's `/plaintext` in the same process.
//!
//! | row | request | what the server does per request |
//! |---|---|---|
//! | `plaintext` | `GET /plaintext` | a `&'static str` (13 bytes): the reference of every ratio |
//! | `home` | `GET /` | the home page (about 26 KB of HTML) rendered from askama templates |
//! | `index.json` | `GET /index.json` | the site's pages as a `serde_json::Value`, built and serialized |
//! | `llms.txt` | `GET /llms.txt` | a static file embedded in the binary (strong `ETag`, `Last-Modified`) |
//!
//! Each row is measured twice: without `Accept-Encoding`, and with
//! `Accept-Encoding: br`. The showcase runs with
//! `SHOWCASE_COMPRESSION=true` (`tern_site::compression()`: brotli, zstd
//! and gzip for text of [`COMPRESSION_FLOOR`] bytes or more), so the
//! `br` rows of the home page and `/index.json` are compressed on every
//! request; `/plaintext` and a `/llms.txt` under the floor are sent as
//! they are, and their `br` rows are the same bytes as their plain rows.
//! `plaintext br` is still measured: it is the reference of the `br`
//! rows, taken under the same headers.
//!
//! **Method.** One showcase process per run, started in a scratch
//! directory (its SQLite database under `./data/` there), pinned to the
//! server cores with one worker (`TERN_WORKERS=1`) and a rate limit it
//! never reaches; wrk (one thread, `--connections`, default 16) pinned to
//! the load cores. Every row is checked before the load and after it
//! ([`check`]): status `200`, the expected media type, a body that is the
//! page (the greeting, `<h1>Tern</h1>`, a JSON object with its pages,
//! `# Tern`), `Content-Encoding: br` and `Vary: Accept-Encoding` exactly
//! where the body is above the floor, a compressed body smaller than the
//! page and of the same size every time. A failed check before the load
//! fails the run; after it, a changed answer, a wrk error or an answer
//! outside 2xx is a problem, reported with the figures, and the command
//! fails after writing them. Each row is warmed up once before the first
//! round; in each round every row runs against the same process, the
//! order rotated by one row each round. Each row's req/s is divided by
//! the req/s of the plaintext row of the same encoding *in the same
//! round*; the report gives the median and the range of those ratios over
//! the rounds, and the goal met when the median reaches it.
//!
//! **Limits.** One server core over loopback: the figures are what one
//! core serves, not what a site behind a network does, and wrk's own
//! reading of 26 KB answers is on its core, not the server's. Every
//! request of a row is the same request, so the home page is rendered
//! from the same data each time (the docs' summaries and the roadmap are
//! prepared once per process, at the first request). The brotli bodies
//! are checked by their headers, size and stability, not decoded (the
//! lab has no brotli decoder; tern-site's tests decode every coding).
//! The rate limiter, the CSRF check and the other layers of the showcase
//! run on every row, `/plaintext` included.

use std::{
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use anyhow::{ensure, Context, Result};
use serde::Serialize;

use crate::{
    client::{Client, Response},
    machine::Machine,
    process::{sha256, ServerProcess},
    stats::{summarize, Summary},
    wrk::{self, TableRequest},
};

/// `tern_site::compression::MIN_SIZE`: bodies below it are never
/// compressed.
pub const COMPRESSION_FLOOR: usize = 1024;

/// A page of the site, measured plain and with `Accept-Encoding: br`.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// The row's name.
    pub name: &'static str,
    /// The request path.
    pub path: &'static str,
    /// What `Content-Type` starts with.
    pub content_type: &'static str,
    /// Whether its `br` row must be compressed (the page is above the
    /// floor by construction).
    pub must_compress: bool,
    /// The goal: req/s at least this share of the plaintext row's.
    pub goal: Option<f64>,
    /// Whether the (uncompressed) body is the page, with what it lacks.
    pub body_ok: fn(&[u8]) -> Result<(), String>,
}

fn greeting(body: &[u8]) -> Result<(), String> {
    if body == b"Hello, World!" {
        Ok(())
    } else {
        Err("not `Hello, World!`".to_owned())
    }
}

fn home_page(body: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(body);
    if body.len() < 10_000 {
        Err(format!("{} bytes: not the whole page", body.len()))
    } else if !text.contains("<h1>Tern</h1>") || !text.trim_end().ends_with("</html>") {
        Err("no `<h1>Tern</h1>`, or not ending with `</html>`".to_owned())
    } else {
        Ok(())
    }
}

fn index(body: &[u8]) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    match value["pages"].as_array() {
        Some(pages) if pages.len() >= 2 && pages.iter().all(|p| p["path"].is_string()) => Ok(()),
        _ => Err("no `pages` array of pages with a `path`".to_owned()),
    }
}

fn llms(body: &[u8]) -> Result<(), String> {
    if body.starts_with(b"# Tern") {
        Ok(())
    } else {
        Err("does not start with `# Tern`".to_owned())
    }
}

/// The pages, in table order; the first is the reference.
pub const PAGES: [Page; 4] = [
    Page {
        name: "plaintext",
        path: "/plaintext",
        content_type: "text/plain",
        must_compress: false,
        goal: None,
        body_ok: greeting,
    },
    Page {
        name: "home",
        path: "/",
        content_type: "text/html",
        must_compress: true,
        goal: Some(0.5),
        body_ok: home_page,
    },
    Page {
        name: "index.json",
        path: "/index.json",
        content_type: "application/json",
        must_compress: true,
        goal: Some(0.7),
        body_ok: index,
    },
    Page {
        name: "llms.txt",
        path: "/llms.txt",
        content_type: "text/plain",
        must_compress: false,
        goal: Some(0.85),
        body_ok: llms,
    },
];

/// A row: a page, plain or with `Accept-Encoding: br`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Index into [`PAGES`].
    pub page: usize,
    /// With `Accept-Encoding: br`.
    pub br: bool,
}

impl Row {
    /// `home`, `home br`.
    pub fn name(self) -> String {
        let page = PAGES[self.page].name;
        if self.br {
            format!("{page} br")
        } else {
            page.to_owned()
        }
    }

    /// The plaintext row of the same encoding: this row's reference.
    pub fn reference(self) -> Row {
        Row {
            page: 0,
            br: self.br,
        }
    }
}

/// Every row, in table order: the plain rows, then the `br` rows.
pub fn rows() -> Vec<Row> {
    [false, true]
        .into_iter()
        .flat_map(|br| (0..PAGES.len()).map(move |page| Row { page, br }))
        .collect()
}

/// The order of round `round` (from 0) over `n` rows: rotated by one
/// each round.
pub fn rotation(round: usize, n: usize) -> Vec<usize> {
    (0..n).map(|i| (i + round) % n).collect()
}

/// Per-round ratios `values[i] / reference[i]`, summarized (rounds where
/// either is missing or the reference is 0 are left out).
pub fn ratio_summary(values: &[f64], reference: &[f64]) -> Summary {
    let ratios: Vec<f64> = values
        .iter()
        .zip(reference)
        .filter(|(_, r)| **r > 0.0)
        .map(|(v, r)| v / r)
        .collect();
    summarize(&ratios)
}

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// The showcase binary.
    pub showcase: PathBuf,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per row before the first round (0: none).
    pub warmup_s: f64,
    /// wrk connections.
    pub connections: usize,
    /// `taskset` cores of the server.
    pub server_cores: String,
    /// `taskset` cores of wrk.
    pub load_cores: String,
    /// Quick mode (CI): answers checked, figures not meaningful.
    pub quick: bool,
}

/// What a row's checked answer was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// `Content-Type`.
    pub content_type: String,
    /// `Content-Encoding`, if any.
    pub content_encoding: Option<String>,
    /// Body bytes as sent (compressed on a compressed row).
    pub body_bytes: usize,
}

/// One trial of one row.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// The round (from 1).
    pub round: usize,
    /// Its place in the round's order (from 1).
    pub position: usize,
    /// Requests per second.
    pub rps: f64,
    /// Server CPU (user + system, every thread) per request, microseconds.
    pub cpu_us_per_req: f64,
    /// Of which system time, microseconds.
    pub sys_us_per_req: f64,
    /// wrk's p99 latency, microseconds.
    pub p99_us: f64,
    /// Bytes read per response, headers included.
    pub wire_bytes: f64,
    /// Answers outside 2xx and socket errors.
    pub errors: u64,
}

/// One row's figures over the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct RowResult {
    /// `home`, `home br`.
    pub row: String,
    /// The request path.
    pub path: String,
    /// With `Accept-Encoding: br`.
    pub br: bool,
    /// The answer checked before the load.
    pub answer: Answer,
    /// The page's size, uncompressed, in bytes.
    pub page_bytes: usize,
    /// Every trial, in round order.
    pub trials: Vec<Trial>,
    /// Requests per second.
    pub rps: Summary,
    /// Per-round req/s over the plaintext row's of the same encoding
    /// (`None` on the plaintext rows).
    pub ratio: Option<Summary>,
    /// The goal of [`ratio`](Self::ratio).
    pub goal: Option<f64>,
    /// Whether the median ratio reaches the goal.
    pub goal_met: Option<bool>,
    /// On a `br` row: per-round req/s over the same page's plain row.
    pub br_over_plain: Option<Summary>,
    /// Server CPU per request.
    pub cpu_us_per_req: Summary,
    /// Bytes read per response, headers included.
    pub wire_bytes: Summary,
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
    /// The showcase binary.
    pub showcase: String,
    /// Its SHA-256.
    pub showcase_sha256: String,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per row.
    pub warmup_s: f64,
    /// wrk connections.
    pub connections: usize,
    /// Cores of the server.
    pub server_cores: String,
    /// Cores of wrk.
    pub load_cores: String,
    /// Quick mode.
    pub quick: bool,
    /// Every row.
    pub rows: Vec<RowResult>,
    /// What went wrong during or after the load.
    pub problems: Vec<String>,
}

fn progress(msg: &str) {
    eprint!("\r\x1b[2K{msg}");
}

fn fetch(server: &ServerProcess, row: Row) -> Result<Response> {
    let headers: &[(&str, &str)] = if row.br {
        &[("Accept-Encoding", "br")]
    } else {
        &[]
    };
    Client::connect(server.addr)?.send("GET", PAGES[row.page].path, headers, None)
}

/// Checks a row's answer (see the [module](self)); `page` is the same
/// page's plain answer, for a `br` row.
pub fn check(row: Row, res: &Response, page: Option<&Response>) -> Result<Answer, String> {
    let p = &PAGES[row.page];
    if res.status != 200 {
        return Err(format!(
            "answered {}: {}",
            res.status,
            String::from_utf8_lossy(&res.body)
        ));
    }
    let content_type = res.header("content-type").unwrap_or_default();
    if !content_type.starts_with(p.content_type) {
        return Err(format!(
            "Content-Type `{content_type}`, expected {}",
            p.content_type
        ));
    }
    let encoding = res.header("content-encoding");
    match page {
        None => {
            if let Some(e) = encoding {
                return Err(format!("Content-Encoding `{e}` without Accept-Encoding"));
            }
            (p.body_ok)(&res.body)?;
        }
        Some(page) => {
            let above = page.body.len() >= COMPRESSION_FLOOR;
            if p.must_compress && !above {
                return Err(format!(
                    "the page is {} bytes, under the compression floor",
                    page.body.len()
                ));
            }
            if above {
                if encoding != Some("br") {
                    return Err(format!(
                        "Content-Encoding {encoding:?}, expected `br` (is the showcase run with SHOWCASE_COMPRESSION=true?)"
                    ));
                }
                let vary = res.header("vary").unwrap_or_default();
                if !vary.to_ascii_lowercase().contains("accept-encoding") {
                    return Err(format!("Vary `{vary}` without Accept-Encoding"));
                }
                if res.body.is_empty() || res.body.len() >= page.body.len() {
                    return Err(format!(
                        "{} compressed bytes for a page of {}",
                        res.body.len(),
                        page.body.len()
                    ));
                }
            } else if encoding.is_some() || res.body != page.body {
                return Err(format!(
                    "a body under the floor ({} bytes) answered differently with Accept-Encoding: br",
                    page.body.len()
                ));
            }
        }
    }
    Ok(Answer {
        content_type: content_type.to_owned(),
        content_encoding: encoding.map(str::to_owned),
        body_bytes: res.body.len(),
    })
}

/// Every row's answer, and every page's size; the first failure fails.
fn check_all(server: &ServerProcess, rows: &[Row]) -> Result<(Vec<Answer>, Vec<usize>)> {
    let mut pages: Vec<Option<Response>> = vec![None; PAGES.len()];
    let mut answers = Vec::new();
    for &row in rows {
        let res = fetch(server, row).with_context(|| format!("GET {}", PAGES[row.page].path))?;
        let page = if row.br {
            let plain = match &pages[row.page] {
                Some(plain) => plain.clone(),
                None => fetch(server, Row { br: false, ..row })?,
            };
            Some(plain)
        } else {
            None
        };
        let answer = check(row, &res, page.as_ref())
            .map_err(|e| anyhow::anyhow!("{} (GET {}): {e}", row.name(), PAGES[row.page].path))?;
        if !row.br {
            pages[row.page] = Some(res);
        }
        answers.push(answer);
    }
    // The plain rows come first: every page was read.
    let sizes = pages
        .iter()
        .map(|res| res.as_ref().map_or(0, |res| res.body.len()))
        .collect();
    Ok((answers, sizes))
}

/// Runs the lab: checks, warm-up, rounds, checks again.
pub fn run(opts: &Options) -> Result<Report> {
    ensure!(
        opts.showcase.exists(),
        "{} not found: build it with `cargo build --release -p showcase`",
        opts.showcase.display()
    );
    let showcase = opts.showcase.canonicalize()?;
    let scratch = std::env::temp_dir().join(format!("tern-bench-site-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let outcome = measure(opts, &showcase, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    progress("");
    eprintln!();
    let (rows, problems) = outcome?;
    Ok(Report {
        schema: "tern-bench-site/1".into(),
        started_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        machine: Machine::detect(),
        showcase: opts.showcase.display().to_string(),
        showcase_sha256: sha256(&showcase)?,
        rounds: opts.rounds,
        seconds: opts.seconds,
        warmup_s: opts.warmup_s,
        connections: opts.connections,
        server_cores: opts.server_cores.clone(),
        load_cores: opts.load_cores.clone(),
        quick: opts.quick,
        rows,
        problems,
    })
}

fn measure(
    opts: &Options,
    showcase: &Path,
    scratch: &Path,
) -> Result<(Vec<RowResult>, Vec<String>)> {
    progress("starting the showcase ...");
    let server = ServerProcess::start_in(
        scratch,
        showcase,
        &opts.server_cores,
        "TERN_ADDR",
        &[
            ("TERN_WORKERS", "1"),
            ("SHOWCASE_COMPRESSION", "true"),
            ("SHOWCASE_RATE_LIMIT", "1000000000"),
            ("RUST_LOG", "info"),
        ],
    )?;
    let rows = rows();
    progress("checking every answer ...");
    let (answers, page_bytes) = check_all(&server, &rows).context("before the load")?;
    let scripts = scratch.join("scripts");
    std::fs::create_dir_all(&scripts)?;
    let mut paths = Vec::new();
    for &row in &rows {
        let table = [TableRequest {
            method: "GET".to_owned(),
            path: PAGES[row.page].path.to_owned(),
            headers: if row.br {
                vec![("Accept-Encoding".to_owned(), "br".to_owned())]
            } else {
                Vec::new()
            },
            body: None,
        }];
        let path = scripts.join(format!("{}.lua", row.name().replace(' ', "-")));
        std::fs::write(&path, wrk::script(&table, 1))?;
        paths.push(path);
    }
    let mut problems = Vec::new();
    let mut load = |i: usize, seconds: f64, round: usize, position: usize| -> Result<Trial> {
        let before = server.usage()?;
        let r = wrk::run_wrk(
            &paths[i],
            server.addr,
            &opts.load_cores,
            opts.connections,
            seconds,
        )?;
        let after = server.usage()?;
        let errors = r.non_2xx + r.socket_errors();
        if errors > 0 {
            problems.push(format!(
                "{}{}: {} answers outside 2xx and {} socket errors in {} requests",
                rows[i].name(),
                if round == 0 {
                    " (warm-up)".to_owned()
                } else {
                    format!(", round {round}")
                },
                r.non_2xx,
                r.socket_errors(),
                r.requests
            ));
        }
        let n = r.requests.max(1) as f64;
        Ok(Trial {
            round,
            position,
            rps: r.rps(),
            cpu_us_per_req: (after.user_s + after.system_s - before.user_s - before.system_s) * 1e6
                / n,
            sys_us_per_req: (after.system_s - before.system_s) * 1e6 / n,
            p99_us: r.p99_us,
            wire_bytes: r.bytes as f64 / n,
            errors,
        })
    };
    if opts.warmup_s > 0.0 {
        for (i, row) in rows.iter().enumerate() {
            progress(&format!("warm-up {} ...", row.name()));
            load(i, opts.warmup_s, 0, 0)?;
        }
    }
    let mut trials: Vec<Vec<Trial>> = vec![Vec::new(); rows.len()];
    for round in 0..opts.rounds {
        for (position, i) in rotation(round, rows.len()).into_iter().enumerate() {
            progress(&format!(
                "round {}/{} {} ...",
                round + 1,
                opts.rounds,
                rows[i].name()
            ));
            trials[i].push(load(i, opts.seconds, round + 1, position + 1)?);
        }
    }
    progress("checking every answer again ...");
    match check_all(&server, &rows) {
        Ok((after, _)) => {
            for ((row, a), b) in rows.iter().zip(&answers).zip(&after) {
                if a != b {
                    problems.push(format!(
                        "{}: the answer changed under load: {a:?} before, {b:?} after",
                        row.name()
                    ));
                }
            }
        }
        Err(e) => problems.push(format!("after the load: {e:#}")),
    }
    server.stop()?;
    let rps = |row: Row| -> Vec<f64> {
        let i = rows.iter().position(|r| *r == row).unwrap_or(0);
        trials[i].iter().map(|t| t.rps).collect()
    };
    let results = rows
        .iter()
        .zip(answers)
        .zip(&trials)
        .map(|((&row, answer), t)| {
            let page = &PAGES[row.page];
            let own = rps(row);
            let ratio = (row.page != 0).then(|| ratio_summary(&own, &rps(row.reference())));
            RowResult {
                row: row.name(),
                path: page.path.to_owned(),
                br: row.br,
                answer,
                page_bytes: page_bytes[row.page],
                trials: t.clone(),
                rps: summarize(&own),
                goal: page.goal,
                goal_met: page
                    .goal
                    .zip(ratio)
                    .map(|(goal, ratio)| ratio.median >= goal),
                ratio,
                br_over_plain: row
                    .br
                    .then(|| ratio_summary(&own, &rps(Row { br: false, ..row }))),
                cpu_us_per_req: summarize(&t.iter().map(|t| t.cpu_us_per_req).collect::<Vec<_>>()),
                wire_bytes: summarize(&t.iter().map(|t| t.wire_bytes).collect::<Vec<_>>()),
            }
        })
        .collect();
    Ok((results, problems))
}

/// `12,345`.
fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_owned();
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The report for a terminal.
pub fn terminal(r: &Report) -> String {
    let m = &r.machine;
    let mut out = format!(
        "machine: {} ({} cores, {} MiB), kernel {}, {}, {}; commit {}{}\n",
        m.cpu_model,
        m.cores,
        m.memory_kib / 1024,
        m.kernel,
        m.rustc,
        m.wrk,
        m.git_commit.get(..12).unwrap_or(&m.git_commit),
        if m.git_dirty {
            " (uncommitted changes)"
        } else {
            ""
        }
    );
    out.push_str(&format!(
        "method: {} round(s) of {} s per row ({} s of warm-up per row first), all rows against one showcase process (SHOWCASE_COMPRESSION=true, TERN_WORKERS=1) on core(s) {}, wrk -t1 -c{} on core(s) {}, rows rotated each round{}\nshowcase: {} (sha256 {})\n\n",
        r.rounds,
        r.seconds,
        r.warmup_s,
        r.server_cores,
        r.connections,
        r.load_cores,
        if r.quick { " (QUICK: figures mean nothing)" } else { "" },
        r.showcase,
        r.showcase_sha256.get(..12).unwrap_or(&r.showcase_sha256),
    ));
    out.push_str(&format!(
        "{:<14} {:>26} {:>22} {:>6} {:>5} {:>8} {:>8} {:>9} {:>9} {:>20}\n",
        "row",
        "req/s [min-max]",
        "/ plaintext [min-max]",
        "goal",
        "met",
        "page B",
        "sent B",
        "wire B",
        "CPU/req",
        "br / plain [min-max]"
    ));
    for row in &r.rows {
        let ratio = row.ratio.map_or("reference".to_owned(), |s| {
            format!("{:.3} [{:.3}-{:.3}]", s.median, s.min, s.max)
        });
        out.push_str(&format!(
            "{:<14} {:>26} {:>22} {:>6} {:>5} {:>8} {:>8} {:>9} {:>7.1}us {:>20}\n",
            row.row,
            format!(
                "{} [{}-{}]",
                grouped(row.rps.median),
                grouped(row.rps.min),
                grouped(row.rps.max)
            ),
            ratio,
            row.goal.map_or(String::new(), |g| format!(">={g}")),
            match row.goal_met {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "",
            },
            grouped(row.page_bytes as f64),
            grouped(row.answer.body_bytes as f64),
            grouped(row.wire_bytes.median),
            row.cpu_us_per_req.median,
            row.br_over_plain.map_or(String::new(), |s| format!(
                "{:.3} [{:.3}-{:.3}]",
                s.median, s.min, s.max
            )),
        ));
    }
    let goals: Vec<&RowResult> = r.rows.iter().filter(|row| row.goal.is_some()).collect();
    let met = goals
        .iter()
        .filter(|row| row.goal_met == Some(true))
        .count();
    out.push_str(&format!(
        "\ngoals met: {met} of {}{}\n",
        goals.len(),
        if met < goals.len() {
            format!(
                " (missed: {})",
                goals
                    .iter()
                    .filter(|row| row.goal_met != Some(true))
                    .map(|row| row.row.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        }
    ));
    for p in &r.problems {
        out.push_str(&format!("problem: {p}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_vec(),
        }
    }

    #[test]
    fn rows_pair_each_page_with_its_reference() {
        let rows = rows();
        assert_eq!(rows.len(), 2 * PAGES.len());
        let names: Vec<String> = rows.iter().map(|r| r.name()).collect();
        assert_eq!(names[0], "plaintext");
        assert_eq!(names[5], "home br");
        for row in rows {
            assert_eq!(
                row.reference(),
                Row {
                    page: 0,
                    br: row.br
                }
            );
        }
    }

    #[test]
    fn every_round_runs_every_row_once_from_another_start() {
        for round in 0..10 {
            let mut order = rotation(round, 8);
            assert_eq!(order[0], round % 8);
            order.sort_unstable();
            assert_eq!(order, (0..8).collect::<Vec<_>>());
        }
    }

    #[test]
    fn ratios_are_taken_per_round_then_summarized() {
        // Round 2's plaintext is slow: its ratio is high, and the
        // median of the ratios is not the ratio of the medians.
        let s = ratio_summary(&[50.0, 40.0, 60.0], &[100.0, 50.0, 100.0]);
        assert_eq!((s.n, s.median, s.min, s.max), (3, 0.6, 0.5, 0.8));
        let s = ratio_summary(&[50.0, 40.0], &[0.0, 80.0]);
        assert_eq!((s.n, s.median), (1, 0.5));
    }

    #[test]
    fn answers_are_checked_table() {
        let html = format!(
            "<!doctype html><h1>Tern</h1>{}</html>\n",
            "x".repeat(20_000)
        );
        let home = response(
            200,
            &[("content-type", "text/html; charset=utf-8")],
            html.as_bytes(),
        );
        let plain = |page| Row { page, br: false };
        let br = |page| Row { page, br: true };
        let br_ok = response(
            200,
            &[
                ("content-type", "text/html; charset=utf-8"),
                ("content-encoding", "br"),
                ("vary", "accept-encoding"),
            ],
            b"compressed",
        );
        let cases: Vec<(Row, Response, Option<&Response>, bool)> = vec![
            (plain(1), home.clone(), None, true),
            (plain(1), response(429, &[], b"slow down"), None, false),
            (
                plain(1),
                response(200, &[("content-type", "text/plain")], html.as_bytes()),
                None,
                false,
            ),
            (
                plain(1),
                response(
                    200,
                    &[("content-type", "text/html")],
                    b"<h1>Tern</h1></html>",
                ),
                None,
                false,
            ),
            (br(1), br_ok.clone(), Some(&home), true),
            // Not compressed: the showcase runs without compression.
            (br(1), home.clone(), Some(&home), false),
            (
                br(1),
                response(
                    200,
                    &[("content-type", "text/html"), ("content-encoding", "br")],
                    b"compressed",
                ),
                Some(&home),
                false,
            ),
            (
                plain(0),
                response(200, &[("content-type", "text/plain")], b"Hello, World!"),
                None,
                true,
            ),
            (
                plain(2),
                response(
                    200,
                    &[("content-type", "application/json")],
                    br#"{"pages":[{"path":"/"},{"path":"/guide"}]}"#,
                ),
                None,
                true,
            ),
            (
                plain(2),
                response(200, &[("content-type", "application/json")], b"{}"),
                None,
                false,
            ),
        ];
        for (i, (row, res, page, ok)) in cases.into_iter().enumerate() {
            assert_eq!(check(row, &res, page).is_ok(), ok, "case {i}: {res:?}");
        }
        // Under the floor, the br row must be the page itself.
        let llms = response(200, &[("content-type", "text/plain")], b"# Tern\n");
        assert!(check(br(3), &llms, Some(&llms)).is_ok());
        let other = response(200, &[("content-type", "text/plain")], b"# Tern!\n");
        assert!(check(br(3), &other, Some(&llms)).is_err());
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(grouped(1234567.4), "1,234,567");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(f64::NAN), "-");
    }
}
