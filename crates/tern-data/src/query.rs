//! Hand-written SQL on either database, on the pool or inside the
//! request's transaction: [`query`], [`Conn`], [`Done`].
//!
//! ```no_run
//! use tern_data::{query, Conn, DataError, Db, Row};
//!
//! #[derive(Row)]
//! struct Author {
//!     name: String,
//!     posts: i64,
//! }
//!
//! const AUTHOR: &str = "SELECT a.name, COUNT(p.id) AS posts FROM authors a \
//!     LEFT JOIN posts p ON p.author_id = a.id WHERE a.name = $1 GROUP BY a.name";
//!
//! /// Runs on the pool (`&db`) or in the request's transaction
//! /// (`&mut tx.lock().await`): the caller decides.
//! async fn follow(on: impl Into<Conn<'_>>, who: i64, whom: i64) -> Result<bool, DataError> {
//!     let mut c = on.into();
//!     let done = query("INSERT INTO follows (follower, followed) VALUES ($1, $2) ON CONFLICT DO NOTHING")
//!         .bind(who)
//!         .bind(whom)
//!         .execute(&mut c)
//!         .await?;
//!     let n: i64 = query("SELECT COUNT(*) FROM follows WHERE follower = $1")
//!         .bind(who)
//!         .scalar(&mut c)
//!         .await?;
//!     Ok(done.rows_affected == 1 && n > 0)
//! }
//!
//! async fn author(db: Db, name: String) -> Result<Option<Author>, DataError> {
//!     query(AUTHOR).bind(name).fetch_optional(&db).await
//! }
//! ```
//!
//! Placeholders are `$1`, `$2`, ... on both databases (SQLite reads
//! them too). Every value is bound, never written into the text; the
//! text is a `&'static str`, so client input cannot reach it.

use sqlx::{
    postgres::PgRow, sqlite::SqliteRow, types::Json, Arguments, Decode, FromRow, Postgres, Sqlite,
    Type,
};
use time::OffsetDateTime;
use uuid::Uuid;

use crate::{
    model::{PgArgs, SqliteArgs},
    sqlite_time::AsSqliteTime,
    transaction::{Transaction, TxGuard},
    Backend, DataError, Db, Pool,
};

/// A JSON column: `JSONB` on PostgreSQL, `TEXT` on SQLite, any serde
/// type in Rust (`JsonColumn<Vec<String>>`). As a [`Model`](crate::Model)
/// field it is of [`Kind::Other`](crate::model::Kind::Other) (not a
/// filter of lists); [`Query::bind`] takes it too. `.0` is the value,
/// and `JsonColumn(value)` makes one (sqlx's `Json`, re-exported under
/// this name so that it is a type and a constructor both).
pub use sqlx::types::Json as JsonColumn;

/// Where a statement runs: on the pool (each statement on a connection
/// of its own, committed at once) or in an open transaction (the
/// request's [`Tx`](crate::Tx): committed with the answer).
///
/// A helper that should work both ways takes `on: impl Into<Conn<'_>>`,
/// binds `let mut c = on.into();` and passes `&mut c` to each statement;
/// its caller passes `&db` (a [`Db`] or a [`Pool`]) or `&mut guard` (the
/// [`TxGuard`] of `tx.lock().await`, or a `&mut` [`Transaction`]).
#[derive(Debug)]
pub enum Conn<'a> {
    /// The pool.
    Pool(&'a Pool),
    /// An open transaction.
    Tx(&'a mut Transaction),
}

impl Conn<'_> {
    /// Which database it is.
    pub fn backend(&self) -> Backend {
        match self {
            Conn::Pool(p) => p.backend(),
            Conn::Tx(Transaction::Sqlite(_)) => Backend::Sqlite,
            Conn::Tx(Transaction::Postgres(_)) => Backend::Postgres,
        }
    }
}

impl<'a> From<&'a Pool> for Conn<'a> {
    fn from(pool: &'a Pool) -> Self {
        Conn::Pool(pool)
    }
}

impl<'a> From<&'a Db> for Conn<'a> {
    fn from(db: &'a Db) -> Self {
        Conn::Pool(&db.0)
    }
}

impl<'a> From<&'a mut Transaction> for Conn<'a> {
    fn from(tx: &'a mut Transaction) -> Self {
        Conn::Tx(tx)
    }
}

impl<'a> From<&'a mut TxGuard<'_>> for Conn<'a> {
    fn from(guard: &'a mut TxGuard<'_>) -> Self {
        Conn::Tx(guard)
    }
}

/// A reborrow: a helper holding a `Conn` passes `&mut c` to each of its
/// statements.
impl<'a, 'b> From<&'a mut Conn<'b>> for Conn<'a> {
    fn from(conn: &'a mut Conn<'b>) -> Self {
        match conn {
            Conn::Pool(p) => Conn::Pool(p),
            Conn::Tx(t) => Conn::Tx(t),
        }
    }
}

/// What a statement did: one type for both databases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// The rows it inserted, changed or deleted.
    pub rows_affected: u64,
}

/// A value bound to a [`Query`]'s placeholder: an `i64`, `i32`, `f64`,
/// `bool`, `String` or `&str`, bytes, an [`OffsetDateTime`], a [`Uuid`]
/// or a [`JsonColumn`]; each also as an `Option` (`None` is a `NULL` of
/// that type, as PostgreSQL needs), and by reference.
///
/// On SQLite a date-time is bound as a [`Model`](crate::Model) writes it
/// (UTC text of fixed width), so hand-written statements compare and sort
/// with the model's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg(Value);

#[derive(Debug, Clone, PartialEq)]
enum Value {
    I64(Option<i64>),
    I32(Option<i32>),
    F64(Option<f64>),
    Bool(Option<bool>),
    Text(Option<String>),
    Bytes(Option<Vec<u8>>),
    Time(Option<OffsetDateTime>),
    Uuid(Option<Uuid>),
    Json(Option<serde_json::Value>),
    /// A JSON value that did not serialize: the statement is refused.
    Unwritable(String),
}

macro_rules! arg_from {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl From<$t> for Arg {
            fn from(v: $t) -> Self {
                Arg(Value::$variant(Some(v.into())))
            }
        }
        impl From<Option<$t>> for Arg {
            fn from(v: Option<$t>) -> Self {
                Arg(Value::$variant(v.map(Into::into)))
            }
        }
    )*};
}

arg_from! {
    i64 => I64,
    i32 => I32,
    f64 => F64,
    bool => Bool,
    String => Text,
    &str => Text,
    Vec<u8> => Bytes,
    &[u8] => Bytes,
    OffsetDateTime => Time,
    Uuid => Uuid,
}

impl<T: serde::Serialize> From<Json<T>> for Arg {
    fn from(v: Json<T>) -> Self {
        Some(v).into()
    }
}

impl<T: serde::Serialize> From<Option<Json<T>>> for Arg {
    fn from(v: Option<Json<T>>) -> Self {
        match v.map(|j| serde_json::to_value(j.0)).transpose() {
            Ok(json) => Arg(Value::Json(json)),
            Err(e) => Arg(Value::Unwritable(e.to_string())),
        }
    }
}

/// By reference: the value is copied.
impl<T: Clone + Into<Arg>> From<&T> for Arg {
    fn from(v: &T) -> Self {
        v.clone().into()
    }
}

/// A bound value refused before the statement runs.
fn refused(what: impl std::fmt::Display) -> DataError {
    DataError::Invalid(format!("a bound value cannot be written: {what}"))
}

pub(crate) fn sqlite_args(args: &[Arg]) -> Result<SqliteArgs, DataError> {
    let mut out = SqliteArgs::default();
    for Arg(v) in args {
        match v {
            Value::I64(v) => out.add(*v),
            Value::I32(v) => out.add(*v),
            Value::F64(v) => out.add(*v),
            Value::Bool(v) => out.add(*v),
            Value::Text(v) => out.add(v.clone()),
            Value::Bytes(v) => out.add(v.clone()),
            Value::Time(v) => out.add(v.as_sqlite_time().text().map_err(refused)?),
            Value::Uuid(v) => out.add(*v),
            Value::Json(v) => out.add(v.clone().map(Json)),
            Value::Unwritable(e) => return Err(refused(e)),
        }
        .map_err(refused)?;
    }
    Ok(out)
}

pub(crate) fn pg_args(args: &[Arg]) -> Result<PgArgs, DataError> {
    let mut out = PgArgs::default();
    for Arg(v) in args {
        match v {
            Value::I64(v) => out.add(*v),
            Value::I32(v) => out.add(*v),
            Value::F64(v) => out.add(*v),
            Value::Bool(v) => out.add(*v),
            Value::Text(v) => out.add(v.clone()),
            Value::Bytes(v) => out.add(v.clone()),
            Value::Time(v) => out.add(*v),
            Value::Uuid(v) => out.add(*v),
            Value::Json(v) => out.add(v.clone().map(Json)),
            Value::Unwritable(e) => return Err(refused(e)),
        }
        .map_err(refused)?;
    }
    Ok(out)
}

/// A row type a [`Query`] reads on either database: a
/// [`Model`](crate::Model), a [`#[derive(Row)]`](macro@crate::Row) struct
/// or a tuple of column values (`(i64, String)`).
pub trait ReadRow:
    for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

impl<T> ReadRow for T where
    T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

/// A single column's value a [`Query::scalar`] reads on either database
/// (`i64` for a `COUNT(*)`, `bool` for an `EXISTS`, `String`, ...).
pub trait ReadValue:
    for<'r> Decode<'r, Sqlite>
    + Type<Sqlite>
    + for<'r> Decode<'r, Postgres>
    + Type<Postgres>
    + Send
    + Unpin
{
}

impl<T> ReadValue for T where
    T: for<'r> Decode<'r, Sqlite>
        + Type<Sqlite>
        + for<'r> Decode<'r, Postgres>
        + Type<Postgres>
        + Send
        + Unpin
{
}

/// Runs `$body` with `$e` the executor and `$a` the arguments of
/// whichever database and connection `$conn` is.
macro_rules! on_conn {
    ($conn:expr, $args:expr, |$e:ident, $a:ident| $body:expr) => {
        match $conn {
            Conn::Pool(Pool::Sqlite(p)) => {
                let $a = sqlite_args($args)?;
                let mut c = crate::metrics::acquire(p).await?;
                let $e = &mut *c;
                $body
            }
            Conn::Pool(Pool::Postgres(p)) => {
                let $a = pg_args($args)?;
                let mut c = crate::metrics::acquire(p).await?;
                let $e = &mut *c;
                $body
            }
            Conn::Tx(Transaction::Sqlite(t)) => {
                let $e = &mut **t;
                let $a = sqlite_args($args)?;
                $body
            }
            Conn::Tx(Transaction::Postgres(t)) => {
                let $e = &mut **t;
                let $a = pg_args($args)?;
                $body
            }
        }
    };
}
pub(crate) use on_conn;

/// A statement and its bound values: see [`query`].
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a query does nothing until it is executed or fetched"]
pub struct Query {
    pub(crate) sql: &'static str,
    pub(crate) args: Vec<Arg>,
}

/// A statement to run on either database, with `$1`, `$2`, ... for the
/// values [`bind`](Query::bind) adds in order. The text is a
/// `&'static str`: values go in bound parameters, never in the text.
///
/// ```no_run
/// # async fn f(db: tern_data::Db) -> Result<(), tern_data::DataError> {
/// use tern_data::query;
///
/// let tags: Vec<(String,)> = query("SELECT DISTINCT tag FROM article_tags ORDER BY tag")
///     .fetch_all(&db)
///     .await?;
/// let gone = query("DELETE FROM favorites WHERE user_id = $1 AND article_id = $2")
///     .bind(7_i64)
///     .bind(42_i64)
///     .execute(&db)
///     .await?;
/// assert!(gone.rows_affected <= 1);
/// # Ok(()) }
/// ```
pub fn query(sql: &'static str) -> Query {
    Query {
        sql,
        args: Vec::new(),
    }
}

impl Query {
    /// Binds the next placeholder's value.
    pub fn bind(mut self, value: impl Into<Arg>) -> Query {
        self.args.push(value.into());
        self
    }

    /// The statement's text.
    pub fn sql(&self) -> &'static str {
        self.sql
    }

    /// How many values are bound.
    pub fn bound(&self) -> usize {
        self.args.len()
    }

    /// Runs the statement; how many rows it changed.
    pub async fn execute<'c>(self, on: impl Into<Conn<'c>>) -> Result<Done, DataError> {
        let rows_affected = on_conn!(on.into(), &self.args, |e, a| {
            sqlx::query_with(self.sql, a)
                .execute(e)
                .await?
                .rows_affected()
        });
        Ok(Done { rows_affected })
    }

    /// The first row; [`DataError`]'s `404` when there is none.
    pub async fn fetch_one<'c, R: ReadRow>(self, on: impl Into<Conn<'c>>) -> Result<R, DataError> {
        Ok(on_conn!(on.into(), &self.args, |e, a| {
            sqlx::query_as_with(self.sql, a).fetch_one(e).await?
        }))
    }

    /// The first row, if there is one.
    pub async fn fetch_optional<'c, R: ReadRow>(
        self,
        on: impl Into<Conn<'c>>,
    ) -> Result<Option<R>, DataError> {
        Ok(on_conn!(on.into(), &self.args, |e, a| {
            sqlx::query_as_with(self.sql, a).fetch_optional(e).await?
        }))
    }

    /// Every row.
    pub async fn fetch_all<'c, R: ReadRow>(
        self,
        on: impl Into<Conn<'c>>,
    ) -> Result<Vec<R>, DataError> {
        Ok(on_conn!(on.into(), &self.args, |e, a| {
            sqlx::query_as_with(self.sql, a).fetch_all(e).await?
        }))
    }

    /// The first column of the first row (a count, an `EXISTS`);
    /// [`DataError`]'s `404` when there is no row.
    pub async fn scalar<'c, T: ReadValue>(self, on: impl Into<Conn<'c>>) -> Result<T, DataError> {
        Ok(on_conn!(on.into(), &self.args, |e, a| {
            sqlx::query_scalar_with(self.sql, a).fetch_one(e).await?
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn values_convert_owned_optional_and_by_reference() {
        let name = String::from("ada");
        assert_eq!(Arg::from(&name), Arg::from("ada"));
        assert_eq!(Arg::from(None::<i64>), Arg(Value::I64(None)));
        assert_eq!(Arg::from(Some(3_i32)), Arg(Value::I32(Some(3))));
        let tags = JsonColumn(vec!["a".to_owned()]);
        assert_eq!(
            Arg::from(&tags),
            Arg(Value::Json(Some(serde_json::json!(["a"]))))
        );
        let q = query("SELECT $1, $2").bind(1_i64).bind(&name);
        assert_eq!((q.sql(), q.bound()), ("SELECT $1, $2", 2));
    }

    #[test]
    fn a_value_that_cannot_be_json_is_refused_before_the_statement() {
        use std::collections::BTreeMap;
        // JSON object keys are text: a map with tuple keys does not serialize.
        let bad: BTreeMap<(i32, i32), i32> = [((1, 2), 3)].into();
        let arg = Arg::from(Json(bad));
        let e = sqlite_args(std::slice::from_ref(&arg)).unwrap_err();
        assert_eq!(e.status(), tern::StatusCode::UNPROCESSABLE_ENTITY, "{e}");
        assert!(pg_args(&[arg]).is_err());
    }
}
