//! The admin for Tern: staff pages to list, search, add, edit and delete
//! the rows of registered models, with per-model permissions and an audit
//! log of every change.
//!
//! # In ten lines
//!
//! ```no_run
//! use tern::App;
//! use tern_admin::Admin;
//! use tern_data::{Database, Model};
//!
//! #[derive(Model)]
//! #[model(table = "notes", name = "note", plural = "notes")]
//! struct Note {
//!     #[model(primary_key)]
//!     id: i64,
//!     #[model(searchable, sortable, max_length = 500, widget = "textarea")]
//!     text: String,
//! }
//!
//! let app = App::new().settings::<Database>("database");
//! let app = tern_auth::install(app);
//! let app = tern_admin::install(app, Admin::new().model::<Note>().users());
//! // Migrations: [&tern_auth::MIGRATIONS, &tern_admin::MIGRATIONS, &yours].
//! ```
//!
//! Then `createsuperuser` (tern-auth's command) makes an account that may
//! do everything, and `/admin/` is its dashboard: each model's row count,
//! its list (`?q=` searches the `searchable` columns, `?order=-text`
//! sorts by a `sortable` one, `?published=true` filters, `?page=2`), a
//! form per row, a delete with a confirmation, and the log.
//!
//! # What the model says, the admin shows
//!
//! Everything comes from `#[derive(Model)]` (its generated
//! [`Fields`] reads a row as form text and back): a column's `label`, its
//! input (by kind: a number, a checkbox, a `datetime-local`; by
//! `#[model(widget = "...")]`: a textarea, an email; `choices(..)`: a
//! select; `references = "table"`: a select of that registered model's
//! rows while it has at most `ADMIN_FK_SELECT_MAX`), `max_length`,
//! `read_only`, which columns the list shows (`listed`). [`ModelAdmin`]
//! changes what the admin alone should see otherwise:
//!
//! ```no_run
//! use tern_admin::Admin;
//! use tern_data::{Model, OffsetDateTime};
//!
//! #[derive(Model)]
//! #[model(table = "notes", name = "note", plural = "notes")]
//! struct Note {
//!     #[model(primary_key)]
//!     id: i64,
//!     #[model(searchable, max_length = 500)]
//!     text: String,
//!     author: String,
//!     pinned: bool,
//!     created_at: OffsetDateTime,
//! }
//!
//! let admin = Admin::new().model_with::<Note>(|m| {
//!     m.list_columns(&["text", "author", "pinned"])
//!         // Shown, never taken from the form ...
//!         .read_only(&["author", "created_at"])
//!         // ... but set on create by the hook, from the user who adds it.
//!         .before_save(|note, user, created| {
//!             if created {
//!                 note.author = user.username.clone();
//!                 note.created_at = OffsetDateTime::now_utc();
//!             }
//!         })
//!         // A row's name in titles, confirmations and the log.
//!         .show(|note| note.text.chars().take(40).collect())
//!         // A bulk action: a pure function of the selected rows; the admin
//!         // writes what it returns with Model::update and logs each row.
//!         .action("pin", "Pin the selected notes", |mut notes| {
//!             notes.iter_mut().for_each(|n| n.pinned = true);
//!             Ok(notes)
//!         })
//! });
//! ```
//!
//! Rules across fields go in [`ModelAdmin::validate`]; a model that is
//! also a contract (`#[contract]`, tern-contract) gets its rules checked
//! on every save with `ModelAdmin::contract` (feature `contract`),
//! each broken rule shown at its field.
//!
//! # Who may do what
//!
//! Every admin route is in one scope with the request's transaction
//! ([`tern_data::transactions`]): a saved row and its log entry are
//! committed together, and a form answered with errors (`422`) writes
//! nothing. The handler's first step is the permission check (before the
//! form is read): no session is the login page for a `GET` and `403`
//! otherwise (an API token never opens the admin: it is cookie only), a
//! user who is not staff is `403`, a superuser may do everything, and
//! another staff user only what the rows of `tern_admin_permissions` give
//! them or one of their groups: `view`, `add`, `change` or `delete` of a
//! model's table (`change` implies `view`). The pages show no button,
//! link or checkbox for what the user may not do, and a user with `view`
//! alone gets each row as text, without a form.
//!
//! [`Admin::users`] adds the pages where a superuser makes accounts
//! (through tern-auth: the password's rules, argon2), groups, group
//! memberships and permissions. Only a superuser sees them: a right over
//! accounts or permissions would be every right, so no permission row
//! gives one. The rows are plain SQL too, for a script:
//!
//! ```sql
//! INSERT INTO tern_admin_permissions (user_id, model, action) VALUES (7, 'notes', 'view');
//! INSERT INTO tern_admin_groups (name) VALUES ('editors');
//! INSERT INTO tern_admin_memberships (user_id, group_id) VALUES (7, 1);
//! INSERT INTO tern_admin_permissions (group_id, model, action) VALUES (1, 'notes', 'change');
//! ```
//!
//! CSRF is tern-auth's check, on every route: each admin form carries the
//! session's `csrf_token`.
//!
//! # Writes are the model's
//!
//! The admin writes with [`Model::insert`] and [`Model::update`]:
//! encrypted columns are encrypted, `check_values` (NUL, `max_length`,
//! `choices`) runs, and every statement's text is the model's constant.
//! The rows a client asks to list go through
//! [`tern_data::model::List::from_pairs`], which checks each column name
//! against the model's and binds every value: a bad parameter is a `400`
//! page naming it.
//!
//! # The log
//!
//! Each add, change, delete and action is a row of `tern_admin_log`, in
//! the same transaction: who, when, the model and row, and the row's
//! columns before and after as JSON, with an encrypted column written as
//! `"(encrypted)"` (or `"(encrypted, changed)"`) and bytes as their
//! count. `/admin/log/` shows the entries of the models the user may
//! view; nothing writes or deletes an entry but the admin's own changes.
//!
//! # Keys
//!
//! `{key}` in a URL is the model's key: `/admin/notes/5`. An integer key
//! is routed as `{key:i64}` (junk is the router's `404`); a text key is
//! parsed by [`Fields::parse_key`], and a text key `add` is shadowed by
//! the literal `add` route.
//!
//! # Pages
//!
//! Askama templates (`templates/admin/*.html`), one stylesheet served at
//! `{prefix}/static/` from the binary, no script and no inline style (the
//! default CSP holds). Answers are `Cache-Control: no-store`.

mod access;
mod accounts;
mod audit;
mod forms;
mod pages;
mod registry;
mod views;

use std::sync::Arc;

use serde::Deserialize;
use tern::{
    middleware::{from_fn_with_state, Next},
    App, Request,
};
use tern_auth::User;
pub use tern_data::Widget;
use tern_data::{model::Column, Fields, Migrations, Model};
use tern_site::StaticFiles;

use registry::{leak, AdminModel, Registered};

/// The admin's tables (`tern_admin_groups`, `tern_admin_memberships`,
/// `tern_admin_permissions`, `tern_admin_log`), recorded in
/// `_tern_admin_migrations`. List it after `tern_auth::MIGRATIONS`: its
/// tables reference `tern_users`.
pub static MIGRATIONS: Migrations =
    tern_data::migrations!("migrations").with_table("_tern_admin_migrations");

/// The admin's settings, under `admin`: `ADMIN_PER_PAGE` (rows per list
/// page when the URL does not say, 1 to 500; default 50) and
/// `ADMIN_FK_SELECT_MAX` (a foreign key whose table has more rows is a
/// number input rather than a select; default 200).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawSettings")]
pub struct AdminSettings {
    per_page: u32,
    fk_select_max: u32,
}

impl AdminSettings {
    /// Rows per list page.
    pub fn per_page(&self) -> u32 {
        self.per_page
    }

    /// The most rows of a foreign key's table offered in a select.
    pub fn fk_select_max(&self) -> u32 {
        self.fk_select_max
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    per_page: u32,
    fk_select_max: u32,
}

impl TryFrom<RawSettings> for AdminSettings {
    type Error = String;

    fn try_from(raw: RawSettings) -> Result<Self, String> {
        if !(1..=tern_data::model::List::MAX_PER_PAGE).contains(&raw.per_page) {
            return Err(format!(
                "ADMIN_PER_PAGE must be from 1 to {} (it is {})",
                tern_data::model::List::MAX_PER_PAGE,
                raw.per_page
            ));
        }
        Ok(AdminSettings {
            per_page: raw.per_page,
            fk_select_max: raw.fk_select_max,
        })
    }
}

/// The stylesheet, in the binary.
#[derive(rust_embed::RustEmbed)]
#[folder = "static/"]
struct AdminFiles;

/// What the admin's handlers share.
pub(crate) struct State {
    /// `/admin`: no trailing slash.
    pub(crate) prefix: String,
    /// The title of every page.
    pub(crate) title: String,
    /// The registered models, in registration order.
    pub(crate) models: Vec<Box<dyn AdminModel>>,
    /// admin.css's hashed URL.
    pub(crate) css_url: String,
    /// Each model's row count, one statement: `SELECT 0, COUNT(*) FROM
    /// "a" UNION ALL SELECT 1, COUNT(*) FROM "b" ..` (index, count).
    pub(crate) counts_sql: &'static str,
    /// The logout form's action: tern-auth's, back to the login page.
    pub(crate) logout_action: String,
}

/// The admin to install: its prefix, its title and its models.
///
/// ```no_run
/// # #[derive(tern_data::Model)] #[model(table = "notes")]
/// # struct Note { #[model(primary_key)] id: i64, text: String, author: String }
/// use tern_admin::Admin;
///
/// let admin = Admin::new()
///     .prefix("/staff")
///     .title("Notes administration")
///     .model_with::<Note>(|m| m.list_columns(&["text", "author"]).read_only(&["author"]));
/// ```
pub struct Admin {
    prefix: String,
    title: String,
    models: Vec<Box<dyn AdminModel>>,
}

impl std::fmt::Debug for Admin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admin")
            .field("prefix", &self.prefix)
            .field("title", &self.title)
            .field(
                "models",
                &self
                    .models
                    .iter()
                    .map(|m| m.meta().table)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Default for Admin {
    fn default() -> Self {
        Admin::new()
    }
}

impl Admin {
    /// An admin at `/admin` titled "Administration", with no model yet.
    pub fn new() -> Admin {
        Admin {
            prefix: "/admin".to_owned(),
            title: "Administration".to_owned(),
            models: Vec::new(),
        }
    }

    /// Serves the admin under `prefix` (`/staff`) instead of `/admin`.
    ///
    /// # Panics
    /// When `prefix` is not a path of one or more segments (`/`, `staff`,
    /// `/a b`): a programming error, found on the first run.
    pub fn prefix(mut self, prefix: &str) -> Admin {
        let trimmed = prefix.trim_end_matches('/');
        assert!(
            trimmed.starts_with('/')
                && trimmed.len() > 1
                && trimmed[1..].split('/').all(|s| !s.is_empty()
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))),
            "the admin's prefix must be a path like `/admin` (it is {prefix:?})"
        );
        trimmed.clone_into(&mut self.prefix);
        self
    }

    /// The title of every page (`<title>` and the header).
    pub fn title(mut self, title: &str) -> Admin {
        title.clone_into(&mut self.title);
        self
    }

    /// Registers `M` as declared: its columns, labels, list columns,
    /// read-only columns and widgets from `#[model(...)]`.
    ///
    /// # Panics
    /// When a model of the same table is registered already.
    pub fn model<M: Fields + 'static>(self) -> Admin {
        self.model_with::<M>(|m| m)
    }

    /// Registers `M`, with what `f` changes of its declaration.
    ///
    /// # Panics
    /// When a column named to the builder is not one of `M`'s, a model
    /// of the same table is registered already, or the table is one of
    /// Tern's own (`tern_*`, `_tern_*`: accounts, sessions, tokens, the
    /// admin's permissions and log).
    pub fn model_with<M: Fields + 'static>(
        mut self,
        f: impl FnOnce(ModelAdmin<M>) -> ModelAdmin<M>,
    ) -> Admin {
        let built = f(ModelAdmin::new()).finish();
        assert!(
            !["log", "login", "static"].contains(&M::TABLE),
            "the admin's pages use `/{}/`: a model of that table cannot be registered",
            M::TABLE
        );
        // Tern's own tables (accounts, sessions, tokens, the admin's
        // permissions and log) are not edited as plain rows: a `change`
        // right on one would be every right.
        assert!(
            !M::TABLE.starts_with("tern_") && !M::TABLE.starts_with("_tern_"),
            "`{}` is one of Tern's own tables: it cannot be registered as a model with the admin",
            M::TABLE
        );
        assert!(
            self.models.iter().all(|m| m.meta().table != M::TABLE),
            "the model of table `{}` is registered twice with the admin",
            M::TABLE
        );
        self.models.push(Box::new(built));
        self
    }
}

impl Admin {
    /// Registers the accounts: users, groups, group memberships and
    /// permissions (`/admin/tern_users/`, `/admin/tern_admin_groups/`,
    /// `/admin/tern_admin_memberships/`, `/admin/tern_admin_permissions/`).
    /// Only a superuser sees or changes them: no permission row gives a
    /// right over them, as a user who may make a superuser or grant a
    /// permission has every right.
    ///
    /// A user is made and changed through tern-auth (the password's
    /// rules, argon2, names unique without regard to case): the form
    /// takes the password twice, and on an edit both left empty keep it.
    /// Setting a password, or taking away staff, superuser or active,
    /// ends that user's sessions; no one can delete their own account or
    /// take those flags from it.
    ///
    /// # Panics
    /// When called twice.
    pub fn users(mut self) -> Admin {
        assert!(
            self.models.iter().all(|m| m.meta().table != "tern_users"),
            "Admin::users is called twice"
        );
        self.models.extend(accounts::entries());
        self
    }
}

/// A form's problems: each one's column (`""`: the whole form) and
/// message ([`ModelAdmin::validate`]).
pub type FieldErrors = Vec<(&'static str, String)>;

/// How one model is shown and edited: see [`Admin::model_with`].
pub struct ModelAdmin<M: Fields> {
    inner: Registered<M>,
}

impl<M: Fields> std::fmt::Debug for ModelAdmin<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelAdmin")
            .field("table", &M::TABLE)
            .finish_non_exhaustive()
    }
}

fn column_index<M: Model>(name: &str) -> usize {
    M::COLUMNS
        .iter()
        .position(|c: &Column| c.name == name)
        .unwrap_or_else(|| {
            panic!(
                "the admin of `{}` names the column `{name}`, which the model does not have ({})",
                M::TABLE,
                M::COLUMNS
                    .iter()
                    .map(|c| c.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

impl<M: Fields + 'static> ModelAdmin<M> {
    fn new() -> Self {
        ModelAdmin {
            inner: Registered::plain(),
        }
    }

    fn finish(self) -> Registered<M> {
        self.inner
    }

    /// The list's columns, in this order (encrypted ones are never
    /// listed: they are left out). By default the `#[model(listed)]`
    /// ones, else every column but binary and encrypted ones.
    ///
    /// # Panics
    /// When a name is not one of `M`'s columns.
    pub fn list_columns(mut self, columns: &[&'static str]) -> Self {
        let meta = &mut self.inner.meta;
        meta.list_columns = columns
            .iter()
            .map(|c| column_index::<M>(c))
            .filter(|&i| !meta.fields[i].column.encrypted)
            .collect();
        self
    }

    /// The model's name for people, singular and plural (by default
    /// `#[model(name, plural)]`).
    pub fn name(mut self, singular: &'static str, plural: &'static str) -> Self {
        self.inner.meta.name = singular;
        self.inner.meta.plural = plural;
        self
    }

    /// Columns shown but never written by the admin's forms (besides the
    /// model's own read-only ones). A read-only column without a database
    /// default gets its type's placeholder on create unless
    /// [`before_save`](Self::before_save) sets it.
    ///
    /// # Panics
    /// When a name is not one of `M`'s columns.
    pub fn read_only(mut self, columns: &[&'static str]) -> Self {
        for c in columns {
            let i = column_index::<M>(c);
            self.inner.meta.fields[i].read_only = true;
        }
        self
    }

    /// The input of `column` (by default the column's `widget`, else its
    /// kind's).
    ///
    /// # Panics
    /// When `column` is not one of `M`'s columns.
    pub fn widget(mut self, column: &'static str, widget: Widget) -> Self {
        let i = column_index::<M>(column);
        self.inner.meta.fields[i].widget = widget;
        self
    }

    /// A bulk action on the list page: `run` gets the selected rows and
    /// returns the rows to write (each with `Model::update`, each logged
    /// as `action:<name>`, in the request's transaction); `Err(message)`
    /// writes nothing and shows the message. It needs the `change`
    /// permission.
    ///
    /// # Panics
    /// When `name` is `delete` (the built-in bulk delete) or registered
    /// twice, or is not made of `[a-z0-9_]`.
    pub fn action(
        mut self,
        name: &'static str,
        label: &'static str,
        run: fn(Vec<M>) -> Result<Vec<M>, String>,
    ) -> Self {
        assert!(
            name != "delete"
                && !name.is_empty()
                && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && self.inner.actions.iter().all(|(n, _)| *n != name),
            "the admin of `{}`: an action's name is `[a-z0-9_]+`, not `delete`, and unique ({name:?})",
            M::TABLE
        );
        self.inner.actions.push((name, run));
        self.inner.meta.actions.push((name, label));
        self
    }

    /// A row's name in titles, lists, confirmations and the log (by
    /// default "`<name> <key>`", as "note 5").
    pub fn show(mut self, f: fn(&M) -> String) -> Self {
        self.inner.show = Some(f);
        self
    }

    /// Checks a row the form describes before it is written, after each
    /// field has parsed: `Err` holds each problem's column (`""`: the
    /// whole form) and message, shown as the form's errors (`422`), and
    /// nothing is written. For rules across fields ("an end after its
    /// start") that no column's type says.
    pub fn validate(mut self, f: fn(&M) -> Result<(), FieldErrors>) -> Self {
        self.inner.validate = Some(f);
        self
    }

    /// Runs before each insert (`created` true) and update the admin
    /// makes, with the user who makes it: for columns the form does not
    /// set (an author, a creation time).
    pub fn before_save(mut self, f: fn(&mut M, &User, bool)) -> Self {
        self.inner.before_save = Some(f);
        self
    }
}

#[cfg(feature = "contract")]
impl<M: Fields + tern_contract::Contract + 'static> ModelAdmin<M> {
    /// Checks each row the form describes by the model's contract rules
    /// (`#[contract(length(..), range(..), email, ..)]`) before it is
    /// written, as a JSON body of that contract would be: each broken
    /// rule is its field's error (`422`), with the contract's words.
    /// Feature `contract`.
    pub fn contract(mut self) -> Self {
        self.inner.contract = Some(contract_rules::<M>);
        self
    }
}

/// A contract's broken rules as the form's errors: a rule at `/title`
/// (or `/title/2`) is the column `title`'s, any other the whole form's.
#[cfg(feature = "contract")]
fn contract_rules<M: Model + tern_contract::Contract>(row: &M) -> Result<(), FieldErrors> {
    let Err(broken) = row.validate() else {
        return Ok(());
    };
    Err(broken
        .iter()
        .map(|v| {
            let name = v.pointer.trim_start_matches('/').split('/').next();
            let column = M::COLUMNS
                .iter()
                .find(|c| Some(c.name) == name)
                .map_or("", |c| c.name);
            (column, v.detail.clone())
        })
        .collect())
}

/// Adds the admin to `app`: its settings (`ADMIN_*`, [`AdminSettings`]),
/// the pages under the admin's prefix (see the [crate] docs) in a scope
/// with the request's transaction, and its stylesheet at
/// `{prefix}/static/`. Needs [`tern_auth::install`] (sessions and CSRF)
/// and a [`tern_data::Database`]; migrate [`MIGRATIONS`] after
/// `tern_auth::MIGRATIONS`.
///
/// Each entry of the audit log is counted in the app's metrics as
/// `tern_admin_changes_total{model, action}`: `model` is a registered
/// model's table, `action` one of `add`, `change`, `delete` and
/// `action` (a custom action's change, whatever its name). A password
/// set through the users' form is logged as its own event and counted
/// as the user's `change` only.
///
/// # Panics
/// When a registered model references a table that the statements cannot
/// name (never for `#[derive(Model)]`'s).
pub fn install<S: Clone + Send + Sync + 'static>(app: App<S>, admin: Admin) -> App<S> {
    let Admin {
        prefix,
        title,
        mut models,
    } = admin;
    // What references each model: counted on the delete confirmation.
    let mut referenced: Vec<Vec<(&'static str, &'static str, &'static str)>> =
        vec![Vec::new(); models.len()];
    for m in &models {
        let meta = m.meta();
        for f in &meta.fields {
            let Some(target) = f.column.references else {
                continue;
            };
            if let Some(t) = models.iter().position(|o| o.meta().table == target) {
                let sql = leak(format!(
                    "SELECT COUNT(*) FROM \"{}\" WHERE \"{}\" = $1",
                    meta.table, f.column.name
                ));
                referenced[t].push((meta.table, meta.plural, sql));
            }
        }
    }
    for (m, refs) in models.iter_mut().zip(referenced) {
        m.meta_mut().referenced_by.extend(refs);
    }
    // A permission names a registered model.
    let tables: &'static [&'static str] = Box::leak(
        models
            .iter()
            .map(|m| m.meta().table)
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    for m in &mut models {
        let changes = audit::Changes::register(app.metrics(), m.meta().table);
        m.meta_mut().changes = Some(changes);
        if m.meta().table == accounts::PERMISSIONS {
            for f in &mut m.meta_mut().fields {
                if f.column.name == "model" {
                    f.column.choices = tables;
                }
            }
        }
    }
    let files = StaticFiles::embedded::<AdminFiles>()
        .mount(&format!("{prefix}/static"))
        .cache_control("no-cache");
    let counts_sql = if models.is_empty() {
        "SELECT 0, 0 WHERE 1 = 0"
    } else {
        leak(
            models
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    format!(
                        "SELECT CAST({i} AS BIGINT), COUNT(*) FROM \"{}\"",
                        m.meta().table
                    )
                })
                .collect::<Vec<_>>()
                .join(" UNION ALL "),
        )
    };
    let state = Arc::new(State {
        logout_action: format!(
            "/auth/logout?next={}",
            pages::encode(&format!("{prefix}/login"))
        ),
        counts_sql,
        css_url: files.url("admin.css"),
        prefix: prefix.clone(),
        title,
        models,
    });
    let app = app
        .settings::<AdminSettings>("admin")
        .setting_default("ADMIN_PER_PAGE", "50")
        .setting_default("ADMIN_FK_SELECT_MAX", "200")
        .route(&files.pattern(), files.service());
    let routed = Arc::clone(&state);
    app.scope("/", move |scope| {
        let scope = pages::routes(scope, &routed);
        scope
            .route_layer(tern_data::transactions())
            .route_layer(from_fn_with_state(routed, with_state))
    })
}

/// Puts the admin's state where [`access::AdminUser`] finds it; the
/// answer is kept by no cache (`no-store`: the pages show rows and a
/// CSRF token of the session).
async fn with_state(state: Arc<State>, mut req: Request, next: Next) -> tern::Response {
    req.extensions_mut().insert(state);
    let mut res = next.run(req).await;
    res.headers_mut()
        .entry(http::header::CACHE_CONTROL)
        .or_insert(http::HeaderValue::from_static("no-store"));
    res
}
