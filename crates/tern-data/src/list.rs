//! Lists of a model's rows: what a client asks for (filters, a search,
//! an order, a page), checked against the model's columns, and the page
//! of rows that answers it.

use sqlx::{query::QueryAs, AssertSqlSafe};

use crate::{
    model::{Column, Kind, Model},
    query::Conn,
    transaction::Transaction,
    DataError, Pool,
};

/// What a list asks for: filters, a search, an order and a page. Build
/// it from a client's query with [`List::from_pairs`], which checks each
/// column name against the model's.
#[derive(Debug, Clone, PartialEq)]
pub struct List {
    /// Every filter must hold.
    pub filters: Vec<Filter>,
    /// Rows whose searchable columns contain this (case-insensitive).
    pub search: Option<String>,
    /// The order: a sortable column, descending when `true`.
    pub order: Option<(&'static str, bool)>,
    /// The page, from 1.
    pub page: u32,
    /// Rows per page (at most [`List::MAX_PER_PAGE`]).
    pub per_page: u32,
}

impl Default for List {
    fn default() -> Self {
        List {
            filters: Vec::new(),
            search: None,
            order: None,
            page: 1,
            per_page: 20,
        }
    }
}

/// One filter: a column, a comparison, a value (parsed as the column's
/// kind and bound, never written into the statement).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The model's column.
    pub column: &'static str,
    /// The comparison.
    pub op: Op,
    /// The value.
    pub value: Value,
}

/// A filter's comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `<>`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Op {
    fn sql(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "<>",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }
}

/// A filter's value, of the column's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer.
    Integer(i64),
    /// A number.
    Real(f64),
    /// Text.
    Text(String),
    /// A boolean.
    Bool(bool),
    /// `IS NULL` (with `Eq`) or `IS NOT NULL` (with `Ne`).
    Null,
}

/// A page of a list.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Page<T> {
    /// The rows of this page.
    pub items: Vec<T>,
    /// How many rows match, on every page.
    pub total: u64,
    /// This page, from 1.
    pub page: u32,
    /// Rows per page.
    pub per_page: u32,
}

impl List {
    /// The most rows a page may have.
    pub const MAX_PER_PAGE: u32 = 500;

    /// A list from a client's query pairs, for model `M`:
    ///
    /// - `q=term`: the search;
    /// - `order=column` or `order=-column` (descending): a sortable column;
    /// - `page=n`, `per_page=n` (1 to 500);
    /// - `column=value`, `column__ne=`, `__lt=`, `__le=`, `__gt=`, `__ge=`
    ///   (`column__null=true|false`): filters, on listed or searchable or
    ///   sortable columns that are not encrypted.
    ///
    /// An unknown column, a column that cannot be filtered or ordered by,
    /// or a value that is not of the column's kind is an error naming it
    /// (a `400` for the client).
    pub fn from_pairs<M: Model>(pairs: &[(String, String)]) -> Result<List, String> {
        let mut list = List::default();
        for (key, value) in pairs {
            if value.contains('\0') {
                // SQLite would end the text there; PostgreSQL refuses it.
                return Err(format!(
                    "`{}` must not contain a NUL character",
                    shorten(key)
                ));
            }
            match key.as_str() {
                "q" => list.search = Some(value.clone()).filter(|v| !v.is_empty()),
                "order" => {
                    let (name, descending) = match value.strip_prefix('-') {
                        Some(name) => (name, true),
                        None => (value.as_str(), false),
                    };
                    let column = M::column(name)
                        .filter(|c| c.sortable || c.primary_key)
                        .ok_or_else(|| {
                            format!(
                                "`order`: `{}` is not a column this list can be ordered by ({})",
                                shorten(name),
                                names::<M>(|c| c.sortable || c.primary_key)
                            )
                        })?;
                    list.order = Some((column.name, descending));
                }
                "page" | "per_page" => {
                    let n: u32 = value
                        .parse()
                        .ok()
                        .filter(|n| *n >= 1)
                        .ok_or_else(|| format!("`{key}` must be a whole number from 1"))?;
                    if key == "page" {
                        list.page = n;
                    } else if n > Self::MAX_PER_PAGE {
                        return Err(format!("`per_page` must be at most {}", Self::MAX_PER_PAGE));
                    } else {
                        list.per_page = n;
                    }
                }
                _ => list.filters.push(filter::<M>(key, value)?),
            }
        }
        Ok(list)
    }
}

fn filterable(c: &Column) -> bool {
    !c.encrypted && c.kind != Kind::Bytes && c.kind != Kind::Other
}

fn names<M: Model>(keep: impl Fn(&Column) -> bool) -> String {
    let names: Vec<&str> = M::COLUMNS
        .iter()
        .filter(|c| keep(c))
        .map(|c| c.name)
        .collect();
    if names.is_empty() {
        "there are none".to_owned()
    } else {
        names.join(", ")
    }
}

/// A client's text in a message, cut short.
fn shorten(text: &str) -> String {
    text.chars().take(40).collect()
}

fn filter<M: Model>(key: &str, value: &str) -> Result<Filter, String> {
    let (name, op) = match key.rsplit_once("__") {
        Some((name, "ne")) => (name, Some(Op::Ne)),
        Some((name, "lt")) => (name, Some(Op::Lt)),
        Some((name, "le")) => (name, Some(Op::Le)),
        Some((name, "gt")) => (name, Some(Op::Gt)),
        Some((name, "ge")) => (name, Some(Op::Ge)),
        Some((name, "null")) => (name, None),
        _ => (key, Some(Op::Eq)),
    };
    let column = M::column(name).filter(|c| filterable(c)).ok_or_else(|| {
        format!(
            "`{}` is not a parameter of this list (q, order, page, per_page, or a column: {})",
            shorten(key),
            names::<M>(filterable)
        )
    })?;
    let Some(op) = op else {
        let null = match value {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => return Err(format!("`{key}` must be true or false")),
        };
        return Ok(Filter {
            column: column.name,
            op: if null { Op::Eq } else { Op::Ne },
            value: Value::Null,
        });
    };
    let bad = |what: &str| format!("`{key}` must be {what} (it is `{}`)", shorten(value));
    let value = match column.kind {
        Kind::Integer => Value::Integer(value.parse().map_err(|_| bad("an integer"))?),
        Kind::Real => Value::Real(
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad("a number"))?,
        ),
        Kind::Bool => Value::Bool(match value {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => return Err(bad("true or false")),
        }),
        Kind::Text => Value::Text(value.to_owned()),
        Kind::Bytes | Kind::Other => return Err(bad("a filterable value")),
    };
    Ok(Filter {
        column: column.name,
        op,
        value,
    })
}

/// The `WHERE` clause of `list` (placeholders from `$1`), and the values
/// to bind in order.
fn where_clause<M: Model>(list: &List, like: &str) -> (String, Vec<Value>) {
    let mut sql = String::new();
    let mut values = Vec::new();
    let and = |sql: &mut String| sql.push_str(if sql.is_empty() { " WHERE " } else { " AND " });
    for f in &list.filters {
        and(&mut sql);
        if f.value == Value::Null {
            let not = if f.op == Op::Ne { " NOT" } else { "" };
            sql.push_str(&format!("\"{}\" IS{not} NULL", f.column));
        } else {
            values.push(f.value.clone());
            sql.push_str(&format!(
                "\"{}\" {} ${}",
                f.column,
                f.op.sql(),
                values.len()
            ));
        }
    }
    if let Some(term) = &list.search {
        let searchable: Vec<&Column> = M::COLUMNS.iter().filter(|c| c.searchable).collect();
        if !searchable.is_empty() {
            and(&mut sql);
            // `%` and `_` in the term are literal.
            let escaped = term
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            values.push(Value::Text(format!("%{escaped}%")));
            let n = values.len();
            let any: Vec<String> = searchable
                .iter()
                .map(|c| format!("\"{}\" {like} ${n} ESCAPE '\\'", c.name))
                .collect();
            sql.push('(');
            sql.push_str(&any.join(" OR "));
            sql.push(')');
        }
    }
    (sql, values)
}

fn bind<'q, DB: sqlx::Database, O>(
    mut q: QueryAs<'q, DB, O, DB::Arguments>,
    values: &'q [Value],
) -> QueryAs<'q, DB, O, DB::Arguments>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    f64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    for v in values {
        q = match v {
            Value::Integer(n) => q.bind(*n),
            Value::Real(x) => q.bind(*x),
            Value::Bool(b) => q.bind(*b),
            Value::Text(t) => q.bind(t.as_str()),
            Value::Null => q,
        };
    }
    q
}

pub(crate) async fn list_rows<M: Model>(
    mut conn: Conn<'_>,
    list: &List,
) -> Result<Page<M>, DataError> {
    let like = match conn.backend() {
        // SQLite's LIKE ignores ASCII case already.
        crate::Backend::Sqlite => "LIKE",
        crate::Backend::Postgres => "ILIKE",
    };
    let (filter, values) = where_clause::<M>(list, like);
    let key = M::COLUMNS
        .iter()
        .find(|c| c.primary_key)
        .map_or("1", |c| c.name);
    let (by, descending) = list.order.unwrap_or((key, false));
    let dir = if descending { "DESC" } else { "ASC" };
    // A stable order: ties broken by the key.
    let order = if by == key {
        format!("\"{key}\" {dir}")
    } else {
        format!("\"{by}\" {dir}, \"{key}\" ASC")
    };
    let per_page = list.per_page.clamp(1, List::MAX_PER_PAGE);
    let offset = u64::from(list.page.max(1) - 1) * u64::from(per_page);
    let count = format!("SELECT COUNT(*) FROM \"{}\"{filter}", M::TABLE);
    let rows = format!(
        "{}{filter} ORDER BY {order} LIMIT {per_page} OFFSET {offset}",
        M::SELECT_ALL
    );
    // Identifiers above are the model's constants and numbers are ours;
    // every client value is in `values`, bound.
    let (total, items) = match &mut conn {
        Conn::Pool(Pool::Sqlite(p)) => {
            let (total,): (i64,) = bind(sqlx::query_as(AssertSqlSafe(count)), &values)
                .fetch_one(p)
                .await?;
            let items = bind(sqlx::query_as(AssertSqlSafe(rows)), &values)
                .fetch_all(p)
                .await?;
            (total, items)
        }
        Conn::Pool(Pool::Postgres(p)) => {
            let (total,): (i64,) = bind(sqlx::query_as(AssertSqlSafe(count)), &values)
                .fetch_one(p)
                .await?;
            let items = bind(sqlx::query_as(AssertSqlSafe(rows)), &values)
                .fetch_all(p)
                .await?;
            (total, items)
        }
        Conn::Tx(Transaction::Sqlite(t)) => {
            let (total,): (i64,) = bind(sqlx::query_as(AssertSqlSafe(count)), &values)
                .fetch_one(&mut **t)
                .await?;
            let items = bind(sqlx::query_as(AssertSqlSafe(rows)), &values)
                .fetch_all(&mut **t)
                .await?;
            (total, items)
        }
        Conn::Tx(Transaction::Postgres(t)) => {
            let (total,): (i64,) = bind(sqlx::query_as(AssertSqlSafe(count)), &values)
                .fetch_one(&mut **t)
                .await?;
            let items = bind(sqlx::query_as(AssertSqlSafe(rows)), &values)
                .fetch_all(&mut **t)
                .await?;
            (total, items)
        }
    };
    Ok(Page {
        items,
        total: u64::try_from(total).unwrap_or(0),
        page: list.page.max(1),
        per_page,
    })
}
