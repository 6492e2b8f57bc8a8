//! Data for Tern: the app's database from its settings (SQLite by
//! default, PostgreSQL by URL), migrations embedded in the binary, and the
//! `Db` extractor.
//!
//! ```no_run
//! use tern::{App, routing::get};
//! use tern_data::{Database, Db, DataError, Pool};
//!
//! static MIGRATIONS: tern_data::Migrations = tern_data::migrations!("tests/migrations");
//!
//! async fn count(Db(pool): Db) -> Result<String, DataError> {
//!     let n: i64 = match &pool {
//!         Pool::Sqlite(p) => tern_data::sqlx::query_scalar("SELECT COUNT(*) FROM notes").fetch_one(p).await?,
//!         Pool::Postgres(p) => tern_data::sqlx::query_scalar("SELECT COUNT(*) FROM notes").fetch_one(p).await?,
//!     };
//!     Ok(n.to_string())
//! }
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let config = tern::Config::from_env()?; // TERN_*, DATABASE_URL, ...
//!     config.validate()?;
//!     let service = App::new()
//!         .settings::<Database>("database") // DATABASE_URL, DATABASE_MAX_CONNECTIONS, ...
//!         .route("/notes/count", get(count))
//!         .build_with(config)?;
//!     let db = service.settings::<Database>().expect("loaded above");
//!     db.migrate(&MIGRATIONS).await?; // each file in a transaction
//!     tern::Server::new(service).serve().await?;
//!     Ok(())
//! }
//! ```
//!
//! - **Where**: `DATABASE_URL`, `sqlite://data/app.db` when unset (the
//!   file and its directory are made on first start: nothing to install);
//!   `postgres://user:password@host/database` for PostgreSQL. The pool's
//!   size, timeouts and statement cache are settings too ([`Database`]).
//! - **Migrations**: [`migrations!`] embeds a directory's `.sql` files;
//!   [`Database::migrate`] applies the new ones in order, each in a
//!   transaction, naming the file that fails.
//! - **Errors**: [`DataError`] answers `503` (with `Retry-After`) when the
//!   database cannot be reached, and the pool reconnects by itself when it
//!   is back; `404` for a missing row, `409` for a unique or foreign-key
//!   conflict.
//! - **Rows**: [`Model`] maps a struct to a table (typed CRUD, lists);
//!   [`Row`](macro@Row) reads the row of any other query (a join) by
//!   column name. Both need no sqlx in the app's own dependencies.
//!   Columns may be [`OffsetDateTime`]s and [`Uuid`]s (re-exported, with
//!   their crates [`time`] and [`uuid`]).
//! - **SQL**: sqlx 0.9 takes a `&'static str` as a query, so SQL built at
//!   run time must be marked (`sqlx::AssertSqlSafe`): client input goes in
//!   bound parameters, never in the text.

mod commands;
mod database;
pub mod encryption;
mod error;
mod extract;
mod migrate;
pub mod model;
mod sqlite_time;
pub mod testing;
pub mod transaction;

pub use commands::{install, reencrypt, Reencrypt};
pub use database::{Backend, Database, Pool, DEFAULT_URL};
pub use encryption::{Encrypted, FieldKeys};
pub use error::DataError;
pub use extract::{Db, ListQuery};
pub use migrate::Migrations;
pub use model::{Model, Page};
pub use transaction::{transactions, Transaction, Tx};

/// Embeds the `.sql` files of a directory (relative to the crate's
/// `Cargo.toml`) as [`Migrations`], in version order.
///
/// A file added to the directory is seen at the next build of the crate;
/// to rebuild when one is added, add a `build.rs` with
/// `println!("cargo:rerun-if-changed=migrations");`.
pub use tern_macros::migrations;

/// Maps a struct to a table: see [`Model`].
///
/// Besides numbers, text, `bool`, bytes and [`Encrypted`] values, a field
/// may be an [`OffsetDateTime`] (`timestamptz` on PostgreSQL; on SQLite,
/// UTC text of fixed width, so that ordering by it is ordering by time)
/// or a [`Uuid`] (`uuid` on PostgreSQL, a 16-byte `BLOB` on SQLite), each
/// also as an `Option`. A date-time cannot be the primary key. On
/// SQLite, write date-times through the model: a hand-written query binds
/// sqlx's own text (the value's offset, a trimmed fraction), which does
/// not sort with the model's.
///
/// `#[model(table = "...")]` on the struct names the table (else the
/// struct's name in snake case, plus `s`). On a field, `#[model(...)]`
/// takes: `primary_key` (exactly one field), `column = "..."`,
/// `label = "..."`, `default` (left to the database on insert),
/// `searchable`, `sortable`, `listed`, `read_only` (never written by
/// `update`) and `unique`.
///
/// `unique` declares a column that the migration makes `UNIQUE` (the
/// index is what enforces it) and generates its finders, with the
/// struct's visibility: `find_by_<field>(pool, value)`, the row or
/// [`DataError`]'s `404` when there is none, `find_by_<field>_opt`, an
/// `Option`, and `find_by_<field>_in` / `find_by_<field>_opt_in`, which
/// take the request's [`Transaction`] as [`Model::get_in`] does. The value
/// is a `&str` for a `String` field, a `&T` for any other `T`, and the
/// inner type's for an `Option` (`NULL` is never found). On SQLite a
/// date-time is bound as the model writes it, so the finder finds it in
/// any offset. `unique` is refused on the primary key (use
/// [`Model::get`]) and on an [`Encrypted`] field (each value has a random
/// nonce: nothing to look up); [`Column::unique`](model::Column::unique)
/// tells it at run time.
///
/// ```no_run
/// use tern_data::{DataError, Model, Pool, Transaction};
///
/// #[derive(Model)]
/// #[model(table = "articles")]
/// pub struct Article {
///     #[model(primary_key)]
///     pub id: i64,
///     #[model(unique)]
///     pub slug: String,
///     #[model(searchable, sortable)]
///     pub title: String,
/// }
///
/// async fn show(pool: &Pool, slug: &str) -> Result<Article, DataError> {
///     Article::find_by_slug(pool, slug).await // a 404 when none
/// }
///
/// async fn taken(tx: &mut Transaction, slug: &str) -> Result<bool, DataError> {
///     Ok(Article::find_by_slug_opt_in(tx, slug).await?.is_some())
/// }
/// ```
pub use tern_macros::Model;

/// Reads a struct from a query's row, by column name, on both databases:
/// for the rows of queries a [`Model`] does not write (joins, aggregates).
/// The app needs no sqlx features of its own: the generated code names
/// `tern_data::sqlx`.
///
/// A field reads the column of its name, or `#[row(rename = "column")]`'s.
///
/// ```no_run
/// # async fn f(pool: &tern_data::Pool) -> Result<(), tern_data::DataError> {
/// #[derive(tern_data::Row)]
/// struct Comment {
///     body: String,
///     #[row(rename = "username")]
///     author: String,
/// }
///
/// let sql = "SELECT c.body, u.username FROM comments c \
///            JOIN users u ON u.id = c.author_id ORDER BY c.id";
/// let comments: Vec<Comment> = tern_data::with_pool!(pool, p => {
///     tern_data::sqlx::query_as(sql).fetch_all(p).await?
/// });
/// # Ok(()) }
/// ```
pub use tern_macros::Row;

/// sqlx, at the version this crate uses.
pub use sqlx;

/// The `time` crate, for date-time columns: an `OffsetDateTime` field is
/// a `timestamptz` on PostgreSQL and UTC text on SQLite (see [`Model`]);
/// `time::serde::rfc3339` writes it as RFC 3339 in JSON.
pub use time;

/// The `uuid` crate, for UUID columns (`uuid` on PostgreSQL, 16 bytes on
/// SQLite); `Uuid::new_v4()` makes a random one.
pub use uuid;

/// A UUID column's type: see [`uuid`].
pub use uuid::Uuid;

/// A date-time column's type: see [`time`].
pub use time::OffsetDateTime;

/// Runs `$body` with `$p` bound to the pool of whichever database `$pool`
/// is (the body is written once and compiled for each):
///
/// ```no_run
/// # async fn f(pool: &tern_data::Pool) -> Result<(), tern_data::DataError> {
/// let n: i64 = tern_data::with_pool!(pool, p => {
///     tern_data::sqlx::query_scalar("SELECT COUNT(*) FROM notes").fetch_one(p).await?
/// });
/// # Ok(()) }
/// ```
#[macro_export]
macro_rules! with_pool {
    ($pool:expr, $p:ident => $body:expr) => {
        match $pool {
            $crate::Pool::Sqlite($p) => $body,
            $crate::Pool::Postgres($p) => $body,
        }
    };
}
