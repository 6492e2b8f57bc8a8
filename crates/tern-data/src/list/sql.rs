//! A model's list as one statement: the `WHERE` clause from the checked
//! filters, every value bound, and the page with its count.

use super::*;

/// The `WHERE` clause of `list` (placeholders from `$1`), and the values
/// to bind in order.
pub(super) fn where_clause<M: Model>(list: &List, like: &str) -> (String, Vec<Value>) {
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
    for (condition, value) in &list.conditions {
        and(&mut sql);
        values.push(Value::Text(value.clone()));
        sql.push('(');
        sql.push_str(&condition.replacen("{}", &format!("${}", values.len()), 1));
        sql.push(')');
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

pub(super) fn bind<'q, DB: sqlx::Database, O>(
    mut q: QueryAs<'q, DB, O, DB::Arguments>,
    values: &'q [Value],
) -> QueryAs<'q, DB, O, DB::Arguments>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    f64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    OffsetDateTime: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    for v in values {
        q = match v {
            Value::Integer(n) => q.bind(*n),
            Value::Real(x) => q.bind(*x),
            Value::Bool(b) => q.bind(*b),
            Value::Text(t) => q.bind(t.as_str()),
            Value::Time(t) => q.bind(*t),
            Value::Null => q,
        };
    }
    q
}

/// The values as SQLite binds them: a date-time as the text a model
/// writes (UTC, fixed width), so that the column's text compares as time.
pub(super) fn for_sqlite(values: &[Value]) -> Vec<Value> {
    values
        .iter()
        .map(|v| match v {
            // `parse_time` took only what formats: the fallback is never used.
            Value::Time(t) => {
                Value::Text(t.as_sqlite_time().text().ok().flatten().unwrap_or_default())
            }
            v => v.clone(),
        })
        .collect()
}

/// The window count's column in a list's statement.
pub(super) const TOTAL: &str = "_tern_total";

/// A row and the count of every row its list matches.
pub(super) struct Counted<M>(M, i64);

impl<'r, R, M> sqlx::FromRow<'r, R> for Counted<M>
where
    R: sqlx::Row,
    M: sqlx::FromRow<'r, R>,
    &'static str: sqlx::ColumnIndex<R>,
    i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    fn from_row(row: &'r R) -> Result<Self, sqlx::Error> {
        Ok(Counted(M::from_row(row)?, row.try_get(TOTAL)?))
    }
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
    let values = match conn.backend() {
        crate::Backend::Sqlite => for_sqlite(&values),
        crate::Backend::Postgres => values,
    };
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
    let (limit, offset) = list.slice.limit_offset();
    let count = format!("SELECT COUNT(*) FROM \"{}\"{filter}", M::TABLE);
    // One statement: the page's rows, each with the count of every row
    // that matches (a window over the filtered rows, before `LIMIT`).
    // Only a page past the end (no row to carry the count) asks again.
    let from = format!(" FROM \"{}\"", M::TABLE);
    let rows = format!(
        "{}{filter} ORDER BY {order} LIMIT {limit} OFFSET {offset}",
        M::SELECT_ALL.replacen(
            &from,
            &format!(", COUNT(*) OVER () AS \"{TOTAL}\"{from}"),
            1
        )
    );
    // Identifiers above are the model's constants and numbers are ours;
    // every client value is in `values`, bound.
    macro_rules! page_on {
        ($on:expr) => {{
            let items: Vec<Counted<M>> = bind(sqlx::query_as(AssertSqlSafe(rows)), &values)
                .fetch_all($on)
                .await?;
            let total = match items.first() {
                Some(first) => first.1,
                None if offset == 0 => 0,
                None => {
                    let (total,): (i64,) = bind(sqlx::query_as(AssertSqlSafe(count)), &values)
                        .fetch_one($on)
                        .await?;
                    total
                }
            };
            (total, items.into_iter().map(|c| c.0).collect::<Vec<M>>())
        }};
    }
    // SQLite answers in process, so a second statement costs no round
    // trip, while its window count reads and sorts every matching row,
    // however small the page (a page of 20 from 200 rows: twice the CPU of
    // two statements, `tern-bench data`): the count and the page apart.
    let plain_rows = format!(
        "{}{filter} ORDER BY {order} LIMIT {limit} OFFSET {offset}",
        M::SELECT_ALL
    );
    macro_rules! page_apart_on {
        ($on:expr) => {{
            let (total,): (i64,) = bind(sqlx::query_as(AssertSqlSafe(count)), &values)
                .fetch_one(&mut *$on)
                .await?;
            let items: Vec<M> = bind(sqlx::query_as(AssertSqlSafe(plain_rows)), &values)
                .fetch_all(&mut *$on)
                .await?;
            (total, items)
        }};
    }
    let (total, items) = match &mut conn {
        // One connection for the count and the page.
        Conn::Pool(Pool::Sqlite(p)) => {
            let mut c = crate::metrics::acquire(p).await?;
            page_apart_on!(c)
        }
        Conn::Pool(Pool::Postgres(p)) => {
            let mut c = crate::metrics::acquire(p).await?;
            page_on!(&mut *c)
        }
        Conn::Tx(Transaction::Sqlite(t)) => page_apart_on!((*t)),
        Conn::Tx(Transaction::Postgres(t)) => page_on!(&mut **t),
    };
    Ok(Page::new(
        items,
        u64::try_from(total).unwrap_or(0),
        list.slice,
    ))
}
