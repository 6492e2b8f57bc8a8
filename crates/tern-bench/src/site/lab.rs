//! A run: one showcase process, every answer checked, the warm-up, the
//! rounds, and every answer checked again.

use std::path::Path;

use anyhow::{ensure, Context, Result};

use super::cache::{self, CacheCounts};
use super::check::check_all;
use super::report::{ratio_summary, Report, RowResult, Trial};
use super::{rotation, rows, Options, Row, PAGES};
use crate::{
    console::{progress, progress_end},
    machine::{unix_now, Machine},
    process::{sha256, ServerProcess},
    stats::summarize,
    wrk::{self, TableRequest},
};

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
    progress_end();
    let (rows, problems) = outcome?;
    Ok(Report {
        schema: "tern-bench-site/1".into(),
        started_unix: unix_now(),
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
            // `/metrics`, for the hit rate of the cache of compressed
            // answers (`tern_site_compression_cache_total`).
            ("TERN_METRICS", "on"),
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
    // Each row's cache counts over its measured trials (the warm-up's
    // are left out).
    let mut counts: Vec<Option<CacheCounts>> = vec![None; rows.len()];
    let mut load = |i: usize, seconds: f64, round: usize, position: usize| -> Result<Trial> {
        let before = cache::read(&server)?;
        let m = wrk::measure(
            &server,
            &paths[i],
            &opts.load_cores,
            opts.connections,
            seconds,
        )?;
        if let Some(failures) = m.load.failures() {
            problems.push(format!(
                "{}{}: {failures}",
                rows[i].name(),
                if round == 0 {
                    " (warm-up)".to_owned()
                } else {
                    format!(", round {round}")
                },
            ));
        }
        if round > 0 {
            if let (Some(before), Some(after)) = (before, cache::read(&server)?) {
                let delta = after.since(before);
                counts[i] = Some(counts[i].unwrap_or_default().plus(delta));
            }
        }
        let n = m.load.requests.max(1) as f64;
        Ok(Trial {
            round,
            position,
            rps: m.load.rps(),
            cpu_us_per_req: m.cpu_us_per_req(),
            sys_us_per_req: m.system_s * 1e6 / n,
            p99_us: m.load.p99_us,
            wire_bytes: m.load.bytes as f64 / n,
            errors: m.load.non_2xx + m.load.socket_errors(),
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
        .zip(counts)
        .map(|(((&row, answer), t), cache)| {
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
                cache,
            }
        })
        .collect();
    Ok((results, problems))
}
