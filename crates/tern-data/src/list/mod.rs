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
mod shape;
mod sql;

use shape::*;
pub use shape::{check_shape, ListShape, Listing, Pages, Where};
pub(crate) use sql::list_rows;

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
pub(super) fn parse_time(text: &str) -> Option<OffsetDateTime> {
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

pub(super) fn filterable(c: &Column) -> bool {
    !c.encrypted && c.kind != Kind::Bytes && c.kind != Kind::Other
}

pub(super) fn names<M: Model>(keep: impl Fn(&Column) -> bool) -> String {
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
pub(super) fn shorten(text: &str) -> String {
    text.chars().take(40).collect()
}

pub(super) fn filter<M: Model, S: ListShape>(key: &str, value: &str) -> Result<Filter, String> {
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
