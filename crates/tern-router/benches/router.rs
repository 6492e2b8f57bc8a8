//! tern-router against matchit, path-tree and actix-router, side by side.
//!
//! One criterion group per scenario and lookup set, with one function per
//! router, so every ratio compares numbers taken in the same run:
//!
//! - `amber_100_*`, `amber_10000_*`: Amber's tables of 100 and 10,000 routes,
//!   looked up on a static, a parameter, a glob and a not-found path;
//! - `adonis_{uniform,app}_*`: AdonisJS's 1,000 static + 100 dynamic routes,
//!   looked up on the first route, the last, both alternately, and every
//!   route in a shuffled order;
//! - `mixed_1000_cycle`: the bench lab's 1,000-route mixed table and its
//!   4,096-path cycle.
//!
//! Throughput is set to the number of paths per iteration, so criterion's
//! `thrpt` line is lookups per second. A router that cannot build a table,
//! or answers any lookup wrongly, is skipped for that scenario with a line
//! on stderr saying why. `crates/tern-router/BENCHMARKS.md` records a
//! run and how to reproduce it.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};

mod lab;

use lab::peers::{Actix, Matchit, PathTree, Peer, Tern};
use lab::{Lookup, Scenario, Table};

/// Builds the table, or prints why the router is skipped.
fn build<P: Peer>(table: &Table) -> Option<P> {
    match P::build(table) {
        Ok(router) => Some(router),
        Err(reason) => {
            eprintln!("skip: {} cannot build {}: {reason}", P::NAME, table.name);
            None
        }
    }
}

/// Times one lookup set for one router, after checking every answer.
fn bench<P: Peer>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    router: Option<&P>,
    table: &Table,
    set: &str,
    lookups: &[Lookup],
) {
    let Some(router) = router else {
        return;
    };
    if let Err(wrong) = router.verify(table, lookups) {
        // Our own router answering wrongly is a bug, not a result.
        assert_ne!(P::NAME, Tern::NAME, "{wrong}");
        eprintln!("skip: {} on {}_{set}: {wrong}", P::NAME, table.name);
        return;
    }
    group.bench_function(P::NAME, |b| {
        b.iter(|| {
            for lookup in lookups {
                black_box(router.find(black_box(&lookup.path)));
            }
        });
    });
}

fn run(c: &mut Criterion, scenario: &Scenario) {
    let table = &scenario.table;
    let tern = build::<Tern>(table);
    let matchit = build::<Matchit>(table);
    let path_tree = build::<PathTree>(table);
    let actix = build::<Actix>(table);
    assert!(tern.is_some(), "tern-router must build every table");
    for (set, lookups) in &scenario.lookups {
        let mut group = c.benchmark_group(format!("{}_{set}", table.name));
        group.throughput(Throughput::Elements(lookups.len() as u64));
        bench(&mut group, tern.as_ref(), table, set, lookups);
        bench(&mut group, matchit.as_ref(), table, set, lookups);
        bench(&mut group, path_tree.as_ref(), table, set, lookups);
        bench(&mut group, actix.as_ref(), table, set, lookups);
        group.finish();
    }
}

fn amber(c: &mut Criterion) {
    run(c, &lab::amber(100));
    run(c, &lab::amber(10_000));
}

fn adonis(c: &mut Criterion) {
    run(c, &lab::adonis(false));
    run(c, &lab::adonis(true));
}

fn mixed(c: &mut Criterion) {
    run(c, &lab::mixed());
}

// Written out rather than with `criterion_group!`, whose generated `pub fn`
// has no docs for the workspace's `missing_docs` lint.
fn main() {
    let mut c = Criterion::default().configure_from_args();
    amber(&mut c);
    adonis(&mut c);
    mixed(&mut c);
    c.final_summary();
}
