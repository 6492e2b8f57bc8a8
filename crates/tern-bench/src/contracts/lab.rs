//! The contract scenarios measured: over real sockets (one server process
//! pinned to its core, wrk pinned to another, the four scenarios side by
//! side in each round, in rotated order) and in process under callgrind.
//!
//! Every answer of a correctness pass is decoded and compared before and
//! after the rounds; during the load, wrk counts the answers outside 2xx,
//! and one of them (or a socket error) fails the run: a replayed COSE
//! message, for one, is a `401`.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use tern_contract::cose::Keyring;

use super::{check_answer, client_keyring, server_settings, Scenario, REPLAY_WINDOW_S, SCENARIOS};
use crate::{
    callgrind,
    client::Client,
    console::{group_thousands, progress, progress_end},
    machine::{unix_now, Machine},
    process::{sha256, ServerProcess},
    stats::{summarize, Summary},
    wrk::{self, LoadResult},
};

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `contracts` example binary.
    pub binary: PathBuf,
    /// Rounds; each runs every scenario once, in rotated order.
    pub rounds: usize,
    /// Seconds per measured trial.
    pub seconds: f64,
    /// Seconds of warm-up per scenario before the first round (0: none).
    pub warmup_s: f64,
    /// Connections of wrk.
    pub connections: usize,
    /// Distinct sealed messages in the `cose` table.
    pub pool: usize,
    /// Requests per callgrind measurement (N).
    pub callgrind_requests: usize,
    /// `taskset` cores of the server.
    pub server_cores: String,
    /// `taskset` cores of wrk.
    pub load_cores: String,
    /// Quick mode (CI): answers checked, figures not meaningful.
    pub quick: bool,
}

/// A throughput goal: the median req/s of `numerator` over that of
/// `denominator` should be at least `at_least`.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Goal {
    /// What the ratio compares.
    pub name: &'static str,
    /// The scenario on top.
    pub numerator: &'static str,
    /// The scenario below.
    pub denominator: &'static str,
    /// The goal.
    pub at_least: f64,
}

/// The goals of issue 11.
pub const GOALS: [Goal; 3] = [
    Goal {
        name: "validated JSON / generic",
        numerator: "json",
        denominator: "generic",
        at_least: 0.97,
    },
    Goal {
        name: "CBOR / JSON",
        numerator: "cbor",
        denominator: "json",
        at_least: 1.15,
    },
    Goal {
        name: "COSE / JSON",
        numerator: "cose",
        denominator: "json",
        at_least: 0.80,
    },
];

/// One measured trial of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    /// Round, from 0.
    pub round: usize,
    /// Place in the round's order, from 0.
    pub position: usize,
    /// Requests per second.
    pub rps: f64,
    /// Server CPU time (user and system) per request, microseconds.
    pub cpu_us_per_req: f64,
    /// What wrk measured.
    pub load: LoadResult,
}

/// One scenario's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    /// Name.
    pub name: String,
    /// What it measures.
    pub description: String,
    /// Route.
    pub path: String,
    /// Media type of the request and the answer.
    pub content_type: String,
    /// Bytes of one request body.
    pub body_bytes: usize,
    /// Requests in its wrk table.
    pub table_len: usize,
    /// Requests per second over the rounds.
    pub rps: Summary,
    /// 99th-percentile latency over the rounds, microseconds.
    pub p99_us: Summary,
    /// Server CPU per request over the rounds, microseconds.
    pub cpu_us_per_req: Summary,
    /// The trials.
    pub trials: Vec<Trial>,
}

/// A goal's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The goal.
    pub goal: Goal,
    /// Median req/s of the numerator over that of the denominator.
    pub ratio: f64,
    /// The same ratio within each round (the two trials of a round ran
    /// minutes apart at most).
    pub per_round: Summary,
    /// Whether `ratio` reaches the goal.
    pub pass: bool,
}

/// In-process instructions per request of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Instructions {
    /// Scenario.
    pub scenario: String,
    /// Requests measured (N).
    pub requests: usize,
    /// (Ir at N - Ir at 0) / N.
    pub per_request: f64,
}

/// A ratio of in-process instructions per request.
#[derive(Debug, Clone, Serialize)]
pub struct CostRatio {
    /// What it compares (`json / generic`).
    pub name: String,
    /// Instructions of the first over the second.
    pub ratio: f64,
}

/// The settings of a run.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub duration_s: f64,
    /// Warm-up seconds per scenario.
    pub warmup_s: f64,
    /// Connections.
    pub connections: usize,
    /// Sealed messages in the `cose` pool.
    pub cose_pool: usize,
    /// The server's COSE replay window, seconds.
    pub replay_window_s: u64,
    /// Requests per callgrind measurement.
    pub callgrind_requests: usize,
    /// `taskset` cores of the server.
    pub server_cores: String,
    /// `taskset` cores of wrk.
    pub load_cores: String,
    /// Quick mode.
    pub quick: bool,
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `tern-bench-contracts/1`.
    pub schema: String,
    /// Start, seconds since the Unix epoch.
    pub started_unix: u64,
    /// The machine.
    pub machine: Machine,
    /// How the run was made.
    pub settings: Settings,
    /// The example binary and its SHA-256.
    pub binary: (String, String),
    /// Figures per scenario, in table order.
    pub scenarios: Vec<ScenarioResult>,
    /// The goals' outcomes.
    pub goals: Vec<Outcome>,
    /// In-process instructions per request.
    pub instructions: Vec<Instructions>,
    /// Their ratios.
    pub instruction_ratios: Vec<CostRatio>,
    /// What the figures do not say.
    pub limitations: Vec<String>,
}

/// The scripts' directory (the `cose` one is tens of megabytes), removed
/// however the run ends.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Result<ScratchDir> {
        let dir = std::env::temp_dir().join(format!("tern-bench-contracts-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Sends every scenario once over a socket and checks each answer.
fn check(server: &ServerProcess, keyring: &Keyring, rt: &tokio::runtime::Runtime) -> Result<()> {
    let mut c = Client::connect(server.addr)?;
    for s in &SCENARIOS {
        let body = super::body(s, keyring)?;
        let res = c.send(
            "POST",
            s.path,
            &[("Content-Type", s.content_type)],
            Some(&body),
        )?;
        rt.block_on(check_answer(
            s,
            res.status,
            res.header("content-type"),
            &res.body,
            keyring,
        ))?;
    }
    Ok(())
}

/// The `cose` pool must not come round within the replay window.
fn wait_out_replay_window(last_cose: Option<Instant>) {
    if let Some(last) = last_cose {
        let clear = last + Duration::from_secs(REPLAY_WINDOW_S) + Duration::from_millis(250);
        if let Some(wait) = clear.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
}

/// Runs the lab.
pub fn run(opts: &Options) -> Result<Report> {
    if !opts.binary.exists() {
        bail!(
            "{} not found: build it with `cargo build --release -p tern-bench --example contracts`",
            opts.binary.display()
        );
    }
    let machine = Machine::detect();
    let started_unix = unix_now();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let keyring = client_keyring()?;
    let dir = ScratchDir::new()?;
    let dir = dir.0.as_path();
    let mut scripts = Vec::new();
    let mut sizes = Vec::new();
    for s in &SCENARIOS {
        progress(&format!("{}: writing its wrk table ...", s.name));
        let table = super::table(s, &keyring, opts.pool)?;
        let path = dir.join(format!("{}.lua", s.name));
        std::fs::write(&path, wrk::script(&table, 1))?;
        let body_bytes = table
            .first()
            .and_then(|r| r.body.as_ref())
            .map_or(0, Vec::len);
        scripts.push(path);
        sizes.push((body_bytes, table.len()));
    }
    let mut env: Vec<(&str, String)> = server_settings();
    // One core, one worker: the server's runtime is current-thread.
    env.push(("TERN_WORKERS", "1".to_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    progress("starting the server ...");
    let server = ServerProcess::start_with(
        &opts.binary,
        &["serve"],
        &opts.server_cores,
        "TERN_ADDR",
        &env,
    )?;
    check(&server, &keyring, &rt).context("the server answered wrongly")?;
    let mut last_cose: Option<Instant> = None;
    let mut load = |i: usize, seconds: f64, what: &str| -> Result<(LoadResult, f64)> {
        let s = &SCENARIOS[i];
        if s.name == "cose" {
            wait_out_replay_window(last_cose);
        }
        let m = wrk::measure(
            &server,
            &scripts[i],
            &opts.load_cores,
            opts.connections,
            seconds,
        )
        .with_context(|| format!("{}, {what}", s.name))?;
        if s.name == "cose" {
            last_cose = Some(Instant::now());
        }
        if let Some(failures) = m.load.failures() {
            bail!(
                "{}, {what}: {failures}{}",
                s.name,
                if s.name == "cose" {
                    " (a 401 is a replay: a larger --pool?)"
                } else {
                    ""
                }
            );
        }
        let cpu = m.cpu_us_per_req();
        Ok((m.load, cpu))
    };
    if opts.warmup_s > 0.0 {
        for (i, s) in SCENARIOS.iter().enumerate() {
            progress(&format!("warm-up: {} ...", s.name));
            load(i, opts.warmup_s, "warm-up")?;
        }
    }
    let mut trials: Vec<Vec<Trial>> = vec![Vec::new(); SCENARIOS.len()];
    for round in 0..opts.rounds {
        let mut order: Vec<usize> = (0..SCENARIOS.len()).collect();
        order.rotate_left(round % SCENARIOS.len());
        for (position, &i) in order.iter().enumerate() {
            progress(&format!(
                "round {}/{}: {} ...",
                round + 1,
                opts.rounds,
                SCENARIOS[i].name
            ));
            let (result, cpu) = load(i, opts.seconds, &format!("round {round}"))?;
            trials[i].push(Trial {
                round,
                position,
                rps: result.rps(),
                cpu_us_per_req: cpu,
                load: result,
            });
        }
    }
    check(&server, &keyring, &rt).context("after the load, the server answered wrongly")?;
    server.stop()?;
    let scenarios: Vec<ScenarioResult> = SCENARIOS
        .iter()
        .zip(trials)
        .zip(sizes)
        .map(|((s, trials), (body_bytes, table_len))| ScenarioResult {
            name: s.name.to_owned(),
            description: s.description.to_owned(),
            path: s.path.to_owned(),
            content_type: s.content_type.to_owned(),
            body_bytes,
            table_len,
            rps: summarize(&trials.iter().map(|t| t.rps).collect::<Vec<_>>()),
            p99_us: summarize(&trials.iter().map(|t| t.load.p99_us).collect::<Vec<_>>()),
            cpu_us_per_req: summarize(&trials.iter().map(|t| t.cpu_us_per_req).collect::<Vec<_>>()),
            trials,
        })
        .collect();
    let goals = outcomes(&scenarios)?;
    let mut instructions = Vec::new();
    for s in &SCENARIOS {
        progress(&format!("callgrind: {} ...", s.name));
        instructions.push(measure(&opts.binary, s, opts.callgrind_requests)?);
    }
    progress_end();
    let ir = |name: &str| {
        instructions
            .iter()
            .find(|i| i.scenario == name)
            .map_or(f64::NAN, |i| i.per_request)
    };
    let instruction_ratios = GOALS
        .iter()
        .map(|g| CostRatio {
            name: format!("{} / {}", g.numerator, g.denominator),
            ratio: ir(g.numerator) / ir(g.denominator),
        })
        .collect();
    Ok(Report {
        schema: "tern-bench-contracts/1".into(),
        started_unix,
        machine,
        settings: Settings {
            rounds: opts.rounds,
            duration_s: opts.seconds.max(1.0).round(),
            warmup_s: opts.warmup_s,
            connections: opts.connections,
            cose_pool: opts.pool,
            replay_window_s: REPLAY_WINDOW_S,
            callgrind_requests: opts.callgrind_requests,
            server_cores: opts.server_cores.clone(),
            load_cores: opts.load_cores.clone(),
            quick: opts.quick,
        },
        binary: (opts.binary.display().to_string(), sha256(&opts.binary)?),
        scenarios,
        goals,
        instructions,
        instruction_ratios,
        limitations: limitations(opts),
    })
}

/// Each goal's ratio of medians and its spread over the rounds.
fn outcomes(scenarios: &[ScenarioResult]) -> Result<Vec<Outcome>> {
    let find = |name: &str| {
        scenarios
            .iter()
            .find(|s| s.name == name)
            .with_context(|| format!("no scenario {name}"))
    };
    GOALS
        .iter()
        .map(|g| {
            let (top, below) = (find(g.numerator)?, find(g.denominator)?);
            let per_round: Vec<f64> = top
                .trials
                .iter()
                .zip(&below.trials)
                .map(|(a, b)| a.rps / b.rps)
                .collect();
            let ratio = top.rps.median / below.rps.median;
            Ok(Outcome {
                goal: *g,
                ratio,
                per_round: summarize(&per_round),
                pass: ratio >= g.at_least,
            })
        })
        .collect()
}

/// Instructions per request of `scenario`, in process: both runs build
/// the same N requests (sealing them, for `cose`) and send one warm-up
/// request; one of them then sends the N.
fn measure(binary: &Path, scenario: &Scenario, n: usize) -> Result<Instructions> {
    let per_request = callgrind::per_request(binary, n, |count| {
        vec![
            "callgrind".to_owned(),
            scenario.name.to_owned(),
            count.to_string(),
            n.to_string(),
        ]
    })
    .with_context(|| format!("callgrind, {}", scenario.name))?;
    Ok(Instructions {
        scenario: scenario.name.to_owned(),
        requests: n,
        per_request,
    })
}

fn limitations(opts: &Options) -> Vec<String> {
    let mut l = vec![
        "One machine, loopback only; figures are not comparable across machines.".to_owned(),
        format!(
            "One server process for the whole run (one worker, current-thread runtime) on core(s) {}, wrk (one thread, {} connections) on core(s) {}: at the top rates wrk can be the bottleneck, which is why server CPU time per request is reported.",
            opts.server_cores, opts.connections, opts.load_cores
        ),
        format!(
            "The `cose` load replays a pool of {} distinct sealed requests, each with its own nonce, against a replay window of {REPLAY_WINDOW_S} s; each message comes round again only after the pool has cycled. Every request carries the same order: only the nonce and ciphertext differ.",
            opts.pool
        ),
        "In-process instructions (callgrind) count AppService::call and the collection of the answer's body: routing, extraction, decoding, validation, the handler, encoding and sealing; not the socket, hyper's HTTP parsing or the kernel's work (the nonce's getrandom system call counts only its user-space part).".to_owned(),
        "CPU time comes from /proc at the kernel's tick: per-request CPU is an average over each whole trial.".to_owned(),
    ];
    if opts.quick {
        l.insert(
            0,
            "QUICK MODE: one short trial per scenario and a small callgrind N, to check the answers; the figures mean nothing.".to_owned(),
        );
    }
    l
}

fn rate(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.1}k", v / 1000.0)
    } else {
        format!("{v:.0}")
    }
}

fn latency(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.0} µs")
    }
}

fn thousands(v: f64) -> String {
    group_thousands(&format!("{:.0}", v.abs()), v < 0.0)
}

/// The report as a terminal table.
pub fn terminal(r: &Report) -> String {
    let s = &r.settings;
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!("machine: {}", r.machine.summary(true)));
    line(format!(
        "method: {} round(s) of {} s per scenario (rotated order; warm-up {} s each), {} connections over loopback; server on core {}, wrk on core {}; COSE pool {} messages, replay window {} s",
        s.rounds, s.duration_s, s.warmup_s, s.connections, s.server_cores, s.load_cores, s.cose_pool, s.replay_window_s
    ));
    if s.quick {
        line("QUICK MODE: answers checked; the figures mean nothing.".to_owned());
    }
    line(String::new());
    line(format!(
        "{:<8} {:<17} {:>6} {:>10} {:>15} {:>6} {:>9} {:>9} {:>6}",
        "scenario", "content type", "body", "req/s", "min–max", "CV", "p99", "CPU/req", "non-2xx"
    ));
    for sc in &r.scenarios {
        let non_2xx: u64 = sc.trials.iter().map(|t| t.load.non_2xx).sum();
        line(format!(
            "{:<8} {:<17} {:>4} B {:>10} {:>15} {:>5.1}% {:>9} {:>6.2} µs {:>6}",
            sc.name,
            sc.content_type,
            sc.body_bytes,
            rate(sc.rps.median),
            format!("{}–{}", rate(sc.rps.min), rate(sc.rps.max)),
            sc.rps.cv * 100.0,
            latency(sc.p99_us.median),
            sc.cpu_us_per_req.median,
            non_2xx
        ));
    }
    if let Some(cose) = r.scenarios.iter().find(|sc| sc.name == "cose") {
        // Below the window, messages would come round while remembered.
        line(format!(
            "cose pool: {} messages, cycled every {:.2} s at the fastest trial (replay window {} s)",
            s.cose_pool,
            s.cose_pool as f64 / cose.rps.max,
            s.replay_window_s
        ));
    }
    line(String::new());
    line(format!(
        "{:<26} {:>7} {:>8} {:>18}  {}",
        "goal (req/s medians)", "target", "ratio", "per round min–max", "verdict"
    ));
    for o in &r.goals {
        line(format!(
            "{:<26} {:>7} {:>8.3} {:>18}  {}",
            o.goal.name,
            format!(">= {:.2}", o.goal.at_least),
            o.ratio,
            format!("{:.3}–{:.3}", o.per_round.min, o.per_round.max),
            if o.pass { "PASS" } else { "MISS" }
        ));
    }
    line(String::new());
    line(format!(
        "in process (callgrind, N = {}): instructions per request",
        s.callgrind_requests
    ));
    for i in &r.instructions {
        line(format!(
            "{:<8} {:>12}",
            i.scenario,
            thousands(i.per_request)
        ));
    }
    line(format!(
        "ratios:  {}",
        r.instruction_ratios
            .iter()
            .map(|c| format!("{} {:.3}", c.name, c.ratio))
            .collect::<Vec<_>>()
            .join(",  ")
    ));
    out
}
