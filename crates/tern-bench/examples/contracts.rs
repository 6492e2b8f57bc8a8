//! The contract scenarios' server, and their in-process runs for
//! callgrind; `tern-bench contracts` drives both.
//!
//! - `contracts serve`: serves the app of `tern_bench::contracts` at
//!   `TERN_ADDR`, configured as `tern::run` configures an app (`tern.toml`
//!   and the environment, checked; `COSE_KEYS` and `COSE_REPLAY_WINDOW`
//!   for the keyring) but with no logging and no health route; one
//!   current-thread runtime when `TERN_WORKERS=1`. Prints
//!   `listening on ADDR` once bound; `SIGTERM` drains and exits.
//! - `contracts callgrind SCENARIO N [BUILT]`: builds BUILT requests
//!   (default N; each `cose` one sealed), sends one warm-up request, then
//!   the first N through `AppService::call`. The instructions per request
//!   are (total at N - total at 0) / N with the same BUILT.

use std::io;

use tern_bench::{contracts, inprocess::tern_once};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let outcome = match args.get(1).map(String::as_str) {
        Some("serve") if args.len() == 2 => serve(),
        Some("callgrind") if (4..=5).contains(&args.len()) => callgrind(&args[2..]),
        _ => {
            eprintln!("usage: contracts serve | contracts callgrind SCENARIO N [BUILT]");
            std::process::exit(2);
        }
    };
    if let Err(e) = outcome {
        eprintln!("contracts: {e:#}");
        std::process::exit(1);
    }
}

fn serve() -> anyhow::Result<()> {
    let mut config = tern::Config::from_env()?;
    config.access_log = false;
    config.health_path = None;
    config.validate()?;
    let service = contracts::app().build_with(config.clone())?;
    let rt = if config.workers == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(config.workers)
            .enable_all()
            .build()?
    };
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.addr).await?;
        println!("listening on {}", listener.local_addr()?);
        tern::Server::new(service)
            .serve_with_shutdown(listener, tern::shutdown_signal())
            .await
    })?;
    Ok(())
}

fn callgrind(args: &[String]) -> anyhow::Result<()> {
    let scenario = contracts::scenario(&args[0])?;
    let n: usize = args[1].parse()?;
    let built: usize = match args.get(2) {
        Some(b) => b.parse()?,
        None => n,
    };
    anyhow::ensure!(n <= built, "N ({n}) is more than BUILT ({built})");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let app = contracts::inprocess_app()?;
    let keyring = contracts::client_keyring()?;
    let warm = contracts::request(&scenario, &keyring)?;
    let reqs = (0..built.max(1))
        .map(|_| contracts::request(&scenario, &keyring))
        .collect::<anyhow::Result<Vec<_>>>()?;
    rt.block_on(async {
        let (status, body) = tern_once(&app, warm).await;
        if !status.is_success() {
            return Err(io::Error::other(format!(
                "{}: {status}: {}",
                scenario.name,
                String::from_utf8_lossy(&body)
            )));
        }
        let mut failed = 0usize;
        for req in reqs.into_iter().take(n) {
            let (status, body) = tern_once(&app, req).await;
            failed += usize::from(!status.is_success());
            std::hint::black_box(body);
        }
        if failed > 0 {
            return Err(io::Error::other(format!(
                "{}: {failed} of {n} requests failed",
                scenario.name
            )));
        }
        Ok(())
    })?;
    Ok(())
}
