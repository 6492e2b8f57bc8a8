//! Data for Tern: the app's database from its settings (SQLite by
//! default, PostgreSQL by URL), migrations embedded in the binary, and the
//! `Db` extractor.
//!
//! ```no_run
//! use tern::{App, routing::get};
//! use tern_data::{Database, Db, DataError};
//!
//! static MIGRATIONS: tern_data::Migrations = tern_data::migrations!("tests/migrations");
//!
//! async fn count(Db(pool): Db) -> Result<String, DataError> {
//!     let n: i64 = tern_data::query("SELECT COUNT(*) FROM notes").scalar(&pool).await?;
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
//! - **Queries**: [`query()`] runs hand-written SQL on either database
//!   (`$1` placeholders, bound values), reading models, rows, tuples or
//!   a scalar; it and the models' methods take a [`Conn`], the pool or
//!   the request's transaction, so that a helper serves both.
//!   [`timestamp`] writes date-times in JSON as UTC with milliseconds.
//! - **Lists**: [`ListQuery`] reads a model's list from the query string
//!   ([`Model::list`]); [`Listing`] reads a query's ([`Query::list`]).
//!   A [`ListShape`] of the app's sets the paging (pages or
//!   `limit`/`offset`), the JSON's names, filters (on joined tables too)
//!   and the order.
//!   Columns may be [`OffsetDateTime`]s and [`Uuid`]s (re-exported, with
//!   their crates [`time`] and [`uuid`]).
//! - **Metrics** ([`Database::record_metrics`], which [`install`] calls
//!   in every build of the app): the time statements wait for a pool connection, waits
//!   and timeouts, and the pool's size, in the app's `/metrics`.
//! - **SQL**: sqlx 0.9 takes a `&'static str` as a query, so SQL built at
//!   run time must be marked (`sqlx::AssertSqlSafe`): client input goes in
//!   bound parameters, never in the text.

mod commands;
mod database;
pub mod encryption;
mod error;
mod extract;
pub mod fields;
pub mod list;
mod metrics;
mod migrate;
pub mod model;
pub mod query;
mod sqlite_time;
pub mod testing;
pub mod timestamp;
pub mod transaction;

pub use commands::{install, reencrypt, Reencrypt};
pub use database::{Backend, Database, Pool, DEFAULT_URL};
pub use encryption::{Encrypted, FieldKeys};
pub use error::DataError;
pub use extract::{Db, ListQuery};
pub use fields::{FieldValue, Fields, FormValue, Input};
pub use list::{ListShape, Listing, Pages, Paging, Slice, Where};
pub use migrate::Migrations;
pub use model::{Model, Page, Widget};
pub use query::{query, Arg, Conn, Done, JsonColumn, Query};
pub use transaction::{transactions, Transaction, Tx, TxGuard};

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
/// also as an `Option`, or a [`JsonColumn`] (`JSONB` on PostgreSQL,
/// `TEXT` on SQLite). A date-time cannot be the primary key. On SQLite,
/// bind date-times through the model or [`query()`] (which write them
/// alike, so that they sort together), not through sqlx's own `bind`
/// (the value's offset, a trimmed fraction: another order).
///
/// The methods take a [`Conn`]: `&pool` or `&db` (the pool), or the
/// request's transaction (`&mut tx.lock().await`, a `&mut Transaction`);
/// the `_in` forms are the same with a `&mut Transaction` only.
///
/// `#[model(table = "...")]` on the struct names the table (else the
/// struct's name in snake case, plus `s`). On a field, `#[model(...)]`
/// takes: `primary_key` (exactly one field), `column = "..."`,
/// `label = "..."`, `default` (left to the database on insert),
/// `searchable`, `sortable`, `listed`, `read_only` (never written by
/// `update`), `unique`, `max_length = N` and `choices("a", "b")` (text
/// only: [`Model::check_values`] refuses a longer text, in characters,
/// or another value, `422` naming the field, on every insert and update),
/// `references = "table"` (the table whose key the column holds) and
/// `widget = "textarea"` (or `"email"`, `"url"`, `"password"`: how a form
/// shows it). On the struct, `name = "..."` and `plural = "..."` name a
/// row for people ([`Model::NAME`], [`Model::PLURAL`]; else the struct's
/// name in words, and `s`).
///
/// The derive also implements [`Fields`]: a row as form text and back,
/// each field through its type's [`FormValue`] (a field of a type of
/// one's own needs an impl, and `Clone`).
///
/// `unique` declares a column that the migration makes `UNIQUE` (the
/// index is what enforces it) and generates its finders, with the
/// struct's visibility: `find_by_<field>(on, value)`, the row or
/// [`DataError`]'s `404` when there is none, `find_by_<field>_opt`, an
/// `Option` (both on a [`Conn`]: the pool or a transaction, as
/// [`Model::get`]), and `find_by_<field>_in` / `find_by_<field>_opt_in`,
/// which take the request's [`Transaction`] as [`Model::get_in`] does. The value
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
/// A field reads the column of its name, or `#[row(rename = "column")]`'s;
/// a `#[row(flatten)]` field is another row type read from the same
/// columns (a comment's author, serialized as a nested object).
///
/// ```no_run
/// # async fn f(pool: &tern_data::Pool) -> Result<(), tern_data::DataError> {
/// #[derive(tern_data::Row)]
/// struct Author {
///     username: String,
///     #[row(rename = "author_id")]
///     id: i64,
/// }
///
/// #[derive(tern_data::Row)]
/// struct Comment {
///     body: String,
///     #[row(flatten)]
///     author: Author,
/// }
///
/// let sql = "SELECT c.body, c.author_id, u.username FROM comments c \
///            JOIN users u ON u.id = c.author_id ORDER BY c.id";
/// let comments: Vec<Comment> = tern_data::query(sql).fetch_all(pool).await?;
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
///
/// The body is compiled once per database, and both arms are the
/// `match`'s value: they must have one type. A body whose type is the
/// driver's does not compile (E0308, "`match` arms have incompatible
/// types"): `with_pool!(pool, p => { q.execute(p).await? })` as a value
/// is a `SqliteQueryResult` in one arm and a `PgQueryResult` in the
/// other. Take what both share in the body (`.rows_affected()`), or use
/// [`query()`], whose `execute` answers one [`Done`] on either database,
/// on the pool or in a transaction ([`Conn`]):
///
/// ```no_run
/// # async fn f(pool: &tern_data::Pool) -> Result<(), tern_data::DataError> {
/// let done = tern_data::query("DELETE FROM notes WHERE stars = $1")
///     .bind(0_i64)
///     .execute(pool)
///     .await?;
/// println!("{} deleted", done.rows_affected);
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
