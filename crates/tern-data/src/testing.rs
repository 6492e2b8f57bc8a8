//! Fresh databases for tests: a new SQLite file, or a new schema of the
//! PostgreSQL database at `POSTGRES_URL` (skipped, with a line saying so,
//! when it is not set).

use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::AssertSqlSafe;

use crate::Backend;

/// Both databases, for a test that runs on each.
pub const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

/// The URL of a database no other call gets: a SQLite file in a new
/// directory under the temporary directory, or a new schema (on the
/// connection's `search_path`) of the database at `POSTGRES_URL` (test
/// schemas over an hour old are dropped). `None`, printing that it skipped,
/// for PostgreSQL without `POSTGRES_URL`.
pub async fn fresh(backend: Backend) -> Option<String> {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // The time in the name: a later run drops what is over an hour old,
    // never the schema of a test running now in another process.
    let tag = format!("tern_test_{now}_{}_{n}", std::process::id());
    match backend {
        Backend::Sqlite => {
            let dir = std::env::temp_dir().join(&tag);
            Some(format!("sqlite://{}/nested/app.db", dir.display()))
        }
        Backend::Postgres => {
            // Skipped with a line saying so; a failure under CI.
            let url = tern::test::service_url("POSTGRES_URL")?;
            let admin = sqlx::PgPool::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("POSTGRES_URL does not connect: {e}"));
            // The schemas of runs over an hour old go.
            let old: Vec<String> = sqlx::query_scalar(
                "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'tern\\_test\\_%'",
            )
            .fetch_all(&admin)
            .await
            .unwrap_or_default();
            for schema in old {
                let made: u64 = schema
                    .split('_')
                    .nth(2)
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(0);
                if made + 3600 < now {
                    let _ = sqlx::raw_sql(AssertSqlSafe(format!(
                        "DROP SCHEMA IF EXISTS {schema} CASCADE"
                    )))
                    .execute(&admin)
                    .await;
                }
            }
            sqlx::raw_sql(AssertSqlSafe(format!("CREATE SCHEMA {tag}")))
                .execute(&admin)
                .await
                .unwrap_or_else(|e| panic!("cannot create the schema {tag}: {e}"));
            admin.close().await;
            let sep = if url.contains('?') { '&' } else { '?' };
            Some(format!("{url}{sep}options[search_path]={tag}"))
        }
    }
}
