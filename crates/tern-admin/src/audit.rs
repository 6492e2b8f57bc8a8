//! The audit log: every change the admin makes is written to
//! `tern_admin_log` by [`record`], in the transaction of the change
//! itself (both are committed, or neither).
//!
//! The values are JSON objects of column -> value, with secrets masked:
//! an encrypted column is `"(encrypted)"` (and `"(encrypted, changed)"`
//! after a change of its plaintext: compared in memory, never stored),
//! a binary one `"(n bytes)"`.

use serde_json::{Map, Value};
use tern::metrics::{Counter, Metrics};
use tern_auth::User;
use tern_data::{query, Conn, DataError, FieldValue, OffsetDateTime};

use crate::registry::{ModelMeta, Record};

/// One model's `tern_admin_changes_total`, by action: the log's entries
/// as [`record`] writes them (in the change's transaction).
#[derive(Debug, Clone)]
pub(crate) struct Changes {
    add: Counter,
    change: Counter,
    delete: Counter,
    action: Counter,
}

impl Changes {
    /// The counters of the model whose table is `model` (a registered
    /// model's: the label's values are bounded by the registry).
    pub(crate) fn register(metrics: &Metrics, model: &str) -> Changes {
        let of = |action| {
            metrics.counter(
                "tern_admin_changes",
                "Rows the admin added, changed or deleted, or changed by an action, by model",
                &[("model", model), ("action", action)],
            )
        };
        Changes {
            add: of("add"),
            change: of("change"),
            delete: of("delete"),
            action: of("action"),
        }
    }

    fn count(&self, action: &str) {
        match action {
            "add" => self.add.inc(),
            "change" => self.change.inc(),
            "delete" => self.delete.inc(),
            _ => self.action.inc(),
        }
    }
}

/// Writes one entry: `action` (`add`, `change`, `delete`,
/// `action:<name>`) by `who` on the row (`after`'s, else `before`'s).
pub(crate) async fn record(
    on: Conn<'_>,
    who: &User,
    meta: &ModelMeta,
    action: &str,
    before: Option<&Record>,
    after: Option<&Record>,
) -> Result<(), DataError> {
    let Some(row) = after.or(before) else {
        return Ok(());
    };
    let before_json = before.map(|b| json_of(meta, b, None).to_string());
    let after_json = after.map(|a| json_of(meta, a, before).to_string());
    query(
        "INSERT INTO tern_admin_log (at, user_id, username, model, object_id, object_label, \
         action, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(OffsetDateTime::now_utc().unix_timestamp())
    .bind(who.id)
    .bind(who.username.as_str())
    .bind(meta.table)
    .bind(row.key.as_str())
    .bind(row.label.as_str())
    .bind(action)
    .bind(before_json)
    .bind(after_json)
    .execute(on)
    .await?;
    if let Some(changes) = &meta.changes {
        changes.count(action);
    }
    Ok(())
}

/// Writes one entry without values: an event of the row (`password`: a
/// user's password was set; neither it nor its hash is ever logged).
pub(crate) async fn record_event(
    on: Conn<'_>,
    who: &User,
    meta: &ModelMeta,
    action: &str,
    row: &Record,
) -> Result<(), DataError> {
    query(
        "INSERT INTO tern_admin_log (at, user_id, username, model, object_id, object_label, \
         action, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, NULL)",
    )
    .bind(OffsetDateTime::now_utc().unix_timestamp())
    .bind(who.id)
    .bind(who.username.as_str())
    .bind(meta.table)
    .bind(row.key.as_str())
    .bind(row.label.as_str())
    .bind(action)
    .execute(on)
    .await?;
    Ok(())
}

/// A row as the log keeps it; `was`: the row before, for an encrypted
/// value's "changed".
fn json_of(meta: &ModelMeta, row: &Record, was: Option<&Record>) -> Value {
    let mut out = Map::new();
    for (i, (field, value)) in meta.fields.iter().zip(&row.values).enumerate() {
        let json = match value {
            FieldValue::Null => Value::Null,
            // A password widget's value is never logged (nor shown).
            _ if field.widget == tern_data::Widget::Password => {
                let changed = was
                    .and_then(|w| w.values.get(i))
                    .is_some_and(|old| old != value);
                Value::String(
                    if changed {
                        "(hidden, changed)"
                    } else {
                        "(hidden)"
                    }
                    .to_owned(),
                )
            }
            FieldValue::Text(t) => Value::String(t.clone()),
            FieldValue::Bool(b) => Value::Bool(*b),
            FieldValue::Binary(n) => Value::String(format!("({n} bytes)")),
            FieldValue::Secret(now) => {
                let changed = was
                    .and_then(|w| w.values.get(i))
                    .is_some_and(|old| !matches!(old, FieldValue::Secret(o) if o == now));
                Value::String(
                    if changed {
                        "(encrypted, changed)"
                    } else {
                        "(encrypted)"
                    }
                    .to_owned(),
                )
            }
        };
        out.insert(field.column.name.to_owned(), json);
    }
    Value::Object(out)
}

/// A log entry, as read for the pages.
#[derive(Debug, Clone, PartialEq, Eq, tern_data::Row)]
pub(crate) struct Entry {
    pub(crate) id: i64,
    pub(crate) at: i64,
    pub(crate) username: String,
    pub(crate) model: String,
    pub(crate) object_id: String,
    pub(crate) object_label: String,
    pub(crate) action: String,
    pub(crate) before: Option<String>,
    pub(crate) after: Option<String>,
}

/// The latest entries (at most 200), newest first: all, or those of a
/// model (a table), an object (its key, with the model) or a user (a
/// username) where these are not empty.
pub(crate) async fn latest(
    on: Conn<'_>,
    model: &str,
    object: &str,
    user: &str,
) -> Result<Vec<Entry>, DataError> {
    query(
        "SELECT id, at, username, model, object_id, object_label, action, before, after \
         FROM tern_admin_log WHERE ($1 = '' OR model = $1) AND ($2 = '' OR object_id = $2) \
         AND ($3 = '' OR username = $3) ORDER BY id DESC LIMIT 200",
    )
    .bind(model)
    .bind(object)
    .bind(user)
    .fetch_all(on)
    .await
}

/// The latest entries (at most `limit`) of the models `perms` lets the
/// user view: one query for a superuser or a filter on one model, else
/// one per model viewed, merged (a `LIMIT` before the rights were
/// applied could leave a user of few models with an empty log).
pub(crate) async fn visible(
    mut on: Conn<'_>,
    perms: &crate::access::Perms,
    tables: &[&'static str],
    filter: (&str, &str, &str),
    limit: usize,
) -> Result<Vec<Entry>, DataError> {
    let (model, object, user) = filter;
    let mut out = if perms.is_superuser() || !model.is_empty() {
        if !model.is_empty() && !perms.allows(model, crate::access::Action::View) {
            return Ok(Vec::new());
        }
        latest(on, model, object, user).await?
    } else {
        let mut all = Vec::new();
        for table in tables
            .iter()
            .filter(|t| perms.allows(t, crate::access::Action::View))
        {
            all.extend(latest(Conn::from(&mut on), table, object, user).await?);
        }
        all.sort_by_key(|e: &Entry| std::cmp::Reverse(e.id));
        all
    };
    out.truncate(limit);
    Ok(out)
}

/// One entry; `404` when there is none.
pub(crate) async fn one(on: Conn<'_>, id: i64) -> Result<Entry, DataError> {
    query(
        "SELECT id, at, username, model, object_id, object_label, action, before, after \
         FROM tern_admin_log WHERE id = $1",
    )
    .bind(id)
    .fetch_one(on)
    .await
}

/// The changed fields of an entry: each column whose value differs
/// (every column of an add or a delete), its before and after as text.
pub(crate) fn changes(entry: &Entry) -> Vec<(String, String, String)> {
    let parse = |t: &Option<String>| -> Map<String, Value> {
        t.as_deref()
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .and_then(|v| match v {
                Value::Object(m) => Some(m),
                _ => None,
            })
            .unwrap_or_default()
    };
    let (before, after) = (parse(&entry.before), parse(&entry.after));
    let text = |v: Option<&Value>| match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.dedup();
    let mut seen = std::collections::HashSet::new();
    names
        .into_iter()
        .filter(|n| seen.insert(n.as_str()))
        .filter(|n| {
            before.get(*n) != after.get(*n)
                || after.get(*n).is_some_and(|v| v == "(encrypted, changed)")
        })
        .map(|n| (n.clone(), text(before.get(n)), text(after.get(n))))
        .collect()
}
