//! Hostile input to the admin, on SQLite and PostgreSQL: forms without
//! their CSRF token, SQL in the search, order and filters, oversized and
//! NUL-bearing fields, forged and junk keys, pages past the end, unknown
//! models and markup in values. Each is a clear 4xx (or an empty page),
//! never a 500, and nothing is written.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use support::{has, lacks, site, Session, Site, BACKENDS};
use tern::test::TestResponse;

/// `GET /admin/posts/?{q}`.
async fn list(s: &Site, root: &Session, q: &str) -> TestResponse {
    s.get(Some(root), &format!("/admin/posts/?{q}")).await
}

#[tokio::test]
async fn every_admin_form_refuses_a_missing_csrf_token() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let post = s.post_row("original", "draft", "original secret").await;
        let key = post.id.to_string();
        let fields = "title=forged&status=published&secret=forged";
        let routes = [
            ("/admin/posts/add".to_owned(), fields.to_owned()),
            (format!("/admin/posts/{key}"), fields.to_owned()),
            (
                format!("/admin/posts/{key}/delete"),
                "confirm=yes".to_owned(),
            ),
            (
                "/admin/posts/".to_owned(),
                format!("action=delete&_selected={key}"),
            ),
            (
                "/admin/posts/".to_owned(),
                format!("action=delete&confirm=yes&_selected={key}"),
            ),
        ];
        for (path, body) in &routes {
            for token in ["", "&csrf_token=", "&csrf_token=not-the-token"] {
                let res = s.post_raw(&root, path, &format!("{body}{token}")).await;
                assert_eq!(
                    res.status(),
                    403,
                    "{backend:?} {path} {token:?}: {}",
                    res.text()
                );
            }
        }
        assert_eq!(s.posts().await, 1);
        let kept = s.find(post.id).await.unwrap();
        assert_eq!(
            (kept.title.as_str(), kept.secret.0.as_str()),
            ("original", "original secret")
        );
        assert!(
            s.log().await.is_empty(),
            "{backend:?}: a refused form was logged"
        );
        // With the session's token the same edit goes through: the 403s
        // were the check, not a missing route.
        let res = s
            .post_raw(
                &root,
                &routes[1].0,
                &format!("{fields}&csrf_token={}", root.csrf),
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.find(post.id).await.unwrap().title, "forged");
    }
}

#[tokio::test]
async fn sql_in_search_sort_filters_is_harmless() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        s.post_row("visible", "draft", "s").await;
        let search = list(&s, &root, "q=%27%20OR%201%3D1%20--").await;
        assert_eq!(search.status(), 200, "{backend:?}: {}", search.text());
        has(&search.text(), "0 rows");
        lacks(&search.text(), "visible");
        let order = list(&s, &root, "order=title%3BDROP%20TABLE%20posts").await;
        assert_eq!(order.status(), 400, "{backend:?}: {}", order.text());
        has(&order.text(), "order");
        let filter = list(&s, &root, "status=x%27%20OR%20%271%27%3D%271").await;
        assert!(
            filter.status() == 400 || (filter.status() == 200 && filter.text().contains("0 rows")),
            "{backend:?}: {} {}",
            filter.status(),
            filter.text()
        );
        lacks(&filter.text(), "visible");
        for q in [
            "secret__gt=a",
            "secret=a",
            "order=secret",
            "nonsense=1",
            "title__like=x",
            "page=abc",
            "per_page=100000",
            "published=maybe",
        ] {
            let res = list(&s, &root, q).await;
            assert_eq!(res.status(), 400, "{backend:?} {q}: {}", res.text());
            // The admin's own page, escaped text, not a stack trace.
            lacks(&res.text(), "panicked");
        }
        // The table is still there, with its row.
        assert_eq!(s.posts().await, 1);
    }
}

#[tokio::test]
async fn oversized_fields_422() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let long = "é".repeat(101);
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", &long), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), r##"href="#field-title""##);
        // 100 characters (200 bytes) is the limit, not over it.
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[
                    ("title", &"é".repeat(100)),
                    ("status", "draft"),
                    ("secret", "s"),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        // A value outside the choices.
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", "t"), ("status", "deleted"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), r##"href="#field-status""##);
        // A body over 1 MiB: 413, read no further.
        let big = format!(
            "csrf_token={}&status=draft&secret=s&title={}",
            root.csrf,
            "x".repeat(2 << 20)
        );
        let res = s.post_raw(&root, "/admin/posts/add", &big).await;
        assert_eq!(res.status(), 413, "{backend:?}: {}", res.status());
        assert_eq!(s.posts().await, 1);
    }
}

#[tokio::test]
async fn nul_in_field_422() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        for title in ["a\0b", "\0", "ends with\0"] {
            let res = s
                .post(
                    &root,
                    "/admin/posts/add",
                    &[("title", title), ("status", "draft"), ("secret", "s")],
                )
                .await;
            assert_eq!(res.status(), 422, "{backend:?} {title:?}: {}", res.text());
            has(&res.text(), r##"href="#field-title""##);
        }
        // In an encrypted field too (its plaintext is text like any other).
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", "fine"), ("status", "draft"), ("secret", "a\0b")],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        // Not valid UTF-8 after decoding: a 400 or 422, not a 500.
        let res = s
            .post_raw(
                &root,
                "/admin/posts/add",
                &format!(
                    "csrf_token={}&title=%FF%FE&status=draft&secret=s",
                    root.csrf
                ),
            )
            .await;
        assert_eq!(res.status(), 400, "{backend:?}: {}", res.text());
        assert_eq!(s.posts().await, 0);
    }
}

#[tokio::test]
async fn forged_ids() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let post = s.post_row("mine", "draft", "s").await;
        for path in [
            "/admin/posts/abc",
            "/admin/posts/99999",
            "/admin/posts/1.5",
            "/admin/posts/-1",
            "/admin/posts/99999/delete",
            "/admin/posts/abc/delete",
            "/admin/posts/99999999999999999999999",
        ] {
            let res = s.get(Some(&root), path).await;
            assert_eq!(res.status(), 404, "{backend:?} {path}: {}", res.text());
        }
        let res = s
            .post(
                &root,
                "/admin/posts/99999",
                &[("title", "t"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 404, "{backend:?}: {}", res.text());
        let res = s
            .post(&root, "/admin/posts/99999/delete", &[("confirm", "yes")])
            .await;
        assert_eq!(res.status(), 404, "{backend:?}: {}", res.text());
        assert_eq!(s.posts().await, 1);
        // A user's id is only ever a post's id here: that post or none.
        let res = s
            .get(Some(&root), &format!("/admin/posts/{}", root.user.id))
            .await;
        if root.user.id == post.id {
            assert_eq!(res.status(), 200);
        } else {
            assert_eq!(res.status(), 404, "{}", res.text());
        }
        lacks(&res.text(), "password");
        // Bulk: any bad key refuses it all.
        let key = post.id.to_string();
        for bad in ["x", "", "1.5", "99999999999999999999999"] {
            let res = s
                .post(
                    &root,
                    "/admin/posts/",
                    &[
                        ("action", "delete"),
                        ("confirm", "yes"),
                        ("_selected", &key),
                        ("_selected", bad),
                    ],
                )
                .await;
            assert_eq!(res.status(), 400, "{backend:?} {bad:?}: {}", res.text());
        }
        // An unknown action, or none selected.
        for pairs in [
            vec![("action", "drop"), ("_selected", key.as_str())],
            vec![("action", "")],
        ] {
            let res = s.post(&root, "/admin/posts/", &pairs).await;
            assert!(
                matches!(res.status().as_u16(), 400 | 422),
                "{backend:?} {pairs:?}: {} {}",
                res.status(),
                res.text()
            );
        }
        assert_eq!(s.posts().await, 1);
        // More keys than a page holds: refused, nothing read or written.
        let many: Vec<String> = (1..=501).map(|n| n.to_string()).collect();
        let mut pairs = vec![("action", "delete"), ("confirm", "yes")];
        pairs.extend(many.iter().map(|k| ("_selected", k.as_str())));
        let res = s.post(&root, "/admin/posts/", &pairs).await;
        assert_eq!(res.status(), 400, "{backend:?}: {}", res.text());
        assert!(res.text().contains("at most 500"), "{}", res.text());
        assert_eq!(s.posts().await, 1);
        // The same key three times (one with spaces): one row, deleted once.
        let spaced = format!(" {key} ");
        let res = s
            .post(
                &root,
                "/admin/posts/",
                &[
                    ("action", "delete"),
                    ("confirm", "yes"),
                    ("_selected", &key),
                    ("_selected", &key),
                    ("_selected", &spaced),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.posts().await, 0);
    }
}

#[tokio::test]
async fn page_past_the_end_is_empty_200() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        for i in 0..3 {
            s.post_row(&format!("row {i}"), "draft", "s").await;
        }
        let res = s.get(Some(&root), "/admin/posts/?per_page=2&page=9").await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        let html = res.text();
        has(&html, "Page 9 of 2: no rows here");
        lacks(&html, "row 0");
        has(&html, "page=2");
        let zero = s.get(Some(&root), "/admin/posts/?page=0").await;
        assert_eq!(zero.status(), 400, "{backend:?}: {}", zero.text());
    }
}

#[tokio::test]
async fn unknown_model_404() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        for path in [
            "/admin/nothing/",
            "/admin/nothing/1",
            "/admin/tern_admin_log/",
            "/admin/tern_admin_permissions/",
            "/admin/tern_sessions/",
            "/admin/posts",
            "/admin/posts/1/delete/extra",
        ] {
            let res = s.get(Some(&root), path).await;
            assert_eq!(res.status(), 404, "{backend:?} {path}: {}", res.text());
        }
    }
}

#[tokio::test]
async fn hostile_text_is_escaped() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let evil = r#"<script>alert("x")</script>"#;
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", evil), ("status", "draft"), ("secret", evil)],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        let row = res
            .header("location")
            .unwrap()
            .split('?')
            .next()
            .unwrap()
            .to_owned();
        let search = format!("/admin/posts/?q={}", "%3Cscript%3E");
        for path in [
            "/admin/",
            "/admin/posts/",
            row.as_str(),
            search.as_str(),
            "/admin/log/",
        ] {
            let html = s.get(Some(&root), path).await.text();
            lacks(&html, "<script");
            lacks(&html, r#"alert("x")"#);
        }
        let list = s.get(Some(&root), "/admin/posts/").await.text();
        // Shown, as text (askama writes `<` as `&#60;`).
        assert!(
            list.contains("&#60;script&#62;alert(&#34;x&#34;)") || list.contains("&lt;script&gt;"),
            "{list}"
        );
        // In an error page's message too.
        let bad = s.get(Some(&root), "/admin/posts/?%3Cscript%3E=1").await;
        assert_eq!(bad.status(), 400);
        lacks(&bad.text(), "<script");
    }
}

/// Tern's own tables as a model: rows whose `change` right would be every
/// right (`is_superuser`, permission rows).
#[allow(dead_code)]
#[derive(Debug, Clone, tern_data::Model)]
#[model(table = "tern_users")]
struct OwnUsers {
    #[model(primary_key)]
    id: i64,
    username: String,
    is_superuser: bool,
}

#[test]
#[should_panic(expected = "one of Tern's own tables")]
fn terns_own_tables_cannot_be_registered() {
    let _ = tern_admin::Admin::new().model::<OwnUsers>();
}
