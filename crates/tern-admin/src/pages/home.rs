//! The login page and the dashboard.

use super::*;

#[derive(serde::Deserialize)]
pub(super) struct LoginQuery {
    next: Option<String>,
    error: Option<String>,
}

/// `GET {prefix}/login`: the form, posting to tern-auth's
/// `/auth/login`; a logged-in staff user goes to the dashboard.
pub(super) async fn login(session: Option<Session>, uri: Uri, req: Request) -> Response {
    let Some(state) = req.extensions().get::<Arc<State>>().cloned() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let q: LoginQuery =
        serde_urlencoded::from_str(uri.query().unwrap_or_default()).unwrap_or(LoginQuery {
            next: None,
            error: None,
        });
    let p = &state.prefix;
    let next = q
        .next
        .filter(|n| {
            n.starts_with(&format!("{p}/"))
                && !n.contains("//")
                && !n.contains('\\')
                && !n.starts_with(&format!("{p}/login"))
        })
        .unwrap_or_else(|| format!("{p}/"));
    if session.as_ref().is_some_and(|s| s.user.is_staff) {
        return see_other(&next);
    }
    let error = match q.error.as_deref() {
        Some("invalid") => "The username or the password is wrong.",
        Some("throttled") => "Too many failed logins: wait a few minutes, then try again.",
        Some("busy") => "The server is busy: try again in a moment.",
        _ => "",
    };
    render(
        StatusCode::OK,
        LoginPage {
            chrome: Chrome {
                // Logged in, not staff: tern-auth's login checks the
                // session's CSRF token.
                csrf: session.as_ref().map(|s| s.csrf.clone()).unwrap_or_default(),
                ..chrome(&state, None, "Log in", None, Vec::new())
            },
            action: format!("/auth/login?next={}", encode(&next)),
            error: error.to_owned(),
        },
    )
}

/// `GET {prefix}/`: the models the user may view, their counts, the
/// latest changes.
pub(super) async fn dashboard(u: AdminUser) -> Response {
    let state = Arc::clone(&u.state);
    let mut on = Conn::from(u.db.pool());
    // Every model's count in one statement (`State::counts_sql`).
    let counts: Vec<(i64, i64)> = match query(state.counts_sql).fetch_all(&mut on).await {
        Ok(c) => c,
        Err(e) => return u.data_error(&e),
    };
    let mut models = Vec::new();
    for (i, m) in state.models.iter().enumerate() {
        let meta = m.meta();
        if !u.perms.allows(meta.table, Action::View) {
            continue;
        }
        let count = counts
            .iter()
            .find(|(n, _)| usize::try_from(*n) == Ok(i))
            .map_or(0, |(_, c)| *c);
        models.push(ModelRow {
            plural: capitalised(meta.plural),
            list_href: list_href(&state, meta),
            add_href: format!("{}add", list_href(&state, meta)),
            can_add: u.perms.allows(meta.table, Action::Add),
            count: u64::try_from(count).unwrap_or(0),
        });
    }
    let tables: Vec<&'static str> = state.models.iter().map(|m| m.meta().table).collect();
    let entries =
        match audit::visible(Conn::from(&mut on), &u.perms, &tables, ("", "", ""), 10).await {
            Ok(e) => e,
            Err(e) => return u.data_error(&e),
        };
    let recent = entries.iter().map(|e| log_row(&state, e)).collect();
    render(
        StatusCode::OK,
        DashboardPage {
            chrome: chrome(&state, Some(&u.session), &state.title, None, Vec::new()),
            models,
            recent,
            log_href: format!("{}/log/", state.prefix),
        },
    )
}
