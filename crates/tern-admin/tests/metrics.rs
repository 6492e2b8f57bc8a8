//! The admin's changes in the app's metrics, on SQLite and PostgreSQL:
//! each entry of the audit log counted by model and action (`add`,
//! `change`, `delete`, `action`), a save that fails counted nowhere.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use support::{location, site_configured, Post, Site, BACKENDS};
use tern_admin::Admin;

fn publish(posts: Vec<Post>) -> Result<Vec<Post>, String> {
    Ok(posts
        .into_iter()
        .map(|mut p| {
            p.published = true;
            p.status = "published".to_owned();
            p
        })
        .collect())
}

async fn changes(s: &Site, action: &str) -> f64 {
    let res = s.get(None, "/metrics").await;
    assert_eq!(res.status(), 200, "{}", res.text());
    let text = res.text();
    let series = format!(r#"tern_admin_changes_total{{model="posts",action="{action}"}}"#);
    text.lines()
        .find_map(|l| {
            let (s, v) = l.rsplit_once(' ')?;
            (s == series).then(|| v.parse().unwrap())
        })
        .unwrap_or_else(|| panic!("no `{series}` in:\n{text}"))
}

#[tokio::test]
async fn changes_are_counted_by_model_and_action() {
    for backend in BACKENDS {
        let admin = Admin::new().model_with::<Post>(|m| m.action("publish", "Publish", publish));
        let Some(s) = site_configured(backend, admin, &[("TERN_METRICS", "on")]).await else {
            continue;
        };
        // The registered model's series are there from the start.
        for action in ["add", "change", "delete", "action"] {
            assert_eq!(changes(&s, action).await, 0.0, "{backend:?} {action}");
        }
        let root = s.staff("root", true).await;
        let row = [("title", "first"), ("status", "draft"), ("secret", "one")];
        let added = s.post(&root, "/admin/posts/add", &row).await;
        assert_eq!(added.status(), 303, "{backend:?}: {}", added.text());
        let path = location(&added).split('?').next().unwrap().to_owned();
        let id = path.rsplit('/').next().unwrap().to_owned();
        let row = [("title", "second"), ("status", "draft"), ("secret", "one")];
        assert_eq!(s.post(&root, &path, &row).await.status(), 303);
        // Refused: rolled back, logged nowhere, counted nowhere.
        let bad = [("title", ""), ("status", "nope"), ("secret", "one")];
        assert_eq!(s.post(&root, &path, &bad).await.status(), 422);
        let acted = s
            .post(
                &root,
                "/admin/posts/",
                &[("action", "publish"), ("_selected", &id)],
            )
            .await;
        assert_eq!(acted.status(), 303, "{backend:?}: {}", acted.text());
        let deleted = s
            .post(&root, &format!("{path}/delete"), &[("confirm", "yes")])
            .await;
        assert_eq!(deleted.status(), 303, "{backend:?}: {}", deleted.text());

        for action in ["add", "change", "delete", "action"] {
            assert_eq!(changes(&s, action).await, 1.0, "{backend:?} {action}");
        }
        assert_eq!(s.log().await.len(), 4, "{backend:?}");
    }
}
