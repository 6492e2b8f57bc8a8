//! Notes: one model in the database (SQLite by default), a login page,
//! and a page that lists notes and, for a logged-in user, adds one.

use serde::{Deserialize, Serialize};
use tern::{
    extract::Form,
    http::{header, StatusCode},
    response::Html,
    IntoResponse, Response,
};
use tern_auth::Session;
use tern_data::{DataError, Db, ListQuery, Model};

/// A note: what was written, by whom, when.
#[derive(Debug, Clone, Model, Serialize, Deserialize)]
#[model(table = "notes")]
pub(crate) struct Note {
    #[model(primary_key)]
    id: i64,
    #[model(searchable, sortable, listed)]
    text: String,
    #[model(sortable, listed, searchable)]
    author: String,
    #[model(sortable)]
    created_at: i64,
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
    Html(format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Tern showcase</title>
<style>
  body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; color: #1d2733; }}
  form {{ margin: 1rem 0; }} input, textarea, button {{ font: inherit; }}
  li {{ margin: .25rem 0; }} .meta {{ color: #5b6b7b; font-size: .9rem; }}
  .error {{ color: #a32020; }}
</style>
</head>
<body>
<p><a href="/">Tern showcase</a></p>
{body}
</body>
</html>"#
    ))
}

/// `GET /login`: the form, posted as JSON to `/auth/login` by a few lines
/// of script (no framework, no build step).
pub(crate) async fn login_page(session: Option<Session>) -> Html<String> {
    let already = session
        .map(|s| {
            format!(
                "<p>You are logged in as <b>{}</b>.</p>",
                escape(&s.user.username)
            )
        })
        .unwrap_or_default();
    page(
        "Log in",
        &format!(
            r#"<h1>Log in</h1>
{already}
<form id="login">
  <p><label>Username <input name="username" autocomplete="username" required></label></p>
  <p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
  <p><button type="submit">Log in</button></p>
  <p class="error" id="error" role="alert"></p>
</form>
<p class="meta">In development the showcase makes an account <code>admin</code> with the password
<code>SHOWCASE_ADMIN_PASSWORD</code> (default <code>tern-showcase</code>).</p>
<script>
document.getElementById('login').addEventListener('submit', async (event) => {{
  event.preventDefault();
  const form = new FormData(event.target);
  const res = await fetch('/auth/login', {{
    method: 'POST',
    headers: {{ 'Content-Type': 'application/json' }},
    body: JSON.stringify({{ username: form.get('username'), password: form.get('password') }}),
  }});
  if (res.ok) {{ location.href = '/notes'; return; }}
  const problem = await res.json().catch(() => ({{}}));
  document.getElementById('error').textContent = problem.detail || ('error ' + res.status);
}});
</script>"#
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
            r#"<p>Logged in as <b>{user}</b>. <button id="logout">Log out</button></p>
<form method="post" action="/notes">
  <input type="hidden" name="csrf_token" value="{csrf}">
  <p><label>A note <input name="text" maxlength="{MAX_NOTE}" required></label> <button type="submit">Add</button></p>
</form>
<script>
document.getElementById('logout').addEventListener('click', async () => {{
  await fetch('/auth/logout', {{ method: 'POST', headers: {{ 'X-CSRF-Token': '{csrf}' }} }});
  location.href = '/notes';
}});
</script>"#,
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

/// `POST /notes` (a form, from a logged-in user; the CSRF check ran
/// before): adds the note, then back to the list.
pub(crate) async fn create(
    Db(pool): Db,
    session: Session,
    Form(new): Form<NewNote>,
) -> Result<Response, Response> {
    let text = new.text.trim();
    if text.is_empty() || text.chars().count() > MAX_NOTE {
        return Err(tern::Problem::new(StatusCode::UNPROCESSABLE_ENTITY)
            .with_detail(format!("a note has 1 to {MAX_NOTE} characters"))
            .into_response());
    }
    let created_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Note {
        id: 0,
        text: text.to_owned(),
        author: session.user.username,
        created_at,
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
