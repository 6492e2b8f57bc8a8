//! Who may do what: the [`AdminUser`] extractor every admin handler
//! takes, and [`Perms`], checked first in every handler.
//!
//! - No live session (cookie only: an API token never opens the admin):
//!   a `GET`/`HEAD` is sent to the login page (`303`), anything else is
//!   `403`.
//! - Not staff: `403`.
//! - A superuser may do everything (no query); another staff user what
//!   the permission rows give them or one of their groups (one query).
//!   `change` implies `view`.

use std::{collections::HashSet, sync::Arc};

use http::{header, request::Parts, StatusCode};
use tern::{IntoResponse, Problem, Response};
use tern_auth::{Accounts, Passwords, Session, User};
use tern_core::extract::{FromRequestParts, OptionalFromRequestParts};
use tern_data::{query, DataError, Database};

use crate::{pages, State};

/// What a permission row allows on a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Action {
    /// See the list and the rows.
    View,
    /// Add rows.
    Add,
    /// Change rows (and run actions).
    Change,
    /// Delete rows.
    Delete,
}

impl Action {
    fn parse(text: &str) -> Option<Action> {
        Some(match text {
            "view" => Action::View,
            "add" => Action::Add,
            "change" => Action::Change,
            "delete" => Action::Delete,
            _ => return None,
        })
    }

    fn word(self) -> &'static str {
        match self {
            Action::View => "view",
            Action::Add => "add",
            Action::Change => "change",
            Action::Delete => "delete",
        }
    }
}

/// Whether `user` may do everything in the admin.
pub(crate) fn is_superuser(user: &User) -> bool {
    user.is_superuser
}

/// A user's permissions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Perms {
    superuser: bool,
    granted: HashSet<(String, Action)>,
}

const PERMISSIONS: &str = "SELECT model, action FROM tern_admin_permissions WHERE user_id = $1 \
     UNION SELECT p.model, p.action FROM tern_admin_permissions p \
     JOIN tern_admin_memberships g ON g.group_id = p.group_id WHERE g.user_id = $1";

impl Perms {
    /// Everything.
    pub(crate) fn all() -> Perms {
        Perms {
            superuser: true,
            granted: HashSet::new(),
        }
    }

    /// The rows of `user` and of their groups.
    pub(crate) async fn load(db: &Database, user: &User) -> Result<Perms, DataError> {
        if is_superuser(user) {
            return Ok(Perms::all());
        }
        let rows: Vec<(String, String)> = query(PERMISSIONS)
            .bind(user.id)
            .fetch_all(db.pool())
            .await?;
        let granted = rows
            .into_iter()
            .filter_map(|(model, action)| Action::parse(&action).map(|a| (model, a)))
            .collect();
        Ok(Perms {
            superuser: false,
            granted,
        })
    }

    /// Whether the user is a superuser (every right, no rows).
    pub(crate) fn is_superuser(&self) -> bool {
        self.superuser
    }

    /// Whether the user may do `action` on `model` (a table). Tern's own
    /// tables (accounts, groups, permissions) are a superuser's alone:
    /// a right over them is every right (a user who may make a
    /// superuser or grant a permission has them all), so no permission
    /// row gives one.
    pub(crate) fn allows(&self, model: &str, action: Action) -> bool {
        if self.superuser {
            return true;
        }
        if model.starts_with("tern_") {
            return false;
        }
        let has = |a: Action| self.granted.contains(&(model.to_owned(), a));
        has(action) || (action == Action::View && has(Action::Change))
    }
}

/// A request refused for lack of a permission: a `403` page (or
/// problem+json for a client that does not take HTML).
#[derive(Debug)]
pub(crate) struct Denied(Box<Response>);

impl IntoResponse for Denied {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// The logged-in staff user of an admin request, their permissions, and
/// the admin.
pub(crate) struct AdminUser {
    /// The session (its user and CSRF token).
    pub(crate) session: Session,
    /// What the user may do.
    pub(crate) perms: Perms,
    /// The admin.
    pub(crate) state: Arc<State>,
    /// Whether the client takes HTML (else errors are problem+json).
    pub(crate) html: bool,
    /// tern-auth's settings, for the accounts' pages (sessions to end,
    /// passwords to hash).
    pub(crate) accounts: Arc<Accounts>,
    /// The password rules and pepper.
    pub(crate) passwords: Arc<Passwords>,
    /// The database: pages that only read use the pool (no transaction
    /// to begin and commit); writes take the request's `Tx`.
    pub(crate) db: Arc<Database>,
}

impl AdminUser {
    /// The user.
    pub(crate) fn user(&self) -> &User {
        &self.session.user
    }

    /// `Ok` when the user may do `action` on `model`, else the `403`.
    pub(crate) fn require(&self, model: &str, action: Action) -> Result<(), Denied> {
        if self.perms.allows(model, action) {
            return Ok(());
        }
        Err(Denied(Box::new(self.forbidden(&format!(
            "You may not {} {model}.",
            action.word()
        )))))
    }

    /// A `403` page with `message`.
    pub(crate) fn forbidden(&self, message: &str) -> Response {
        pages::error_page(
            &self.state,
            Some(&self.session),
            self.html,
            StatusCode::FORBIDDEN,
            message,
        )
    }
}

/// Whether the request's `Accept` takes HTML (a browser's does; none
/// at all counts as HTML: the admin is pages).
pub(crate) fn wants_html(parts: &Parts) -> bool {
    match parts
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
    {
        None => true,
        Some(accept) => accept.contains("text/html") || accept.contains("*/*"),
    }
}

fn no_state() -> Response {
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
        .with_detail("the admin's routes run without its state: use tern_admin::install")
        .into_response()
}

impl<S: Send + Sync> FromRequestParts<S> for AdminUser {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let Some(admin) = parts.extensions.get::<Arc<State>>().cloned() else {
            return Err(no_state());
        };
        let html = wants_html(parts);
        let session =
            <Session as OptionalFromRequestParts<S>>::from_request_parts(parts, state).await?;
        let Some(session) = session else {
            if parts.method == http::Method::GET || parts.method == http::Method::HEAD {
                let next = parts
                    .uri
                    .path_and_query()
                    .map_or("/", |p| p.as_str())
                    .to_owned();
                let to = format!("{}/login?next={}", admin.prefix, pages::encode(&next));
                return Err(pages::see_other(&to));
            }
            return Err(pages::error_page(
                &admin,
                None,
                html,
                StatusCode::FORBIDDEN,
                "Log in first.",
            ));
        };
        if !session.user.is_staff {
            return Err(pages::error_page(
                &admin,
                Some(&session),
                html,
                StatusCode::FORBIDDEN,
                "Only staff may use the administration.",
            ));
        }
        let tern::settings::Settings(db) =
            tern::settings::Settings::<Database>::from_request_parts(parts, state)
                .await
                .map_err(IntoResponse::into_response)?;
        let perms = Perms::load(&db, &session.user)
            .await
            .map_err(IntoResponse::into_response)?;
        let tern::settings::Settings(accounts) =
            tern::settings::Settings::<Accounts>::from_request_parts(parts, state)
                .await
                .map_err(IntoResponse::into_response)?;
        let tern::settings::Settings(passwords) =
            tern::settings::Settings::<Passwords>::from_request_parts(parts, state)
                .await
                .map_err(IntoResponse::into_response)?;
        Ok(AdminUser {
            session,
            perms,
            state: admin,
            html,
            accounts,
            passwords,
            db,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_implies_view_and_nothing_else() {
        let perms = Perms {
            superuser: false,
            granted: [("posts".to_owned(), Action::Change)].into_iter().collect(),
        };
        assert!(perms.allows("posts", Action::View));
        assert!(perms.allows("posts", Action::Change));
        assert!(!perms.allows("posts", Action::Delete));
        assert!(!perms.allows("posts", Action::Add));
        assert!(!perms.allows("notes", Action::View));
        assert!(Perms::all().allows("anything", Action::Delete));
        // No row gives a right over Tern's own tables.
        let perms = Perms {
            superuser: false,
            granted: [("tern_users".to_owned(), Action::Change)]
                .into_iter()
                .collect(),
        };
        assert!(!perms.allows("tern_users", Action::View));
        assert!(!perms.allows("tern_users", Action::Change));
        assert!(Perms::all().allows("tern_users", Action::Change));
    }
}
