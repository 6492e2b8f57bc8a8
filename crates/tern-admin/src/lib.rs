//! The admin for Tern: staff pages to list, search, add, edit and delete
//! the rows of registered models, with per-model permissions and an audit
//! log of every change.
//!
//! (Being built: see docs/plans/admin.md, issue #29.)

mod views;

use tern_data::Migrations;

/// The admin's tables (`tern_admin_groups`, `tern_admin_user_groups`,
/// `tern_admin_permissions`, `tern_admin_log`), recorded in
/// `_tern_admin_migrations`. List it after `tern_auth::MIGRATIONS`: its
/// tables reference `tern_users`.
pub static MIGRATIONS: Migrations =
    tern_data::migrations!("migrations").with_table("_tern_admin_migrations");
