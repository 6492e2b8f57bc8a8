//! What the admin's tests share: an app with tern-auth, the admin and a
//! test model (`Post`, tests/migrations), on a fresh SQLite file or
//! PostgreSQL schema; accounts made with tern-auth and logged in through
//! `POST /auth/login` (a cookie and the session's CSRF token), requests
//! that carry them as a browser's would.
#![allow(dead_code, clippy::unwrap_used, unreachable_pub)]

use std::sync::Arc;

use tern::{
    test::{TestClient, TestResponse},
    App, Config,
};
use tern_admin::Admin;
use tern_auth::{Accounts, NewToken, NewUser, Passwords, User};
use tern_data::{
    query, Backend, Database, Encrypted, FieldKeys, Migrations, Model, OffsetDateTime,
};

pub use tern_data::testing::fresh;
pub use tern_data::testing::BACKENDS;

/// The posts table.
pub static MIGRATIONS: Migrations =
    tern_data::migrations!("tests/migrations").with_table("_admin_test_migrations");

pub const SECRET: &str = "an-admin-test-secret-key-0123456789abcdef";
/// Field keys are process-wide: every test of a file uses this one.
pub const FIELD_KEY: &str = "t1:BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";
pub const PASSWORD: &str = "a long enough password";
/// What a browser sends.
pub const BROWSER: &str = "text/html,application/xhtml+xml,*/*;q=0.8";

/// The test model: every kind of field the admin renders.
#[derive(Debug, Clone, Model)]
#[model(table = "posts", name = "post", plural = "posts")]
pub struct Post {
    #[model(primary_key)]
    pub id: i64,
    #[model(searchable, sortable, listed, max_length = 100)]
    pub title: String,
    #[model(listed, choices("draft", "published"))]
    pub status: String,
    #[model(listed)]
    pub published: bool,
    #[model(references = "tern_users")]
    pub author_id: Option<i64>,
    pub secret: Encrypted<String>,
    #[model(default, read_only, sortable)]
    pub created_at: OffsetDateTime,
}

/// A model that references [`Post`].
#[derive(Debug, Clone, Model)]
#[model(table = "comments", name = "comment", plural = "comments")]
pub struct Comment {
    #[model(primary_key)]
    pub id: i64,
    #[model(references = "posts", listed)]
    pub post_id: i64,
    #[model(searchable, listed)]
    pub body: String,
}

impl Post {
    /// A post to insert (`id` and `created_at` are the database's).
    pub fn new(title: &str, status: &str, secret: &str) -> Post {
        Post {
            id: 0,
            title: title.to_owned(),
            status: status.to_owned(),
            published: false,
            author_id: None,
            secret: Encrypted(secret.to_owned()),
            created_at: OffsetDateTime::UNIX_EPOCH,
        }
    }
}

/// The admin the tests install: posts, as declared.
pub fn admin() -> Admin {
    Admin::new().model::<Post>()
}

/// A running app and its database.
pub struct Site {
    pub client: TestClient,
    pub db: Arc<Database>,
    pub accounts: Arc<Accounts>,
    pub backend: Backend,
}

/// A logged-in browser: the session cookie and its CSRF token.
#[derive(Debug, Clone)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
    pub user: User,
}

/// The app with `admin` installed on a fresh database of `backend`, its
/// tables made; `None` (skipped) for PostgreSQL without `POSTGRES_URL`.
pub async fn site_with(backend: Backend, admin: Admin) -> Option<Site> {
    site_configured(backend, admin, &[]).await
}

/// [`site_with`] these settings too (`ADMIN_PER_PAGE`, say).
pub async fn site_configured(
    backend: Backend,
    admin: Admin,
    settings: &[(&str, &str)],
) -> Option<Site> {
    let url = fresh(backend).await?;
    let mut all = vec![
        ("DATABASE_URL", url.as_str()),
        ("SECRET_KEY", SECRET),
        ("FIELD_ENCRYPTION_KEY", FIELD_KEY),
    ];
    all.extend_from_slice(settings);
    let config = Config::from_settings(all).unwrap();
    let app = App::new()
        .settings::<Database>("database")
        .settings::<FieldKeys>("field_encryption");
    let app = tern_admin::install(tern_auth::install(app), admin);
    let service = app.build_with(config).unwrap();
    let db = service.settings::<Database>().unwrap();
    for m in [&tern_auth::MIGRATIONS, &tern_admin::MIGRATIONS, &MIGRATIONS] {
        db.migrate(m).await.unwrap();
    }
    let accounts = service.settings::<Accounts>().unwrap();
    Some(Site {
        db,
        accounts,
        client: TestClient::from_service(service),
        backend,
    })
}

/// [`site_with`] the tests' [`admin`].
pub async fn site(backend: Backend) -> Option<Site> {
    site_with(backend, admin()).await
}

impl Site {
    /// A new account: `staff`, `superuser` (which implies staff).
    pub async fn user(&self, name: &str, staff: bool, superuser: bool) -> User {
        NewUser::new(name, PASSWORD)
            .staff(staff || superuser)
            .superuser(superuser)
            .create(self.db.pool(), &Passwords::default())
            .await
            .unwrap()
    }

    /// Logs `name` in through `POST /auth/login` (JSON).
    pub async fn login(&self, name: &str) -> Session {
        let res = self
            .client
            .post("/auth/login")
            .json(&serde_json::json!({"username": name, "password": PASSWORD}))
            .send()
            .await;
        assert_eq!(res.status(), 200, "login {name}: {}", res.text());
        let cookie = res
            .header("set-cookie")
            .and_then(|c| c.split(';').next())
            .unwrap()
            .to_owned();
        let body: serde_json::Value = res.json();
        let csrf = body["csrf_token"].as_str().unwrap().to_owned();
        let user = tern_auth::find_user(self.db.pool(), name)
            .await
            .unwrap()
            .unwrap();
        Session { cookie, csrf, user }
    }

    /// A new account, logged in.
    pub async fn staff(&self, name: &str, superuser: bool) -> Session {
        self.user(name, true, superuser).await;
        self.login(name).await
    }

    /// An API token of `user`.
    pub async fn token(&self, user: &User) -> String {
        NewToken::new(user, "test")
            .create(self.db.pool(), &self.accounts)
            .await
            .unwrap()
            .secret
    }

    /// `GET path` as a browser of `session` (none: anonymous).
    pub async fn get(&self, session: Option<&Session>, path: &str) -> TestResponse {
        let mut req = self.client.get(path).header("accept", BROWSER);
        if let Some(s) = session {
            req = req.header("cookie", &s.cookie);
        }
        req.send().await
    }

    /// `POST path` of a form as a browser of `session`, with its CSRF
    /// token first.
    pub async fn post(
        &self,
        session: &Session,
        path: &str,
        pairs: &[(&str, &str)],
    ) -> TestResponse {
        let mut all = vec![("csrf_token", session.csrf.as_str())];
        all.extend_from_slice(pairs);
        self.post_raw(session, path, &form(&all)).await
    }

    /// `POST path` with this urlencoded body, as is (no token added).
    pub async fn post_raw(&self, session: &Session, path: &str, body: &str) -> TestResponse {
        self.client
            .post(path)
            .header("accept", BROWSER)
            .header("cookie", &session.cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_owned())
            .send()
            .await
    }

    /// Inserts a post (through the model, encrypted as the admin would).
    pub async fn post_row(&self, title: &str, status: &str, secret: &str) -> Post {
        Post::new(title, status, secret)
            .insert(self.db.pool())
            .await
            .unwrap()
    }

    /// Gives `user` the right to `action` (`view`, `add`, `change`,
    /// `delete`) on `model`: a row, as the first slice has no page for it.
    pub async fn grant(&self, user: &User, model: &'static str, action: &'static str) {
        query("INSERT INTO tern_admin_permissions (user_id, model, action) VALUES ($1, $2, $3)")
            .bind(user.id)
            .bind(model)
            .bind(action)
            .execute(self.db.pool())
            .await
            .unwrap();
    }

    /// A new group with `user` in it, given `action` on `model`.
    pub async fn grant_by_group(&self, user: &User, model: &'static str, action: &'static str) {
        let group: i64 = query("INSERT INTO tern_admin_groups (name) VALUES ($1) RETURNING id")
            .bind(format!("group of {}", user.username))
            .scalar(self.db.pool())
            .await
            .unwrap();
        query("INSERT INTO tern_admin_memberships (user_id, group_id) VALUES ($1, $2)")
            .bind(user.id)
            .bind(group)
            .execute(self.db.pool())
            .await
            .unwrap();
        query("INSERT INTO tern_admin_permissions (group_id, model, action) VALUES ($1, $2, $3)")
            .bind(group)
            .bind(model)
            .bind(action)
            .execute(self.db.pool())
            .await
            .unwrap();
    }

    /// The number of posts.
    pub async fn posts(&self) -> i64 {
        query("SELECT COUNT(*) FROM posts")
            .scalar(self.db.pool())
            .await
            .unwrap()
    }

    /// A post by id, if it is there.
    pub async fn find(&self, id: i64) -> Option<Post> {
        Post::get(self.db.pool(), id).await.ok()
    }

    /// The audit log: `(action, model, object_id, before, after)`, oldest
    /// first.
    pub async fn log(&self) -> Vec<LogRow> {
        query(
            "SELECT action, model, object_id, username, before, after FROM tern_admin_log \
             ORDER BY id",
        )
        .fetch_all(self.db.pool())
        .await
        .unwrap()
    }
}

/// One row of `tern_admin_log`.
#[derive(Debug, Clone, tern_data::Row)]
pub struct LogRow {
    pub action: String,
    pub model: String,
    pub object_id: String,
    pub username: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// The markup rules every admin page keeps, checked on `html` (the page
/// at `path`): what the production CSP allows (no inline script or
/// style, no `style=""`, no event handler attributes), a language, a
/// title and a main landmark, every control labelled and every id
/// unique, every table captioned, no positive `tabindex`.
#[track_caller]
pub fn check_markup(path: &str, html: &str) {
    let lower = html.to_ascii_lowercase();
    for bad in [
        "<script",
        "<style",
        " style=",
        "javascript:",
        " onclick=",
        " onload=",
        " onerror=",
    ] {
        assert!(!lower.contains(bad), "{path}: `{bad}` in:\n{html}");
    }
    assert!(
        html.starts_with("<!doctype html>\n<html lang=\"en\">"),
        "{path}"
    );
    assert!(
        html.contains(r#"<main id="main""#),
        "{path}: no main landmark"
    );
    let title = html
        .split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default();
    assert!(!title.trim().is_empty(), "{path}: no title");
    // Attribute values of one name, in order.
    let values = |attr: &str| -> Vec<String> {
        html.split(&format!(" {attr}=\""))
            .skip(1)
            .filter_map(|r| r.split('"').next())
            .map(str::to_owned)
            .collect()
    };
    let ids = values("id");
    let mut seen = std::collections::HashSet::new();
    for id in &ids {
        assert!(seen.insert(id), "{path}: id `{id}` twice");
    }
    for t in values("tabindex") {
        assert!(t.parse::<i32>().unwrap() <= 0, "{path}: tabindex {t}");
    }
    let labelled: Vec<String> = values("for");
    for tag in ["<input ", "<select ", "<textarea "] {
        for control in html.split(tag).skip(1) {
            let control = control.split('>').next().unwrap();
            if control.contains(r#"type="hidden""#) || control.contains(r#"type="submit""#) {
                continue;
            }
            let id = control
                .split(r#"id=""#)
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_else(|| panic!("{path}: a control without an id: {tag}{control}"));
            assert!(
                labelled.iter().any(|f| f == id),
                "{path}: no <label for=\"{id}\">"
            );
        }
    }
    for table in html.split("<table").skip(1) {
        let head = table.split("</table>").next().unwrap();
        assert!(
            head.starts_with(" aria-labelledby=") || head.contains("<caption>"),
            "{path}: a table without a caption"
        );
    }
    // Every described-by names an element of the page.
    for d in values("aria-describedby") {
        assert!(
            ids.contains(&d),
            "{path}: aria-describedby `{d}` names nothing"
        );
    }
}

/// A log entry's `before` or `after` as JSON (`null` when there is none).
pub fn parsed(text: &Option<String>) -> serde_json::Value {
    text.as_deref().map_or(serde_json::Value::Null, |t| {
        serde_json::from_str(t).unwrap()
    })
}

/// Pairs as an urlencoded body.
pub fn form(pairs: &[(&str, &str)]) -> String {
    serde_urlencoded::to_string(pairs).unwrap()
}

/// Where a `303` goes.
pub fn location(res: &TestResponse) -> &str {
    res.header("location").unwrap_or("")
}

/// Whether `html` has the attribute text `needle` (a helper that says
/// what it looked for when it fails).
#[track_caller]
pub fn has(html: &str, needle: &str) {
    assert!(html.contains(needle), "no `{needle}` in:\n{html}");
}

/// The opposite of [`has`].
#[track_caller]
pub fn lacks(html: &str, needle: &str) {
    assert!(!html.contains(needle), "`{needle}` in:\n{html}");
}
