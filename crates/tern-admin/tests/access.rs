//! Who may do what, on SQLite and PostgreSQL: anonymous visitors go to
//! the login page, non-staff and API tokens are refused, a staff user
//! gets exactly the rights of their permission rows (their own or their
//! groups'), forged requests for a right not held are `403` with nothing
//! changed, and a superuser may do everything.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use support::{has, lacks, location, site, Site, BACKENDS};

/// A post and its edit form's fields, changed.
fn changed() -> [(&'static str, &'static str); 3] {
    [
        ("title", "forged"),
        ("status", "published"),
        ("secret", "forged secret"),
    ]
}

async fn unchanged(s: &Site, id: i64) {
    let post = s.find(id).await.unwrap();
    assert_eq!(post.title, "original", "the row changed");
    assert_eq!(post.secret.0, "original secret");
}

#[tokio::test]
async fn anonymous_get_redirects_to_login() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let post = s.post_row("original", "draft", "original secret").await;
        for path in [
            "/admin/".to_owned(),
            "/admin/posts/".to_owned(),
            "/admin/posts/add".to_owned(),
            format!("/admin/posts/{}", post.id),
            format!("/admin/posts/{}/delete", post.id),
            "/admin/log/".to_owned(),
        ] {
            let res = s.get(None, &path).await;
            assert_eq!(res.status(), 303, "{backend:?} {path}: {}", res.text());
            assert!(
                location(&res).starts_with("/admin/login?next="),
                "{path}: {}",
                location(&res)
            );
            lacks(&res.text(), "original secret");
        }
        // A POST without a session is refused, not redirected.
        let res = s
            .client
            .post(&format!("/admin/posts/{}", post.id))
            .header("accept", support::BROWSER)
            .form(&changed())
            .send()
            .await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        unchanged(&s, post.id).await;
    }
}

#[tokio::test]
async fn non_staff_is_403() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        s.user("pat", false, false).await;
        let pat = s.login("pat").await;
        let post = s.post_row("original", "draft", "original secret").await;
        for path in [
            "/admin/".to_owned(),
            "/admin/posts/".to_owned(),
            format!("/admin/posts/{}", post.id),
        ] {
            let res = s.get(Some(&pat), &path).await;
            assert_eq!(res.status(), 403, "{backend:?} {path}: {}", res.text());
            lacks(&res.text(), "original");
        }
        // Even a permission row does not make a non-staff user staff.
        s.grant(&pat.user, "posts", "change").await;
        assert_eq!(s.get(Some(&pat), "/admin/posts/").await.status(), 403);
        let res = s
            .post(&pat, &format!("/admin/posts/{}", post.id), &changed())
            .await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        unchanged(&s, post.id).await;
    }
}

#[tokio::test]
async fn api_token_does_not_open_the_admin() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.user("root", true, true).await;
        let token = s.token(&root).await;
        let post = s.post_row("original", "draft", "original secret").await;
        let res = s
            .client
            .get("/admin/posts/")
            .header("accept", support::BROWSER)
            .header("authorization", &format!("Bearer {token}"))
            .send()
            .await;
        assert_ne!(res.status(), 200, "{backend:?}: a token opened the admin");
        lacks(&res.text(), "original");
        // A token needs no CSRF token elsewhere: here it still gets nothing.
        let res = s
            .client
            .post(&format!("/admin/posts/{}", post.id))
            .header("authorization", &format!("Bearer {token}"))
            .form(&changed())
            .send()
            .await;
        assert!(
            matches!(res.status().as_u16(), 401 | 403),
            "{backend:?}: {} {}",
            res.status(),
            res.text()
        );
        unchanged(&s, post.id).await;
    }
}

#[tokio::test]
async fn view_only_sees_no_form_and_no_buttons() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let viewer = s.staff("viewer", false).await;
        s.grant(&viewer.user, "posts", "view").await;
        let post = s.post_row("original", "draft", "original secret").await;
        let dash = s.get(Some(&viewer), "/admin/").await;
        assert_eq!(dash.status(), 200, "{}", dash.text());
        has(&dash.text(), r#"href="/admin/posts/""#);
        lacks(&dash.text(), "/admin/posts/add");
        let list = s.get(Some(&viewer), "/admin/posts/").await;
        assert_eq!(list.status(), 200, "{backend:?}: {}", list.text());
        let html = list.text();
        has(&html, "original");
        lacks(&html, r#"<form method="post" action="/admin/posts/""#);
        lacks(&html, r#"name="_selected""#);
        lacks(&html, "/admin/posts/add");
        lacks(&html, "/delete");
        lacks(&html, "original secret");
        let detail = s
            .get(Some(&viewer), &format!("/admin/posts/{}", post.id))
            .await;
        assert_eq!(detail.status(), 200, "{backend:?}: {}", detail.text());
        let html = detail.text();
        has(&html, "original");
        // Only the logout form; no field, no delete link, no secret.
        assert_eq!(html.matches("<form").count(), 1, "{html}");
        has(&html, r#"class="logout""#);
        lacks(&html, "<input type=\"text\"");
        lacks(&html, "/delete");
        lacks(&html, "original secret");
        // The add and delete pages are not theirs.
        assert_eq!(s.get(Some(&viewer), "/admin/posts/add").await.status(), 403);
        let del = format!("/admin/posts/{}/delete", post.id);
        assert_eq!(s.get(Some(&viewer), &del).await.status(), 403);
    }
}

#[tokio::test]
async fn forged_post_without_change_is_403() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let viewer = s.staff("viewer", false).await;
        s.grant(&viewer.user, "posts", "view").await;
        let post = s.post_row("original", "draft", "original secret").await;
        let res = s
            .post(&viewer, &format!("/admin/posts/{}", post.id), &changed())
            .await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        unchanged(&s, post.id).await;
        let res = s.post(&viewer, "/admin/posts/add", &changed()).await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        assert_eq!(s.posts().await, 1);
        assert!(
            s.log().await.is_empty(),
            "a refused request was logged as a change"
        );
        // With no right at all, not even the list; a right on another
        // table is no right on this one.
        let stranger = s.staff("stranger", false).await;
        s.grant(&stranger.user, "tern_users", "change").await;
        s.grant(&stranger.user, "Posts", "change").await;
        assert_eq!(s.get(Some(&stranger), "/admin/posts/").await.status(), 403);
        let res = s
            .post(&stranger, &format!("/admin/posts/{}", post.id), &changed())
            .await;
        assert_eq!(res.status(), 403);
        unchanged(&s, post.id).await;
    }
}

#[tokio::test]
async fn forged_delete_without_delete_is_403() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let editor = s.staff("editor", false).await;
        s.grant(&editor.user, "posts", "change").await;
        let post = s.post_row("original", "draft", "original secret").await;
        // `change` implies `view`: the list opens, with no delete.
        let list = s.get(Some(&editor), "/admin/posts/").await;
        assert_eq!(list.status(), 200, "{backend:?}: {}", list.text());
        lacks(&list.text(), r#"<option value="delete">"#);
        let edit = s
            .get(Some(&editor), &format!("/admin/posts/{}", post.id))
            .await;
        assert_eq!(edit.status(), 200);
        lacks(&edit.text(), "/delete");
        let key = post.id.to_string();
        let res = s
            .post(
                &editor,
                &format!("/admin/posts/{key}/delete"),
                &[("confirm", "yes")],
            )
            .await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        let res = s
            .post(
                &editor,
                "/admin/posts/",
                &[
                    ("action", "delete"),
                    ("confirm", "yes"),
                    ("_selected", &key),
                ],
            )
            .await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        assert!(
            s.find(post.id).await.is_some(),
            "{backend:?}: deleted without the right"
        );
        // The change itself is theirs.
        let res = s
            .post(
                &editor,
                &format!("/admin/posts/{key}"),
                &[("title", "edited"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.find(post.id).await.unwrap().title, "edited");
    }
}

#[tokio::test]
async fn group_permission_grants() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let member = s.staff("member", false).await;
        s.post_row("original", "draft", "original secret").await;
        assert_eq!(s.get(Some(&member), "/admin/posts/").await.status(), 403);
        s.grant_by_group(&member.user, "posts", "add").await;
        // Rights are read on every request: no new login needed.
        let add = s.get(Some(&member), "/admin/posts/add").await;
        assert_eq!(add.status(), 200, "{backend:?}: {}", add.text());
        let res = s
            .post(
                &member,
                "/admin/posts/add",
                &[
                    ("title", "by a group"),
                    ("status", "draft"),
                    ("secret", "s"),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.posts().await, 2);
        // `add` alone is not `view`.
        assert_eq!(s.get(Some(&member), "/admin/posts/").await.status(), 403);
    }
}

#[tokio::test]
async fn superuser_does_all() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let list = s.get(Some(&root), "/admin/posts/").await;
        assert_eq!(list.status(), 200);
        has(&list.text(), "/admin/posts/add");
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", "mine"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        let id: i64 = location(&res)
            .split('?')
            .next()
            .and_then(|p| p.rsplit('/').next())
            .and_then(|k| k.parse().ok())
            .unwrap();
        let res = s
            .post(
                &root,
                &format!("/admin/posts/{id}"),
                &[("title", "changed"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 303, "{}", res.text());
        let res = s
            .post(
                &root,
                &format!("/admin/posts/{id}/delete"),
                &[("confirm", "yes")],
            )
            .await;
        assert_eq!(res.status(), 303, "{}", res.text());
        assert_eq!(s.posts().await, 0);
        let log = s.get(Some(&root), "/admin/log/").await;
        assert_eq!(log.status(), 200, "{}", log.text());
        has(&log.text(), "<time datetime=");
        // A staff user without superuser has none of it.
        let staff = s.staff("plain", false).await;
        assert_eq!(s.get(Some(&staff), "/admin/posts/add").await.status(), 403);
        lacks(
            &s.get(Some(&staff), "/admin/").await.text(),
            "/admin/posts/",
        );
    }
}

#[tokio::test]
async fn delete_needs_view_too() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let post = s.post_row("original", "draft", "original secret").await;
        let deleter = s.staff("deleter", false).await;
        s.grant(&deleter.user, "posts", "delete").await;
        let page = format!("/admin/posts/{}/delete", post.id);
        assert_eq!(s.get(Some(&deleter), &page).await.status(), 403);
        let res = s.post(&deleter, &page, &[("confirm", "yes")]).await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        assert!(s.find(post.id).await.is_some());
        s.grant(&deleter.user, "posts", "view").await;
        assert_eq!(s.get(Some(&deleter), &page).await.status(), 200);
    }
}

#[tokio::test]
async fn the_login_page_of_a_logged_in_non_staff_user_carries_its_csrf_token() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        s.user("reader", false, false).await;
        let reader = s.login("reader").await;
        let res = s.get(Some(&reader), "/admin/login").await;
        assert_eq!(res.status(), 200);
        has(
            &res.text(),
            &format!(r#"name="csrf_token" value="{}""#, reader.csrf),
        );
        // So the form's POST passes tern-auth's CSRF check (and is then
        // refused as the wrong password, not as a forgery).
        let res = s
            .post(
                &reader,
                "/auth/login?next=/admin/",
                &[("username", "reader"), ("password", "wrong password")],
            )
            .await;
        assert_ne!(res.status(), 403, "{backend:?}: {}", res.text());
    }
}
