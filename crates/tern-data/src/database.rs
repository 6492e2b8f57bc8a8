//! The database an app uses, from its settings: the URL, the pool's size
//! and timeouts, the statement cache.

use std::{
    fmt,
    path::PathBuf,
    str::FromStr,
    sync::{Arc, OnceLock},
    time::Duration,
};

use serde::{Deserialize, Deserializer};
use sqlx::{
    postgres::{PgConnectOptions, PgPoolOptions},
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions},
    PgPool, SqlitePool,
};

use crate::{metrics::PoolMeter, DataError};

/// Where the embedded default keeps its file, relative to the working
/// directory (created on first start).
pub const DEFAULT_URL: &str = "sqlite://data/app.db";

/// The app's database: loaded as settings under the prefix `database`
/// (`App::settings::<Database>("database")`), opened at the first query.
///
/// | variable | `tern.toml` `[database]` | default |
/// |---|---|---|
/// | `DATABASE_URL` | `url` | `sqlite://data/app.db` (the file and its directory are created) |
/// | `DATABASE_MAX_CONNECTIONS` | `max_connections` | 10 (SQLite: 5) |
/// | `DATABASE_MIN_CONNECTIONS` | `min_connections` | 0 |
/// | `DATABASE_ACQUIRE_TIMEOUT` | `acquire_timeout` | `5s`: then `503` |
/// | `DATABASE_IDLE_TIMEOUT` | `idle_timeout` | `10m` |
/// | `DATABASE_STATEMENT_CACHE` | `statement_cache` | 100 prepared statements per connection |
/// | `DATABASE_MIGRATE_ON_START` | `migrate_on_start` | on in development, off in production (run the `migrate` command); with [`install`](crate::install) |
///
/// `DATABASE_URL` takes `sqlite://path`, `sqlite::memory:` or
/// `postgres://user:password@host:port/database`; another scheme, or a URL
/// that does not parse, stops the start with an error naming the variable.
/// The URL is never printed (its `Debug` shows the scheme and host only).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Database {
    #[serde(default)]
    url: DatabaseUrl,
    #[serde(default)]
    max_connections: Option<u32>,
    #[serde(default)]
    min_connections: u32,
    #[serde(
        default = "default_acquire",
        deserialize_with = "tern::settings::duration"
    )]
    acquire_timeout: Duration,
    #[serde(
        default = "default_idle",
        deserialize_with = "tern::settings::duration"
    )]
    idle_timeout: Duration,
    #[serde(default = "default_cache")]
    statement_cache: usize,
    #[serde(default)]
    migrate_on_start: Option<bool>,
    #[serde(skip)]
    pool: OnceLock<Pool>,
    #[serde(skip)]
    meter: OnceLock<Arc<PoolMeter>>,
    /// The registry `record_metrics` named, for a pool made later.
    #[serde(skip)]
    metrics: OnceLock<tern::metrics::Metrics>,
}

fn default_acquire() -> Duration {
    Duration::from_secs(5)
}

fn default_idle() -> Duration {
    Duration::from_secs(600)
}

fn default_cache() -> usize {
    100
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Database")
            .field("url", &self.url)
            .field("max_connections", &self.max_connections())
            .finish_non_exhaustive()
    }
}

/// Which database a [`Database`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite (a file, or memory).
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// A pool of connections to one of the two databases. Cheap to clone.
#[derive(Debug, Clone)]
pub enum Pool {
    /// SQLite.
    Sqlite(SqlitePool),
    /// PostgreSQL.
    Postgres(PgPool),
}

impl Pool {
    /// Which database this is.
    pub fn backend(&self) -> Backend {
        match self {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// Closes every connection (waiting for those in use to come back).
    pub async fn close(&self) {
        match self {
            Pool::Sqlite(p) => p.close().await,
            Pool::Postgres(p) => p.close().await,
        }
    }

    /// Connections open now (idle or in use).
    pub fn size(&self) -> u32 {
        match self {
            Pool::Sqlite(p) => p.size(),
            Pool::Postgres(p) => p.size(),
        }
    }
}

impl Database {
    /// The database at `url` with the default pool settings (tests and
    /// tools; apps load it as settings).
    pub fn from_url(url: &str) -> Result<Database, DataError> {
        Ok(Database {
            url: url.parse().map_err(DataError::Config)?,
            max_connections: None,
            min_connections: 0,
            acquire_timeout: default_acquire(),
            idle_timeout: default_idle(),
            statement_cache: default_cache(),
            migrate_on_start: None,
            pool: OnceLock::new(),
            meter: OnceLock::new(),
            metrics: OnceLock::new(),
        })
    }

    /// Which database the URL names.
    pub fn backend(&self) -> Backend {
        match self.url.options {
            Options::Sqlite(_) => Backend::Sqlite,
            Options::Postgres(_) => Backend::Postgres,
        }
    }

    fn max_connections(&self) -> u32 {
        self.max_connections.unwrap_or(match self.backend() {
            // One writer at a time: more connections only wait on its lock.
            Backend::Sqlite => 5,
            Backend::Postgres => 10,
        })
    }

    /// Whether the URL is the embedded default (`DATABASE_URL` unset).
    pub fn is_default(&self) -> bool {
        self.url.shown == "sqlite://data/app.db"
    }

    /// Where the database is, without a password: `sqlite://data/app.db`,
    /// `postgres://host:5432/name`.
    pub fn shown(&self) -> &str {
        &self.url.shown
    }

    /// `DATABASE_MIGRATE_ON_START`, or its default for `production`.
    pub fn migrate_on_start(&self, production: bool) -> bool {
        self.migrate_on_start.unwrap_or(!production)
    }

    /// The pool, made at the first call (which must be inside a Tokio
    /// runtime, as a handler is); no connection is opened until a query
    /// needs one.
    pub fn pool(&self) -> &Pool {
        self.pool.get_or_init(|| {
            let pool = self.make_pool();
            if let (Some(metrics), Some(meter)) = (self.metrics.get(), self.meter.get()) {
                meter_pool(&pool, meter, metrics);
            }
            pool
        })
    }

    /// Records the pool's metrics in `metrics` (the app's, whose
    /// `/metrics` shows them): the time statements and transactions wait
    /// for a connection (`tern_db_pool_acquire_seconds`), how often none
    /// was idle (`tern_db_pool_waits_total`) or the wait ran out
    /// (`tern_db_pool_timeouts_total`), and at each scrape the
    /// connections idle and in use (`tern_db_pool_connections`) and the
    /// most the pool opens (`tern_db_pool_max`).
    ///
    /// [`install`](crate::install) calls it in every build of the app
    /// (`App::on_build`: however the app is served). The pool is metered
    /// from when it is made (its first use), so this makes no pool and
    /// needs no runtime. Only the first call counts: the pool is metered
    /// in one registry.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let db = tern_data::Database::from_url("sqlite::memory:").unwrap();
    /// let metrics = tern::metrics::Metrics::default();
    /// db.record_metrics(&metrics);
    /// let n: i64 = tern_data::query("SELECT 1").scalar(db.pool()).await.unwrap();
    /// assert_eq!(n, 1);
    /// let text = metrics.render();
    /// assert!(text.contains("tern_db_pool_acquire_seconds_count 1"), "{text}");
    /// assert!(text.contains("tern_db_pool_max 5"), "{text}");
    /// # }
    /// ```
    pub fn record_metrics(&self, metrics: &tern::metrics::Metrics) {
        let mut first = false;
        let meter = self.meter.get_or_init(|| {
            first = true;
            Arc::new(PoolMeter::register(metrics))
        });
        if !first {
            return;
        }
        let _ = self.metrics.set(metrics.clone());
        if let Some(pool) = self.pool.get() {
            meter_pool(pool, meter, metrics);
        }
    }

    fn make_pool(&self) -> Pool {
        let max = self.max_connections();
        let min = self.min_connections.min(max);
        match &self.url.options {
            Options::Sqlite(options) => {
                if let Some(dir) = &self.url.directory {
                    // A failure here shows up as the connection's error.
                    let _ = std::fs::create_dir_all(dir);
                }
                let options = options
                    .clone()
                    .statement_cache_capacity(self.statement_cache);
                Pool::Sqlite(
                    SqlitePoolOptions::new()
                        .max_connections(max)
                        .min_connections(min)
                        .acquire_timeout(self.acquire_timeout)
                        .idle_timeout(self.idle_timeout)
                        .connect_lazy_with(options),
                )
            }
            Options::Postgres(options) => {
                let options = options
                    .clone()
                    .statement_cache_capacity(self.statement_cache);
                Pool::Postgres(
                    PgPoolOptions::new()
                        .max_connections(max)
                        .min_connections(min)
                        .acquire_timeout(self.acquire_timeout)
                        .idle_timeout(self.idle_timeout)
                        .connect_lazy_with(options),
                )
            }
        }
    }

    /// Opens a connection now: for `main`, to fail at startup rather than
    /// at the first request when the database is not there.
    pub async fn check(&self) -> Result<(), DataError> {
        match self.pool() {
            Pool::Sqlite(p) => drop(p.acquire().await?),
            Pool::Postgres(p) => drop(p.acquire().await?),
        }
        Ok(())
    }
}

/// `DATABASE_URL`, parsed at startup.
struct DatabaseUrl {
    options: Options,
    /// The directory a SQLite file lives in, created before it opens.
    directory: Option<PathBuf>,
    /// What `Debug` shows: the scheme and the host or file, no password.
    shown: String,
}

enum Options {
    Sqlite(SqliteConnectOptions),
    Postgres(PgConnectOptions),
}

impl Default for DatabaseUrl {
    fn default() -> Self {
        DEFAULT_URL
            .parse()
            .unwrap_or_else(|_| unreachable!("the default URL parses"))
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl FromStr for DatabaseUrl {
    type Err = String;

    fn from_str(url: &str) -> Result<Self, String> {
        let scheme = url.split_once(':').map(|(s, _)| s).unwrap_or_default();
        match scheme {
            "sqlite" => {
                let options = SqliteConnectOptions::from_str(url)
                    .map_err(|e| format!("is not a SQLite URL ({e})"))?
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    .foreign_keys(true)
                    .busy_timeout(Duration::from_secs(5));
                let file = options.get_filename().to_path_buf();
                let memory = url.contains(":memory:") || url.contains("mode=memory");
                let directory = file
                    .parent()
                    .filter(|d| !memory && !d.as_os_str().is_empty())
                    .map(PathBuf::from);
                Ok(DatabaseUrl {
                    shown: format!("sqlite://{}", file.display()),
                    options: Options::Sqlite(options),
                    directory,
                })
            }
            "postgres" | "postgresql" => {
                let options = PgConnectOptions::from_str(url)
                    .map_err(|e| format!("is not a PostgreSQL URL ({e})"))?;
                let shown = format!(
                    "postgres://{}:{}/{}",
                    options.get_host(),
                    options.get_port(),
                    options.get_database().unwrap_or_default()
                );
                Ok(DatabaseUrl {
                    options: Options::Postgres(options),
                    directory: None,
                    shown,
                })
            }
            _ => Err(
                "must start with `sqlite:` or `postgres://` (Tern's databases are SQLite and PostgreSQL)"
                    .to_owned(),
            ),
        }
    }
}

impl<'de> Deserialize<'de> for DatabaseUrl {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let url = String::deserialize(d)?;
        url.parse().map_err(serde::de::Error::custom)
    }
}

/// Meters `pool` with `meter`, and samples it at each scrape of `metrics`.
fn meter_pool(pool: &Pool, meter: &Arc<PoolMeter>, metrics: &tern::metrics::Metrics) {
    crate::metrics::meter(pool, meter);
    let pool = pool.clone();
    metrics.source(move |sample| crate::metrics::sample(&pool, sample));
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_never_shown_with_their_password() {
        let db = Database::from_url("postgres://ada:hunter2hunter2@127.0.0.1:5432/test").unwrap();
        assert_eq!(db.backend(), Backend::Postgres);
        let shown = format!("{db:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("127.0.0.1:5432/test"), "{shown}");
        let db = Database::from_url("sqlite://data/app.db").unwrap();
        assert_eq!(db.backend(), Backend::Sqlite);
        assert_eq!(
            db.url.directory.as_deref(),
            Some(std::path::Path::new("data"))
        );
        assert!(Database::from_url("sqlite::memory:")
            .unwrap()
            .url
            .directory
            .is_none());
        let err = Database::from_url("mysql://x").unwrap_err().to_string();
        assert!(err.contains("sqlite:"), "{err}");
    }
}
