//! Issue 25, item 2: a burst of logins must not leave the process
//! holding hundreds of MB. 300 parallel failed logins for unknown users
//! (each checked against the decoy hash, 19 MiB of Argon2id memory),
//! twice, against the showcase in production: the resident memory stays
//! under the hashers' (`concurrency x 19 MiB`) plus 32 MB during and
//! after each burst, and the second burst leaves it where the first did
//! (within 10%). Before the fix: 15 MiB to ~600 MiB, kept.

use std::{
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc,
    },
    time::Duration,
};

use super::harness::*;

const MIB: u64 = 1024 * 1024;

/// The statuses of 300 parallel failed logins, each for another unknown
/// user (no throttle per account stops any), and the highest resident
/// memory seen meanwhile, in bytes.
fn burst(app: &Showcase, round: usize) -> (Vec<u16>, u64) {
    let port = app.port;
    let pid = app.child.id();
    let running = Arc::new(AtomicBool::new(true));
    let peak = Arc::new(AtomicU64::new(app.rss_kib() * 1024));
    let sampler = {
        let (running, peak) = (running.clone(), peak.clone());
        std::thread::spawn(move || {
            while running.load(Ordering::Relaxed) {
                if let Some(kib) = rss_kib_of(pid) {
                    peak.fetch_max(kib * 1024, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let logins: Vec<_> = (0..300)
        .map(|i| {
            std::thread::spawn(move || {
                let body = format!("username=nobody-{round}-{i}&password=a+wrong+password");
                let res = request(port, &login_form(&body)).unwrap();
                let code = status(&res);
                match code {
                    401 => {}
                    // Busy hashing, or the per-address rate limit.
                    503 | 429 => {
                        assert!(header(&res, "retry-after").is_some(), "{res}");
                        assert_eq!(
                            header(&res, "content-type"),
                            Some("application/problem+json"),
                            "{res}"
                        );
                    }
                    _ => panic!("a failed login answers 401, or 503 when busy: {res}"),
                }
                code
            })
        })
        .collect();
    let statuses = logins.into_iter().map(|t| t.join().unwrap()).collect();
    running.store(false, Ordering::Relaxed);
    sampler.join().unwrap();
    peak.fetch_max(app.rss_kib() * 1024, Ordering::Relaxed);
    (statuses, peak.load(Ordering::Relaxed))
}

#[test]
fn a_burst_of_failed_logins_keeps_the_showcases_memory_bounded() {
    // A rate limit per address above the 600 logins of the two bursts:
    // every one of them reaches the hashers.
    let app = Showcase::production("login-memory", &[("SHOWCASE_RATE_LIMIT", "100000")]);
    // Warm, without hashing anything: the baseline.
    for path in ["/health", "/login", "/"] {
        let res = app.raw(&format!(
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        ));
        assert_eq!(status(&res), 200, "{path}: {res}");
    }
    let base = app.rss_kib() * 1024;
    let hashers = u64::try_from(tern_auth::password::concurrency()).unwrap();
    let bound = hashers * 19 * MIB + 32 * 1_000_000;

    let (statuses, peak) = burst(&app, 1);
    std::thread::sleep(Duration::from_secs(2));
    let after = app.rss_kib() * 1024;
    let verified = statuses.iter().filter(|s| **s == 401).count();
    eprintln!(
        "showcase, {hashers} hashers: base {} MiB, peak {} MiB, after {} MiB; \
         {verified} of 300 verified",
        base / MIB,
        peak / MIB,
        after / MIB
    );
    assert!(verified >= 20, "{verified} of 300 logins were verified");
    assert!(
        peak.saturating_sub(base) < bound,
        "the burst grew the showcase by {} MiB (bound {} MiB)",
        (peak - base) / MIB,
        bound / MIB
    );
    assert!(
        after.saturating_sub(base) < bound,
        "after the burst: {} MiB more than before (bound {} MiB)",
        (after - base) / MIB,
        bound / MIB
    );

    let (_, peak2) = burst(&app, 2);
    std::thread::sleep(Duration::from_secs(2));
    let after2 = app.rss_kib() * 1024;
    eprintln!(
        "second burst: peak {} MiB, after {} MiB",
        peak2 / MIB,
        after2 / MIB
    );
    assert!(
        peak2.saturating_sub(base) < bound,
        "the second burst grew the showcase by {} MiB (bound {} MiB)",
        (peak2 - base) / MIB,
        bound / MIB
    );
    let growth = after.saturating_sub(base).max(MIB);
    assert!(
        after2.saturating_sub(base) <= growth + growth / 10,
        "a second burst left {} MiB more than the first ({} MiB)",
        after2.saturating_sub(base) / MIB,
        growth / MIB
    );
}
