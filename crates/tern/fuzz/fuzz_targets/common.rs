//! What the per-parser targets share: a runtime per thread, and the rule
//! every answer follows.

use std::future::Future;

/// Runs `f` on this thread's runtime (current-thread, with timers).
pub fn block_on<F: Future>(f: F) -> F::Output {
    thread_local! {
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
    }
    RT.with(|rt| rt.block_on(f))
}

/// Client input gets a 200 or a 4xx: never a 500 (a panic or a bug).
pub fn assert_ok_or_client_error(status: u16, what: impl std::fmt::Display) {
    assert!(
        status == 200 || (400..500).contains(&status),
        "{status} for {what}"
    );
}
