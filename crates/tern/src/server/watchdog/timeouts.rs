//! The connection's timeouts: what the connection is doing ([`Activity`],
//! written by the I/O wrapper and the service) and the head, keep-alive,
//! write and drain rules the connection's watchdog reads from it.

use std::{
    sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering},
    time::{Duration, Instant},
};

use tokio::sync::Notify;

use crate::config::Timeouts;

/// What a connection is doing, for its timeouts: written by the I/O
/// wrapper and the service, read by the connection's watchdog.
pub(in crate::server) struct Activity {
    start: Instant,
    /// When the last response head was ready (ms since `start`).
    last_ms: AtomicU64,
    /// When the first byte of the pending request head arrived (ms since
    /// `start`), or `NO_HEAD`.
    head_ms: AtomicU64,
    pub(in crate::server) in_flight: AtomicU32,
    /// Whether a request has ever been received on this connection.
    started: AtomicBool,
    /// The server is shutting down: the next request start wakes the
    /// watchdog (`drain_wake`) so that its answer closes the connection.
    pub(in crate::server) draining: AtomicBool,
    pub(in crate::server) drain_wake: Notify,
    /// Close with a reset (a client that stopped reading).
    pub(in crate::server) reset: AtomicBool,
    /// Requests received, numbered from 1 (the upgrade follower's count).
    pub(in crate::server) requests: AtomicU64,
    pub(in crate::server) upgrades: crate::server::framing::Upgrades,
    /// Since when the socket has refused to take bytes we have for it
    /// (ms since `start`), or `NO_HEAD`: a client that does not read.
    write_blocked_ms: AtomicU64,
}

const NO_HEAD: u64 = u64::MAX;

/// At shutdown, how long an idle keep-alive connection stays open for a
/// request its client may already be sending (it is answered with
/// `Connection: close`).
pub(in crate::server) const DRAIN_IDLE_GRACE: Duration = Duration::from_millis(500);

pub(in crate::server) enum Verdict {
    Wait,
    Idle,
    SlowHead,
}

impl Activity {
    pub(in crate::server) fn new() -> Self {
        Activity {
            start: Instant::now(),
            last_ms: AtomicU64::new(0),
            head_ms: AtomicU64::new(NO_HEAD),
            in_flight: AtomicU32::new(0),
            started: AtomicBool::new(false),
            draining: AtomicBool::new(false),
            drain_wake: Notify::new(),
            write_blocked_ms: AtomicU64::new(NO_HEAD),
            reset: AtomicBool::new(false),
            requests: AtomicU64::new(0),
            upgrades: crate::server::framing::Upgrades::new(),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NO_HEAD - 1)
    }

    fn at(&self, ms: u64) -> Instant {
        self.start + Duration::from_millis(ms)
    }

    /// Bytes arrived. Between requests, they begin the next request head.
    #[inline]
    pub(in crate::server) fn on_read(&self) {
        if self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_ms.load(Ordering::Relaxed) == NO_HEAD
        {
            self.head_ms.store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// A request arrived; returns its number.
    pub(in crate::server) fn on_request(&self) -> u64 {
        if self.draining.load(Ordering::Relaxed) {
            self.drain_wake.notify_one();
        }
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.started.store(true, Ordering::Relaxed);
        self.head_ms.store(NO_HEAD, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The socket would not take bytes we have for it.
    #[inline]
    pub(super) fn on_write_blocked(&self) {
        if self.write_blocked_ms.load(Ordering::Relaxed) == NO_HEAD {
            self.write_blocked_ms
                .store(self.now_ms(), Ordering::Relaxed);
        }
    }

    /// The socket took bytes.
    #[inline]
    pub(super) fn on_write_progress(&self) {
        if self.write_blocked_ms.load(Ordering::Relaxed) != NO_HEAD {
            self.write_blocked_ms.store(NO_HEAD, Ordering::Relaxed);
        }
    }

    pub(in crate::server) fn on_response(&self) {
        self.last_ms.store(self.now_ms(), Ordering::Relaxed);
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// When the watchdog should look next: the current deadline, or
    /// earlier. Any deadline that can arise later (a head beginning, a
    /// response ending) is at least `min(header_read, keep_alive)` from
    /// now, so nothing needs to wake the watchdog in between; looking
    /// early only re-arms it.
    pub(in crate::server) fn next_check(&self, t: &Timeouts) -> Instant {
        let soonest_new = Instant::now() + t.header_read.min(t.keep_alive).min(t.write);
        self.deadline(t).min(soonest_new)
    }

    /// The connection's current deadline.
    fn deadline(&self, t: &Timeouts) -> Instant {
        let blocked = self.write_blocked_ms.load(Ordering::Relaxed);
        let write = (blocked != NO_HEAD).then(|| self.at(blocked) + t.write);
        let other = self.head_or_idle_deadline(t);
        write.map_or(other, |w| w.min(other))
    }

    fn head_or_idle_deadline(&self, t: &Timeouts) -> Instant {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return Instant::now() + t.keep_alive;
        }
        let head = self.head_ms.load(Ordering::Relaxed);
        if head != NO_HEAD {
            return self.at(head) + t.header_read;
        }
        if !self.started.load(Ordering::Relaxed) {
            // A client that connects and sends nothing, or only part of the
            // HTTP/2 preface, gets the header timeout from the accept.
            return self.start + t.header_read.min(t.keep_alive);
        }
        self.at(self.last_ms.load(Ordering::Relaxed)) + t.keep_alive
    }

    /// Bytes have waited longer than the write timeout for a client that
    /// does not read them.
    pub(in crate::server) fn write_stalled(&self, t: &Timeouts) -> bool {
        let blocked = self.write_blocked_ms.load(Ordering::Relaxed);
        blocked != NO_HEAD && self.at(blocked) + t.write <= Instant::now()
    }

    pub(in crate::server) fn verdict(&self, t: &Timeouts) -> Verdict {
        if self.head_or_idle_deadline(t) > Instant::now() {
            return Verdict::Wait;
        }
        if self.head_ms.load(Ordering::Relaxed) != NO_HEAD || !self.started.load(Ordering::Relaxed)
        {
            Verdict::SlowHead
        } else {
            Verdict::Idle
        }
    }
}
