//! Migrations: SQL files embedded in the binary, applied in order, each in
//! a transaction.

use std::borrow::Cow;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::SqlSafeStr as _;

use crate::{Backend, DataError, Database, Pool};

/// An app's migrations: the `.sql` files of a directory, embedded at
/// compile time by [`migrations!`](crate::migrations).
///
/// A file is `<version>_<description>.sql` (`0001_create_items.sql`),
/// applied in version order, once; `<version>_<description>.sqlite.sql`
/// and `.postgres.sql` apply to that database only (the two dialects
/// differ: `AUTOINCREMENT` and `GENERATED ... AS IDENTITY`). Each runs in
/// a transaction, so one that fails leaves the schema as it was, and the
/// error names its file. Applied migrations are recorded with a checksum
/// (sqlx's `_sqlx_migrations` table): editing one after it ran is an error.
#[derive(Debug, Clone, Copy)]
pub struct Migrations {
    files: &'static [(&'static str, &'static str)],
    table: &'static str,
}

/// One parsed migration file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct File {
    name: &'static str,
    version: i64,
    description: String,
    only: Option<Backend>,
    sql: &'static str,
}

impl Migrations {
    /// The files `(name, sql)`; [`migrations!`](crate::migrations) writes
    /// this call.
    pub const fn new(files: &'static [(&'static str, &'static str)]) -> Self {
        Migrations {
            files,
            table: "_sqlx_migrations",
        }
    }

    /// The same files, recorded in `table` instead of sqlx's
    /// `_sqlx_migrations`: for a library's migrations, whose versions
    /// are its own (`tern_auth::MIGRATIONS` uses
    /// `_tern_auth_migrations`). A table name is letters, digits and `_`.
    pub const fn with_table(self, table: &'static str) -> Self {
        Migrations {
            files: self.files,
            table,
        }
    }

    fn parse(&self) -> Result<Vec<File>, DataError> {
        self.files
            .iter()
            .map(|&(name, sql)| {
                let bad = || {
                    DataError::Config(format!(
                        "the migration file `{name}` must be named `<version>_<description>.sql` \
                         (optionally `.sqlite.sql` or `.postgres.sql`), as `0001_create_items.sql`"
                    ))
                };
                let stem = name.strip_suffix(".sql").ok_or_else(bad)?;
                let (stem, only) = if let Some(s) = stem.strip_suffix(".sqlite") {
                    (s, Some(Backend::Sqlite))
                } else if let Some(s) = stem.strip_suffix(".postgres") {
                    (s, Some(Backend::Postgres))
                } else {
                    (stem, None)
                };
                let (version, description) = stem.split_once('_').ok_or_else(bad)?;
                if version.is_empty() || !version.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(bad());
                }
                Ok(File {
                    name,
                    version: version.parse().map_err(|_| bad())?,
                    description: description.replace('_', " "),
                    only,
                    sql,
                })
            })
            .collect()
    }

    /// The files that apply to `backend`, in order: an error names a file
    /// that is misnamed or a version given twice.
    fn for_backend(&self, backend: Backend) -> Result<Vec<File>, DataError> {
        let mut files: Vec<File> = self
            .parse()?
            .into_iter()
            .filter(|f| f.only.is_none_or(|b| b == backend))
            .collect();
        files.sort_by_key(|f| f.version);
        for pair in files.windows(2) {
            if pair[0].version == pair[1].version {
                return Err(DataError::Config(format!(
                    "the migrations `{}` and `{}` have the same version",
                    pair[0].name, pair[1].name
                )));
            }
        }
        Ok(files)
    }

    /// The names of the files that apply to `backend`, in order.
    pub fn names(&self, backend: Backend) -> Result<Vec<&'static str>, DataError> {
        Ok(self
            .for_backend(backend)?
            .into_iter()
            .map(|f| f.name)
            .collect())
    }
}

impl Migrations {
    fn checked_table(&self) -> Result<&'static str, DataError> {
        let table = self.table;
        if table.is_empty()
            || !table
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(DataError::Config(format!(
                "`{table}` is not a migrations table name (letters, digits and `_`)"
            )));
        }
        Ok(table)
    }
}

impl Database {
    /// The names of the files of `migrations` not applied yet to this
    /// database, in order (all of them on a new database).
    pub async fn pending(&self, migrations: &Migrations) -> Result<Vec<&'static str>, DataError> {
        let files = migrations.for_backend(self.backend())?;
        let table = migrations.checked_table()?;
        // The table name is checked above: letters, digits and `_`.
        let applied_sql = format!("SELECT version FROM {table} WHERE success");
        let exists_sql = match self.backend() {
            Backend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' AND name = $1",
            Backend::Postgres => {
                "SELECT CAST(to_regclass($1) AS text) WHERE to_regclass($1) IS NOT NULL"
            }
        };
        let applied: Vec<i64> = crate::with_pool!(self.pool(), p => {
            let exists: Option<String> = sqlx::query_scalar(exists_sql)
                .bind(table)
                .fetch_optional(p)
                .await?;
            match exists {
                Some(_) => {
                    sqlx::query_scalar(sqlx::AssertSqlSafe(applied_sql))
                        .fetch_all(p)
                        .await?
                }
                None => Vec::new(),
            }
        });
        Ok(files
            .into_iter()
            .filter(|f| !applied.contains(&f.version))
            .map(|f| f.name)
            .collect())
    }

    /// Applies the migrations not applied yet, in order, each in a
    /// transaction; stops at the first that fails, naming its file.
    /// Several processes may call it at once (PostgreSQL takes an advisory
    /// lock; SQLite's writer lock serialises them).
    pub async fn migrate(&self, migrations: &Migrations) -> Result<(), DataError> {
        let files = migrations.for_backend(self.backend())?;
        let table = migrations.checked_table()?;
        let mut migrator = Migrator::with_migrations(
            files
                .iter()
                .map(|f| {
                    Migration::new(
                        f.version,
                        Cow::Owned(f.description.clone()),
                        MigrationType::Simple,
                        f.sql.into_sql_str(),
                        false,
                    )
                })
                .collect(),
        );
        migrator.dangerous_set_table_name(table);
        let outcome = match self.pool() {
            Pool::Sqlite(p) => {
                // SQLite has no lock for the whole run (PostgreSQL takes an
                // advisory one): two processes starting at once may both
                // find a migration pending, and the second fails once the
                // first has applied it. Each attempt is transactional, so
                // trying again is safe, and finds it applied.
                let mut attempt = 0;
                loop {
                    match migrator.run(p).await {
                        Err(_) if attempt < 3 => {
                            attempt += 1;
                            tokio::time::sleep(std::time::Duration::from_millis(100 * attempt))
                                .await;
                        }
                        outcome => break outcome,
                    }
                }
            }
            Pool::Postgres(p) => migrator.run(p).await,
        };
        outcome.map_err(|e| match e {
            sqlx::migrate::MigrateError::ExecuteMigration(error, version) => {
                let file = files
                    .iter()
                    .find(|f| f.version == version)
                    .map_or_else(|| version.to_string(), |f| f.name.to_owned());
                DataError::Migration { file, error }
            }
            sqlx::migrate::MigrateError::Execute(error) => DataError::Sqlx(error),
            other => DataError::Config(format!("migrations: {other}")),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_by_version_and_database() {
        let m = Migrations::new(&[
            ("0002_add_tags.sql", ""),
            ("0001_items.sqlite.sql", ""),
            ("0001_items.postgres.sql", ""),
        ]);
        assert_eq!(
            m.names(Backend::Sqlite).unwrap(),
            ["0001_items.sqlite.sql", "0002_add_tags.sql"]
        );
        assert_eq!(
            m.names(Backend::Postgres).unwrap(),
            ["0001_items.postgres.sql", "0002_add_tags.sql"]
        );
        let twice = Migrations::new(&[("1_a.sql", ""), ("01_b.sql", "")]);
        assert!(twice
            .names(Backend::Sqlite)
            .unwrap_err()
            .to_string()
            .contains("same version"));
        for bad in ["items.sql", "x1_items.sql", "0001_items.txt", "_items.sql"] {
            let files: &'static [(&'static str, &'static str)] =
                Box::leak(vec![(bad, "")].into_boxed_slice());
            let err = Migrations::new(files).names(Backend::Sqlite).unwrap_err();
            assert!(err.to_string().contains(bad), "{err}");
        }
    }
}
