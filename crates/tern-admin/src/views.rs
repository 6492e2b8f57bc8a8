//! The pages' data: plain strings, numbers and bools built in Rust, so
//! that a template only shows them (no logic over records in askama).
//!
//! Templates (`templates/admin/*.html`) are owned by engineer C; these
//! structs are the contract between the handlers and them. Every page
//! struct has a `chrome` ([`Chrome`]) that `admin/base.html` reads.

use askama::Template;

/// What every page's layout (`admin/base.html`) shows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chrome {
    /// The admin's title (`Admin::title`), last part of `<title>`.
    pub(crate) site_title: String,
    /// This page's name, first part of `<title>` and its `<h1>`.
    pub(crate) page_title: String,
    /// The model's plural when the page is about one, else empty: the
    /// middle part of `<title>`.
    pub(crate) model: String,
    /// The admin's prefix (`/admin`), no trailing slash.
    pub(crate) prefix: String,
    /// The hashed URL of admin.css.
    pub(crate) css_url: String,
    /// Whether a user is logged in (every page but the login page).
    pub(crate) logged_in: bool,
    /// The logged-in user's name (empty when not logged in).
    pub(crate) username: String,
    /// The session's CSRF token, for every form's hidden `csrf_token`.
    pub(crate) csrf: String,
    /// Where the logout form posts (`/auth/logout?next={prefix}/login`).
    pub(crate) logout_action: String,
    /// The breadcrumb trail, the dashboard first; the last one is this page.
    pub(crate) crumbs: Vec<Link>,
}

/// A link: its text and its URL.
#[derive(Debug, Clone, Default)]
pub(crate) struct Link {
    /// The text.
    pub(crate) label: String,
    /// The URL.
    pub(crate) href: String,
}

/// An option of a `<select>`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Choice {
    /// The value sent.
    pub(crate) value: String,
    /// The text shown.
    pub(crate) label: String,
    /// Whether it is the one selected.
    pub(crate) selected: bool,
}

/// `admin/login.html`: the login form.
#[derive(Template)]
#[template(path = "admin/login.html")]
pub(crate) struct LoginPage {
    pub(crate) chrome: Chrome,
    /// The form's `action`: `/auth/login?next={prefix}/...` (escaped).
    pub(crate) action: String,
    /// One of three fixed messages for `?error=`, else empty.
    pub(crate) error: String,
}

/// A model on the dashboard.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModelRow {
    /// Its plural, capitalised as declared.
    pub(crate) plural: String,
    /// Its list's URL.
    pub(crate) list_href: String,
    /// Its add page's URL.
    pub(crate) add_href: String,
    /// Whether the user may add (show the Add link).
    pub(crate) can_add: bool,
    /// How many rows it has.
    pub(crate) count: u64,
}

/// An audit log entry, in a table.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogRow {
    /// The entry's own page.
    pub(crate) href: String,
    /// When, RFC 3339 (for `<time datetime>`).
    pub(crate) at: String,
    /// When, for people (`2026-12-04 02:40 UTC`).
    pub(crate) at_text: String,
    /// Who (the username then).
    pub(crate) who: String,
    /// The model's plural (or its table when no longer registered).
    pub(crate) model: String,
    /// The row's name.
    pub(crate) object: String,
    /// The row's page (empty for a deleted row or an unregistered model).
    pub(crate) object_href: String,
    /// `add`, `change`, `delete`, `action:<name>`.
    pub(crate) action: String,
}

/// `admin/dashboard.html`.
#[derive(Template)]
#[template(path = "admin/dashboard.html")]
pub(crate) struct DashboardPage {
    pub(crate) chrome: Chrome,
    /// The models the user may view.
    pub(crate) models: Vec<ModelRow>,
    /// The 10 latest log entries the user may view.
    pub(crate) recent: Vec<LogRow>,
    /// The log's URL.
    pub(crate) log_href: String,
}

/// A list's column header.
#[derive(Debug, Clone, Default)]
pub(crate) struct Header {
    /// The column's label.
    pub(crate) label: String,
    /// The link that sorts by it (empty when it is not sortable).
    pub(crate) sort_href: String,
    /// `ascending`/`descending` for the current order (its `aria-sort`),
    /// else empty.
    pub(crate) sort: String,
}

/// A row in a list.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListRow {
    /// The key, as sent back in `_selected`.
    pub(crate) key: String,
    /// The row's name (`show`, else the model's name and key).
    pub(crate) label: String,
    /// Its page.
    pub(crate) href: String,
    /// One text per header.
    pub(crate) cells: Vec<String>,
}

/// A filter of a list: a `<select>` named by the parameter.
#[derive(Debug, Clone, Default)]
pub(crate) struct FilterView {
    /// The parameter (`published`, `status`).
    pub(crate) name: String,
    /// The label.
    pub(crate) label: String,
    /// The `id` of the control (`filter-published`).
    pub(crate) id: String,
    /// The control: `select`, `date` or `number`.
    pub(crate) input: String,
    /// An input's value (a select's is in its options).
    pub(crate) value: String,
    /// A select's options, the first "Any" (empty value).
    pub(crate) options: Vec<Choice>,
}

/// A page link in a list's pagination.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageLink {
    /// The page's number, as text.
    pub(crate) number: String,
    /// Its URL.
    pub(crate) href: String,
    /// Whether it is the page shown (`aria-current="page"`).
    pub(crate) current: bool,
}

/// `admin/list.html`.
#[derive(Template)]
#[template(path = "admin/list.html")]
pub(crate) struct ListPage {
    pub(crate) chrome: Chrome,
    /// The list's own URL (the search form's action, the bulk form's).
    pub(crate) list_href: String,
    /// The add page's URL.
    pub(crate) add_href: String,
    /// Whether to show the Add link.
    pub(crate) can_add: bool,
    /// Whether rows have a checkbox and the bulk form is there (delete
    /// or an action allowed).
    pub(crate) can_select: bool,
    /// The bulk actions (`delete` first when allowed).
    pub(crate) actions: Vec<Choice>,
    /// Whether a search box is shown (some column is searchable).
    pub(crate) searchable: bool,
    /// The search as given.
    pub(crate) q: String,
    /// The filters.
    pub(crate) filters: Vec<FilterView>,
    /// The columns.
    pub(crate) headers: Vec<Header>,
    /// The rows of this page.
    pub(crate) rows: Vec<ListRow>,
    /// How many rows match.
    pub(crate) total: u64,
    /// This page's number.
    pub(crate) page: u64,
    /// How many pages (at least 1).
    pub(crate) pages: u64,
    /// The page links (empty with one page).
    pub(crate) page_links: Vec<PageLink>,
    /// The previous page's URL, else empty.
    pub(crate) prev_href: String,
    /// The next page's URL, else empty.
    pub(crate) next_href: String,
    /// A page past the end: "Page 9 of 7: no rows here".
    pub(crate) past_end: bool,
    /// The last page's URL (for `past_end`).
    pub(crate) last_href: String,
    /// A one-time notice (fixed text: "Deleted 3 notes."), else empty.
    pub(crate) notice: String,
    /// An error to show above the list (an action's message), else empty.
    pub(crate) error: String,
}

/// A field of the form (or of the read-only view).
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldView {
    /// The control's `id` (`field-title`), also its error's prefix
    /// (`field-title-error`) and the summary's anchor.
    pub(crate) id: String,
    /// The form field's name (the column).
    pub(crate) name: String,
    /// The label.
    pub(crate) label: String,
    /// What control: `text`, `number`, `email`, `url`, `password`,
    /// `datetime-local`, `textarea`, `checkbox`, `select`, or `readonly`
    /// (shown as text in a `<dd>`).
    pub(crate) input: String,
    /// The value to fill in (text; empty for none).
    pub(crate) value: String,
    /// For a checkbox: whether it is checked.
    pub(crate) checked: bool,
    /// `required`.
    pub(crate) required: bool,
    /// `maxlength`, empty when none.
    pub(crate) maxlength: String,
    /// `step` for numbers (`1`, `any`), else empty.
    pub(crate) step: String,
    /// `autocomplete`: `off` (encrypted values), `new-password`, or
    /// empty for none.
    pub(crate) autocomplete: String,
    /// For a select: the options (an empty one first when nullable).
    pub(crate) options: Vec<Choice>,
    /// This field's error, else empty.
    pub(crate) error: String,
}

/// `admin/form.html`: add, edit, or (without change permission) view.
#[derive(Template)]
#[template(path = "admin/form.html")]
pub(crate) struct FormPage {
    pub(crate) chrome: Chrome,
    /// An edit form's `_version`: the digest of the row it shows (empty
    /// when adding or read-only).
    pub(crate) version: String,
    /// Where the form posts (this page's URL).
    pub(crate) action: String,
    /// No `<form>`: values as text (view permission only).
    pub(crate) read_only: bool,
    /// Whether this is the add page ("Save and add another" is shown).
    pub(crate) adding: bool,
    /// The fields, in the model's order.
    pub(crate) fields: Vec<FieldView>,
    /// The summary's heading ("There is 1 problem", "There are 2
    /// problems"), empty without errors.
    pub(crate) error_heading: String,
    /// The summary: each a message and a link to its field (`#field-title`;
    /// empty href for an error of no field).
    pub(crate) errors: Vec<Link>,
    /// The delete page's URL, empty when the user may not delete or
    /// this is the add page.
    pub(crate) delete_href: String,
    /// The list's URL (Cancel, back).
    pub(crate) list_href: String,
    /// The row's entries in the log (`/admin/log/?model=posts&object=5`),
    /// empty on the add page.
    pub(crate) history_href: String,
    /// A one-time notice ("Saved."), else empty.
    pub(crate) notice: String,
}

/// `admin/confirm_delete.html`: one row.
#[derive(Template)]
#[template(path = "admin/confirm_delete.html")]
pub(crate) struct ConfirmDeletePage {
    pub(crate) chrome: Chrome,
    /// Where the confirmation posts.
    pub(crate) action: String,
    /// The row's name.
    pub(crate) label: String,
    /// What else goes: "3 sessions" per registered table that references it.
    pub(crate) related: Vec<String>,
    /// Where Cancel goes (the row's page).
    pub(crate) cancel_href: String,
    /// Why the delete failed (a foreign key blocks it), else empty.
    pub(crate) error: String,
}

/// `admin/confirm_bulk.html`: the selected rows.
#[derive(Template)]
#[template(path = "admin/confirm_bulk.html")]
pub(crate) struct ConfirmBulkPage {
    pub(crate) chrome: Chrome,
    /// Where the confirmation posts (the list's URL).
    pub(crate) action: String,
    /// The rows' names (at most 100).
    pub(crate) labels: Vec<String>,
    /// "and 400 more", else empty.
    pub(crate) more: String,
    /// The selected keys, sent back as hidden `_selected` inputs.
    pub(crate) keys: Vec<String>,
    /// What else goes, summed over the rows ("3 sessions").
    pub(crate) related: Vec<String>,
    /// Where Cancel goes (the list).
    pub(crate) cancel_href: String,
}

/// A field before and after, on a log entry's page.
#[derive(Debug, Clone, Default)]
pub(crate) struct Change {
    /// The column.
    pub(crate) field: String,
    /// Its value before (empty for an add).
    pub(crate) before: String,
    /// Its value after (empty for a delete).
    pub(crate) after: String,
}

/// `admin/log.html`: the log, or one entry (`entry` set).
#[derive(Template)]
#[template(path = "admin/log.html")]
pub(crate) struct LogPage {
    pub(crate) chrome: Chrome,
    /// The log's URL (the filter form's action).
    pub(crate) log_href: String,
    /// The entries (the list), or the one entry.
    pub(crate) entries: Vec<LogRow>,
    /// Whether the page shows one entry (with `changes`).
    pub(crate) one: bool,
    /// The changed fields of the one entry.
    pub(crate) changes: Vec<Change>,
    /// The models the filter offers (value: table; label: plural).
    pub(crate) models: Vec<Choice>,
}

/// `admin/denied.html`: a `403` (and the admin's other error pages:
/// `400` bad parameters, `404`), with a heading and a message.
#[derive(Template)]
#[template(path = "admin/denied.html")]
pub(crate) struct DeniedPage {
    pub(crate) chrome: Chrome,
    /// The message (text, escaped).
    pub(crate) message: String,
}
