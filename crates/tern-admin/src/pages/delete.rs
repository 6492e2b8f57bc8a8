//! A row's delete, after a confirmation.

use super::*;

/// The delete confirmation of `record` (with the error of a delete that
/// failed).
pub(super) async fn confirm_delete(
    u: &AdminUser,
    on: &mut Conn<'_>,
    meta: &ModelMeta,
    record: &Record,
    error: String,
) -> Result<ConfirmDeletePage, DataError> {
    let mut related = Vec::new();
    for (table, plural, sql) in &meta.referenced_by {
        if !u.perms.allows(table, Action::View) {
            continue;
        }
        let n = count_refs(on, meta, sql, &record.key).await?;
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
pub(super) async fn delete_form(i: usize, u: AdminUser, key: String) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    // What one may not view, one may not delete (the page names it).
    if let Err(d) = u
        .require(meta.table, Action::View)
        .and_then(|()| u.require(meta.table, Action::Delete))
    {
        return d.into_response();
    }
    let mut on = Conn::from(u.db.pool());
    let record = match m.get(Conn::from(&mut on), &key).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    match confirm_delete(&u, &mut on, meta, &record, String::new()).await {
        Ok(page) => render(StatusCode::OK, page),
        Err(e) => u.data_error(&e),
    }
}

/// `POST {prefix}/{model}/{key}/delete` with `confirm=yes`.
pub(super) async fn delete_save(
    i: usize,
    u: AdminUser,
    tx: Tx,
    key: String,
    req: Request,
) -> Response {
    let m = u.model(i);
    let meta = m.meta();
    // What one may not view, one may not delete (the page names it).
    if let Err(d) = u
        .require(meta.table, Action::View)
        .and_then(|()| u.require(meta.table, Action::Delete))
    {
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
    let mut on = Conn::from(&mut guard);
    // The row first: a failed statement ends the transaction on
    // PostgreSQL, and the page shown again needs it.
    let record = match m.get(Conn::from(&mut on), &key).await {
        Ok(r) => r,
        Err(e) => return u.data_error(&e),
    };
    let refused = |status: StatusCode, message: String| (status, message);
    let failed = match m.delete(Conn::from(&mut on), &u, &key).await {
        Ok(gone) => Ok(gone),
        Err(Invalid::Data(e)) if e.status() == StatusCode::CONFLICT => Err(refused(
            StatusCode::CONFLICT,
            "Other rows reference this one, and the database's foreign keys keep it.".to_owned(),
        )),
        Err(Invalid::Data(e)) => return u.data_error(&e),
        Err(Invalid::Fields(errors)) => Err(refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            errors
                .into_iter()
                .map(|(_, m)| m)
                .collect::<Vec<_>>()
                .join(" "),
        )),
    };
    let gone = match failed {
        Ok(gone) => gone,
        Err((status, message)) => {
            // The counts cannot be read in a failed transaction: the
            // page says what was refused, without them.
            let page = ConfirmDeletePage {
                chrome: chrome(
                    &u.state,
                    Some(&u.session),
                    &format!("Delete {}", record.label),
                    Some(meta),
                    Vec::new(),
                ),
                action: format!("{}/delete", row_href(&u.state, meta, &record.key)),
                label: record.label.clone(),
                related: Vec::new(),
                cancel_href: row_href(&u.state, meta, &record.key),
                error: message,
            };
            return render(status, page);
        }
    };
    if let Err(e) = audit::record(
        Conn::from(&mut on),
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
