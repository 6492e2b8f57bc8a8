//! Runs the bench lab's 4,096-path mixed cycle N times for one router, for
//! counting instructions per lookup under callgrind.
//!
//! ```text
//! cargo build --release -p tern-router --example mixed_cycle
//! valgrind --tool=callgrind target/release/examples/mixed_cycle tern-router 0
//! valgrind --tool=callgrind target/release/examples/mixed_cycle tern-router 50
//! ```
//!
//! Instructions per lookup = (Ir(N) - Ir(0)) / (N * 4096): the run with
//! N = 0 builds the table and checks every answer, and nothing else, so the
//! difference is the lookups alone. Routers: `tern-router`, `matchit`,
//! `path-tree`, `actix-router`.

use std::hint::black_box;
use std::process::ExitCode;

#[path = "../benches/lab/mod.rs"]
mod lab;

use lab::peers::{Actix, Matchit, PathTree, Peer, Tern};

fn cycle<P: Peer>(cycles: usize) -> Result<usize, String> {
    let scenario = lab::mixed();
    let router = P::build(&scenario.table)?;
    let lookups = &scenario.lookups[0].1;
    router.verify(&scenario.table, lookups)?;
    let mut checksum = 0;
    for _ in 0..cycles {
        for lookup in lookups {
            if let Some((route, _)) = black_box(router.find(black_box(&lookup.path))) {
                checksum += route;
            }
        }
    }
    Ok(checksum)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(Ok(cycles))) = (args.first(), args.get(1).map(|n| n.parse::<usize>()))
    else {
        eprintln!("usage: mixed_cycle <tern-router|matchit|path-tree|actix-router> <cycles>");
        return ExitCode::from(2);
    };
    let result = match name.as_str() {
        Tern::NAME => cycle::<Tern>(cycles),
        Matchit::NAME => cycle::<Matchit>(cycles),
        PathTree::NAME => cycle::<PathTree>(cycles),
        Actix::NAME => cycle::<Actix>(cycles),
        other => Err(format!("unknown router {other}")),
    };
    match result {
        Ok(checksum) => {
            println!(
                "{name}: {} lookups, checksum {checksum}",
                cycles * lab::CYCLE
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
