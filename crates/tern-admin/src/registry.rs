//! The registry: each registered model behind one object-safe trait
//! ([`AdminModel`]), implemented once, generically, over the model's
//! typed statements ([`Registered`]).
//!
//! Every write goes through [`Model::insert`](tern_data::Model::insert)/[`Model::update`](tern_data::Model::update) (so
//! encrypted columns are encrypted and `check_values` runs), every read
//! through the model's own statements and [`List::from_pairs`] (which
//! checks each column name against the model's and binds each value).
//! What this module adds is the conversion between a row and form text,
//! which `#[derive(Model)]` generates ([`Fields`]).

use std::{future::Future, pin::Pin};

use tern_auth::User;
use tern_data::{
    list::Slice,
    model::List,
    model::{Column, Kind},
    Conn, DataError, FieldValue, Fields, Input, Widget,
};

use crate::{access::AdminUser, forms::FormInput};

/// A boxed future borrowing the registry entry and the connection.
pub(crate) type Fut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A transformation of the selected rows (`ModelAdmin::action`).
pub(crate) type ActionFn<M> = fn(Vec<M>) -> Result<Vec<M>, String>;

/// A check of a whole row (`ModelAdmin::validate`): each error's column
/// (empty: the whole form) and message.
pub(crate) type ValidateFn<M> = fn(&M) -> Result<(), crate::FieldErrors>;

/// A registered model, as the handlers use it.
pub(crate) trait AdminModel: Send + Sync + 'static {
    /// What the pages show of it.
    fn meta(&self) -> &ModelMeta;
    /// Its metadata, to fill in at install (`referenced_by`, FK targets).
    fn meta_mut(&mut self) -> &mut ModelMeta;
    /// A list from the query's pairs (`Err`: a `400` with the message);
    /// `per_page` when the query does not say.
    fn parse_list(&self, pairs: &[(String, String)], per_page: u32) -> Result<List, String>;
    /// A page of rows and how many match.
    fn list<'a>(
        &'a self,
        on: Conn<'a>,
        list: &'a List,
    ) -> Fut<'a, Result<(Vec<Record>, u64), DataError>>;
    /// The row with this key (`404` for a key that does not parse).
    fn get<'a>(&'a self, on: Conn<'a>, key: &'a str) -> Fut<'a, Result<Record, DataError>>;
    /// A new row from the form.
    fn insert<'a>(
        &'a self,
        on: Conn<'a>,
        u: &'a AdminUser,
        form: &'a FormInput,
    ) -> Fut<'a, Result<Record, Invalid>>;
    /// The row changed by the form: before and after.
    fn update<'a>(
        &'a self,
        on: Conn<'a>,
        u: &'a AdminUser,
        key: &'a str,
        form: &'a FormInput,
    ) -> Fut<'a, Result<(Record, Record), Invalid>>;
    /// Deletes the row; the row as it was.
    fn delete<'a>(
        &'a self,
        on: Conn<'a>,
        u: &'a AdminUser,
        key: &'a str,
    ) -> Fut<'a, Result<Record, Invalid>>;
    /// Runs the action `name` over the rows of `keys`: each row before
    /// and after.
    fn act<'a>(
        &'a self,
        on: Conn<'a>,
        name: &'a str,
        keys: &'a [String],
    ) -> Fut<'a, Result<Vec<(Record, Record)>, Invalid>>;
    /// Whether `key` is a key of this model (bulk keys are checked before
    /// anything is done).
    fn parses(&self, key: &str) -> bool;
}

/// A registered model's metadata.
#[derive(Debug, Clone)]
pub(crate) struct ModelMeta {
    /// Its table: the URL segment, the permission rows' `model`, the
    /// log's `model`.
    pub(crate) table: &'static str,
    /// The singular, for people.
    pub(crate) name: &'static str,
    /// The plural, for people.
    pub(crate) plural: &'static str,
    /// Every column, in the model's order.
    pub(crate) fields: Vec<Field>,
    /// The indexes of the list's columns.
    pub(crate) list_columns: Vec<usize>,
    /// The custom actions: name and label.
    pub(crate) actions: Vec<(&'static str, &'static str)>,
    /// `SELECT COUNT(*) FROM "<table>"`.
    pub(crate) count_sql: &'static str,
    /// What references a row of it: the referencing table (its count is
    /// shown to those who may view it), its plural, and `SELECT COUNT(*)
    /// FROM "<t>" WHERE "<c>" = $1`.
    pub(crate) referenced_by: Vec<(&'static str, &'static str, &'static str)>,
    /// Whether the key is an integer (`{key:i64}` routes; bound as one).
    pub(crate) integer_key: bool,
    /// Inputs of the form that are no column (a user's new password,
    /// typed twice): shown after the columns, never listed or logged.
    pub(crate) extra: Vec<Field>,
    /// Its entries of the log, counted in the app's metrics (set at
    /// install).
    pub(crate) changes: Option<crate::audit::Changes>,
}

/// A column and how the admin treats it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    /// The model's column.
    pub(crate) column: Column,
    /// Shown, never written by the form (the model's or the builder's).
    pub(crate) read_only: bool,
    /// The input (the builder's, else the column's).
    pub(crate) widget: Widget,
    /// Whether a form types it (not bytes or JSON: `Fields::TYPED`).
    pub(crate) typed: bool,
}

impl Field {
    /// Whether the form never sends it: the key, read-only, defaulted on
    /// create, binary or JSON ones.
    pub(crate) fn kept(&self, creating: bool) -> bool {
        let c = &self.column;
        c.primary_key || self.read_only || (creating && c.has_default) || !self.typed
    }
}

/// A row as the pages see it.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// The key, as text (`Fields::key_text`).
    pub(crate) key: String,
    /// Its name (`ModelAdmin::show`, else "`<name> <key>`").
    pub(crate) label: String,
    /// Every column's value, in the model's order.
    pub(crate) values: Vec<FieldValue>,
}

/// Why a write did not happen.
#[derive(Debug)]
pub(crate) enum Invalid {
    /// The form's errors: a column (empty: the whole form) and a message.
    Fields(Vec<(&'static str, String)>),
    /// The database's error (its status: 404, 409, 422, 503).
    Data(DataError),
}

impl From<DataError> for Invalid {
    fn from(e: DataError) -> Self {
        Invalid::Data(e)
    }
}

/// The generic registry entry of `M`.
pub(crate) struct Registered<M: Fields> {
    pub(crate) meta: ModelMeta,
    pub(crate) show: Option<fn(&M) -> String>,
    pub(crate) before_save: Option<fn(&mut M, &User, bool)>,
    pub(crate) validate: Option<ValidateFn<M>>,
    /// The model's contract rules (`ModelAdmin::contract`).
    pub(crate) contract: Option<ValidateFn<M>>,
    pub(crate) actions: Vec<(&'static str, ActionFn<M>)>,
}

impl<M: Fields + 'static> Registered<M> {
    /// `M` as declared, with no hook or action.
    pub(crate) fn plain() -> Self {
        Registered {
            meta: meta_of::<M>(),
            show: None,
            before_save: None,
            validate: None,
            contract: None,
            actions: Vec::new(),
        }
    }

    pub(crate) fn record(&self, row: &M) -> Record {
        let key = row.key_text();
        let values = row.values();
        let label = match self.show {
            Some(show) => show(row),
            // Not `format!`: a list makes one per row.
            None => {
                let name = self.meta.name;
                let mut label = String::with_capacity(name.len() + 1 + key.len());
                label.push_str(name);
                label.push(' ');
                label.push_str(&key);
                label
            }
        };
        Record { key, label, values }
    }

    /// The row the form describes: `base` for an edit.
    fn read_form(&self, form: &FormInput, base: Option<&M>) -> Result<M, Invalid> {
        let creating = base.is_none();
        // No browser sends a NUL character: refused in every field, also
        // those (encrypted, numbers) whose own checks would not see it.
        let nul: Vec<(&'static str, String)> = self
            .meta
            .fields
            .iter()
            .filter(|f| !f.kept(creating))
            .filter(|f| form.all(f.column.name).iter().any(|v| v.contains('\0')))
            .map(|f| (f.column.name, "must not contain a NUL character".to_owned()))
            .collect();
        if !nul.is_empty() {
            return Err(Invalid::Fields(nul));
        }
        let input = |c: &'static Column| -> Input<'_> {
            match self.meta.fields.iter().find(|f| f.column.name == c.name) {
                // A password input is never filled in: left empty on an
                // edit, it keeps the value.
                Some(f)
                    if !creating
                        && f.widget == Widget::Password
                        && form.get(c.name).is_none_or(str::is_empty) =>
                {
                    Input::Keep
                }
                Some(f) if !f.kept(creating) => Input::Given(form.get(c.name)),
                _ => Input::Keep,
            }
        };
        let row = M::from_form(&input, base).map_err(Invalid::Fields)?;
        // Choices the admin gives a column beyond the model's own (a
        // permission's `model`: the registered tables).
        let outside: Vec<(&'static str, String)> = self
            .meta
            .fields
            .iter()
            .filter(|f| !f.kept(creating) && !f.column.choices.is_empty())
            .filter_map(|f| {
                let given = form.get(f.column.name).unwrap_or_default();
                let allowed =
                    (given.is_empty() && f.column.nullable) || f.column.choices.contains(&given);
                (!allowed).then(|| (f.column.name, "is not one of the choices".to_owned()))
            })
            .collect();
        if !outside.is_empty() {
            return Err(Invalid::Fields(outside));
        }
        // The contract's rules and the admin's check: every problem of
        // both, one page.
        let mut problems = Vec::new();
        for check in [self.contract, self.validate].into_iter().flatten() {
            if let Err(mut found) = check(&row) {
                problems.append(&mut found);
            }
        }
        if !problems.is_empty() {
            return Err(Invalid::Fields(problems));
        }
        Ok(row)
    }
}

/// A `DataError` naming a column (NUL, length, choices, a unique
/// column) as that field's error; else as it is.
fn as_field_error(meta: &ModelMeta, e: DataError) -> Invalid {
    let message = e.to_string();
    let status = e.status().as_u16();
    if status == 422 || status == 409 {
        for f in &meta.fields {
            let name = f.column.name;
            if names(&message, name) {
                let text = if status == 409 {
                    "is already taken".to_owned()
                } else {
                    let named = format!("`{name}` ");
                    message.strip_prefix(&named).unwrap_or(&message).to_owned()
                };
                return Invalid::Fields(vec![(name, text)]);
            }
        }
    }
    Invalid::Data(e)
}

/// Whether a database message names the column `name`: as tern-data's
/// checks do (`` `title` ``) or SQLite's constraints (`posts.title`),
/// the whole name (not `title` within `.title_slug`).
fn names(message: &str, name: &str) -> bool {
    if message.contains(&format!("`{name}`")) {
        return true;
    }
    let dotted = format!(".{name}");
    message.match_indices(&dotted).any(|(at, _)| {
        message[at + dotted.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// What a page says of a refused write: tern-data's own checks as they
/// are (they name the field, never internals), the database's in fixed
/// words (its text names constraints and values).
pub(crate) fn refusal(e: &DataError) -> String {
    match (e.status().as_u16(), e) {
        (422, DataError::Invalid(message)) => message.clone(),
        (409, _) => {
            "A row with one of these values exists already, or other rows reference this one."
                .to_owned()
        }
        (422, _) => "The database refused these values (a rule of the table).".to_owned(),
        _ => "The change could not be made.".to_owned(),
    }
}

pub(crate) fn not_found() -> DataError {
    DataError::Sqlx(tern_data::sqlx::Error::RowNotFound)
}

impl<M: Fields + 'static> AdminModel for Registered<M> {
    fn meta(&self) -> &ModelMeta {
        &self.meta
    }

    fn meta_mut(&mut self) -> &mut ModelMeta {
        &mut self.meta
    }

    fn parse_list(&self, pairs: &[(String, String)], per_page: u32) -> Result<List, String> {
        let mut list = List::from_pairs::<M>(pairs)?;
        if !pairs.iter().any(|(k, _)| k == "per_page") {
            if let Slice::Page { page, .. } = list.slice {
                list.slice = Slice::Page {
                    page,
                    per_page: per_page.clamp(1, List::MAX_PER_PAGE),
                };
            }
        }
        Ok(list)
    }

    fn list<'a>(
        &'a self,
        on: Conn<'a>,
        list: &'a List,
    ) -> Fut<'a, Result<(Vec<Record>, u64), DataError>> {
        Box::pin(async move {
            let page = M::list(on, list).await?;
            let rows = page.items.iter().map(|r| self.record(r)).collect();
            Ok((rows, page.total))
        })
    }

    fn get<'a>(&'a self, on: Conn<'a>, key: &'a str) -> Fut<'a, Result<Record, DataError>> {
        Box::pin(async move {
            let key = M::parse_key(key).ok_or_else(not_found)?;
            let row = M::get(on, key).await?;
            Ok(self.record(&row))
        })
    }

    fn insert<'a>(
        &'a self,
        on: Conn<'a>,
        u: &'a AdminUser,
        form: &'a FormInput,
    ) -> Fut<'a, Result<Record, Invalid>> {
        Box::pin(async move {
            let mut row = self.read_form(form, None)?;
            if let Some(hook) = self.before_save {
                hook(&mut row, u.user(), true);
            }
            let stored = row
                .insert(on)
                .await
                .map_err(|e| as_field_error(&self.meta, e))?;
            Ok(self.record(&stored))
        })
    }

    fn update<'a>(
        &'a self,
        mut on: Conn<'a>,
        u: &'a AdminUser,
        key: &'a str,
        form: &'a FormInput,
    ) -> Fut<'a, Result<(Record, Record), Invalid>> {
        Box::pin(async move {
            let key = M::parse_key(key).ok_or_else(not_found)?;
            let base = M::get(&mut on, key).await?;
            let mut row = self.read_form(form, Some(&base))?;
            if let Some(hook) = self.before_save {
                hook(&mut row, u.user(), false);
            }
            let stored = row
                .update(&mut on)
                .await
                .map_err(|e| as_field_error(&self.meta, e))?;
            Ok((self.record(&base), self.record(&stored)))
        })
    }

    fn delete<'a>(
        &'a self,
        mut on: Conn<'a>,
        _u: &'a AdminUser,
        key: &'a str,
    ) -> Fut<'a, Result<Record, Invalid>> {
        Box::pin(async move {
            let key = M::parse_key(key).ok_or_else(not_found)?;
            let row = M::get(&mut on, key.clone()).await?;
            M::delete(&mut on, key).await?;
            Ok(self.record(&row))
        })
    }

    fn act<'a>(
        &'a self,
        mut on: Conn<'a>,
        name: &'a str,
        keys: &'a [String],
    ) -> Fut<'a, Result<Vec<(Record, Record)>, Invalid>> {
        Box::pin(async move {
            let Some((_, run)) = self.actions.iter().find(|(n, _)| *n == name) else {
                return Err(Invalid::Fields(vec![(
                    "",
                    format!("there is no action `{name}`"),
                )]));
            };
            let mut rows = Vec::with_capacity(keys.len());
            let mut before = Vec::with_capacity(keys.len());
            for key in keys {
                let key = M::parse_key(key).ok_or_else(not_found)?;
                let row = M::get(&mut on, key).await?;
                before.push(self.record(&row));
                rows.push(row);
            }
            let changed = run(rows).map_err(|msg| Invalid::Fields(vec![("", msg)]))?;
            let mut out = Vec::with_capacity(changed.len());
            for row in changed {
                let key = row.key_text();
                let Some(was) = before.iter().find(|b| b.key == key) else {
                    return Err(Invalid::Fields(vec![(
                        "",
                        format!("the action `{name}` returned a row that was not selected"),
                    )]));
                };
                let stored = row
                    .update(&mut on)
                    .await
                    .map_err(|e| as_field_error(&self.meta, e))?;
                out.push((was.clone(), self.record(&stored)));
            }
            Ok(out)
        })
    }

    fn parses(&self, key: &str) -> bool {
        M::parse_key(key).is_some()
    }
}

/// The metadata of `M` as declared: every column, listed ones (else all
/// but binary and encrypted ones) in the list.
pub(crate) fn meta_of<M: Fields>() -> ModelMeta {
    let fields: Vec<Field> = M::COLUMNS
        .iter()
        .zip(M::TYPED)
        .map(|(c, &typed)| Field {
            column: *c,
            read_only: c.read_only || c.primary_key,
            widget: c.widget,
            typed,
        })
        .collect();
    let listable = |c: &Column| !c.encrypted && c.kind != Kind::Bytes;
    let mut list_columns: Vec<usize> = (0..fields.len())
        .filter(|&i| fields[i].column.listed && listable(&fields[i].column))
        .collect();
    if list_columns.is_empty() || list_columns.len() == fields.len() {
        list_columns = (0..fields.len())
            .filter(|&i| listable(&fields[i].column))
            .collect();
    }
    let integer_key = M::COLUMNS
        .iter()
        .find(|c| c.primary_key)
        .is_some_and(|c| c.kind == Kind::Integer);
    ModelMeta {
        table: M::TABLE,
        name: M::NAME,
        plural: M::PLURAL,
        fields,
        list_columns,
        actions: Vec::new(),
        count_sql: leak(format!("SELECT COUNT(*) FROM \"{}\"", M::TABLE)),
        referenced_by: Vec::new(),
        integer_key,
        extra: Vec::new(),
        changes: None,
    }
}

/// A statement composed once at install from the models' identifiers
/// (which the derive restricts to `[A-Za-z0-9_]`): bounded, a few per
/// registered model.
pub(crate) fn leak(sql: String) -> &'static str {
    Box::leak(sql.into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn a_message_names_a_whole_column() {
        assert!(names("UNIQUE constraint failed: posts.title", "title"));
        assert!(names(
            "UNIQUE constraint failed: posts.title, posts.x",
            "title"
        ));
        assert!(!names(
            "UNIQUE constraint failed: posts.title_slug",
            "title"
        ));
        assert!(names("`title` is longer than 100 characters", "title"));
        assert!(!names("`subtitle` is too long", "title"));
    }
}
