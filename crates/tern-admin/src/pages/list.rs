//! A model's list, and the bulk actions on its selected rows.

use super::*;

/// The most rows a bulk confirmation names.
pub(super) const MAX_NAMED: usize = 100;
/// The most rows one bulk action takes (a list's largest page).
pub(super) const MAX_SELECTED: usize = 500;

/// The list's own parameters that are not tern-data's.
pub(super) const NOTICES: [&str; 2] = ["saved", "deleted"];

/// `GET {prefix}/{model}/`.
pub(super) async fn list(
    i: usize,
    u: AdminUser,
    Settings(settings): Settings<AdminSettings>,
    uri: Uri,
) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    if let Err(d) = u.require(meta.table, Action::View) {
        return d.into_response();
    }
    let pairs = match FormInput::parse(uri.query().unwrap_or_default().as_bytes()) {
        Ok(f) => f,
        Err(e) => return u.page_error(StatusCode::BAD_REQUEST, &e),
    };
    let notice = match (pairs.get("saved"), pairs.get("deleted")) {
        (_, Some(n)) if n.parse::<u32>().is_ok() => format!("Deleted {n}."),
        (Some(_), _) => "Saved.".to_owned(),
        _ => String::new(),
    };
    let given: Vec<(String, String)> = pairs
        .pairs()
        .iter()
        // An empty filter ("Any", a date left blank) is no filter.
        .filter(|(k, v)| !NOTICES.contains(&k.as_str()) && !v.is_empty())
        .cloned()
        .collect();
    let list = match m.parse_list(&given, settings.per_page()) {
        Ok(l) => l,
        Err(e) => return u.page_error(StatusCode::BAD_REQUEST, &e),
    };
    let mut on = Conn::from(u.db.pool());
    let (rows, total) = match m.list(Conn::from(&mut on), &list).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    // The rows a foreign key filter offers (read-only columns too).
    let fk = match fk_options(&u, &mut on, meta, settings.fk_select_max(), true).await {
        Ok(o) => o,
        Err(e) => return u.data_error(&e),
    };
    render(
        StatusCode::OK,
        list_page(&u, meta, &given, &list, rows, total, notice, &fk),
    )
}

#[allow(clippy::too_many_arguments)]
pub(super) fn list_page(
    u: &AdminUser,
    meta: &ModelMeta,
    given: &[(String, String)],
    list: &List,
    rows: Vec<Record>,
    total: u64,
    notice: String,
    fk: &FkOptions,
) -> ListPage {
    let state = &u.state;
    let href = list_href(state, meta);
    let (page, per_page) = match list.slice {
        Slice::Page { page, per_page } => (u64::from(page.max(1)), u64::from(per_page.max(1))),
        Slice::Offset { offset, limit } => (
            offset / u64::from(limit.max(1)) + 1,
            u64::from(limit.max(1)),
        ),
    };
    let pages = total.div_ceil(per_page).max(1);
    // A link keeping the list's parameters but `page` (and `order`).
    let link = |order: Option<&str>, page: Option<u64>| -> String {
        let mut pairs: Vec<(&str, String)> = given
            .iter()
            .filter(|(k, _)| k != "page" && (order.is_none() || k != "order"))
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        if let Some(o) = order {
            pairs.push(("order", o.to_owned()));
        }
        if let Some(p) = page.filter(|&p| p > 1) {
            pairs.push(("page", p.to_string()));
        }
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        format!("{href}{}", query_string(&refs))
    };
    let headers = meta
        .list_columns
        .iter()
        .map(|&c| {
            let col = &meta.fields[c].column;
            let current = list.order.filter(|(n, _)| *n == col.name).map(|(_, d)| d);
            Header {
                label: col.label.to_owned(),
                sort_href: if col.sortable || col.primary_key {
                    let next = if current == Some(false) {
                        format!("-{}", col.name)
                    } else {
                        col.name.to_owned()
                    };
                    link(Some(&next), None)
                } else {
                    String::new()
                },
                sort: match current {
                    Some(false) => "ascending".to_owned(),
                    Some(true) => "descending".to_owned(),
                    None => String::new(),
                },
            }
        })
        .collect();
    // Each row's values are moved into its cells, not copied: a list
    // shows a page of rows, the admin's costliest page (issue 29's bench).
    let rows_href = row_href(state, meta, "");
    // A column listed twice is moved at its last place only.
    let listed = &meta.list_columns;
    let last: Vec<bool> = (0..listed.len())
        .map(|j| !listed[j + 1..].contains(&listed[j]))
        .collect();
    let rows = rows
        .into_iter()
        .map(|mut r| {
            let key = segment(&r.key);
            let mut href = String::with_capacity(rows_href.len() + key.len());
            href.push_str(&rows_href);
            href.push_str(&key);
            let cells = listed
                .iter()
                .zip(&last)
                .map(|(&c, &last)| {
                    let field = &meta.fields[c];
                    match r.values.get_mut(c) {
                        // What `shown` gives a text that is no password.
                        Some(FieldValue::Text(t)) if last && field.widget != Widget::Password => {
                            std::mem::take(t)
                        }
                        Some(v) => shown(field, v, false),
                        None => String::new(),
                    }
                })
                .collect();
            ListRow {
                href,
                cells,
                key: r.key,
                label: r.label,
            }
        })
        .collect();
    let current = |name: &str| {
        given
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let mut filters = Vec::new();
    for f in meta.fields.iter().filter(|f| !f.column.encrypted) {
        let c = &f.column;
        let name = c.name;
        let choices: Option<Vec<(String, String)>> = if c.kind == Kind::Bool {
            Some(vec![
                ("true".to_owned(), "Yes".to_owned()),
                ("false".to_owned(), "No".to_owned()),
            ])
        } else if !c.choices.is_empty() {
            Some(
                c.choices
                    .iter()
                    .map(|v| ((*v).to_owned(), (*v).to_owned()))
                    .collect(),
            )
        } else {
            fk.iter().find(|(n, _)| *n == name).map(|(_, rows)| {
                rows.iter()
                    .map(|(key, label)| (key.clone(), fk_label(key, label)))
                    .collect()
            })
        };
        if let Some(choices) = choices {
            let now = current(name);
            let mut options = vec![Choice {
                value: String::new(),
                label: "Any".to_owned(),
                selected: now.is_empty(),
            }];
            options.extend(choices.into_iter().map(|(value, label)| Choice {
                selected: now == value,
                value,
                label,
            }));
            filters.push(FilterView {
                name: name.to_owned(),
                label: c.label.to_owned(),
                id: format!("filter-{name}"),
                input: "select".to_owned(),
                value: String::new(),
                options,
            });
        } else if c.references.is_some() && c.kind == Kind::Integer {
            // A table too large for a select: its key.
            filters.push(FilterView {
                name: name.to_owned(),
                label: format!("{} (key)", c.label),
                id: format!("filter-{name}"),
                input: "number".to_owned(),
                value: current(name),
                options: Vec::new(),
            });
        } else if c.kind == Kind::DateTime {
            // A day is its UTC midnight (tern-data's date filters).
            for (suffix, words) in [("ge", "from"), ("lt", "before")] {
                let param = format!("{name}__{suffix}");
                filters.push(FilterView {
                    label: format!("{} {words}", c.label),
                    id: format!("filter-{param}"),
                    input: "date".to_owned(),
                    value: current(&param),
                    options: Vec::new(),
                    name: param,
                });
            }
        }
    }
    let can_delete = u.perms.allows(meta.table, Action::Delete);
    let can_change = u.perms.allows(meta.table, Action::Change);
    let mut actions = Vec::new();
    if can_delete {
        actions.push(Choice {
            value: "delete".to_owned(),
            label: format!("Delete the selected {}", meta.plural),
            selected: false,
        });
    }
    if can_change {
        for (name, label) in &meta.actions {
            actions.push(Choice {
                value: (*name).to_owned(),
                label: (*label).to_owned(),
                selected: false,
            });
        }
    }
    let page_links = if pages > 1 {
        // The first, the last and two either side of this one: a few
        // links, however many pages.
        let mut numbers: Vec<u64> = vec![1, pages];
        numbers.extend(
            (page.saturating_sub(2)..=page.saturating_add(2)).filter(|&n| n >= 1 && n <= pages),
        );
        numbers.sort_unstable();
        numbers.dedup();
        numbers
            .into_iter()
            .map(|n| PageLink {
                number: n.to_string(),
                href: link(None, Some(n)),
                current: n == page,
            })
            .collect()
    } else {
        Vec::new()
    };
    ListPage {
        chrome: chrome(
            state,
            Some(&u.session),
            &capitalised(meta.plural),
            Some(meta),
            Vec::new(),
        ),
        add_href: format!("{href}add"),
        can_add: u.perms.allows(meta.table, Action::Add),
        can_select: !actions.is_empty(),
        actions,
        searchable: meta.fields.iter().any(|f| f.column.searchable),
        q: list.search.clone().unwrap_or_default(),
        filters,
        headers,
        rows,
        total,
        page,
        pages,
        page_links,
        prev_href: if page > 1 && page <= pages {
            link(None, Some(page - 1))
        } else {
            String::new()
        },
        next_href: if page < pages {
            link(None, Some(page + 1))
        } else {
            String::new()
        },
        past_end: page > pages,
        last_href: link(None, Some(pages)),
        list_href: href,
        notice,
        error: String::new(),
    }
}

/// `POST {prefix}/{model}/`: `action=delete` (a confirmation, then with
/// `confirm=yes` the delete) or a custom action, on the `_selected` keys.
pub(super) async fn bulk(i: usize, u: AdminUser, tx: Tx, req: Request) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    // The least any bulk action needs, before the body is read.
    if let Err(d) = u.require(meta.table, Action::View) {
        return d.into_response();
    }
    let form = match form_of(req).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let action = form.get("action").unwrap_or_default().to_owned();
    let needed = if action == "delete" {
        Action::Delete
    } else {
        Action::Change
    };
    if let Err(d) = u.require(meta.table, needed) {
        return d.into_response();
    }
    if action != "delete" && !meta.actions.iter().any(|(n, _)| *n == action) {
        return u.page_error(StatusCode::BAD_REQUEST, "Choose an action.");
    }
    // Each key once, as the key parser reads it (` 5` is `5`), and at
    // most a page's worth: the confirmation, the counts and the writes
    // stay bounded, and a row is never deleted or changed twice.
    let mut keys: Vec<String> = Vec::new();
    for key in form.all("_selected") {
        let key = key.trim();
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_owned());
        }
    }
    if keys.is_empty() {
        return u.page_error(StatusCode::BAD_REQUEST, "Select at least one row.");
    }
    if keys.len() > MAX_SELECTED {
        return u.page_error(
            StatusCode::BAD_REQUEST,
            &format!("Select at most {MAX_SELECTED} rows at once."),
        );
    }
    if let Some(bad) = keys.iter().find(|k| !m.parses(k)) {
        let shown: String = bad.chars().take(40).collect();
        return u.page_error(
            StatusCode::BAD_REQUEST,
            &format!("`{shown}` is not a key of {}.", meta.plural),
        );
    }
    let mut guard = tx.lock().await;
    let mut on = Conn::from(&mut guard);
    if action == "delete" {
        if form.get("confirm") != Some("yes") {
            let mut labels = Vec::new();
            for key in keys.iter().take(MAX_NAMED) {
                match m.get(Conn::from(&mut on), key).await {
                    Ok(r) => labels.push(r.label),
                    Err(e) => return u.data_error(&e),
                }
            }
            let mut related = Vec::new();
            for (table, plural, sql) in &meta.referenced_by {
                if !u.perms.allows(table, Action::View) {
                    continue;
                }
                let mut n = 0_i64;
                for key in &keys {
                    match count_refs(&mut on, meta, sql, key).await {
                        Ok(c) => n += c,
                        Err(e) => return u.data_error(&e),
                    }
                }
                if n > 0 {
                    related.push(format!("{n} {plural}"));
                }
            }
            let more = keys.len().saturating_sub(MAX_NAMED);
            return render(
                StatusCode::OK,
                ConfirmBulkPage {
                    chrome: chrome(
                        &u.state,
                        Some(&u.session),
                        &format!("Delete {} {}", keys.len(), meta.plural),
                        Some(meta),
                        Vec::new(),
                    ),
                    action: list_href(&u.state, meta),
                    labels,
                    more: if more > 0 {
                        format!("and {more} more")
                    } else {
                        String::new()
                    },
                    keys,
                    related,
                    cancel_href: list_href(&u.state, meta),
                },
            );
        }
        for key in &keys {
            let gone = match m.delete(Conn::from(&mut on), &u, key).await {
                Ok(r) => r,
                Err(Invalid::Fields(errors)) => {
                    let message: Vec<String> = errors.into_iter().map(|(_, m)| m).collect();
                    return u.page_error(StatusCode::UNPROCESSABLE_ENTITY, &message.join(" "));
                }
                Err(Invalid::Data(e)) => return u.data_error(&e),
            };
            if let Err(e) = audit::record(
                Conn::from(&mut on),
                u.user(),
                meta,
                "delete",
                Some(&gone),
                None,
            )
            .await
            {
                return u.data_error(&e);
            }
        }
        return see_other(&format!(
            "{}?deleted={}",
            list_href(&u.state, meta),
            keys.len()
        ));
    }
    let changed = match m.act(Conn::from(&mut on), &action, &keys).await {
        Ok(c) => c,
        Err(Invalid::Fields(errors)) => {
            let message: Vec<String> = errors.into_iter().map(|(_, m)| m).collect();
            return u.page_error(StatusCode::UNPROCESSABLE_ENTITY, &message.join(" "));
        }
        Err(Invalid::Data(e)) => return u.data_error(&e),
    };
    let what = format!("action:{action}");
    for (before, after) in &changed {
        if let Err(e) = audit::record(
            Conn::from(&mut on),
            u.user(),
            meta,
            &what,
            Some(before),
            Some(after),
        )
        .await
        {
            return u.data_error(&e);
        }
    }
    see_other(&format!("{}?saved=1", list_href(&u.state, meta)))
}

/// How many rows of another table reference the row `key`.
pub(super) async fn count_refs(
    on: &mut Conn<'_>,
    meta: &ModelMeta,
    sql: &'static str,
    key: &str,
) -> Result<i64, DataError> {
    let q = query(sql);
    // Bound as the key's type: PostgreSQL compares no `uuid` with `text`.
    let kind = meta
        .fields
        .iter()
        .find(|f| f.column.primary_key)
        .map(|f| f.column.kind);
    let q = if meta.integer_key {
        match key.parse::<i64>() {
            Ok(k) => q.bind(k),
            Err(_) => return Ok(0),
        }
    } else if kind == Some(Kind::Text) {
        q.bind(key)
    } else {
        // The other keys `Fields` reads from a path: a UUID.
        match tern_data::Uuid::parse_str(key) {
            Ok(k) => q.bind(k),
            Err(_) => return Ok(0),
        }
    };
    q.scalar(Conn::from(on)).await
}
