//! Taking part in a graceful shutdown: long-lived work (upgraded
//! connections, streams) learns that the server is draining and can hold
//! the drain open until it has finished.

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use http::request::Parts;
use tern_core::extract::FromRequestParts;
use tokio::sync::{watch, Notify};

use crate::extract::Rejection;

/// One server's drain: the stop signal, and the work still holding it.
pub(crate) struct DrainState {
    stop: watch::Receiver<bool>,
    guards: AtomicUsize,
    released: Notify,
}

impl DrainState {
    pub(crate) fn new(stop: watch::Receiver<bool>) -> Arc<Self> {
        Arc::new(DrainState {
            stop,
            guards: AtomicUsize::new(0),
            released: Notify::new(),
        })
    }

    /// Completes when no [`DrainGuard`] is left.
    pub(crate) async fn guards_released(&self) {
        loop {
            let released = self.released.notified();
            if self.guards.load(Ordering::Acquire) == 0 {
                return;
            }
            released.await;
        }
    }

    /// Whether the stop signal may have come: it changed since the server
    /// started, or its sender is gone (which a waiter reads as the signal
    /// too). A look at the channel's version, no poll.
    pub(crate) fn stop_changed(&self) -> bool {
        self.stop.has_changed().unwrap_or(true)
    }

    pub(crate) fn open_guards(&self) -> usize {
        self.guards.load(Ordering::Acquire)
    }
}

/// The server's shutdown, as seen from a handler.
///
/// [`signaled`](Shutdown::signaled) completes when the server starts to
/// drain; a [`DrainGuard`] from [`guard`](Shutdown::guard) keeps the drain
/// waiting (up to `TERN_SHUTDOWN_TIMEOUT`) until it is dropped. Upgraded
/// connections such as WebSockets use both: hold a guard for the
/// connection's life, and say goodbye to the client when signaled.
///
/// Outside a server (e.g. in the in-process test client) the signal never
/// comes and guards hold nothing.
#[derive(Clone)]
pub struct Shutdown {
    state: Option<Arc<DrainState>>,
}

impl std::fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shutdown")
            .field("signaled", &self.is_signaled())
            .finish()
    }
}

impl Shutdown {
    /// The shutdown of the server whose drain this is (none outside a
    /// server).
    pub(crate) fn of(state: Option<Arc<DrainState>>) -> Self {
        Shutdown { state }
    }

    /// Whether the server has started to drain.
    pub fn is_signaled(&self) -> bool {
        self.state.as_ref().is_some_and(|s| *s.stop.borrow())
    }

    /// Completes when the server starts to drain (never, outside a server).
    pub async fn signaled(&self) {
        match &self.state {
            Some(state) => {
                let mut stop = state.stop.clone();
                if stop.wait_for(|s| *s).await.is_err() {
                    // The server is gone: that is a shutdown too.
                }
            }
            None => std::future::pending().await,
        }
    }

    /// Holds the drain open until the guard is dropped.
    pub fn guard(&self) -> DrainGuard {
        if let Some(state) = &self.state {
            state.guards.fetch_add(1, Ordering::AcqRel);
        }
        DrainGuard {
            state: self.state.clone(),
        }
    }
}

/// Keeps a draining server waiting; see [`Shutdown::guard`].
#[derive(Debug)]
#[must_use = "the drain waits only while the guard is alive"]
pub struct DrainGuard {
    state: Option<Arc<DrainState>>,
}

impl std::fmt::Debug for DrainState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DrainState")
            .field("guards", &self.open_guards())
            .finish()
    }
}

impl Drop for DrainGuard {
    fn drop(&mut self) {
        if let Some(state) = &self.state {
            if state.guards.fetch_sub(1, Ordering::AcqRel) == 1 {
                state.released.notify_waiters();
            }
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Shutdown {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        let state = crate::context::with(&parts.extensions, |c| c.drain.clone()).flatten();
        Ok(Shutdown::of(state))
    }
}
