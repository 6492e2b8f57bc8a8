//! The accounts' pages (`Admin::users`), on SQLite and PostgreSQL: a
//! superuser makes a staff user (password typed twice, checked by
//! tern-auth's rules), gives them a right on the permissions page and
//! through a group, and the user has it at once; no one but a superuser
//! reaches these pages, whatever rows say; no one deletes their own
//! account or takes their own rights; a password set here works and is
//! never logged; a demotion ends the user's sessions.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use support::{admin, has, lacks, location, site_with, Site, BACKENDS, PASSWORD};
use tern_data::query;

async fn accounts_site(backend: tern_data::Backend) -> Option<Site> {
    site_with(backend, admin().users()).await
}

async fn id_of(s: &Site, name: &str) -> i64 {
    tern_auth::find_user(s.db.pool(), name)
        .await
        .unwrap()
        .unwrap()
        .id
}

#[tokio::test]
async fn a_superuser_makes_a_staff_user_and_grants_a_right() {
    for backend in BACKENDS {
        let Some(s) = accounts_site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        // The dashboard lists the accounts.
        let res = s.get(Some(&root), "/admin/").await;
        assert_eq!(res.status(), 200);
        for plural in ["Users", "Groups", "Memberships", "Permissions"] {
            has(&res.text(), plural);
        }
        // The form: two password inputs, never filled in.
        let res = s.get(Some(&root), "/admin/tern_users/add").await;
        assert_eq!(res.status(), 200);
        let html = res.text();
        support::check_markup("/admin/tern_users/add", &html);
        has(
            &html,
            r#"type="password" id="field-password" name="password""#,
        );
        has(&html, r#"name="password2""#);
        has(&html, r#"autocomplete="new-password""#);
        // Passwords that differ, then one that breaks the rules.
        let res = s
            .post(
                &root,
                "/admin/tern_users/add",
                &[
                    ("username", "viewer"),
                    ("email", "viewer@example.com"),
                    ("is_staff", "on"),
                    ("password", "a long password 1"),
                    ("password2", "another one"),
                ],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), "is not the same as the password");
        lacks(&res.text(), "a long password 1");
        let res = s
            .post(
                &root,
                "/admin/tern_users/add",
                &[
                    ("username", "viewer"),
                    ("is_staff", "on"),
                    ("password", "short"),
                    ("password2", "short"),
                ],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), r##"href="#field-password""##);
        // A taken name (another case) is that field's error.
        let res = s
            .post(
                &root,
                "/admin/tern_users/add",
                &[
                    ("username", "ROOT"),
                    ("password", PASSWORD),
                    ("password2", PASSWORD),
                ],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), r##"href="#field-username""##);
        // Made.
        let res = s
            .post(
                &root,
                "/admin/tern_users/add",
                &[
                    ("username", "viewer"),
                    ("email", "viewer@example.com"),
                    ("is_staff", "on"),
                    ("password", PASSWORD),
                    ("password2", PASSWORD),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        let viewer_id = id_of(&s, "viewer").await;
        assert_eq!(
            location(&res),
            format!("/admin/tern_users/{viewer_id}?saved=1")
        );
        // Logs in with it; staff, but no right yet.
        let viewer = s.login("viewer").await;
        assert!(viewer.user.is_staff && !viewer.user.is_superuser);
        assert_eq!(s.get(Some(&viewer), "/admin/posts/").await.status(), 403);
        // The permissions page offers the users and the registered models.
        let res = s
            .get(Some(&root), "/admin/tern_admin_permissions/add")
            .await;
        let html = res.text();
        has(
            &html,
            &format!(r#"<option value="{viewer_id}">viewer ({viewer_id})</option>"#),
        );
        has(&html, r#"<option value="posts">posts</option>"#);
        // Neither a user nor a group; a model that is not registered.
        let res = s
            .post(
                &root,
                "/admin/tern_admin_permissions/add",
                &[("model", "posts"), ("action", "view")],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), "choose a user or a group");
        let uid = viewer_id.to_string();
        let res = s
            .post(
                &root,
                "/admin/tern_admin_permissions/add",
                &[("user_id", &uid), ("model", "secrets"), ("action", "view")],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), "is not one of the choices");
        let res = s
            .post(
                &root,
                "/admin/tern_admin_permissions/add",
                &[("user_id", &uid), ("model", "posts"), ("action", "view")],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        // At once, in the same session.
        let res = s.get(Some(&viewer), "/admin/posts/").await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        assert_eq!(s.get(Some(&viewer), "/admin/posts/add").await.status(), 403);
        // A group gives `add` through a membership.
        let res = s
            .post(
                &root,
                "/admin/tern_admin_groups/add",
                &[("name", "editors")],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        let group: i64 = query("SELECT id FROM tern_admin_groups WHERE name = 'editors'")
            .scalar(s.db.pool())
            .await
            .unwrap();
        let gid = group.to_string();
        let res = s
            .post(
                &root,
                "/admin/tern_admin_permissions/add",
                &[("group_id", &gid), ("model", "posts"), ("action", "add")],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        let res = s
            .post(
                &root,
                "/admin/tern_admin_memberships/add",
                &[("user_id", &uid), ("group_id", &gid)],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.get(Some(&viewer), "/admin/posts/add").await.status(), 200);
        // The log has each change, and no password.
        let log = s.log().await;
        assert!(log.len() >= 5, "{log:?}");
        let all: String = query("SELECT COALESCE(after, '') FROM tern_admin_log")
            .fetch_all::<(String,)>(s.db.pool())
            .await
            .unwrap()
            .into_iter()
            .map(|(a,)| a)
            .collect();
        lacks(&all, PASSWORD);
        lacks(&all, "password_hash");
    }
}

#[tokio::test]
async fn only_a_superuser_reaches_the_accounts_whatever_rows_say() {
    for backend in BACKENDS {
        let Some(s) = accounts_site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let staff = s.staff("staff", false).await;
        // Rows naming the accounts' tables give nothing.
        for model in ["tern_users", "tern_admin_permissions", "tern_admin_groups"] {
            for action in ["view", "add", "change"] {
                query("INSERT INTO tern_admin_permissions (user_id, model, action) VALUES ($1, $2, $3)")
                    .bind(staff.user.id)
                    .bind(model)
                    .bind(action)
                    .execute(s.db.pool())
                    .await
                    .unwrap();
            }
        }
        let res = s.get(Some(&staff), "/admin/").await;
        assert_eq!(res.status(), 200);
        lacks(&res.text(), "/admin/tern_users/");
        for path in [
            "/admin/tern_users/".to_owned(),
            "/admin/tern_users/add".to_owned(),
            format!("/admin/tern_users/{}", root.user.id),
            "/admin/tern_admin_permissions/add".to_owned(),
        ] {
            assert_eq!(s.get(Some(&staff), &path).await.status(), 403, "{path}");
        }
        // A forged grant of every right, and a forged promotion.
        let sid = staff.user.id.to_string();
        let res = s
            .post(
                &staff,
                "/admin/tern_admin_permissions/add",
                &[("user_id", &sid), ("model", "posts"), ("action", "delete")],
            )
            .await;
        assert_eq!(res.status(), 403);
        let res = s
            .post(
                &staff,
                &format!("/admin/tern_users/{sid}"),
                &[
                    ("username", "staff"),
                    ("is_staff", "on"),
                    ("is_superuser", "on"),
                    ("is_active", "on"),
                ],
            )
            .await;
        assert_eq!(res.status(), 403);
        let me = tern_auth::find_user(s.db.pool(), "staff")
            .await
            .unwrap()
            .unwrap();
        assert!(!me.is_superuser);
        // The superuser reaches them all.
        assert_eq!(s.get(Some(&root), "/admin/tern_users/").await.status(), 200);
    }
}

#[tokio::test]
async fn no_one_deletes_or_demotes_their_own_account() {
    for backend in BACKENDS {
        let Some(s) = accounts_site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let me = format!("/admin/tern_users/{}", root.user.id);
        let res = s
            .post(&root, &format!("{me}/delete"), &[("confirm", "yes")])
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), "You cannot delete your own account");
        // The bulk delete too.
        let id = root.user.id.to_string();
        let res = s
            .post(
                &root,
                "/admin/tern_users/",
                &[("action", "delete"), ("_selected", &id), ("confirm", "yes")],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        // Taking away its own superuser, staff or active flag.
        let res = s
            .post(
                &root,
                &me,
                &[
                    ("username", "root"),
                    ("is_staff", "on"),
                    ("is_active", "on"),
                ],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), "cannot be taken from your own account");
        let still = tern_auth::find_user(s.db.pool(), "root")
            .await
            .unwrap()
            .unwrap();
        assert!(still.is_superuser && still.is_staff);
        assert_eq!(s.get(Some(&root), "/admin/").await.status(), 200);
    }
}

#[tokio::test]
async fn a_password_set_here_works_and_a_demotion_ends_the_sessions() {
    for backend in BACKENDS {
        let Some(s) = accounts_site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let other = s.staff("other", false).await;
        let page = format!("/admin/tern_users/{}", other.user.id);
        // The edit form leaves the password empty, and so keeps it.
        let res = s.get(Some(&root), &page).await;
        has(&res.text(), "New password (empty: unchanged)");
        let res = s
            .post(
                &root,
                &page,
                &[
                    ("username", "Other"),
                    ("email", "other@example.com"),
                    ("is_staff", "on"),
                    ("is_active", "on"),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        // Renamed; the session still works (no right was taken).
        assert_eq!(s.get(Some(&other), "/admin/").await.status(), 200);
        // A new password: logs in with it, the old sessions end.
        let res = s
            .post(
                &root,
                &page,
                &[
                    ("username", "Other"),
                    ("email", "other@example.com"),
                    ("is_staff", "on"),
                    ("is_active", "on"),
                    ("password", "a brand new password"),
                    ("password2", "a brand new password"),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.get(Some(&other), "/admin/").await.status(), 303);
        let res = s
            .client
            .post("/auth/login")
            .json(&serde_json::json!({"username": "other", "password": "a brand new password"}))
            .send()
            .await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        let other = support::Session {
            cookie: res
                .header("set-cookie")
                .and_then(|c| c.split(';').next())
                .unwrap()
                .to_owned(),
            csrf: res.json::<serde_json::Value>()["csrf_token"]
                .as_str()
                .unwrap()
                .to_owned(),
            user: other.user,
        };
        assert_eq!(s.get(Some(&other), "/admin/").await.status(), 200);
        let log: Vec<(String, Option<String>)> = query(
            "SELECT action, after FROM tern_admin_log WHERE model = 'tern_users' ORDER BY id",
        )
        .fetch_all(s.db.pool())
        .await
        .unwrap();
        assert!(
            log.iter()
                .any(|(a, after)| a == "password" && after.is_none()),
            "{log:?}"
        );
        for (_, after) in &log {
            lacks(after.as_deref().unwrap_or_default(), "a brand new password");
        }
        // Taking staff away ends the sessions at once.
        let res = s
            .post(
                &root,
                &page,
                &[
                    ("username", "Other"),
                    ("email", "other@example.com"),
                    ("is_active", "on"),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.get(Some(&other), "/admin/").await.status(), 303);
        // Deleted: its sessions and rights go with it; the confirmation
        // says so.
        let res = s.get(Some(&root), &format!("{page}/delete")).await;
        assert_eq!(res.status(), 200);
        let res = s
            .post(&root, &format!("{page}/delete"), &[("confirm", "yes")])
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert!(tern_auth::find_user(s.db.pool(), "other")
            .await
            .unwrap()
            .is_none());
    }
}
