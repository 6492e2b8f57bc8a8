//! Models: a struct mapped to a table by `#[derive(Model)]`, with its
//! metadata as constants and typed CRUD on either database.
//!
//! Every statement's text comes from the model's constants (its table and
//! column names, checked at compile time); what a client sends (a filter's
//! value, a search term, a page number) is always a bound parameter, and a
//! client's column name is only ever compared with the model's own.

use sqlx::{postgres::PgRow, query::QueryAs, sqlite::SqliteRow, Postgres, Sqlite};

pub use crate::list::{Filter, List, Op, Page, Value};
use crate::{list::list_rows, query::Conn, transaction::Transaction, DataError, Pool};

#[doc(hidden)]
pub use crate::sqlite_time::{AsSqliteTime, SqliteTime};

/// SQLite's arguments.
pub type SqliteArgs = <Sqlite as sqlx::Database>::Arguments;
/// PostgreSQL's arguments.
pub type PgArgs = <Postgres as sqlx::Database>::Arguments;

/// What kind of value a column holds, as filters read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An integer (`i16`, `i32`, `i64`).
    Integer,
    /// A floating-point number.
    Real,
    /// Text.
    Text,
    /// A boolean.
    Bool,
    /// Bytes (and encrypted values).
    Bytes,
    /// A date-time (`OffsetDateTime`): filtered by a date (its UTC
    /// midnight) or an RFC 3339 date-time.
    DateTime,
    /// Another type (a UUID, JSON): not filterable.
    Other,
}

/// A column's metadata, from the field's type and `#[model(...)]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The column's name (the field's, or `#[model(column = "...")]`).
    pub name: &'static str,
    /// For people: `#[model(label = "...")]`, else the name in words.
    pub label: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Whether it may be `NULL` (an `Option` field).
    pub nullable: bool,
    /// The primary key.
    pub primary_key: bool,
    /// Left to the database on insert (`#[model(default)]`; the primary
    /// key too).
    pub has_default: bool,
    /// Matched by a list's search (`#[model(searchable)]`, text only).
    pub searchable: bool,
    /// A list may be ordered by it (`#[model(sortable)]`).
    pub sortable: bool,
    /// Shown in lists (`#[model(listed)]`; every column when none is).
    pub listed: bool,
    /// Stored encrypted (`Encrypted<T>` fields).
    pub encrypted: bool,
    /// Never written by `update` (`#[model(read_only)]`; the primary key
    /// too).
    pub read_only: bool,
    /// Declared unique (`#[model(unique)]`; the migration's unique index
    /// enforces it): the model has `find_by_<field>` finders.
    pub unique: bool,
    /// The longest text, in characters (`#[model(max_length = 500)]`,
    /// text only): [`Model::check_values`] refuses a longer one (`422`).
    pub max_length: Option<u32>,
    /// The values a text may take (`#[model(choices("draft",
    /// "published"))]`, text only; empty: any): [`Model::check_values`]
    /// refuses another (`422`).
    pub choices: &'static [&'static str],
    /// The table whose key this column holds (`#[model(references =
    /// "tern_users")]`), for pages that link or offer rows of it.
    pub references: Option<&'static str>,
    /// How a form shows it (`#[model(widget = "textarea")]`; else by its
    /// kind).
    pub widget: Widget,
}

/// How a form shows a column, beyond what its [`Kind`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Widget {
    /// By the kind: a text input, a number, a checkbox.
    #[default]
    Default,
    /// Several lines of text (`widget = "textarea"`).
    TextArea,
    /// An email address (`widget = "email"`).
    Email,
    /// A URL (`widget = "url"`).
    Url,
    /// Hidden as typed (`widget = "password"`).
    Password,
}

/// A table's row as a struct: `#[derive(Model)]` implements it, with the
/// statements as constants.
pub trait Model:
    for<'r> sqlx::FromRow<'r, SqliteRow>
    + for<'r> sqlx::FromRow<'r, PgRow>
    + Send
    + Sync
    + Unpin
    + Sized
{
    /// The primary key's type.
    type Key: for<'q> sqlx::Encode<'q, Sqlite>
        + sqlx::Type<Sqlite>
        + for<'q> sqlx::Encode<'q, Postgres>
        + sqlx::Type<Postgres>
        + for<'r> sqlx::Decode<'r, Sqlite>
        + for<'r> sqlx::Decode<'r, Postgres>
        + Clone
        + Send
        + Sync
        + 'static;
    /// The table.
    const TABLE: &'static str;
    /// One row, for people (`#[model(name = "note")]`; else the struct's
    /// name in words, lower case: `NoteTag` is `note tag`).
    const NAME: &'static str = Self::TABLE;
    /// Several rows, for people (`#[model(plural = "notes")]`; else the
    /// name and `s`).
    const PLURAL: &'static str = Self::TABLE;
    /// Every column, in field order.
    const COLUMNS: &'static [Column];
    /// `SELECT <columns> FROM <table> WHERE <key> = $1`.
    const SELECT_ONE: &'static str;
    /// `SELECT <columns> FROM <table>`, for lists.
    const SELECT_ALL: &'static str;
    /// `INSERT INTO <table> (<writable columns>) VALUES ($1, ...) RETURNING <columns>`.
    const INSERT: &'static str;
    /// `UPDATE <table> SET <column> = $1, ... WHERE <key> = $n RETURNING <columns>`.
    const UPDATE: &'static str;
    /// `DELETE FROM <table> WHERE <key> = $1`.
    const DELETE: &'static str;

    /// The row's key.
    fn key(&self) -> Self::Key;

    /// Binds the values `INSERT` writes, in its order.
    fn bind_insert<'q>(
        &'q self,
        q: QueryAs<'q, Sqlite, Self, SqliteArgs>,
    ) -> QueryAs<'q, Sqlite, Self, SqliteArgs>;
    /// Binds the values `INSERT` writes, in its order (PostgreSQL).
    fn bind_insert_pg<'q>(
        &'q self,
        q: QueryAs<'q, Postgres, Self, PgArgs>,
    ) -> QueryAs<'q, Postgres, Self, PgArgs>;
    /// Binds the values `UPDATE` writes, then the key.
    fn bind_update<'q>(
        &'q self,
        q: QueryAs<'q, Sqlite, Self, SqliteArgs>,
    ) -> QueryAs<'q, Sqlite, Self, SqliteArgs>;
    /// Binds the values `UPDATE` writes, then the key (PostgreSQL).
    fn bind_update_pg<'q>(
        &'q self,
        q: QueryAs<'q, Postgres, Self, PgArgs>,
    ) -> QueryAs<'q, Postgres, Self, PgArgs>;

    /// Refuses, before a write, what no backend stores alike (a NUL
    /// character in a text field) and what the model declares wrong (a
    /// text longer than its `max_length`, one outside its `choices`):
    /// [`DataError::Invalid`], `422` naming the field. `#[derive(Model)]`
    /// writes it; [`insert`](Model::insert),
    /// [`update`](Model::update) and their `_in` forms call it.
    fn check_values(&self) -> Result<(), DataError> {
        Ok(())
    }

    /// The column called `name`.
    fn column(name: &str) -> Option<&'static Column> {
        Self::COLUMNS.iter().find(|c| c.name == name)
    }

    /// The row whose key is `key`; [`DataError`]'s `404` when there is
    /// none. On the pool (`&pool`, `&db`) or in a transaction (`&mut
    /// guard`): see [`Conn`].
    fn get<'c>(
        on: impl Into<Conn<'c>>,
        key: Self::Key,
    ) -> impl std::future::Future<Output = Result<Self, DataError>> + Send {
        let conn = on.into();
        async move {
            Ok(match conn {
                Conn::Pool(Pool::Sqlite(p)) => {
                    sqlx::query_as(Self::SELECT_ONE)
                        .bind(key)
                        .fetch_one(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                Conn::Pool(Pool::Postgres(p)) => {
                    sqlx::query_as(Self::SELECT_ONE)
                        .bind(key)
                        .fetch_one(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                Conn::Tx(Transaction::Sqlite(t)) => {
                    sqlx::query_as(Self::SELECT_ONE)
                        .bind(key)
                        .fetch_one(&mut **t)
                        .await?
                }
                Conn::Tx(Transaction::Postgres(t)) => {
                    sqlx::query_as(Self::SELECT_ONE)
                        .bind(key)
                        .fetch_one(&mut **t)
                        .await?
                }
            })
        }
    }

    /// Inserts the row (the key and the `default` columns are the
    /// database's) and returns it as stored.
    fn insert<'c>(
        &self,
        on: impl Into<Conn<'c>>,
    ) -> impl std::future::Future<Output = Result<Self, DataError>> + Send {
        let conn = on.into();
        async move {
            self.check_values()?;
            Ok(match conn {
                Conn::Pool(Pool::Sqlite(p)) => {
                    self.bind_insert(sqlx::query_as(Self::INSERT))
                        .fetch_one(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                Conn::Pool(Pool::Postgres(p)) => {
                    self.bind_insert_pg(sqlx::query_as(Self::INSERT))
                        .fetch_one(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                Conn::Tx(Transaction::Sqlite(t)) => {
                    self.bind_insert(sqlx::query_as(Self::INSERT))
                        .fetch_one(&mut **t)
                        .await?
                }
                Conn::Tx(Transaction::Postgres(t)) => {
                    self.bind_insert_pg(sqlx::query_as(Self::INSERT))
                        .fetch_one(&mut **t)
                        .await?
                }
            })
        }
    }

    /// Writes every column but the key and the read-only ones; returns the
    /// row as stored, or `404` when no row has this key.
    fn update<'c>(
        &self,
        on: impl Into<Conn<'c>>,
    ) -> impl std::future::Future<Output = Result<Self, DataError>> + Send {
        let conn = on.into();
        async move {
            self.check_values()?;
            Ok(match conn {
                Conn::Pool(Pool::Sqlite(p)) => {
                    self.bind_update(sqlx::query_as(Self::UPDATE))
                        .fetch_one(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                Conn::Pool(Pool::Postgres(p)) => {
                    self.bind_update_pg(sqlx::query_as(Self::UPDATE))
                        .fetch_one(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                Conn::Tx(Transaction::Sqlite(t)) => {
                    self.bind_update(sqlx::query_as(Self::UPDATE))
                        .fetch_one(&mut **t)
                        .await?
                }
                Conn::Tx(Transaction::Postgres(t)) => {
                    self.bind_update_pg(sqlx::query_as(Self::UPDATE))
                        .fetch_one(&mut **t)
                        .await?
                }
            })
        }
    }

    /// Deletes the row whose key is `key`; `404` when there is none.
    fn delete<'c>(
        on: impl Into<Conn<'c>>,
        key: Self::Key,
    ) -> impl std::future::Future<Output = Result<(), DataError>> + Send {
        let conn = on.into();
        async move {
            let affected = match conn {
                Conn::Pool(Pool::Sqlite(p)) => {
                    sqlx::query(Self::DELETE)
                        .bind(key)
                        .execute(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                .rows_affected(),
                Conn::Pool(Pool::Postgres(p)) => {
                    sqlx::query(Self::DELETE)
                        .bind(key)
                        .execute(&mut *crate::metrics::acquire(p).await?)
                        .await?
                }
                .rows_affected(),
                Conn::Tx(Transaction::Sqlite(t)) => {
                    sqlx::query(Self::DELETE)
                        .bind(key)
                        .execute(&mut **t)
                        .await?
                }
                .rows_affected(),
                Conn::Tx(Transaction::Postgres(t)) => {
                    sqlx::query(Self::DELETE)
                        .bind(key)
                        .execute(&mut **t)
                        .await?
                }
                .rows_affected(),
            };
            if affected == 0 {
                return Err(DataError::Sqlx(sqlx::Error::RowNotFound));
            }
            Ok(())
        }
    }

    /// [`get`](Model::get) inside the request's transaction.
    fn get_in(
        tx: &mut Transaction,
        key: Self::Key,
    ) -> impl std::future::Future<Output = Result<Self, DataError>> + Send {
        Self::get(tx, key)
    }

    /// [`insert`](Model::insert) inside the request's transaction.
    fn insert_in(
        &self,
        tx: &mut Transaction,
    ) -> impl std::future::Future<Output = Result<Self, DataError>> + Send {
        self.insert(tx)
    }

    /// [`update`](Model::update) inside the request's transaction.
    fn update_in(
        &self,
        tx: &mut Transaction,
    ) -> impl std::future::Future<Output = Result<Self, DataError>> + Send {
        self.update(tx)
    }

    /// A page of rows: filtered, searched, ordered (by the key when the
    /// list says nothing), with the total count of the rows that match.
    fn list<'c>(
        on: impl Into<Conn<'c>>,
        list: &List,
    ) -> impl std::future::Future<Output = Result<Page<Self>, DataError>> + Send {
        let conn = on.into();
        async move { list_rows::<Self>(conn, list).await }
    }
}

/// `Err` naming `field` when `text` holds a NUL character (PostgreSQL's
/// text refuses it, SQLite's keeps it): what `#[derive(Model)]`'s
/// [`Model::check_values`] calls for each text field.
#[doc(hidden)]
pub fn no_nul(field: &str, text: &str) -> Result<(), DataError> {
    if text.contains('\0') {
        return Err(DataError::Invalid(format!(
            "`{field}` must not contain a NUL character (text columns cannot store it)"
        )));
    }
    Ok(())
}
