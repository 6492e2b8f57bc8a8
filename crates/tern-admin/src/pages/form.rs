//! The add and edit forms, and their saves.

use super::*;

/// The rows a foreign key may name, per column: `(key, label)`s of the
/// referenced model's rows, for each column that references a
/// registered model the user may view with at most `ADMIN_FK_SELECT_MAX`
/// rows (a larger table is a plain input).
pub(super) type FkOptions = Vec<(&'static str, Vec<(String, String)>)>;

pub(super) async fn fk_options(
    u: &AdminUser,
    on: &mut Conn<'_>,
    meta: &ModelMeta,
    max: u32,
    read_only_too: bool,
) -> Result<FkOptions, DataError> {
    let mut out = Vec::new();
    for f in meta.fields.iter().filter(|f| read_only_too || !f.read_only) {
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
            .scalar(Conn::from(&mut *on))
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
        let (rows, _) = t.list(Conn::from(&mut *on), &list).await?;
        out.push((
            f.column.name,
            rows.into_iter().map(|r| (r.key, r.label)).collect(),
        ));
    }
    Ok(out)
}

/// A row's version: a digest of its values (SHA-256, the first 16
/// bytes in hex), the same in every process. An edit form carries the
/// version it showed; a save whose row has another is refused (`409`).
pub(super) fn version_of(record: &Record) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for v in &record.values {
        let (tag, text): (u8, std::borrow::Cow<'_, str>) = match v {
            FieldValue::Null => (0, "".into()),
            FieldValue::Text(t) => (1, t.as_str().into()),
            FieldValue::Bool(b) => (2, if *b { "1" } else { "0" }.into()),
            FieldValue::Secret(t) => (3, t.as_str().into()),
            FieldValue::Binary(n) => (4, n.to_string().into()),
        };
        hash.update([tag]);
        hash.update((text.len() as u64).to_le_bytes());
        hash.update(text.as_bytes());
    }
    hash.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A referenced row's name in a select: "note 5" names its key
/// already; "Ada" gets "(5)".
pub(super) fn fk_label(key: &str, label: &str) -> String {
    if label.ends_with(key) {
        label.to_owned()
    } else {
        format!("{label} ({key})")
    }
}

/// A field's control, its value from the row (`value`) or the submitted
/// form (`given`, on a re-render), and its error.
pub(super) fn field_view(
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
    } else if f.widget == Widget::Password {
        // Never filled in (an empty one keeps the value), whether the
        // column is encrypted or not.
        "password"
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
    let from_row = value.map(|v| shown(f, v, !kept)).unwrap_or_default();
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
                label: fk_label(key, label),
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
        autocomplete: if input == "password" {
            "new-password".to_owned()
        } else if c.encrypted {
            "off".to_owned()
        } else {
            String::new()
        },
        options,
        error: error.unwrap_or_default().to_owned(),
    }
}

/// The form page of `meta`: `record` for an edit, `given` and `errors`
/// for a re-render.
#[allow(clippy::too_many_arguments)]
pub(super) fn form_page(
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
    let mut fields: Vec<FieldView> = meta
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
                    .map(|v| shown(f, v, false))
                    .unwrap_or_default();
            }
            view
        })
        .collect();
    if !read_only {
        // Inputs that are no column (a new password): required on
        // create, optional on an edit (empty keeps the value).
        for f in &meta.extra {
            let error = errors
                .iter()
                .find(|(n, _)| *n == f.column.name)
                .map(|(_, m)| m.as_str());
            let mut view = field_view(f, None, given, error, creating, None);
            view.required = creating;
            if !creating {
                view.label = format!("New {} (empty: unchanged)", f.column.label.to_lowercase());
            }
            fields.push(view);
        }
    }
    let links = errors
        .iter()
        .map(|(name, message)| {
            let shown = fields
                .iter()
                .any(|f| f.name == *name && f.input != "readonly");
            Link {
                label: match meta
                    .fields
                    .iter()
                    .chain(&meta.extra)
                    .find(|f| f.column.name == *name)
                {
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
        version: match record {
            Some(r) if !read_only => version_of(r),
            _ => String::new(),
        },
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
pub(super) async fn add_form(
    i: usize,
    u: AdminUser,
    Settings(settings): Settings<AdminSettings>,
) -> Response {
    let meta = u.model(i).meta();
    if let Err(d) = u.require(meta.table, Action::Add) {
        return d.into_response();
    }
    let mut on = Conn::from(u.db.pool());
    let fk = match fk_options(&u, &mut on, meta, settings.fk_select_max(), false).await {
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
pub(super) fn refused(
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
            let errors = vec![("", refusal(&e))];
            render(
                e.status(),
                form_page(u, meta, record, Some(form), &errors, false, "", fk),
            )
        }
        Invalid::Data(e) => u.data_error(&e),
    }
}

/// `POST {prefix}/{model}/add`.
pub(super) async fn add_save(
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
    let mut on = Conn::from(&mut guard);
    // For a form shown again (a failed statement may end the
    // transaction on PostgreSQL: read them first).
    let fk = match fk_options(&u, &mut on, meta, settings.fk_select_max(), false).await {
        Ok(o) => o,
        Err(e) => return u.data_error(&e),
    };
    let added = match m.insert(Conn::from(&mut on), &u, &form).await {
        Ok(r) => r,
        Err(e) => return refused(&u, meta, None, &form, &fk, e),
    };
    if let Err(e) = audit::record(
        Conn::from(&mut on),
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
pub(super) async fn edit_form(
    i: usize,
    u: AdminUser,
    Settings(settings): Settings<AdminSettings>,
    key: String,
    uri: Uri,
) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    if let Err(d) = u.require(meta.table, Action::View) {
        return d.into_response();
    }
    let mut on = Conn::from(u.db.pool());
    let record = match m.get(Conn::from(&mut on), &key).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    let read_only = !u.perms.allows(meta.table, Action::Change);
    let fk = if read_only {
        Vec::new()
    } else {
        match fk_options(&u, &mut on, meta, settings.fk_select_max(), false).await {
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
pub(super) async fn edit_save(
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
    let mut on = Conn::from(&mut guard);
    // The row as it is and the options, for a form shown again (a failed
    // statement may end the transaction on PostgreSQL: read them first).
    let record = match m.get(Conn::from(&mut on), &key).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    let fk = match fk_options(&u, &mut on, meta, settings.fk_select_max(), false).await {
        Ok(o) => o,
        Err(e) => return u.data_error(&e),
    };
    // Changed by someone else since this form was opened: the row as it
    // is now, to review, and nothing written. (A form without
    // `_version`, a script's, is not checked.)
    if form
        .get("_version")
        .is_some_and(|v| v != version_of(&record))
    {
        let errors = vec![(
            "",
            "Someone else changed this row after you opened it. It is shown as it is now: make your change again."
                .to_owned(),
        )];
        return render(
            StatusCode::CONFLICT,
            form_page(&u, meta, Some(&record), None, &errors, false, "", &fk),
        );
    }
    let (before, after) = match m.update(Conn::from(&mut on), &u, &key, &form).await {
        Ok(r) => r,
        Err(e) => return refused(&u, meta, Some(&record), &form, &fk, e),
    };
    if let Err(e) = audit::record(
        Conn::from(&mut on),
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
