//! The audit log's pages.

use super::*;

pub(super) fn log_row(state: &State, e: &audit::Entry) -> LogRow {
    let at = OffsetDateTime::from_unix_timestamp(e.at).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let registered = state.models.iter().find(|m| m.meta().table == e.model);
    LogRow {
        href: format!("{}/log/{}", state.prefix, e.id),
        at: tern_data::timestamp::format(at).unwrap_or_default(),
        at_text: format!(
            "{}-{:02}-{:02} {:02}:{:02} UTC",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute()
        ),
        who: e.username.clone(),
        model: registered.map_or_else(|| e.model.clone(), |m| capitalised(m.meta().plural)),
        object: e.object_label.clone(),
        object_href: match registered {
            Some(m) if e.action != "delete" => row_href(state, m.meta(), &e.object_id),
            _ => String::new(),
        },
        action: e.action.clone(),
    }
}

/// `GET {prefix}/log/`: the latest entries of the models the user may
/// view; `?model=<table>`, `&object=<key>`, `?user=<username>` narrow it.
pub(super) async fn log_list(u: AdminUser, uri: Uri) -> Response {
    let state = Arc::clone(&u.state);
    let pairs = match FormInput::parse(uri.query().unwrap_or_default().as_bytes()) {
        Ok(f) => f,
        Err(e) => return u.page_error(StatusCode::BAD_REQUEST, &e),
    };
    let model = pairs
        .get("model")
        .filter(|m| !m.is_empty())
        .map(str::to_owned);
    let (object, user) = (
        pairs.get("object").unwrap_or_default(),
        pairs.get("user").unwrap_or_default(),
    );
    let mut on = Conn::from(u.db.pool());
    let tables: Vec<&'static str> = state.models.iter().map(|m| m.meta().table).collect();
    let entries = audit::visible(
        Conn::from(&mut on),
        &u.perms,
        &tables,
        (model.as_deref().unwrap_or_default(), object, user),
        200,
    )
    .await;
    let entries = match entries {
        Ok(e) => e,
        Err(e) => return u.data_error(&e),
    };
    let mut models = vec![Choice {
        value: String::new(),
        label: "All".to_owned(),
        selected: model.is_none(),
    }];
    for m in &state.models {
        let meta = m.meta();
        if u.perms.allows(meta.table, Action::View) {
            models.push(Choice {
                value: meta.table.to_owned(),
                label: capitalised(meta.plural),
                selected: model.as_deref() == Some(meta.table),
            });
        }
    }
    render(
        StatusCode::OK,
        LogPage {
            chrome: chrome(
                &state,
                Some(&u.session),
                "Log",
                None,
                vec![Link {
                    label: "Log".to_owned(),
                    href: format!("{}/log/", state.prefix),
                }],
            ),
            log_href: format!("{}/log/", state.prefix),
            entries: entries.iter().map(|e| log_row(&state, e)).collect(),
            one: false,
            changes: Vec::new(),
            models,
        },
    )
}

/// `GET {prefix}/log/{id}`: one entry, its changed fields before and
/// after.
pub(super) async fn log_one(u: AdminUser, Path(id): Path<i64>) -> Response {
    let state = Arc::clone(&u.state);
    let mut on = Conn::from(u.db.pool());
    let entry = match audit::one(Conn::from(&mut on), id).await {
        Ok(e) => e,
        Err(e) => return u.data_error(&e),
    };
    if let Err(d) = u.require(&entry.model, Action::View) {
        return d.into_response();
    }
    let row = log_row(&state, &entry);
    render(
        StatusCode::OK,
        LogPage {
            chrome: chrome(
                &state,
                Some(&u.session),
                &format!("{} {}", row.action, row.object),
                None,
                vec![
                    Link {
                        label: "Log".to_owned(),
                        href: format!("{}/log/", state.prefix),
                    },
                    Link {
                        label: format!("Entry {id}"),
                        href: row.href.clone(),
                    },
                ],
            ),
            log_href: format!("{}/log/", state.prefix),
            entries: vec![row],
            one: true,
            changes: audit::changes(&entry)
                .into_iter()
                .map(|(field, before, after)| Change {
                    field,
                    before,
                    after,
                })
                .collect(),
            models: Vec::new(),
        },
    )
}
