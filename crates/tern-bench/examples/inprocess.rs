//! Layer 2, instructions: runs one scenario N times for callgrind.
//!
//! `inprocess SIDE SCENARIO N` with SIDE `tern` or `handwritten`; the
//! instructions per request are (total at N - total at 0) / N, which
//! `tern-bench inprocess` computes.

use tern_bench::{
    callgrind,
    inprocess::{self, Handwritten},
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (side, scenario, n) = match args.as_slice() {
        [_, side, scenario, n] => (
            side.as_str(),
            scenario.as_str(),
            n.parse::<usize>().unwrap_or(0),
        ),
        _ => {
            eprintln!("usage: inprocess tern|handwritten SCENARIO N");
            std::process::exit(2);
        }
    };
    // Tern's default log output, as `tern::run` and `tern::serve` install
    // it in every app that brings no subscriber of its own: without one,
    // `tracing` hands each event to the `log` crate's fallback, a cost no
    // served app pays. Installed for both sides (the hand-written side
    // makes no `tracing` calls); set before the counted requests.
    tern::init_logging();
    let rt = callgrind::target_runtime();
    let app = inprocess::tern_app();
    let hand = Handwritten::default();
    // The requests are built before the measured loop in both cases.
    let reqs: Vec<_> = (0..n.max(1))
        .map(|i| inprocess::request(scenario, i))
        .collect();
    // One warm-up request outside the count difference (both N and 0 do it).
    let warm = inprocess::request(scenario, 0);
    rt.block_on(async {
        match side {
            "tern" => {
                let _ = inprocess::tern_once(&app, warm).await;
                for req in reqs.into_iter().take(n) {
                    std::hint::black_box(inprocess::tern_once(&app, req).await);
                }
            }
            _ => {
                let _ = inprocess::handwritten_once(&hand, warm).await;
                for req in reqs.into_iter().take(n) {
                    std::hint::black_box(inprocess::handwritten_once(&hand, req).await);
                }
            }
        }
    });
}
