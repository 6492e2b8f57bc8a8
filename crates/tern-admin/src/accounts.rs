//! Accounts in the admin ([`Admin::users`](crate::Admin::users)): users,
//! groups, memberships and permissions, a superuser's alone.
//!
//! Groups, memberships and permissions are plain models over the admin's
//! tables ([`Registered`]). Users are not: a user's row is written by
//! tern-auth ([`NewUser`], [`UserChange`], [`set_password`]), which keeps
//! the case-insensitive keys, checks the password rules and hashes with
//! argon2, in the request's transaction. [`Users`] reads rows with the
//! model [`UserRow`] (never the password's hash) and writes through that
//! API.
//!
//! What a superuser cannot do to their own account: delete it, or take
//! away its staff, superuser or active flag (no lockout by a slip).
//! Taking a right away from someone else ends their sessions, so a
//! session store that keeps the flags (Redis) cannot outlive the change.

use tern_auth::{end_all_sessions, set_password, AuthError, NewUser, UserChange};
use tern_data::{
    model::{Column, Kind},
    Conn, DataError, Model, Widget,
};

use crate::{
    access::AdminUser,
    audit,
    forms::FormInput,
    registry::{not_found, AdminModel, Field, Fut, Invalid, ModelMeta, Record, Registered},
    FieldErrors,
};

/// A user as the admin lists and shows one.
#[derive(Debug, Clone, Model)]
#[model(table = "tern_users", name = "user", plural = "users")]
pub(crate) struct UserRow {
    #[model(primary_key)]
    id: i64,
    #[model(searchable, sortable, listed, max_length = 150)]
    username: String,
    #[model(searchable, listed, widget = "email", max_length = 254)]
    email: Option<String>,
    #[model(listed, label = "Staff")]
    is_staff: bool,
    #[model(listed, label = "Superuser")]
    is_superuser: bool,
    #[model(listed, default, label = "Active")]
    is_active: bool,
}

/// A group of staff users, whose permissions its members have.
#[derive(Debug, Clone, Model)]
#[model(table = "tern_admin_groups", name = "group", plural = "groups")]
pub(crate) struct Group {
    #[model(primary_key)]
    id: i64,
    #[model(searchable, sortable, max_length = 150)]
    name: String,
}

/// A user's membership of a group.
#[derive(Debug, Clone, Model)]
#[model(
    table = "tern_admin_memberships",
    name = "membership",
    plural = "memberships"
)]
pub(crate) struct Membership {
    #[model(primary_key)]
    id: i64,
    #[model(references = "tern_users", label = "User")]
    user_id: i64,
    #[model(references = "tern_admin_groups", label = "Group")]
    group_id: i64,
}

/// What a user, or a group's members, may do with one model.
#[derive(Debug, Clone, Model)]
#[model(
    table = "tern_admin_permissions",
    name = "permission",
    plural = "permissions"
)]
pub(crate) struct Permission {
    #[model(primary_key)]
    id: i64,
    #[model(references = "tern_users", label = "User")]
    user_id: Option<i64>,
    #[model(references = "tern_admin_groups", label = "Group")]
    group_id: Option<i64>,
    #[model(sortable, label = "Model")]
    model: String,
    #[model(sortable, choices("view", "add", "change", "delete"))]
    action: String,
}

/// The registry entries of `Admin::users`: users, groups, memberships,
/// permissions (whose `model` choices `install` sets: every registered
/// table).
pub(crate) fn entries() -> Vec<Box<dyn AdminModel>> {
    let mut users = Registered::<UserRow>::plain();
    users.show = Some(|u| u.username.clone());
    users.meta.referenced_by.extend([
        (
            "tern_sessions",
            "sessions (in the database's store)",
            "SELECT COUNT(*) FROM tern_sessions WHERE user_id = $1",
        ),
        (
            "tern_api_tokens",
            "API tokens",
            "SELECT COUNT(*) FROM tern_api_tokens WHERE user_id = $1",
        ),
    ]);
    users.meta.extra = vec![
        password_field("password", "Password"),
        password_field("password2", "Password again"),
    ];
    let mut groups = Registered::<Group>::plain();
    groups.show = Some(|g| g.name.clone());
    let mut members = Registered::<Membership>::plain();
    members.show = Some(|m| format!("user {} in group {}", m.user_id, m.group_id));
    let mut perms = Registered::<Permission>::plain();
    perms.show = Some(|p| match (p.user_id, p.group_id) {
        (Some(u), _) => format!("{} {} (user {u})", p.action, p.model),
        (_, Some(g)) => format!("{} {} (group {g})", p.action, p.model),
        _ => format!("{} {}", p.action, p.model),
    });
    perms.validate = Some(|p| {
        if p.user_id.is_some() == p.group_id.is_some() {
            return Err(vec![(
                "user_id",
                "choose a user or a group (one of the two)".to_owned(),
            )]);
        }
        Ok(())
    });
    vec![
        Box::new(Users { inner: users }),
        Box::new(groups),
        Box::new(members),
        Box::new(perms),
    ]
}

/// The permissions' table: its `model` column's choices are the
/// registered tables.
pub(crate) const PERMISSIONS: &str = "tern_admin_permissions";

/// An input that is no column: a password, typed twice.
fn password_field(name: &'static str, label: &'static str) -> Field {
    Field {
        column: Column {
            name,
            label,
            kind: Kind::Text,
            nullable: true,
            primary_key: false,
            has_default: false,
            searchable: false,
            sortable: false,
            listed: false,
            encrypted: false,
            read_only: false,
            unique: false,
            max_length: Some(1024),
            choices: &[],
            references: None,
            widget: Widget::Password,
        },
        read_only: false,
        widget: Widget::Password,
        typed: true,
    }
}

/// The users' registry entry: reads as [`UserRow`], writes through
/// tern-auth.
struct Users {
    inner: Registered<UserRow>,
}

/// An accounts error on the user's form: the field it is about.
fn auth_invalid(e: AuthError) -> Invalid {
    let message = e.to_string();
    let about = |m: &str| {
        if m.contains("email") {
            "email"
        } else if m.contains("password") {
            "password"
        } else {
            "username"
        }
    };
    match e {
        AuthError::Password(m) => Invalid::Fields(vec![("password", m)]),
        AuthError::BadRequest(m) => Invalid::Fields(vec![(about(&m), m)]),
        AuthError::Data(d) if d.status().as_u16() == 409 => {
            let field = about(&d.to_string());
            Invalid::Fields(vec![(field, "is already taken".to_owned())])
        }
        AuthError::Data(d) => Invalid::Data(d),
        AuthError::NotFound(_) => Invalid::Data(not_found()),
        _ => Invalid::Data(DataError::Config(message)),
    }
}

/// The flags of the form (checkboxes: present is `true`).
struct Flags {
    staff: bool,
    superuser: bool,
    active: bool,
}

impl Users {
    /// The new password of the form, if one is given: both inputs the
    /// same (`required` on create).
    fn password(form: &FormInput, required: bool) -> Result<Option<&str>, FieldErrors> {
        let first = form.get("password").unwrap_or_default();
        let again = form.get("password2").unwrap_or_default();
        if first.is_empty() && again.is_empty() {
            if required {
                return Err(vec![("password", "is required".to_owned())]);
            }
            return Ok(None);
        }
        if first != again {
            return Err(vec![(
                "password2",
                "is not the same as the password".to_owned(),
            )]);
        }
        Ok(Some(first))
    }

    fn read(form: &FormInput) -> Result<(&str, &str, Flags), Invalid> {
        let mut errors = Vec::new();
        for name in ["username", "email", "password", "password2"] {
            if form.all(name).iter().any(|v| v.contains('\0')) {
                errors.push((name, "must not contain a NUL character".to_owned()));
            }
        }
        let username = form.get("username").unwrap_or_default();
        if username.trim().is_empty() {
            errors.push(("username", "is required".to_owned()));
        }
        if !errors.is_empty() {
            return Err(Invalid::Fields(errors));
        }
        let flags = Flags {
            staff: form.get("is_staff").is_some(),
            superuser: form.get("is_superuser").is_some(),
            active: form.get("is_active").is_some(),
        };
        Ok((
            username,
            form.get("email").unwrap_or_default().trim(),
            flags,
        ))
    }
}

impl AdminModel for Users {
    fn meta(&self) -> &ModelMeta {
        self.inner.meta()
    }

    fn meta_mut(&mut self) -> &mut ModelMeta {
        self.inner.meta_mut()
    }

    fn parse_list(
        &self,
        pairs: &[(String, String)],
        per_page: u32,
    ) -> Result<tern_data::model::List, String> {
        self.inner.parse_list(pairs, per_page)
    }

    fn list<'a>(
        &'a self,
        on: Conn<'a>,
        list: &'a tern_data::model::List,
    ) -> Fut<'a, Result<(Vec<Record>, u64), DataError>> {
        self.inner.list(on, list)
    }

    fn get<'a>(&'a self, on: Conn<'a>, key: &'a str) -> Fut<'a, Result<Record, DataError>> {
        self.inner.get(on, key)
    }

    fn insert<'a>(
        &'a self,
        mut on: Conn<'a>,
        u: &'a AdminUser,
        form: &'a FormInput,
    ) -> Fut<'a, Result<Record, Invalid>> {
        Box::pin(async move {
            let (username, email, flags) = Users::read(form)?;
            let password = Users::password(form, true)
                .map_err(Invalid::Fields)?
                .unwrap_or_default();
            let mut new = NewUser::new(username, password)
                .staff(flags.staff)
                .superuser(flags.superuser);
            if !email.is_empty() {
                new = new.email(email);
            }
            let user = new
                .create(&mut on, &u.passwords)
                .await
                .map_err(auth_invalid)?;
            Ok(self.inner.get(on, &user.id.to_string()).await?)
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
            let id: i64 = key.parse().map_err(|_| not_found())?;
            let base = UserRow::get(&mut on, id).await?;
            let before = self.inner.record(&base);
            let (username, email, flags) = Users::read(form)?;
            let password = Users::password(form, false).map_err(Invalid::Fields)?;
            let mut errors = Vec::new();
            if id == u.user().id {
                for (name, was, now) in [
                    ("is_staff", base.is_staff, flags.staff),
                    ("is_superuser", base.is_superuser, flags.superuser),
                    ("is_active", base.is_active, flags.active),
                ] {
                    if was && !now {
                        errors.push((
                            name,
                            "cannot be taken from your own account (ask another superuser)"
                                .to_owned(),
                        ));
                    }
                }
            }
            if email.is_empty() && base.email.is_some() {
                errors.push(("email", "cannot be removed once given".to_owned()));
            }
            if !errors.is_empty() {
                return Err(Invalid::Fields(errors));
            }
            let mut change = UserChange::new(id)
                .username(username)
                .staff(flags.staff)
                .superuser(flags.superuser)
                .active(flags.active);
            if !email.is_empty() {
                change = change.email(email);
            }
            change.apply(&mut on).await.map_err(auth_invalid)?;
            let demoted = (base.is_staff && !flags.staff)
                || (base.is_superuser && !flags.superuser)
                || (base.is_active && !flags.active);
            if let Some(password) = password {
                // Ends the user's sessions too (a password change signs
                // them out everywhere, this admin's own included).
                set_password(&mut on, &u.accounts, &u.passwords, id, password)
                    .await
                    .map_err(auth_invalid)?;
            } else if demoted {
                end_all_sessions(&mut on, &u.accounts, id)
                    .await
                    .map_err(auth_invalid)?;
            }
            let after = self.inner.get(Conn::from(&mut on), key).await?;
            if password.is_some() {
                audit::record_event(
                    Conn::from(&mut on),
                    u.user(),
                    self.meta(),
                    "password",
                    &after,
                )
                .await?;
            }
            Ok((before, after))
        })
    }

    fn delete<'a>(
        &'a self,
        mut on: Conn<'a>,
        u: &'a AdminUser,
        key: &'a str,
    ) -> Fut<'a, Result<Record, Invalid>> {
        Box::pin(async move {
            let id: i64 = key.parse().map_err(|_| not_found())?;
            if id == u.user().id {
                return Err(Invalid::Fields(vec![(
                    "",
                    "You cannot delete your own account (ask another superuser).".to_owned(),
                )]));
            }
            end_all_sessions(&mut on, &u.accounts, id)
                .await
                .map_err(auth_invalid)?;
            self.inner.delete(on, u, key).await
        })
    }

    fn act<'a>(
        &'a self,
        on: Conn<'a>,
        name: &'a str,
        keys: &'a [String],
    ) -> Fut<'a, Result<Vec<(Record, Record)>, Invalid>> {
        self.inner.act(on, name, keys)
    }

    fn parses(&self, key: &str) -> bool {
        self.inner.parses(key)
    }
}
