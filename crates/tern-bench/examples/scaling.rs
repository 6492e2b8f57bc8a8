//! Cost per size: sends one request of `PARSER` at `SIZE` through Tern
//! (`run`), or only builds it (`skip`), for callgrind; `tern-bench
//! scaling` takes the difference.
//!
//! `scaling PARSER SIZE run|skip`

use tern_bench::{callgrind, scaling};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, parser, size, mode] = args.as_slice() else {
        eprintln!("usage: scaling PARSER SIZE run|skip");
        std::process::exit(2);
    };
    let size: usize = size.parse().unwrap_or(0);
    let rt = callgrind::target_runtime();
    let app = scaling::scaling_app();
    let req = scaling::request(parser, size);
    // A warm-up request of the smallest size, in both modes.
    let warm = scaling::request(parser, 1);
    rt.block_on(async {
        let (status, _) = tern_bench::inprocess::tern_once(&app, warm).await;
        if mode == "run" {
            let (status, body) = tern_bench::inprocess::tern_once(&app, req).await;
            if !status.is_success() {
                eprintln!(
                    "{parser} at {size}: {status}: {}",
                    String::from_utf8_lossy(&body)
                );
                std::process::exit(1);
            }
        } else {
            std::hint::black_box(req);
        }
        std::hint::black_box(status);
    });
}
