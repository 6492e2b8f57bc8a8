//! The admin's handlers: login, dashboard, list (and bulk), add, edit,
//! delete, log.
//!
//! The view structs are in `views.rs`; the templates
//! (`templates/admin/*.html`) and `static/admin.css` are owned by
//! engineer C (#29's first slice).
//!
//! Every handler takes [`AdminUser`] first and checks the permission it
//! needs before it reads the form or anything else (the body is the last
//! argument, a plain [`Request`], read after the check).

use std::sync::Arc;

use http::{header, StatusCode, Uri};
use tern::{
    extract::Path,
    routing::{get, MethodRouter},
    settings::Settings,
    IntoResponse, Problem, Request, Response, Scope,
};
use tern_auth::Session;
use tern_core::extract::FromRequest;
use tern_data::{
    list::Slice, model::Kind, model::List, query, Conn, DataError, FieldValue, OffsetDateTime, Tx,
    Widget,
};
use tern_site::Page;

use crate::{
    access::{Action, AdminUser},
    audit,
    forms::{error_heading, FormInput},
    registry::{AdminModel, Field, Invalid, ModelMeta, Record},
    views::*,
    AdminSettings, State,
};

/// The most rows a bulk confirmation names.
const MAX_NAMED: usize = 100;
/// The most rows one bulk action takes (a list's largest page).
const MAX_SELECTED: usize = 500;

/// The admin's routes, each model's as literal paths.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>(
    mut scope: Scope<S>,
    state: &Arc<State>,
) -> Scope<S> {
    let p = &state.prefix;
    scope = scope
        .route(
            p,
            get(move |uri: Uri| async move { see_other(&format!("{}/", uri.path())) }),
        )
        .route(&format!("{p}/"), get(dashboard))
        .route(&format!("{p}/login"), get(login))
        .route(&format!("{p}/log/"), get(log_list))
        .route(&format!("{p}/log/{{id:i64}}"), get(log_one));
    for (i, m) in state.models.iter().enumerate() {
        let meta = m.meta();
        let base = format!("{p}/{}", meta.table);
        let key = if meta.integer_key {
            "{key:i64}"
        } else {
            "{key}"
        };
        let list: MethodRouter<S> = get(
            move |u: AdminUser, tx: Tx, s: Settings<AdminSettings>, uri: Uri| {
                list(i, u, tx, s, uri)
            },
        )
        .post(move |u: AdminUser, tx: Tx, req: Request| bulk(i, u, tx, req));
        let add: MethodRouter<S> =
            get(move |u: AdminUser, tx: Tx, s: Settings<AdminSettings>| add_form(i, u, tx, s))
                .post(
                    move |u: AdminUser, tx: Tx, s: Settings<AdminSettings>, req: Request| {
                        add_save(i, u, tx, s, req)
                    },
                );
        let edit: MethodRouter<S> = get(
            move |u: AdminUser,
                  tx: Tx,
                  s: Settings<AdminSettings>,
                  Path(k): Path<String>,
                  uri: Uri| edit_form(i, u, tx, s, k, uri),
        )
        .post(
            move |u: AdminUser,
                  tx: Tx,
                  s: Settings<AdminSettings>,
                  Path(k): Path<String>,
                  req: Request| edit_save(i, u, tx, s, k, req),
        );
        let delete: MethodRouter<S> =
            get(move |u: AdminUser, tx: Tx, Path(k): Path<String>| delete_form(i, u, tx, k)).post(
                move |u: AdminUser, tx: Tx, Path(k): Path<String>, req: Request| {
                    delete_save(i, u, tx, k, req)
                },
            );
        scope = scope
            .route(&format!("{base}/"), list)
            .route(&format!("{base}/add"), add)
            .route(&format!("{base}/{key}"), edit)
            .route(&format!("{base}/{key}/delete"), delete);
    }
    scope
}

// ---- helpers ------------------------------------------------------------

/// A `303 See Other` to `to` (a local path).
pub(crate) fn see_other(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = http::HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// `text` escaped for a query value.
pub(crate) fn encode(text: &str) -> String {
    serde_urlencoded::to_string([("", text)])
        .map(|s| s.trim_start_matches('=').to_owned())
        .unwrap_or_default()
}

/// `text` escaped for a path segment (a text key).
fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A query string of `pairs` (`?a=1&b=2`), empty for none.
fn query_string(pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    format!(
        "?{}",
        serde_urlencoded::to_string(pairs).unwrap_or_default()
    )
}

/// The layout's data for a page.
fn chrome(
    state: &State,
    session: Option<&Session>,
    page_title: &str,
    model: Option<&ModelMeta>,
    mut crumbs: Vec<Link>,
) -> Chrome {
    let p = &state.prefix;
    if session.is_some() {
        let mut trail = vec![Link {
            label: state.title.clone(),
            href: format!("{p}/"),
        }];
        if let Some(m) = model {
            trail.push(Link {
                label: capitalised(m.plural),
                href: format!("{p}/{}/", m.table),
            });
        }
        trail.append(&mut crumbs);
        crumbs = trail;
    }
    Chrome {
        site_title: state.title.clone(),
        page_title: page_title.to_owned(),
        // The list's title is the model already.
        model: model
            .map(|m| capitalised(m.plural))
            .filter(|m| m != page_title)
            .unwrap_or_default(),
        prefix: p.clone(),
        css_url: state.css_url.clone(),
        logged_in: session.is_some(),
        username: session.map(|s| s.user.username.clone()).unwrap_or_default(),
        csrf: session.map(|s| s.csrf.clone()).unwrap_or_default(),
        logout_action: format!("/auth/logout?next={}", encode(&format!("{p}/login"))),
        crumbs,
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A page with a status.
fn render<T: askama::Template>(status: StatusCode, page: T) -> Response {
    let mut r = Page(page).into_response();
    if r.status() == StatusCode::OK {
        *r.status_mut() = status;
    }
    r
}

/// An error page (`403`, `400`, `404`, ...) with `message`: HTML for a
/// browser, problem+json otherwise.
pub(crate) fn error_page(
    state: &State,
    session: Option<&Session>,
    html: bool,
    status: StatusCode,
    message: &str,
) -> Response {
    if !html {
        return Problem::new(status)
            .with_detail(message.to_owned())
            .into_response();
    }
    let title = status.canonical_reason().unwrap_or("Error");
    render(
        status,
        DeniedPage {
            chrome: chrome(state, session, title, None, Vec::new()),
            message: message.to_owned(),
        },
    )
}

impl AdminUser {
    fn page_error(&self, status: StatusCode, message: &str) -> Response {
        error_page(&self.state, Some(&self.session), self.html, status, message)
    }

    /// A data error as a page: its status, and a message that names no
    /// internals (the error itself is logged for a `500`).
    fn data_error(&self, e: &DataError) -> Response {
        let status = e.status();
        let message = match status.as_u16() {
            404 => "There is no such row.".to_owned(),
            409 => "The change conflicts with other rows (a unique value, or rows that reference this one).".to_owned(),
            422 => e.to_string(),
            503 => "The database is unavailable; try again.".to_owned(),
            _ => {
                tracing::error!(error = %e, "the admin's statement failed");
                "The change could not be made.".to_owned()
            }
        };
        self.page_error(status, &message)
    }

    fn model(&self, i: usize) -> &dyn AdminModel {
        self.state.models[i].as_ref()
    }
}

/// The body of an admin form, read after the permission check.
async fn form_of(req: Request) -> Result<FormInput, Response> {
    FormInput::from_request(req, &()).await
}

/// A value as text, for a list cell or a read-only field (`secret`:
/// whether an encrypted value may be shown).
fn text_of(value: &FieldValue, secret: bool) -> String {
    match value {
        FieldValue::Null => String::new(),
        FieldValue::Text(t) => t.clone(),
        FieldValue::Bool(true) => "Yes".to_owned(),
        FieldValue::Bool(false) => "No".to_owned(),
        FieldValue::Secret(t) if secret => t.clone(),
        FieldValue::Secret(_) => "(encrypted)".to_owned(),
        FieldValue::Binary(n) => format!("({n} bytes)"),
    }
}

fn row_href(state: &State, meta: &ModelMeta, key: &str) -> String {
    format!("{}/{}/{}", state.prefix, meta.table, segment(key))
}

fn list_href(state: &State, meta: &ModelMeta) -> String {
    format!("{}/{}/", state.prefix, meta.table)
}

// ---- login and dashboard --------------------------------------------------

#[derive(serde::Deserialize)]
struct LoginQuery {
    next: Option<String>,
    error: Option<String>,
}

/// `GET {prefix}/login`: the form, posting to tern-auth's
/// `/auth/login`; a logged-in staff user goes to the dashboard.
async fn login(session: Option<Session>, uri: Uri, req: Request) -> Response {
    let Some(state) = req.extensions().get::<Arc<State>>().cloned() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let q: LoginQuery =
        serde_urlencoded::from_str(uri.query().unwrap_or_default()).unwrap_or(LoginQuery {
            next: None,
            error: None,
        });
    let p = &state.prefix;
    let next = q
        .next
        .filter(|n| {
            n.starts_with(&format!("{p}/"))
                && !n.contains("//")
                && !n.contains('\\')
                && !n.starts_with(&format!("{p}/login"))
        })
        .unwrap_or_else(|| format!("{p}/"));
    if session.as_ref().is_some_and(|s| s.user.is_staff) {
        return see_other(&next);
    }
    let error = match q.error.as_deref() {
        Some("invalid") => "The username or the password is wrong.",
        Some("throttled") => "Too many failed logins: wait a few minutes, then try again.",
        Some("busy") => "The server is busy: try again in a moment.",
        _ => "",
    };
    render(
        StatusCode::OK,
        LoginPage {
            chrome: chrome(&state, None, "Log in", None, Vec::new()),
            action: format!("/auth/login?next={}", encode(&next)),
            error: error.to_owned(),
        },
    )
}

fn log_row(state: &State, e: &audit::Entry) -> LogRow {
    let at = OffsetDateTime::from_unix_timestamp(e.at).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let registered = state.models.iter().find(|m| m.meta().table == e.model);
    LogRow {
        href: format!("{}/log/{}", state.prefix, e.id),
        at: tern_data::timestamp::format(at).unwrap_or_default(),
        at_text: format!(
            "{}-{:02}-{:02} {:02}:{:02} UTC",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute()
        ),
        who: e.username.clone(),
        model: registered.map_or_else(|| e.model.clone(), |m| capitalised(m.meta().plural)),
        object: e.object_label.clone(),
        object_href: match registered {
            Some(m) if e.action != "delete" => row_href(state, m.meta(), &e.object_id),
            _ => String::new(),
        },
        action: e.action.clone(),
    }
}

/// `GET {prefix}/`: the models the user may view, their counts, the
/// latest changes.
async fn dashboard(u: AdminUser, tx: Tx) -> Response {
    let state = Arc::clone(&u.state);
    let mut guard = tx.lock().await;
    let mut models = Vec::new();
    for m in &state.models {
        let meta = m.meta();
        if !u.perms.allows(meta.table, Action::View) {
            continue;
        }
        let count: i64 = match query(meta.count_sql).scalar(&mut guard).await {
            Ok(n) => n,
            Err(e) => return u.data_error(&e),
        };
        models.push(ModelRow {
            plural: capitalised(meta.plural),
            list_href: list_href(&state, meta),
            add_href: format!("{}add", list_href(&state, meta)),
            can_add: u.perms.allows(meta.table, Action::Add),
            count: u64::try_from(count).unwrap_or(0),
        });
    }
    let entries = match audit::latest(Conn::from(&mut guard), "", "", "").await {
        Ok(e) => e,
        Err(e) => return u.data_error(&e),
    };
    let recent = entries
        .iter()
        .filter(|e| u.perms.allows(&e.model, Action::View))
        .take(10)
        .map(|e| log_row(&state, e))
        .collect();
    render(
        StatusCode::OK,
        DashboardPage {
            chrome: chrome(&state, Some(&u.session), &state.title, None, Vec::new()),
            models,
            recent,
            log_href: format!("{}/log/", state.prefix),
        },
    )
}

// ---- lists --------------------------------------------------------------

/// The list's own parameters that are not tern-data's.
const NOTICES: [&str; 2] = ["saved", "deleted"];

/// `GET {prefix}/{model}/`.
async fn list(
    i: usize,
    u: AdminUser,
    tx: Tx,
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
        .filter(|(k, _)| !NOTICES.contains(&k.as_str()))
        .cloned()
        .collect();
    let list = match m.parse_list(&given, settings.per_page()) {
        Ok(l) => l,
        Err(e) => return u.page_error(StatusCode::BAD_REQUEST, &e),
    };
    let mut guard = tx.lock().await;
    let (rows, total) = match m.list(Conn::from(&mut guard), &list).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    drop(guard);
    render(
        StatusCode::OK,
        list_page(&u, meta, &given, &list, rows, total, notice, String::new()),
    )
}

#[allow(clippy::too_many_arguments)]
fn list_page(
    u: &AdminUser,
    meta: &ModelMeta,
    given: &[(String, String)],
    list: &List,
    rows: Vec<Record>,
    total: u64,
    notice: String,
    error: String,
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
    let rows = rows
        .into_iter()
        .map(|r| ListRow {
            href: row_href(state, meta, &r.key),
            cells: meta
                .list_columns
                .iter()
                .map(|&c| {
                    r.values
                        .get(c)
                        .map(|v| text_of(v, false))
                        .unwrap_or_default()
                })
                .collect(),
            key: r.key,
            label: r.label,
        })
        .collect();
    let filters = meta
        .fields
        .iter()
        .filter(|f| {
            !f.column.encrypted && (f.column.kind == Kind::Bool || !f.column.choices.is_empty())
        })
        .map(|f| {
            let name = f.column.name;
            let current = given
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str());
            let mut options = vec![Choice {
                value: String::new(),
                label: "Any".to_owned(),
                selected: current.is_none_or(str::is_empty),
            }];
            if f.column.kind == Kind::Bool {
                for (value, label) in [("true", "Yes"), ("false", "No")] {
                    options.push(Choice {
                        value: value.to_owned(),
                        label: label.to_owned(),
                        selected: current == Some(value),
                    });
                }
            } else {
                for c in f.column.choices {
                    options.push(Choice {
                        value: (*c).to_owned(),
                        label: (*c).to_owned(),
                        selected: current == Some(*c),
                    });
                }
            }
            FilterView {
                name: name.to_owned(),
                label: f.column.label.to_owned(),
                id: format!("filter-{name}"),
                options,
            }
        })
        .collect();
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
        (1..=pages)
            .filter(|&n| n == 1 || n == pages || n.abs_diff(page) <= 2)
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
        error,
    }
}

/// `POST {prefix}/{model}/`: `action=delete` (a confirmation, then with
/// `confirm=yes` the delete) or a custom action, on the `_selected` keys.
async fn bulk(i: usize, u: AdminUser, tx: Tx, req: Request) -> Response {
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
    if action == "delete" {
        if form.get("confirm") != Some("yes") {
            let mut labels = Vec::new();
            for key in keys.iter().take(MAX_NAMED) {
                match m.get(Conn::from(&mut guard), key).await {
                    Ok(r) => labels.push(r.label),
                    Err(e) => return u.data_error(&e),
                }
            }
            let mut related = Vec::new();
            for (plural, sql) in &meta.referenced_by {
                let mut n = 0_i64;
                for key in &keys {
                    match count_refs(&mut guard, meta, sql, key).await {
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
            let gone = match m.delete(Conn::from(&mut guard), key).await {
                Ok(r) => r,
                Err(e) => return u.data_error(&e),
            };
            if let Err(e) = audit::record(
                Conn::from(&mut guard),
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
    let changed = match m.act(Conn::from(&mut guard), &action, &keys).await {
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
            Conn::from(&mut guard),
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
async fn count_refs(
    on: &mut tern_data::TxGuard<'_>,
    meta: &ModelMeta,
    sql: &'static str,
    key: &str,
) -> Result<i64, DataError> {
    let q = query(sql);
    let q = if meta.integer_key {
        match key.parse::<i64>() {
            Ok(k) => q.bind(k),
            Err(_) => return Ok(0),
        }
    } else {
        q.bind(key)
    };
    q.scalar(Conn::from(on)).await
}

// ---- forms --------------------------------------------------------------

/// The rows a foreign key may name, per column: `(key, label)`s of the
/// referenced model's rows, for each column that references a
/// registered model the user may view with at most `ADMIN_FK_SELECT_MAX`
/// rows (a larger table is a plain input).
type FkOptions = Vec<(&'static str, Vec<(String, String)>)>;

async fn fk_options(
    u: &AdminUser,
    guard: &mut tern_data::TxGuard<'_>,
    meta: &ModelMeta,
    max: u32,
) -> Result<FkOptions, DataError> {
    let mut out = Vec::new();
    for f in meta.fields.iter().filter(|f| !f.read_only) {
        let Some(target) = f.column.references else {
            continue;
        };
        let Some(t) = u.state.models.iter().find(|m| m.meta().table == target) else {
            continue;
        };
        if !u.perms.allows(target, Action::View) {
            continue;
        }
        let count: i64 = query(t.meta().count_sql)
            .scalar(Conn::from(&mut *guard))
            .await?;
        let Ok(count) = u32::try_from(count) else {
            continue;
        };
        if count > max.min(List::MAX_PER_PAGE) {
            continue;
        }
        let list = List {
            slice: Slice::Page {
                page: 1,
                per_page: count.max(1),
            },
            ..List::default()
        };
        let (rows, _) = t.list(Conn::from(&mut *guard), &list).await?;
        out.push((
            f.column.name,
            rows.into_iter().map(|r| (r.key, r.label)).collect(),
        ));
    }
    Ok(out)
}

/// A field's control, its value from the row (`value`) or the submitted
/// form (`given`, on a re-render), and its error.
fn field_view(
    f: &Field,
    value: Option<&FieldValue>,
    given: Option<&FormInput>,
    error: Option<&str>,
    creating: bool,
    fk: Option<&[(String, String)]>,
) -> FieldView {
    let c = &f.column;
    let kept = f.kept(creating);
    let input = if kept {
        "readonly"
    } else if fk.is_some() {
        "select"
    } else if c.kind == Kind::Bool {
        "checkbox"
    } else if !c.choices.is_empty() {
        "select"
    } else if c.kind == Kind::Integer || c.kind == Kind::Real {
        "number"
    } else if c.kind == Kind::DateTime {
        "datetime-local"
    } else if c.encrypted {
        "text"
    } else {
        match f.widget {
            Widget::TextArea => "textarea",
            Widget::Email => "email",
            Widget::Url => "url",
            Widget::Password => "password",
            _ => "text",
        }
    };
    let from_row = value.map(|v| text_of(v, !kept)).unwrap_or_default();
    let (text, checked) = match given {
        Some(form) if !kept => (
            form.get(c.name).unwrap_or_default().to_owned(),
            form.get(c.name).is_some(),
        ),
        _ => (from_row, matches!(value, Some(FieldValue::Bool(true)))),
    };
    let mut options = Vec::new();
    if input == "select" {
        if c.nullable || text.is_empty() {
            options.push(Choice {
                value: String::new(),
                label: "(none)".to_owned(),
                selected: text.is_empty(),
            });
        }
        for choice in c.choices {
            options.push(Choice {
                value: (*choice).to_owned(),
                label: (*choice).to_owned(),
                selected: text == *choice,
            });
        }
        for (key, label) in fk.unwrap_or_default() {
            options.push(Choice {
                value: key.clone(),
                label: format!("{label} ({key})"),
                selected: text == *key,
            });
        }
    }
    FieldView {
        id: format!("field-{}", c.name),
        name: c.name.to_owned(),
        label: c.label.to_owned(),
        input: input.to_owned(),
        value: if input == "password" {
            String::new()
        } else {
            text
        },
        checked,
        required: !kept && !c.nullable && !c.has_default && c.kind != Kind::Bool,
        maxlength: c.max_length.map(|n| n.to_string()).unwrap_or_default(),
        step: match c.kind {
            Kind::Integer if !kept => "1".to_owned(),
            Kind::Real | Kind::DateTime if !kept => "any".to_owned(),
            _ => String::new(),
        },
        autocomplete_off: c.encrypted,
        options,
        error: error.unwrap_or_default().to_owned(),
    }
}

/// The form page of `meta`: `record` for an edit, `given` and `errors`
/// for a re-render.
#[allow(clippy::too_many_arguments)]
fn form_page(
    u: &AdminUser,
    meta: &ModelMeta,
    record: Option<&Record>,
    given: Option<&FormInput>,
    errors: &[(&'static str, String)],
    read_only: bool,
    notice: &str,
    fk: &FkOptions,
) -> FormPage {
    let state = &u.state;
    let creating = record.is_none();
    let fields: Vec<FieldView> = meta
        .fields
        .iter()
        .enumerate()
        // The add page shows only what the form sets.
        .filter(|(_, f)| !(creating && f.kept(true)))
        .map(|(i, f)| {
            let error = errors
                .iter()
                .find(|(n, _)| *n == f.column.name)
                .map(|(_, m)| m.as_str());
            let options = fk
                .iter()
                .find(|(name, _)| *name == f.column.name)
                .map(|(_, o)| o.as_slice());
            let mut view = field_view(
                f,
                record.and_then(|r| r.values.get(i)),
                given,
                error,
                creating,
                options,
            );
            if read_only {
                view.input = "readonly".to_owned();
                view.value = record
                    .and_then(|r| r.values.get(i))
                    .map(|v| text_of(v, false))
                    .unwrap_or_default();
            }
            view
        })
        .collect();
    let links = errors
        .iter()
        .map(|(name, message)| {
            let shown = fields
                .iter()
                .any(|f| f.name == *name && f.input != "readonly");
            Link {
                label: match meta.fields.iter().find(|f| f.column.name == *name) {
                    Some(f) if !message.contains(f.column.label) && !message.contains(name) => {
                        format!("{}: {message}", f.column.label)
                    }
                    _ => message.clone(),
                },
                href: if shown {
                    format!("#field-{name}")
                } else {
                    String::new()
                },
            }
        })
        .collect::<Vec<_>>();
    let (title, action, crumb) = match record {
        Some(r) => (
            r.label.clone(),
            row_href(state, meta, &r.key),
            r.label.clone(),
        ),
        None => (
            format!("Add {}", meta.name),
            format!("{}add", list_href(state, meta)),
            format!("Add {}", meta.name),
        ),
    };
    FormPage {
        chrome: chrome(
            state,
            Some(&u.session),
            &title,
            Some(meta),
            vec![Link {
                label: crumb,
                href: action.clone(),
            }],
        ),
        delete_href: match record {
            Some(r) if u.perms.allows(meta.table, Action::Delete) => {
                format!("{}/delete", row_href(state, meta, &r.key))
            }
            _ => String::new(),
        },
        action,
        read_only,
        adding: creating,
        fields,
        error_heading: error_heading(links.len()),
        errors: links,
        history_href: match record {
            Some(r) => format!(
                "{}/log/{}",
                state.prefix,
                query_string(&[("model", meta.table), ("object", &r.key)])
            ),
            None => String::new(),
        },
        list_href: list_href(state, meta),
        notice: notice.to_owned(),
    }
}

/// `GET {prefix}/{model}/add`.
async fn add_form(
    i: usize,
    u: AdminUser,
    tx: Tx,
    Settings(settings): Settings<AdminSettings>,
) -> Response {
    let meta = u.model(i).meta();
    if let Err(d) = u.require(meta.table, Action::Add) {
        return d.into_response();
    }
    let mut guard = tx.lock().await;
    let fk = match fk_options(&u, &mut guard, meta, settings.fk_select_max()).await {
        Ok(o) => o,
        Err(e) => return u.data_error(&e),
    };
    render(
        StatusCode::OK,
        form_page(&u, meta, None, None, &[], false, "", &fk),
    )
}

/// The answer to a write refused: the form again (`422`) for field
/// errors, else the data error's page.
fn refused(
    u: &AdminUser,
    meta: &ModelMeta,
    record: Option<&Record>,
    form: &FormInput,
    fk: &FkOptions,
    e: Invalid,
) -> Response {
    match e {
        Invalid::Fields(errors) => render(
            StatusCode::UNPROCESSABLE_ENTITY,
            form_page(u, meta, record, Some(form), &errors, false, "", fk),
        ),
        Invalid::Data(e)
            if e.status() == StatusCode::UNPROCESSABLE_ENTITY
                || e.status() == StatusCode::CONFLICT =>
        {
            let errors = vec![("", e.to_string())];
            render(
                e.status(),
                form_page(u, meta, record, Some(form), &errors, false, "", fk),
            )
        }
        Invalid::Data(e) => u.data_error(&e),
    }
}

/// `POST {prefix}/{model}/add`.
async fn add_save(
    i: usize,
    u: AdminUser,
    tx: Tx,
    Settings(settings): Settings<AdminSettings>,
    req: Request,
) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    if let Err(d) = u.require(meta.table, Action::Add) {
        return d.into_response();
    }
    let form = match form_of(req).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let mut guard = tx.lock().await;
    // For a form shown again (a failed statement may end the
    // transaction on PostgreSQL: read them first).
    let fk = match fk_options(&u, &mut guard, meta, settings.fk_select_max()).await {
        Ok(o) => o,
        Err(e) => return u.data_error(&e),
    };
    let added = match m.insert(Conn::from(&mut guard), u.user(), &form).await {
        Ok(r) => r,
        Err(e) => return refused(&u, meta, None, &form, &fk, e),
    };
    if let Err(e) = audit::record(
        Conn::from(&mut guard),
        u.user(),
        meta,
        "add",
        None,
        Some(&added),
    )
    .await
    {
        return u.data_error(&e);
    }
    if form.get("_next") == Some("add") {
        return see_other(&format!("{}add?saved=1", list_href(&u.state, meta)));
    }
    see_other(&format!("{}?saved=1", row_href(&u.state, meta, &added.key)))
}

/// `GET {prefix}/{model}/{key}`: the form, or the row as text without
/// the change permission.
async fn edit_form(
    i: usize,
    u: AdminUser,
    tx: Tx,
    Settings(settings): Settings<AdminSettings>,
    key: String,
    uri: Uri,
) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    if let Err(d) = u.require(meta.table, Action::View) {
        return d.into_response();
    }
    let mut guard = tx.lock().await;
    let record = match m.get(Conn::from(&mut guard), &key).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    let read_only = !u.perms.allows(meta.table, Action::Change);
    let fk = if read_only {
        Vec::new()
    } else {
        match fk_options(&u, &mut guard, meta, settings.fk_select_max()).await {
            Ok(o) => o,
            Err(e) => return u.data_error(&e),
        }
    };
    let saved = uri
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "saved=1"));
    render(
        StatusCode::OK,
        form_page(
            &u,
            meta,
            Some(&record),
            None,
            &[],
            read_only,
            if saved { "Saved." } else { "" },
            &fk,
        ),
    )
}

/// `POST {prefix}/{model}/{key}`.
async fn edit_save(
    i: usize,
    u: AdminUser,
    tx: Tx,
    Settings(settings): Settings<AdminSettings>,
    key: String,
    req: Request,
) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    if let Err(d) = u.require(meta.table, Action::Change) {
        return d.into_response();
    }
    let form = match form_of(req).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    let mut guard = tx.lock().await;
    // The row as it is and the options, for a form shown again (a failed
    // statement may end the transaction on PostgreSQL: read them first).
    let record = match m.get(Conn::from(&mut guard), &key).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    let fk = match fk_options(&u, &mut guard, meta, settings.fk_select_max()).await {
        Ok(o) => o,
        Err(e) => return u.data_error(&e),
    };
    let (before, after) = match m
        .update(Conn::from(&mut guard), u.user(), &key, &form)
        .await
    {
        Ok(r) => r,
        Err(e) => return refused(&u, meta, Some(&record), &form, &fk, e),
    };
    if let Err(e) = audit::record(
        Conn::from(&mut guard),
        u.user(),
        meta,
        "change",
        Some(&before),
        Some(&after),
    )
    .await
    {
        return u.data_error(&e);
    }
    see_other(&format!("{}?saved=1", row_href(&u.state, meta, &after.key)))
}

/// The delete confirmation of `record` (with the error of a delete that
/// failed).
async fn confirm_delete(
    u: &AdminUser,
    guard: &mut tern_data::TxGuard<'_>,
    meta: &ModelMeta,
    record: &Record,
    error: String,
) -> Result<ConfirmDeletePage, DataError> {
    let mut related = Vec::new();
    for (plural, sql) in &meta.referenced_by {
        let n = count_refs(guard, meta, sql, &record.key).await?;
        if n > 0 {
            related.push(format!("{n} {plural}"));
        }
    }
    let href = row_href(&u.state, meta, &record.key);
    Ok(ConfirmDeletePage {
        chrome: chrome(
            &u.state,
            Some(&u.session),
            &format!("Delete {}", record.label),
            Some(meta),
            vec![
                Link {
                    label: record.label.clone(),
                    href: href.clone(),
                },
                Link {
                    label: "Delete".to_owned(),
                    href: format!("{href}/delete"),
                },
            ],
        ),
        action: format!("{href}/delete"),
        label: record.label.clone(),
        related,
        cancel_href: href,
        error,
    })
}

/// `GET {prefix}/{model}/{key}/delete`.
async fn delete_form(i: usize, u: AdminUser, tx: Tx, key: String) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    if let Err(d) = u.require(meta.table, Action::Delete) {
        return d.into_response();
    }
    let mut guard = tx.lock().await;
    let record = match m.get(Conn::from(&mut guard), &key).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    match confirm_delete(&u, &mut guard, meta, &record, String::new()).await {
        Ok(page) => render(StatusCode::OK, page),
        Err(e) => u.data_error(&e),
    }
}

/// `POST {prefix}/{model}/{key}/delete` with `confirm=yes`.
async fn delete_save(i: usize, u: AdminUser, tx: Tx, key: String, req: Request) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    if let Err(d) = u.require(meta.table, Action::Delete) {
        return d.into_response();
    }
    let form = match form_of(req).await {
        Ok(f) => f,
        Err(r) => return r,
    };
    if form.get("confirm") != Some("yes") {
        return u.page_error(StatusCode::BAD_REQUEST, "Confirm the delete (confirm=yes).");
    }
    let mut guard = tx.lock().await;
    let gone = match m.delete(Conn::from(&mut guard), &key).await {
        Ok(r) => r,
        Err(e) if e.status() == StatusCode::CONFLICT => {
            let Ok(record) = m.get(Conn::from(&mut guard), &key).await else {
                return u.data_error(&e);
            };
            let message = "Other rows reference this one, and the database's foreign keys keep it."
                .to_owned();
            return match confirm_delete(&u, &mut guard, meta, &record, message).await {
                Ok(page) => render(StatusCode::CONFLICT, page),
                Err(_) => u.data_error(&e),
            };
        }
        Err(e) => return u.data_error(&e),
    };
    if let Err(e) = audit::record(
        Conn::from(&mut guard),
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
    see_other(&format!("{}?deleted=1", list_href(&u.state, meta)))
}

// ---- the log --------------------------------------------------------------

/// `GET {prefix}/log/`: the latest entries of the models the user may
/// view; `?model=<table>`, `&object=<key>`, `?user=<username>` narrow it.
async fn log_list(u: AdminUser, tx: Tx, uri: Uri) -> Response {
    let state = Arc::clone(&u.state);
    let pairs = match FormInput::parse(uri.query().unwrap_or_default().as_bytes()) {
        Ok(f) => f,
        Err(e) => return u.page_error(StatusCode::BAD_REQUEST, &e),
    };
    let model = pairs
        .get("model")
        .filter(|m| !m.is_empty())
        .map(str::to_owned);
    let (object, user) = (
        pairs.get("object").unwrap_or_default(),
        pairs.get("user").unwrap_or_default(),
    );
    let mut guard = tx.lock().await;
    let entries = audit::latest(
        Conn::from(&mut guard),
        model.as_deref().unwrap_or_default(),
        object,
        user,
    )
    .await;
    let entries = match entries {
        Ok(e) => e,
        Err(e) => return u.data_error(&e),
    };
    let mut models = vec![Choice {
        value: String::new(),
        label: "All".to_owned(),
        selected: model.is_none(),
    }];
    for m in &state.models {
        let meta = m.meta();
        if u.perms.allows(meta.table, Action::View) {
            models.push(Choice {
                value: meta.table.to_owned(),
                label: capitalised(meta.plural),
                selected: model.as_deref() == Some(meta.table),
            });
        }
    }
    render(
        StatusCode::OK,
        LogPage {
            chrome: chrome(
                &state,
                Some(&u.session),
                "Log",
                None,
                vec![Link {
                    label: "Log".to_owned(),
                    href: format!("{}/log/", state.prefix),
                }],
            ),
            log_href: format!("{}/log/", state.prefix),
            entries: entries
                .iter()
                .filter(|e| u.perms.allows(&e.model, Action::View))
                .map(|e| log_row(&state, e))
                .collect(),
            one: false,
            changes: Vec::new(),
            models,
        },
    )
}

/// `GET {prefix}/log/{id}`: one entry, its changed fields before and
/// after.
async fn log_one(u: AdminUser, tx: Tx, Path(id): Path<i64>) -> Response {
    let state = Arc::clone(&u.state);
    let mut guard = tx.lock().await;
    let entry = match audit::one(Conn::from(&mut guard), id).await {
        Ok(e) => e,
        Err(e) => return u.data_error(&e),
    };
    if let Err(d) = u.require(&entry.model, Action::View) {
        return d.into_response();
    }
    let row = log_row(&state, &entry);
    render(
        StatusCode::OK,
        LogPage {
            chrome: chrome(
                &state,
                Some(&u.session),
                &format!("{} {}", row.action, row.object),
                None,
                vec![
                    Link {
                        label: "Log".to_owned(),
                        href: format!("{}/log/", state.prefix),
                    },
                    Link {
                        label: format!("Entry {id}"),
                        href: row.href.clone(),
                    },
                ],
            ),
            log_href: format!("{}/log/", state.prefix),
            entries: vec![row],
            one: true,
            changes: audit::changes(&entry)
                .into_iter()
                .map(|(field, before, after)| Change {
                    field,
                    before,
                    after,
                })
                .collect(),
            models: Vec::new(),
        },
    )
}
