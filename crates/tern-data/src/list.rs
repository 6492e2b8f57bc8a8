//! Lists of a model's rows: what a client asks for (filters, a search,
//! an order, a page), checked against the model's columns, and the page
//! of rows that answers it.

use std::{fmt, marker::PhantomData};

use sqlx::{query::QueryAs, AssertSqlSafe};
use time::{macros::format_description, OffsetDateTime};

use crate::{
    fields::FormValue,
    model::{Column, Kind, Model},
    query::{on_conn, pg_args, sqlite_args, Arg, Conn, Query, ReadRow},
    sqlite_time::AsSqliteTime,
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
    /// The rows asked for: a page, or an offset and a limit (at most the
    /// shape's maximum).
    pub slice: Slice,
    /// The conditions of the shape's [`Where`] filters the client set:
    /// each condition's SQL (one `{}`) and the value bound to it.
    pub conditions: Vec<(&'static str, String)>,
}

impl Default for List {
    fn default() -> Self {
        List {
            filters: Vec::new(),
            search: None,
            order: None,
            slice: Slice::of(Paging::PAGES),
            conditions: Vec::new(),
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
    /// A date-time: bound as a model writes it (on SQLite, UTC text of
    /// fixed width, so that comparing the text compares the times).
    Time(OffsetDateTime),
    /// `IS NULL` (with `Eq`) or `IS NOT NULL` (with `Ne`).
    Null,
}

/// A date-time filter's value: a date (`2026-12-01`, its UTC midnight),
/// an RFC 3339 date-time (`2026-12-01T10:00:00+01:00`), or a
/// `datetime-local` text (`2026-12-01T10:00`, UTC).
fn parse_time(text: &str) -> Option<OffsetDateTime> {
    let date = format_description!("[year]-[month]-[day]");
    let at = match time::Date::parse(text, date) {
        Ok(day) => day.midnight().assume_utc(),
        Err(_) => <OffsetDateTime as FormValue>::parse(text).ok()?,
    };
    // Only what SQLite's text can hold (years 0 to 9999).
    at.as_sqlite_time().text().ok().flatten().map(|_| at)
}

/// A page of a list, in the shape `S`'s JSON: `{"items": [..], "total":
/// n, "page": p, "per_page": pp}` for [`Pages`] (the names are `S::ITEMS`
/// and `S::TOTAL`; `page` and `per_page` are there when the rows were
/// asked for by page).
pub struct Page<T, S = Pages> {
    /// The rows of this page.
    pub items: Vec<T>,
    /// How many rows match, on every page.
    pub total: u64,
    /// Which rows these are.
    pub slice: Slice,
    shape: PhantomData<fn() -> S>,
}

impl<T, S> Page<T, S> {
    /// A page of `items` out of `total`.
    pub fn new(items: Vec<T>, total: u64, slice: Slice) -> Self {
        Page {
            items,
            total,
            slice,
            shape: PhantomData,
        }
    }

    /// The same page in another shape's JSON (a model's list, which is
    /// in [`Pages`], answered in a shape of the app's).
    pub fn into_shape<S2>(self) -> Page<T, S2> {
        Page::new(self.items, self.total, self.slice)
    }

    /// The same page with each item mapped.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U, S> {
        Page::new(
            self.items.into_iter().map(f).collect(),
            self.total,
            self.slice,
        )
    }
}

impl<T: fmt::Debug, S> fmt::Debug for Page<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Page")
            .field("items", &self.items)
            .field("total", &self.total)
            .field("slice", &self.slice)
            .finish()
    }
}

impl<T: Clone, S> Clone for Page<T, S> {
    fn clone(&self) -> Self {
        Page::new(self.items.clone(), self.total, self.slice)
    }
}

impl<T: PartialEq, S> PartialEq for Page<T, S> {
    fn eq(&self, other: &Self) -> bool {
        (&self.items, self.total, self.slice) == (&other.items, other.total, other.slice)
    }
}

impl<T: serde::Serialize, S: ListShape> serde::Serialize for Page<T, S> {
    fn serialize<Z: serde::Serializer>(&self, z: Z) -> Result<Z::Ok, Z::Error> {
        use serde::ser::SerializeMap;
        let paged = match self.slice {
            Slice::Page { page, per_page } => Some((page, per_page)),
            Slice::Offset { .. } => None,
        };
        let mut map = z.serialize_map(Some(if paged.is_some() { 4 } else { 2 }))?;
        map.serialize_entry(S::ITEMS, &self.items)?;
        map.serialize_entry(S::TOTAL, &self.total)?;
        if let Some((page, per_page)) = paged {
            map.serialize_entry("page", &page)?;
            map.serialize_entry("per_page", &per_page)?;
        }
        map.end()
    }
}

/// How a list's rows are asked for, with the default and the most a
/// client may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paging {
    /// `?page=` (from 1) and `?per_page=` (1 to `max`).
    Pages {
        /// Rows per page when the client does not say.
        per_page: u32,
        /// The most rows a page may have.
        max: u32,
    },
    /// `?limit=` (1 to `max`) and `?offset=` (from 0).
    Offset {
        /// Rows when the client does not say.
        limit: u32,
        /// The most rows a client may ask for.
        max: u32,
    },
}

impl Paging {
    /// Pages of 20 rows, 500 at most: [`Pages`]'s.
    pub const PAGES: Paging = Paging::Pages {
        per_page: 20,
        max: List::MAX_PER_PAGE,
    };

    fn params(self) -> [&'static str; 2] {
        match self {
            Paging::Pages { .. } => ["page", "per_page"],
            Paging::Offset { .. } => ["limit", "offset"],
        }
    }
}

/// Which rows a list answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice {
    /// A page.
    Page {
        /// The page, from 1.
        page: u32,
        /// Rows per page.
        per_page: u32,
    },
    /// From an offset.
    Offset {
        /// Rows skipped.
        offset: u64,
        /// The most rows.
        limit: u32,
    },
}

impl Slice {
    /// The default rows of a paging: the first page, or offset 0.
    pub fn of(paging: Paging) -> Slice {
        match paging {
            Paging::Pages { per_page, .. } => Slice::Page { page: 1, per_page },
            Paging::Offset { limit, .. } => Slice::Offset { offset: 0, limit },
        }
    }

    /// `LIMIT` and `OFFSET`.
    pub fn limit_offset(self) -> (u32, u64) {
        match self {
            Slice::Page { page, per_page } => {
                (per_page, u64::from(page.max(1) - 1) * u64::from(per_page))
            }
            Slice::Offset { offset, limit } => (limit, offset),
        }
    }
}

/// A filter of a [`ListShape`]: the query parameter `param` sets the
/// condition `sql`, in which `{}` is the parameter's value (bound as
/// text, never written into the statement). The condition is on the
/// listed rows' columns, and may look at other tables:
/// `Where { param: "tag", sql: "id IN (SELECT article_id FROM article_tags
/// WHERE tag = {})" }`. The SQL is the app's constant; compare the value
/// with a text column, or cast it (`CAST({} AS BIGINT)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Where {
    /// The query parameter.
    pub param: &'static str,
    /// The condition, with exactly one `{}`.
    pub sql: &'static str,
}

/// The shape of a list: how rows are asked for, the JSON's names, the
/// filters a client may set and the order. Every item has a default:
/// [`Pages`] is the shape with none changed.
///
/// ```
/// use tern_data::list::{ListShape, Paging, Where};
///
/// /// RealWorld's `GET /articles`: `?limit=&offset=&tag=&author=`,
/// /// answered as `{"articles": [..], "articlesCount": n}`.
/// pub struct Articles;
///
/// impl ListShape for Articles {
///     const PAGING: Paging = Paging::Offset { limit: 20, max: 100 };
///     const ITEMS: &'static str = "articles";
///     const TOTAL: &'static str = "articlesCount";
///     const FILTERS: &'static [Where] = &[
///         Where { param: "tag", sql: "id IN (SELECT article_id FROM article_tags WHERE tag = {})" },
///         Where { param: "author", sql: "author = {}" },
///     ];
///     const ORDER: &'static str = "created_at DESC, id DESC";
/// }
/// ```
///
/// A shape is checked when a route taking a [`Listing`] or a
/// [`ListQuery`](crate::ListQuery) of it is built ([`check_shape`]): a
/// condition without exactly one `{}`, or a parameter named twice or
/// like a paging parameter, fails the app's build naming the shape.
pub trait ListShape: Send + Sync + 'static {
    /// How rows are asked for.
    const PAGING: Paging = Paging::PAGES;
    /// The JSON name of the rows.
    const ITEMS: &'static str = "items";
    /// The JSON name of the count of every matching row.
    const TOTAL: &'static str = "total";
    /// The filters a client may set.
    const FILTERS: &'static [Where] = &[];
    /// The order of a [`Query::list`] (`ORDER BY`'s text on the query's
    /// columns; empty: the database's order). A model's list orders by
    /// `?order=`, else by its key.
    const ORDER: &'static str = "";
}

/// The default shape: pages (`?page=`, `?per_page=`, 20 rows, 500 at
/// most), `{"items", "total", "page", "per_page"}`, no filters of its
/// own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pages;

impl ListShape for Pages {}

/// Whether shape `S` is well made: each condition has exactly one `{}`,
/// no parameter is named twice or like a paging parameter (or, for
/// `reserved`, like another parameter of the list: `q`, `order`), the
/// paging's default is within 1 and its maximum. The error names the
/// shape.
pub fn check_shape<S: ListShape>(reserved: &[&str]) -> Result<(), String> {
    let name = std::any::type_name::<S>();
    let (default, max) = match S::PAGING {
        Paging::Pages { per_page, max } => (per_page, max),
        Paging::Offset { limit, max } => (limit, max),
    };
    if default == 0 || default > max {
        return Err(format!(
            "the list shape `{name}`: its paging's default ({default}) must be from 1 to its maximum ({max})"
        ));
    }
    let window = S::PAGING.params();
    for (i, w) in S::FILTERS.iter().enumerate() {
        if w.sql.matches("{}").count() != 1 {
            return Err(format!(
                "the list shape `{name}`: the filter `{}` must have exactly one `{{}}` for its value in `{}`",
                w.param, w.sql
            ));
        }
        if w.param.is_empty() || window.contains(&w.param) || reserved.contains(&w.param) {
            return Err(format!(
                "the list shape `{name}`: the filter `{}` is named like another parameter of the list",
                w.param
            ));
        }
        if S::FILTERS[..i].iter().any(|o| o.param == w.param) {
            return Err(format!(
                "the list shape `{name}`: the filter `{}` is named twice",
                w.param
            ));
        }
    }
    Ok(())
}

/// Reads `key=value` into `slice` if `key` is a paging parameter of
/// `paging`: `Some(Err)` naming it when its value is not allowed, `None`
/// when it is no paging parameter.
fn paging_param(
    paging: Paging,
    key: &str,
    value: &str,
    slice: &mut Slice,
) -> Option<Result<(), String>> {
    if !paging.params().contains(&key) {
        return None;
    }
    let whole = |from: u32, max: Option<u32>| {
        let range = match max {
            Some(max) => format!("from {from} to {max}"),
            None => format!("from {from}"),
        };
        value
            .parse::<u32>()
            .ok()
            .filter(|n| *n >= from && max.is_none_or(|max| *n <= max))
            .ok_or_else(|| format!("`{key}` must be a whole number {range}"))
    };
    if !matches!(
        (paging, *slice),
        (Paging::Pages { .. }, Slice::Page { .. }) | (Paging::Offset { .. }, Slice::Offset { .. })
    ) {
        *slice = Slice::of(paging);
    }
    let read = match (paging, slice) {
        (Paging::Pages { .. }, Slice::Page { page, .. }) if key == "page" => {
            whole(1, None).map(|n| *page = n)
        }
        (Paging::Pages { max, .. }, Slice::Page { per_page, .. }) => whole(1, None).and_then(|n| {
            if n > max {
                return Err(format!("`per_page` must be at most {max}"));
            }
            *per_page = n;
            Ok(())
        }),
        (Paging::Offset { max, .. }, Slice::Offset { limit, .. }) if key == "limit" => {
            whole(1, Some(max)).map(|n| *limit = n)
        }
        (Paging::Offset { .. }, Slice::Offset { offset, .. }) => value
            .parse::<u64>()
            .ok()
            .filter(|n| i64::try_from(*n).is_ok())
            .map(|n| *offset = n)
            .ok_or_else(|| "`offset` must be a whole number from 0".to_owned()),
        // The slice was made of the paging above.
        _ => Ok(()),
    };
    Some(read)
}

/// A shape's filter named `key`: its condition, with the value to bind.
fn shape_filter<S: ListShape>(key: &str, value: &str) -> Option<(&'static str, String)> {
    S::FILTERS
        .iter()
        .find(|w| w.param == key)
        .map(|w| (w.sql, value.to_owned()))
}

/// The parameters of shape `S` (and `more`), for a message.
fn params_of<S: ListShape>(more: &[&str]) -> String {
    let mut names: Vec<&str> = more.to_vec();
    names.extend(S::PAGING.params());
    names.extend(S::FILTERS.iter().map(|w| w.param));
    names.join(", ")
}

/// What a [`Query::list`] asks for, read from the client's query string
/// by shape `S` (an extractor): the rows (`?page=`/`?per_page=` or
/// `?limit=`/`?offset=`) and the values of `S`'s filters. A parameter
/// `S` does not know, a value out of range (`limit=0`, a `limit` over
/// the maximum, a negative `offset`) is a `400` problem naming it.
pub struct Listing<S = Pages> {
    /// The rows asked for.
    pub slice: Slice,
    /// The conditions of the filters set, each with its value.
    pub conditions: Vec<(&'static str, String)>,
    shape: PhantomData<fn() -> S>,
}

impl<S> fmt::Debug for Listing<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listing")
            .field("slice", &self.slice)
            .field("conditions", &self.conditions)
            .finish()
    }
}

impl<S> Clone for Listing<S> {
    fn clone(&self) -> Self {
        Listing {
            slice: self.slice,
            conditions: self.conditions.clone(),
            shape: PhantomData,
        }
    }
}

impl<S: ListShape> Default for Listing<S> {
    fn default() -> Self {
        Listing {
            slice: Slice::of(S::PAGING),
            conditions: Vec::new(),
            shape: PhantomData,
        }
    }
}

impl<S: ListShape> Listing<S> {
    /// A listing from a client's query pairs (`limit=2`, `tag=dragons`):
    /// an error naming the parameter when one is unknown or its value is
    /// not allowed (a `400` for the client).
    pub fn from_pairs(pairs: &[(String, String)]) -> Result<Listing<S>, String> {
        let mut listing = Listing::<S>::default();
        for (key, value) in pairs {
            no_nul_param(key, value)?;
            if let Some(done) = paging_param(S::PAGING, key, value, &mut listing.slice) {
                done?;
            } else if let Some(condition) = shape_filter::<S>(key, value) {
                listing.conditions.push(condition);
            } else {
                return Err(format!(
                    "`{}` is not a parameter of this list ({})",
                    shorten(key),
                    params_of::<S>(&[])
                ));
            }
        }
        Ok(listing)
    }

    /// The value the client gave the filter `param`, if any.
    pub fn value(&self, param: &str) -> Option<&str> {
        let sql = S::FILTERS.iter().find(|w| w.param == param)?.sql;
        self.conditions
            .iter()
            .find(|(s, _)| *s == sql)
            .map(|(_, v)| v.as_str())
    }
}

fn no_nul_param(key: &str, value: &str) -> Result<(), String> {
    if value.contains('\0') {
        // SQLite would end the text there; PostgreSQL refuses it.
        return Err(format!(
            "`{}` must not contain a NUL character",
            shorten(key)
        ));
    }
    Ok(())
}

/// The conditions as SQL (`A AND B`), their placeholders numbered from
/// `$first`, with the values in order.
fn conditions_sql(conditions: &[(&'static str, String)], first: usize) -> (String, Vec<String>) {
    let mut parts = Vec::new();
    let mut values = Vec::new();
    for (i, (sql, value)) in conditions.iter().enumerate() {
        parts.push(format!(
            "({})",
            sql.replacen("{}", &format!("${}", first + i), 1)
        ));
        values.push(value.clone());
    }
    (parts.join(" AND "), values)
}

impl Query {
    /// A page of this query's rows, as `listing` asks: `SELECT * FROM
    /// (<the query>) AS listed WHERE <the filters> ORDER BY <S::ORDER>
    /// LIMIT .. OFFSET ..`, and the count of every row that matches
    /// (`SELECT COUNT(*) FROM (<the query>) AS listed WHERE ..`). The
    /// filters' values are bound after the query's own (`$1`.. are the
    /// query's). The query's columns are the rows' (`R`: a
    /// [`Row`](macro@crate::Row), a [`Model`], a tuple).
    ///
    /// ```no_run
    /// # use tern_data::{list::{ListShape, Listing, Page, Paging, Where}, query, DataError, Db};
    /// # #[derive(tern_data::Row, serde::Serialize)] struct ArticleRow { slug: String }
    /// # struct Articles;
    /// # impl ListShape for Articles {
    /// #     const FILTERS: &'static [Where] = &[Where { param: "author", sql: "author = {}" }];
    /// # }
    /// const ARTICLES: &str = "SELECT a.id, a.slug, u.username AS author, a.created_at \
    ///     FROM articles a JOIN users u ON u.id = a.author_id WHERE a.hidden = $1";
    ///
    /// async fn list(db: Db, listing: Listing<Articles>) -> Result<tern::Json<Page<ArticleRow, Articles>>, DataError> {
    ///     Ok(tern::Json(query(ARTICLES).bind(false).list(&db, &listing).await?))
    /// }
    /// ```
    pub async fn list<'c, R: ReadRow, S: ListShape>(
        self,
        on: impl Into<Conn<'c>>,
        listing: &Listing<S>,
    ) -> Result<Page<R, S>, DataError> {
        check_shape::<S>(&[]).map_err(DataError::Config)?;
        let mut conn = on.into();
        let (filter, values) = conditions_sql(&listing.conditions, self.args.len() + 1);
        let filter = if filter.is_empty() {
            String::new()
        } else {
            format!(" WHERE {filter}")
        };
        let order = if S::ORDER.is_empty() {
            String::new()
        } else {
            format!(" ORDER BY {}", S::ORDER)
        };
        let (limit, offset) = listing.slice.limit_offset();
        let base = self.sql.trim().trim_end_matches(';');
        // The query and the conditions are the app's constants, numbers
        // are ours; every client value is bound.
        let rows = format!(
            "SELECT * FROM ({base}) AS listed{filter}{order} LIMIT {limit} OFFSET {offset}"
        );
        let count = format!("SELECT COUNT(*) FROM ({base}) AS listed{filter}");
        let mut args = self.args;
        args.extend(values.into_iter().map(Arg::from));
        let total: i64 = on_conn!(Conn::from(&mut conn), &args, |e, a| {
            sqlx::query_scalar_with(AssertSqlSafe(count), a)
                .fetch_one(e)
                .await?
        });
        let items: Vec<R> = on_conn!(Conn::from(&mut conn), &args, |e, a| {
            sqlx::query_as_with(AssertSqlSafe(rows), a)
                .fetch_all(e)
                .await?
        });
        Ok(Page::new(
            items,
            u64::try_from(total).unwrap_or(0),
            listing.slice,
        ))
    }
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
    ///   sortable columns that are not encrypted; a date-time column's
    ///   value is a date (`created_at__ge=2026-12-01`, its UTC midnight)
    ///   or an RFC 3339 date-time.
    ///
    /// An unknown column, a column that cannot be filtered or ordered by,
    /// or a value that is not of the column's kind is an error naming it
    /// (a `400` for the client).
    pub fn from_pairs<M: Model>(pairs: &[(String, String)]) -> Result<List, String> {
        List::from_pairs_as::<M, Pages>(pairs)
    }

    /// [`from_pairs`](List::from_pairs) in shape `S`: its paging instead
    /// of pages, and its filters ([`Where`]) besides the columns'.
    pub fn from_pairs_as<M: Model, S: ListShape>(
        pairs: &[(String, String)],
    ) -> Result<List, String> {
        let mut list = List {
            slice: Slice::of(S::PAGING),
            ..List::default()
        };
        for (key, value) in pairs {
            no_nul_param(key, value)?;
            if let Some(done) = paging_param(S::PAGING, key, value, &mut list.slice) {
                done?;
                continue;
            }
            if let Some(condition) = shape_filter::<S>(key, value) {
                list.conditions.push(condition);
                continue;
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
                _ => list.filters.push(filter::<M, S>(key, value)?),
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

fn filter<M: Model, S: ListShape>(key: &str, value: &str) -> Result<Filter, String> {
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
            "`{}` is not a parameter of this list ({}, or a column: {})",
            shorten(key),
            params_of::<S>(&["q", "order"]),
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
        Kind::DateTime => Value::Time(parse_time(value).ok_or_else(|| {
            bad("a date (2026-12-01) or a date-time (RFC 3339: 2026-12-01T10:00:00Z)")
        })?),
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

fn bind<'q, DB: sqlx::Database, O>(
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
fn for_sqlite(values: &[Value]) -> Vec<Value> {
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
const TOTAL: &str = "_tern_total";

/// A row and the count of every row its list matches.
struct Counted<M>(M, i64);

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
    let (total, items) = match &mut conn {
        Conn::Pool(Pool::Sqlite(p)) => page_on!(p),
        Conn::Pool(Pool::Postgres(p)) => page_on!(p),
        Conn::Tx(Transaction::Sqlite(t)) => page_on!(&mut **t),
        Conn::Tx(Transaction::Postgres(t)) => page_on!(&mut **t),
    };
    Ok(Page::new(
        items,
        u64::try_from(total).unwrap_or(0),
        list.slice,
    ))
}
