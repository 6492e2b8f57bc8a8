//! The differential between the two HTTP/1.1 engines (`docs/plans/http1.md`
//! §3.2): the same app served by Tern's own engine and by hyper's path,
//! each on a real socket, given the same bytes: the hostile cases of
//! `tests/hostile.rs`, the byte strings of `tests/framing.rs`, the files
//! of `hardening/corpus/h1/`, and seeded generated pipelines with
//! mutations. Each input is written whole, and again cut in two at every
//! offset (inputs up to 512 bytes; at seeded random offsets above that,
//! and for the generated cases). The answered statuses, the requests the
//! app saw (method, target, body bytes) and whether the connection closed
//! must be the same on both, except for the differences recorded in
//! `h1_engines/known.rs`, each with its reason.
//!
//! `H1_ENGINES_SEED` and `H1_ENGINES_CASES` run other or more generated
//! cases by hand; `H1_ENGINES_CUTS=all` cuts generated cases at every
//! offset too.
#![allow(clippy::unwrap_used, missing_docs, unreachable_pub)]

mod common;
#[path = "common/hostile_cases.rs"]
mod hostile_cases;

#[path = "h1_engines/app.rs"]
mod app;
#[path = "h1_engines/exchange.rs"]
mod exchange;
#[path = "h1_engines/generate.rs"]
mod generate;
#[path = "h1_engines/inputs.rs"]
mod inputs;
#[path = "h1_engines/known.rs"]
mod known;

use std::{collections::BTreeMap, net::SocketAddr, time::Duration};

use exchange::{exchange, show, Outcome};
use futures_util::StreamExt as _;
use tern::config::Http1Engine;

/// How long a connection may stay silent before its exchange is over.
/// Most generated cases end with `Connection: close`, so few wait.
const QUIET: Duration = Duration::from_millis(250);
/// A difference is looked at again with this wait, so that one made only
/// by a slow answer (a loaded machine) is not taken for an engine's.
const PATIENT: Duration = Duration::from_millis(1500);
const DEFAULT_SEED: u64 = 0x2026_1204;
const DEFAULT_CASES: usize = 2000;
/// Exchanges in flight at once (each on both engines).
const PARALLEL: usize = 48;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// An engine's name and its server's address.
type Server = (&'static str, SocketAddr);

/// One input and the cuts to write it with.
struct Job {
    case: usize,
    cuts: Vec<usize>,
}

/// The cuts of one input: whole, then in two at every offset (up to 512
/// bytes, unless `sampled`), else at `samples` seeded offsets.
fn cuts(len: usize, sampled: bool, rng: &mut generate::Rng, samples: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    if len < 2 {
        return out;
    }
    if len <= 512 && !sampled {
        out.extend((1..len).map(|k| vec![k]));
    } else {
        out.extend((0..samples).map(|_| vec![1 + rng.below(len - 1)]));
    }
    out
}

/// Why `tern` and `hyper` differ, or `None` when they do not.
fn compare(tern: &Outcome, hyper: &Outcome) -> Option<String> {
    let mut why = Vec::new();
    if tern.answers != hyper.answers {
        why.push(format!(
            "answers: tern {:?}, hyper {:?}",
            tern.answers, hyper.answers
        ));
    }
    if tern.seen != hyper.seen {
        why.push(format!(
            "the app saw: tern {:?}, hyper {:?}",
            tern.seen, hyper.seen
        ));
    }
    if tern.closed != hyper.closed {
        why.push(format!(
            "closed: tern {}, hyper {}",
            tern.closed, hyper.closed
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

async fn both(addrs: [Server; 2], bytes: &[u8], cuts: &[usize], quiet: Duration) -> [Outcome; 2] {
    let (t, h) = tokio::join!(
        exchange(addrs[0], bytes, cuts, quiet),
        exchange(addrs[1], bytes, cuts, quiet)
    );
    [t, h]
}

/// What became of one job.
enum Verdict {
    Same,
    Known(usize),
    /// The case's name, and what differs.
    Unexplained(String, String),
}

async fn run(addrs: [Server; 2], input: &inputs::Input, cuts: &[usize]) -> Verdict {
    let [mut tern, mut hyper] = both(addrs, &input.bytes, cuts, QUIET).await;
    if compare(&tern, &hyper).is_some() {
        // Timing only: an answer that came after the quiet wait.
        [tern, hyper] = both(addrs, &input.bytes, cuts, PATIENT).await;
    }
    let Some(why) = compare(&tern, &hyper) else {
        return Verdict::Same;
    };
    if let Some(row) = known::KNOWN
        .iter()
        .position(|k| (k.applies)(&input.bytes) && (k.shape)(&tern, &hyper))
    {
        return Verdict::Known(row);
    }
    Verdict::Unexplained(
        input.name.clone(),
        format!(
            "cut at {cuts:?}: {why}\n    sent: {}\n    tern wrote: {}\n    hyper wrote: {}",
            show(&input.bytes),
            show(&tern.raw),
            show(&hyper.raw)
        ),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_engines_answer_alike_but_for_the_recorded_differences() {
    let started = std::time::Instant::now();
    let mut servers = Vec::new();
    for (name, engine) in [("tern", Http1Engine::Tern), ("hyper", Http1Engine::Hyper)] {
        let mut config = common::config();
        config.http1 = engine;
        servers.push((name, common::spawn_with(app::app(name), config).await));
    }
    let addrs = [
        (servers[0].0, servers[0].1.addr),
        (servers[1].0, servers[1].1.addr),
    ];

    let seed = env_or("H1_ENGINES_SEED", DEFAULT_SEED);
    let count = env_or("H1_ENGINES_CASES", DEFAULT_CASES);
    let all_cuts = std::env::var("H1_ENGINES_CUTS").as_deref() == Ok("all");
    let mut named = inputs::hostile();
    named.extend(inputs::framing());
    named.extend(inputs::corpus());
    named.extend(inputs::recorded());
    let named_count = named.len();
    let generated = generate::cases(seed, count);
    let mut all = named;
    all.extend(generated.into_iter().map(|g| inputs::Input {
        name: g.name,
        bytes: g.bytes,
    }));

    let mut rng = generate::Rng::new(seed ^ 0x5eed);
    let mut jobs = Vec::new();
    for (case, input) in all.iter().enumerate() {
        let generated = case >= named_count;
        let samples = if generated { 2 } else { 16 };
        for cuts in cuts(input.bytes.len(), generated && !all_cuts, &mut rng, samples) {
            jobs.push(Job { case, cuts });
        }
    }
    let jobs_count = jobs.len();
    let verdicts: Vec<Verdict> = futures_util::stream::iter(jobs)
        .map(|job| {
            let input = &all[job.case];
            async move { run(addrs, input, &job.cuts).await }
        })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;

    let mut same = 0;
    let mut known_hits = vec![0usize; known::KNOWN.len()];
    // Per case: how many of its exchanges differ, and the first.
    let mut unexplained: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for verdict in verdicts {
        match verdict {
            Verdict::Same => same += 1,
            Verdict::Known(row) => known_hits[row] += 1,
            Verdict::Unexplained(name, why) => {
                let entry = unexplained.entry(name).or_insert((0, why));
                entry.0 += 1;
            }
        }
    }
    let differing: usize = unexplained.values().map(|(n, _)| n).sum();
    println!(
        "{} inputs ({named_count} named, {count} generated from seed {seed:#x}), {jobs_count} \
         exchanges on each engine in {:.1?}: {same} alike, {differing} unexplained in {} inputs",
        all.len(),
        started.elapsed(),
        unexplained.len()
    );
    for (row, hits) in known::KNOWN.iter().zip(&known_hits) {
        println!("  recorded difference `{}`: {hits} exchanges", row.name);
    }
    let report: Vec<String> = unexplained
        .iter()
        .map(|(name, (n, first))| format!("{name}: {n} exchanges; the first {first}"))
        .collect();
    assert!(
        unexplained.is_empty(),
        "{differing} exchanges of {} inputs differ without a recorded reason:\n{}",
        unexplained.len(),
        report.join("\n")
    );
    // Every recorded difference still shows (each has a named input in
    // `inputs::recorded` or the other tables, whatever the seed), but
    // those that show only by timing: a row no input needs any more is a
    // rule that changed, and the table must say so.
    for (row, hits) in known::KNOWN
        .iter()
        .zip(&known_hits)
        .filter(|(row, _)| !row.by_timing)
    {
        assert!(
            *hits > 0,
            "the recorded difference `{}` no longer shows ({})",
            row.name,
            row.reason
        );
    }
    for (_, server) in servers {
        server.shutdown().await;
    }
}
