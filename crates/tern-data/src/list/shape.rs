//! List shapes: an app's own paging and envelope names, filters through
//! joins (`Where`), and the `Listing` extractor for hand-written queries.

use super::*;

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
pub(super) fn paging_param(
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
pub(super) fn shape_filter<S: ListShape>(key: &str, value: &str) -> Option<(&'static str, String)> {
    S::FILTERS
        .iter()
        .find(|w| w.param == key)
        .map(|w| (w.sql, value.to_owned()))
}

/// The parameters of shape `S` (and `more`), for a message.
pub(super) fn params_of<S: ListShape>(more: &[&str]) -> String {
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

pub(super) fn no_nul_param(key: &str, value: &str) -> Result<(), String> {
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
pub(super) fn conditions_sql(
    conditions: &[(&'static str, String)],
    first: usize,
) -> (String, Vec<String>) {
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
