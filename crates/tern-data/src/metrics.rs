//! The pool's metrics: how long statements wait for a connection, how
//! often none was idle, how often the wait ran out, and the pool's size
//! at each scrape of `/metrics`.
//!
//! A statement reaches the pool as a `&Pool` (a [`Db`](crate::Db) is a
//! clone of it), and [`Pool`] is an enum of sqlx's pools, so the meter
//! cannot travel with it. Pools whose database records metrics
//! ([`Database::record_metrics`](crate::Database::record_metrics)) are
//! listed here instead, by the address of their sqlx options: sqlx keeps
//! them in the pool's shared state, so the address is the pool's for as
//! long as any clone of it lives. The entry holds the meter weakly: it
//! ends with the [`Database`](crate::Database) that made it.

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, PoisonError, RwLock, Weak,
    },
    time::Instant,
};

use sqlx::pool::PoolConnection;
use tern::metrics::{Counter, Histogram, Metrics};

use crate::Pool;

/// The acquire histogram and counters of one database's pool.
#[derive(Debug)]
pub(crate) struct PoolMeter {
    acquire: Histogram,
    waits: Counter,
    timeouts: Counter,
}

impl PoolMeter {
    /// Registers (or finds) the pool's families in `metrics`.
    pub(crate) fn register(metrics: &Metrics) -> PoolMeter {
        PoolMeter {
            acquire: metrics.histogram(
                "tern_db_pool_acquire_seconds",
                "Time a statement or transaction waited for a connection of the pool",
                &[],
            ),
            waits: metrics.counter(
                "tern_db_pool_waits",
                "Acquires that found no idle connection (one was opened, or the acquire waited)",
                &[],
            ),
            timeouts: metrics.counter(
                "tern_db_pool_timeouts",
                "Acquires that gave up after DATABASE_ACQUIRE_TIMEOUT (answered 503)",
                &[],
            ),
        }
    }
}

/// The pool's size, read at each scrape.
pub(crate) fn sample(pool: &Pool, sample: &mut tern::metrics::Sample<'_>) {
    let (size, idle, max) = crate::with_pool!(pool, p => {
        (p.size(), p.num_idle(), p.options().get_max_connections())
    });
    let idle = u32::try_from(idle).unwrap_or(u32::MAX).min(size);
    let help = "Connections of the pool open now, idle or in use";
    sample.gauge(
        "tern_db_pool_connections",
        help,
        &[("state", "idle")],
        f64::from(idle),
    );
    sample.gauge(
        "tern_db_pool_connections",
        help,
        &[("state", "in_use")],
        f64::from(size - idle),
    );
    sample.gauge(
        "tern_db_pool_max",
        "The most connections the pool opens (DATABASE_MAX_CONNECTIONS)",
        &[],
        f64::from(max),
    );
}

type Entry = (usize, Weak<PoolMeter>);

static METERED: RwLock<Vec<Entry>> = RwLock::new(Vec::new());
/// Whether any pool is metered: a process without metrics takes no lock.
static ANY: AtomicBool = AtomicBool::new(false);

fn key<DB: sqlx::Database>(pool: &sqlx::Pool<DB>) -> usize {
    std::ptr::from_ref(pool.options()) as usize
}

fn pool_key(pool: &Pool) -> usize {
    crate::with_pool!(pool, p => key(p))
}

/// Lists `pool` as metered by `meter`, dropping the entries of meters
/// gone.
pub(crate) fn meter(pool: &Pool, meter: &Arc<PoolMeter>) {
    let mut list = METERED.write().unwrap_or_else(PoisonError::into_inner);
    list.retain(|(_, m)| m.strong_count() > 0);
    list.push((pool_key(pool), Arc::downgrade(meter)));
    ANY.store(true, Ordering::Relaxed);
}

fn meter_of(key: usize) -> Option<Arc<PoolMeter>> {
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    let list = METERED.read().unwrap_or_else(PoisonError::into_inner);
    list.iter()
        .filter(|(k, _)| *k == key)
        .find_map(|(_, m)| m.upgrade())
}

/// A connection of `pool` for one statement or transaction, timed when
/// the pool is metered (what sqlx does when the pool itself is the
/// executor: acquire, run, give back).
pub(crate) async fn acquire<DB: sqlx::Database>(
    pool: &sqlx::Pool<DB>,
) -> Result<PoolConnection<DB>, sqlx::Error> {
    let Some(meter) = meter_of(key(pool)) else {
        return pool.acquire().await;
    };
    if pool.num_idle() == 0 {
        meter.waits.inc();
    }
    let start = Instant::now();
    let got = pool.acquire().await;
    meter.acquire.observe(start.elapsed());
    if matches!(got, Err(sqlx::Error::PoolTimedOut)) {
        meter.timeouts.inc();
    }
    got
}
