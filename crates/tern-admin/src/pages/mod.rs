//! The admin's handlers: login, dashboard, list (and bulk), add, edit,
//! delete, log.
//!
//! One module per page kind (`home`: login and dashboard, `list`,
//! `form`, `delete`, `log`); this one routes them and holds what they
//! share (the layout's data, links, error pages). The view structs are
//! in `views.rs`, the templates in `templates/admin/`.
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

mod delete;
mod form;
mod home;
mod list;
mod log;

use self::{delete::*, form::*, home::*, list::*, log::*};
use crate::{
    access::{Action, AdminUser},
    audit,
    forms::{error_heading, FormInput},
    registry::{refusal, AdminModel, Field, Invalid, ModelMeta, Record},
    views::*,
    AdminSettings, State,
};

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
        let list: MethodRouter<S> =
            get(move |u: AdminUser, s: Settings<AdminSettings>, uri: Uri| list(i, u, s, uri))
                .post(move |u: AdminUser, tx: Tx, req: Request| bulk(i, u, tx, req));
        let add: MethodRouter<S> =
            get(move |u: AdminUser, s: Settings<AdminSettings>| add_form(i, u, s)).post(
                move |u: AdminUser, tx: Tx, s: Settings<AdminSettings>, req: Request| {
                    add_save(i, u, tx, s, req)
                },
            );
        let edit: MethodRouter<S> = get(
            move |u: AdminUser, s: Settings<AdminSettings>, Path(k): Path<String>, uri: Uri| {
                edit_form(i, u, s, k, uri)
            },
        )
        .post(
            move |u: AdminUser,
                  tx: Tx,
                  s: Settings<AdminSettings>,
                  Path(k): Path<String>,
                  req: Request| edit_save(i, u, tx, s, k, req),
        );
        let delete: MethodRouter<S> =
            get(move |u: AdminUser, Path(k): Path<String>| delete_form(i, u, k)).post(
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
    // As `application/x-www-form-urlencoded` writes a value: unreserved
    // bytes as they are, a space as `+`, every other byte `%XX`.
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
    out
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
        logout_action: state.logout_action.clone(),
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
            // The page is none of the trail's: it ends at this one,
            // not linked.
            chrome: chrome(
                state,
                session,
                title,
                None,
                vec![Link {
                    label: title.to_owned(),
                    href: String::new(),
                }],
            ),
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
            409 | 422 => refusal(e),
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

/// A field's value as text: [`text_of`], but a password widget's value
/// is never shown.
fn shown(field: &Field, value: &FieldValue, secret: bool) -> String {
    if field.widget == Widget::Password && !matches!(value, FieldValue::Null) {
        return "(hidden)".to_owned();
    }
    text_of(value, secret)
}

fn row_href(state: &State, meta: &ModelMeta, key: &str) -> String {
    format!("{}/{}/{}", state.prefix, meta.table, segment(key))
}

fn list_href(state: &State, meta: &ModelMeta) -> String {
    format!("{}/{}/", state.prefix, meta.table)
}

#[cfg(test)]
mod encode_tests {
    #![allow(clippy::unwrap_used)]

    use super::encode;

    #[test]
    fn encode_writes_what_serde_urlencoded_writes() {
        for text in ["", "/admin/notes/?q=a b&x=1", "ü €/%+#", "A-z_0.9*~'()!"] {
            let theirs = serde_urlencoded::to_string([("", text)]).unwrap();
            assert_eq!(encode(text), theirs.trim_start_matches('='), "{text:?}");
        }
    }
}
