//! The audit log, on SQLite and PostgreSQL: every add, change and delete
//! made in the admin is an entry (who, what, the values before and
//! after) written in the change's own transaction; encrypted values
//! never reach the log, a list or any page but the edit form; the log
//! has no route that writes.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use serde_json::{json, Value};
use support::{has, lacks, location, site, BACKENDS};
use tern_data::query;

fn parsed(text: &Option<String>) -> Value {
    text.as_deref()
        .map_or(Value::Null, |t| serde_json::from_str(t).unwrap())
}

#[tokio::test]
async fn add_change_delete_are_logged_with_before_after() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let added = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", "first"), ("status", "draft"), ("secret", "one")],
            )
            .await;
        assert_eq!(added.status(), 303, "{backend:?}: {}", added.text());
        let path = location(&added).split('?').next().unwrap().to_owned();
        let id = path.rsplit('/').next().unwrap().to_owned();
        let changed = s
            .post(
                &root,
                &path,
                &[("title", "second"), ("status", "draft"), ("secret", "one")],
            )
            .await;
        assert_eq!(changed.status(), 303, "{backend:?}: {}", changed.text());
        // A failed save is no entry (its transaction rolled back).
        let failed = s
            .post(
                &root,
                &path,
                &[("title", ""), ("status", "nope"), ("secret", "one")],
            )
            .await;
        assert_eq!(failed.status(), 422, "{backend:?}: {}", failed.text());
        let deleted = s
            .post(&root, &format!("{path}/delete"), &[("confirm", "yes")])
            .await;
        assert_eq!(deleted.status(), 303, "{backend:?}: {}", deleted.text());

        let log = s.log().await;
        let actions: Vec<&str> = log.iter().map(|e| e.action.as_str()).collect();
        assert_eq!(actions, ["add", "change", "delete"], "{backend:?}: {log:?}");
        for e in &log {
            assert_eq!(
                (e.model.as_str(), e.object_id.as_str()),
                ("posts", id.as_str())
            );
            assert_eq!(e.username, "root");
        }
        // An add: after only; a delete: before only; a change: both.
        assert_eq!(log[0].before, None);
        let after = parsed(&log[0].after);
        assert_eq!(after["title"], "first");
        assert_eq!(after["status"], "draft");
        assert_eq!(after["published"], json!(false));
        assert_eq!(after["secret"], "(encrypted)");
        let (before, after) = (parsed(&log[1].before), parsed(&log[1].after));
        assert_eq!(
            (&before["title"], &after["title"]),
            (&json!("first"), &json!("second"))
        );
        // The same plaintext: not "changed".
        assert_eq!(after["secret"], "(encrypted)");
        assert_eq!(parsed(&log[2].before)["title"], "second");
        assert_eq!(log[2].after, None);

        // The log's pages: the list, one entry with what changed.
        let page = s.get(Some(&root), "/admin/log/").await;
        assert_eq!(page.status(), 200, "{}", page.text());
        let html = page.text();
        // Without `show`, a row's name is the model's and its key.
        has(&html, &format!("post {id}"));
        has(&html, ">delete</a>");
        let entry_href = html
            .split(r#"<a href="/admin/log/"#)
            .skip(1)
            .find_map(|r| {
                r.split('"')
                    .next()
                    .filter(|k| !k.is_empty() && !k.starts_with('?'))
            })
            .map(|k| format!("/admin/log/{k}"))
            .unwrap_or_else(|| panic!("no entry link in {html}"));
        let one = s.get(Some(&root), &entry_href).await;
        assert_eq!(one.status(), 200, "{entry_href}: {}", one.text());
        has(&one.text(), "<time datetime=");
        // Filtered by model.
        let filtered = s.get(Some(&root), "/admin/log/?model=posts").await;
        assert_eq!(filtered.status(), 200, "{}", filtered.text());
        // The dashboard's recent changes.
        has(
            &s.get(Some(&root), "/admin/").await.text(),
            "Recent changes",
        );
    }
}

#[tokio::test]
async fn encrypted_values_never_in_the_log_or_list() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        const PLAIN: &str = "the-launch-code-1234";
        const NEW: &str = "the-new-code-5678";
        let added = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", "rocket"), ("status", "draft"), ("secret", PLAIN)],
            )
            .await;
        assert_eq!(added.status(), 303, "{backend:?}: {}", added.text());
        let path = location(&added).split('?').next().unwrap().to_owned();
        // The edit form shows it (the user may change it).
        let form = s.get(Some(&root), &path).await.text();
        has(&form, PLAIN);
        has(&form, r#"autocomplete="off""#);
        let changed = s
            .post(
                &root,
                &path,
                &[("title", "rocket"), ("status", "draft"), ("secret", NEW)],
            )
            .await;
        assert_eq!(changed.status(), 303, "{}", changed.text());
        let log = s.log().await;
        assert_eq!(parsed(&log[1].after)["secret"], "(encrypted, changed)");
        for e in &log {
            for text in [&e.before, &e.after].into_iter().flatten() {
                assert!(
                    !text.contains("launch") && !text.contains("new-code"),
                    "{text}"
                );
            }
        }
        // No other page has it: list, search, dashboard, log, entries.
        let mut pages = vec![
            "/admin/".to_owned(),
            "/admin/posts/".to_owned(),
            "/admin/posts/?q=rocket".to_owned(),
            "/admin/log/".to_owned(),
            format!("{path}/delete"),
        ];
        let log_html = s.get(Some(&root), "/admin/log/").await.text();
        for part in log_html.split(r#"href="/admin/log/"#).skip(1) {
            let key = part.split('"').next().unwrap();
            if !key.is_empty() && !key.starts_with('?') {
                pages.push(format!("/admin/log/{key}"));
            }
        }
        for page in &pages {
            let res = s.get(Some(&root), page).await;
            assert_eq!(res.status(), 200, "{page}: {}", res.text());
            lacks(&res.text(), "launch-code");
            lacks(&res.text(), "new-code");
        }
        // A viewer's read-only page does not show it either.
        let viewer = s.staff("viewer", false).await;
        s.grant(&viewer.user, "posts", "view").await;
        let view = s.get(Some(&viewer), &path).await;
        assert_eq!(view.status(), 200, "{}", view.text());
        lacks(&view.text(), "new-code");
        // Nor can it be searched or filtered on.
        let res = s
            .get(Some(&root), "/admin/posts/?secret=the-new-code-5678")
            .await;
        assert_eq!(res.status(), 400);
    }
}

#[tokio::test]
async fn log_has_no_write_route() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        s.post(
            &root,
            "/admin/posts/add",
            &[("title", "t"), ("status", "draft"), ("secret", "s")],
        )
        .await;
        let before = s.log().await;
        assert_eq!(before.len(), 1);
        for method in ["POST", "PUT", "DELETE", "PATCH"] {
            for path in ["/admin/log/1", "/admin/log/"] {
                let res = s
                    .client
                    .request(method.parse().unwrap(), path)
                    .header("cookie", &root.cookie)
                    .header("x-csrf-token", &root.csrf)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(format!("csrf_token={}&action=delete", root.csrf))
                    .send()
                    .await;
                assert_eq!(
                    res.status(),
                    405,
                    "{backend:?} {method} {path}: {}",
                    res.text()
                );
            }
        }
        assert_eq!(s.log().await.len(), 1);
        // And the log is no model of the admin's.
        assert_eq!(
            s.get(Some(&root), "/admin/tern_admin_log/").await.status(),
            404
        );
    }
}

#[tokio::test]
async fn the_log_shows_only_models_one_may_view() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let added = s
            .post(
                &root,
                "/admin/posts/add",
                &[
                    ("title", "private-title"),
                    ("status", "draft"),
                    ("secret", "s"),
                ],
            )
            .await;
        assert_eq!(added.status(), 303, "{}", added.text());
        let id: i64 = tern_data::query("SELECT MAX(id) FROM tern_admin_log")
            .scalar(s.db.pool())
            .await
            .unwrap();
        let entry = format!("/admin/log/{id}");
        // Staff with no right on posts: neither the entry nor its row.
        let stranger = s.staff("stranger", false).await;
        for path in ["/admin/log/", "/admin/log/?model=posts", "/admin/"] {
            let res = s.get(Some(&stranger), path).await;
            assert_eq!(res.status(), 200, "{backend:?} {path}: {}", res.text());
            lacks(&res.text(), &entry);
            lacks(&res.text(), "/admin/posts/");
        }
        let one = s.get(Some(&stranger), &entry).await;
        assert!(
            matches!(one.status().as_u16(), 403 | 404),
            "{backend:?}: {} {}",
            one.status(),
            one.text()
        );
        // A viewer of posts sees it.
        let viewer = s.staff("viewer", false).await;
        s.grant(&viewer.user, "posts", "view").await;
        has(&s.get(Some(&viewer), "/admin/log/").await.text(), &entry);
        assert_eq!(s.get(Some(&viewer), &entry).await.status(), 200);
    }
}

#[tokio::test]
async fn the_log_shows_a_viewer_their_models_entries_behind_many_others() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", "seen"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        let id = location(&res)
            .trim_start_matches("/admin/posts/")
            .trim_end_matches("?saved=1")
            .to_owned();
        let label = format!("post {id}");
        // 250 newer entries of a model the viewer may not see.
        for i in 0..250 {
            query(
                "INSERT INTO tern_admin_log (at, user_id, username, model, object_id, object_label, action) \
                 VALUES (1, NULL, 'script', 'elsewhere', $1, 'x', 'add')",
            )
            .bind(i.to_string())
            .execute(s.db.pool())
            .await
            .unwrap();
        }
        let viewer = s.staff("viewer", false).await;
        s.grant(&viewer.user, "posts", "view").await;
        for path in ["/admin/log/", "/admin/"] {
            let res = s.get(Some(&viewer), path).await;
            assert_eq!(res.status(), 200);
            has(&res.text(), &label);
            lacks(&res.text(), "script");
        }
    }
}
