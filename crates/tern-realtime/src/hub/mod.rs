//! The hub: named topics, their subscribers, presence, and fan-out, in
//! one process and, through a backend, across processes.
//!
//! A message is serialized once, as the envelope every client receives
//! (`{"topic":..,"event":..,"id":..,"data":..}`), and that one buffer
//! is handed to every subscriber's bounded queue (clients that speak CBOR
//! share one CBOR encoding of it, made when the first of them needs it). A full queue is a slow
//! consumer: closed or skipped, as `REALTIME_SLOW_CONSUMER` says, never
//! waited for, so one client that stops reading delays no other.

// One concept per file: names, the envelope, publishing, a topic and
// how connections join it, presence, one client's queue, and the hub
// across processes.
mod cluster;
mod connection;
mod delivery;
mod name;
mod presence;
mod publish;
mod topic;

use std::{
    collections::HashMap,
    fmt,
    hash::{BuildHasher, Hasher},
    sync::{
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
        Arc, Mutex, MutexGuard, Weak,
    },
    time::Duration,
};

pub use connection::{Connection, Overflowed};
pub use delivery::Delivery;
pub(crate) use name::check_name;
pub use name::{NameError, MAX_TOPIC_BYTES};
pub use presence::Member;
pub use publish::PublishError;

use crate::{
    bus::{self, BusHandle, Wire},
    settings::{Realtime, SlowConsumer},
};
use topic::Topic;

/// Counts a hub keeps (all since it started).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Messages published here.
    pub published: u64,
    /// Messages not given to a slow client (`REALTIME_SLOW_CONSUMER=drop`).
    pub dropped: u64,
    /// Slow clients closed (`REALTIME_SLOW_CONSUMER=close`).
    pub closed_slow: u64,
    /// Messages of other processes that never arrived (gaps in their
    /// numbering, while the backend was away).
    pub lost: u64,
    /// Messages of this process not sent to the others (the backend was
    /// away, or its queue full).
    pub unsent: u64,
}

#[derive(Default)]
struct Counters {
    published: AtomicU64,
    dropped: AtomicU64,
    closed_slow: AtomicU64,
    lost: AtomicU64,
    unsent: AtomicU64,
    /// Connections in topics now, one per connection and topic.
    subscribers: AtomicUsize,
    /// Whether the backend is connected now (never, with `memory`).
    bus_up: AtomicBool,
}

#[cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]
pub(crate) struct Inner {
    node: String,
    next_connection: AtomicU64,
    topics: Mutex<HashMap<Arc<str>, Topic>>,
    /// The last number seen from each other process.
    peers: Mutex<HashMap<String, u64>>,
    bus: Option<BusHandle>,
    send_queue: usize,
    slow_consumer: SlowConsumer,
    replay: usize,
    replay_bytes: usize,
    presence_interval: Duration,
    counters: Counters,
    /// Publish budgets shared by connections (per member, per address).
    pub(crate) budgets: crate::budget::Budgets,
}

/// Topics, presence and fan-out; see the [module](self). Cheap to clone.
/// Handlers get it from [`Realtime::hub`](crate::Realtime::hub).
#[derive(Clone)]
pub struct Hub {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Hub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hub")
            .field("node", &self.inner.node)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// A random id for this process's hub.
fn node_id() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

impl Hub {
    /// A hub with these settings; its backend (if not `memory`) connects
    /// in the background. Needs a Tokio runtime.
    pub(crate) fn new(settings: &Realtime) -> Hub {
        let (bus, outgoing) = bus::queue(&settings.backend).unzip();
        let inner = Arc::new(Inner {
            bus,
            node: node_id(),
            next_connection: AtomicU64::new(1),
            topics: Mutex::new(HashMap::new()),
            peers: Mutex::new(HashMap::new()),
            send_queue: settings.send_queue,
            slow_consumer: settings.slow_consumer,
            replay: settings.replay,
            replay_bytes: settings.replay_bytes,
            presence_interval: settings.presence_interval,
            counters: Counters::default(),
            budgets: {
                #[cfg(test)]
                test_hooks::slow_build();
                crate::budget::Budgets::default()
            },
        });
        // The bus starts once the hub exists: its task finds the hub
        // through a weak reference, and one it cannot upgrade is a hub
        // that was dropped (the task stops).
        if let Some(outgoing) = outgoing {
            bus::spawn(
                &settings.backend,
                &settings.channel,
                outgoing,
                Arc::downgrade(&inner),
            );
        }
        tokio::spawn(upkeep(Arc::downgrade(&inner)));
        Hub { inner }
    }

    /// A hub for one process with the default settings (tests, tools).
    pub fn in_memory() -> Hub {
        Hub::new(&Realtime::default())
    }

    /// This process's id among the hub's processes.
    pub fn node(&self) -> &str {
        &self.inner.node
    }

    /// The counts so far.
    pub fn stats(&self) -> Stats {
        let c = &self.inner.counters;
        Stats {
            published: c.published.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            closed_slow: c.closed_slow.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            unsent: c.unsent.load(Ordering::Relaxed),
        }
    }

    /// Connections of this process in topics now (one in two topics
    /// counts twice).
    pub(crate) fn subscribers(&self) -> usize {
        self.inner.counters.subscribers.load(Ordering::Relaxed)
    }

    /// Messages waiting in this process's connections' queues, counted
    /// now under the topics' lock (each connection once).
    pub(crate) fn queued(&self) -> usize {
        let topics = self.topics();
        let mut seen = std::collections::HashSet::new();
        topics
            .values()
            .flat_map(|t| &t.subscribers)
            .filter(|(id, _)| seen.insert(**id))
            .map(|(_, sub)| sub.tx.max_capacity() - sub.tx.capacity())
            .sum()
    }

    /// Whether the backend is connected now; `None` without one (`memory`).
    pub(crate) fn bus_up(&self) -> Option<bool> {
        self.inner
            .bus
            .as_ref()
            .map(|_| self.inner.counters.bus_up.load(Ordering::Relaxed))
    }

    fn topics(&self) -> MutexGuard<'_, HashMap<Arc<str>, Topic>> {
        self.inner.topics.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send_wire(&self, wire: Wire<'_>) {
        if let Some(bus) = &self.inner.bus {
            if !bus.send(&wire, &self.inner.node) {
                self.inner.counters.unsent.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

async fn upkeep(hub: Weak<Inner>) {
    let every = match hub.upgrade() {
        Some(inner) => inner.presence_interval,
        None => return,
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = hub.upgrade() else {
            return;
        };
        let hub = Hub { inner };
        hub.announce(None);
        hub.sweep();
        hub.inner.budgets.sweep();
    }
}

/// What the crate's own tests can make [`Hub::new`] do.
#[cfg(test)]
pub(crate) mod test_hooks {
    use std::{cell::Cell, time::Duration};

    thread_local! {
        static SLOW_BUILD: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    }

    /// The next hubs built on this thread take `pause` longer to build
    /// (a constructor preempted on a loaded machine), until set back to
    /// zero.
    pub(crate) fn set_slow_build(pause: Duration) {
        SLOW_BUILD.with(|p| p.set(pause));
    }

    pub(super) fn slow_build() {
        let pause = SLOW_BUILD.with(Cell::get);
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
}
