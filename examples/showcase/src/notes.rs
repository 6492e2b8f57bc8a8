//! Notes: one model in the database (SQLite by default), a login page,
//! and a page that lists notes and, for a logged-in user, adds one.

use serde::{Deserialize, Serialize};
use tern::{
    doc::Operation,
    extract::{Form, FromRequest, Query},
    http::{header, StatusCode},
    response::Html,
    IntoResponse, Request, Response,
};
use tern_auth::Session;
use tern_data::{DataError, Db, ListQuery, Model};

/// A note: what was written, by whom, when.
#[derive(Debug, Clone, Model, Serialize, Deserialize)]
#[model(table = "notes", name = "note", plural = "notes")]
pub(crate) struct Note {
    #[model(primary_key)]
    id: i64,
    #[model(searchable, sortable, listed, max_length = 500, widget = "textarea")]
    text: String,
    #[model(sortable, listed, searchable)]
    author: String,
    #[model(sortable)]
    created_at: i64,
}

/// Unix seconds.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A note made in the admin gets its author and time as one made on the
/// notes page (the admin shows both read-only).
pub(crate) fn stamp(note: &mut Note, user: &tern_auth::User, created: bool) {
    if created {
        note.author = user.username.clone();
        note.created_at = now();
    }
}

/// The longest note, in characters (the table checks it too).
const MAX_NOTE: usize = 500;

/// Text for HTML: `& < > " '` escaped (templates arrive with the website
/// issue; until then, every value written into a page goes through this).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn page(title: &str, body: &str) -> Html<String> {
    let css = escape(&crate::site::files().url("pages.css"));
    Html(format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Tern showcase</title>
<link rel="stylesheet" href="{css}">
</head>
<body>
<p><a href="/">Tern showcase</a></p>
{body}
</body>
</html>"#
    ))
}

/// The query of `GET /login`: what `tern_auth` sent the browser back
/// with after a failed form login.
#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    error: Option<String>,
}

/// `GET /login`: a plain form posted to `/auth/login` (no script: the
/// production CSP allows none inline, and a password must never travel
/// in a URL, so the form says `method="post"`). `tern_auth` answers the
/// browser with a redirect: to `/notes`, or back here with `?error=`.
pub(crate) async fn login_page(
    session: Option<Session>,
    Query(query): Query<LoginQuery>,
) -> Html<String> {
    let already = session
        .map(|s| {
            format!(
                "<p>You are logged in as <b>{}</b>.</p>",
                escape(&s.user.username)
            )
        })
        .unwrap_or_default();
    // One of tern_auth's fixed words; anything else is not shown.
    let error = match query.error.as_deref() {
        Some("invalid") => "wrong username or password",
        Some("throttled") => "too many failed logins: wait a minute and try again",
        Some("busy") => "the server is busy: try again in a moment",
        _ => "",
    };
    page(
        "Log in",
        &format!(
            r#"<h1>Log in</h1>
{already}
<form id="login" method="post" action="/auth/login?next=/notes">
  <p><label>Username <input name="username" autocomplete="username" required></label></p>
  <p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
  <p><button type="submit">Log in</button></p>
  <p class="error" id="error" role="alert">{error}</p>
</form>
<p class="meta">In development the showcase makes an account <code>admin</code> with the password
<code>SHOWCASE_ADMIN_PASSWORD</code> (default <code>tern-showcase</code>).</p>"#
        ),
    )
}

/// `GET /notes`: the notes, newest first (`?q=` searches, `?page=`), and
/// for a logged-in user the form to add one (with the session's CSRF
/// token) and a logout button.
pub(crate) async fn list(
    Db(pool): Db,
    query: ListQuery<Note>,
    session: Option<Session>,
) -> Result<Html<String>, DataError> {
    let mut list = query.into_inner();
    if list.order.is_none() {
        list.order = Some(("id", true));
    }
    let notes = Note::list(&pool, &list).await?;
    let items: String = notes
        .items
        .iter()
        .map(|n| {
            format!(
                "<li>{} <span class=\"meta\">by {}</span></li>\n",
                escape(&n.text),
                escape(&n.author)
            )
        })
        .collect();
    let account = match &session {
        Some(s) => format!(
            r#"<p>Logged in as <b>{user}</b>.</p>
<form id="logout" class="inline" method="post" action="/auth/logout?next=/notes">
  <input type="hidden" name="csrf_token" value="{csrf}">
  <button type="submit">Log out</button>
</form>
<form id="add" method="post" action="/notes">
  <input type="hidden" name="csrf_token" value="{csrf}">
  <p><label>A note <input name="text" maxlength="{MAX_NOTE}" required></label> <button type="submit">Add</button></p>
</form>
"#,
            user = escape(&s.user.username),
            csrf = escape(&s.csrf),
        ),
        None => r#"<p><a href="/login">Log in</a> to add a note.</p>"#.to_owned(),
    };
    Ok(page(
        "Notes",
        &format!(
            "<h1>Notes</h1>\n{account}\n<p class=\"meta\">{} notes</p>\n<ul id=\"notes\">\n{items}</ul>",
            notes.total
        ),
    ))
}

#[derive(Deserialize)]
pub(crate) struct NewNote {
    text: String,
}

/// The form of `POST /notes`: a `Form<NewNote>` whose API document also
/// says the rules `create` checks (1 to `MAX_NOTE` characters, not only
/// spaces, no NUL: else `422`) and what it answers.
pub(crate) struct NoteForm(NewNote);

impl<S: Send + Sync> FromRequest<S> for NoteForm {
    type Rejection = tern::extract::Rejection;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Form(new) = Form::<NewNote>::from_request(req, state).await?;
        Ok(NoteForm(new))
    }

    fn describe(op: &mut Operation) {
        <Form<NewNote> as FromRequest<S>>::describe(op);
        op.body_rules(
            "text",
            // Not only spaces, and no NUL (the text column cannot hold it:
            // the data layer answers `422`).
            serde_json::json!({
                "minLength": 1,
                "maxLength": MAX_NOTE,
                "pattern": "^[^\\x00]*[^\\s\\x00][^\\x00]*$",
            }),
        );
        op.responses.insert(
            "303".to_owned(),
            serde_json::json!({ "description": "Added: back to `/notes`." }),
        );
        op.problem("401", "Not logged in.");
        op.problem(
            "422",
            "The note is empty (or only spaces), longer than 500 characters or holds a NUL.",
        );
    }
}

/// `POST /notes` (a form, from a logged-in user; the CSRF check ran
/// before): adds the note, then back to the list.
pub(crate) async fn create(
    Db(pool): Db,
    session: Session,
    NoteForm(new): NoteForm,
) -> Result<Response, Response> {
    let text = new.text.trim();
    if text.is_empty() || text.chars().count() > MAX_NOTE {
        return Err(tern::Problem::new(StatusCode::UNPROCESSABLE_ENTITY)
            .with_detail(format!("a note has 1 to {MAX_NOTE} characters"))
            .into_response());
    }
    Note {
        id: 0,
        text: text.to_owned(),
        author: session.user.username,
        created_at: now(),
    }
    .insert(&pool)
    .await
    .map_err(IntoResponse::into_response)?;
    Ok((StatusCode::SEE_OTHER, [(header::LOCATION, "/notes")], "").into_response())
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_what_html_reads() {
        assert_eq!(
            super::escape(r#"<script>alert("x" & 'y')</script>"#),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
    }
}
