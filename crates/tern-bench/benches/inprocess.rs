//! Layer 2, time: one request through Tern vs the hand-written handler,
//! side by side in the same criterion group, per scenario.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use tern_bench::inprocess::{self, Handwritten};

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let app = inprocess::tern_app();
    let hand = Handwritten::default();
    for scenario in inprocess::SCENARIOS {
        let mut group = c.benchmark_group(*scenario);
        let mut i = 0usize;
        group.bench_function("handwritten", |b| {
            b.iter(|| {
                i += 1;
                rt.block_on(inprocess::handwritten_once(
                    &hand,
                    inprocess::request(scenario, i),
                ))
            })
        });
        let mut i = 0usize;
        group.bench_function("tern", |b| {
            b.iter(|| {
                i += 1;
                rt.block_on(inprocess::tern_once(&app, inprocess::request(scenario, i)))
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
