//! The admin's pages as a superuser sees them, on SQLite and PostgreSQL:
//! the dashboard, a list (pages, search, order, filters), adding with
//! errors then fixed, editing, deleting one row and several, and the
//! login page's way back.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use support::{has, lacks, location, site, site_with, Comment, Post, Session, Site, BACKENDS};
use tern_admin::Admin;

/// The id at the end of a `303`'s `Location` (`/admin/posts/7?saved=1`).
fn saved_id(location: &str) -> i64 {
    let path = location.split('?').next().unwrap();
    path.rsplit('/').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn dashboard_lists_models_and_counts() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let admin = s.staff("root", true).await;
        for i in 0..3 {
            s.post_row(&format!("post {i}"), "draft", "s").await;
        }
        let page = s.get(Some(&admin), "/admin/").await;
        assert_eq!(page.status(), 200, "{backend:?}: {}", page.text());
        assert_eq!(
            page.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        let html = page.text();
        has(&html, r#"<a href="/admin/posts/">"#);
        has(&html, r#"<td class="number">3</td>"#);
        has(&html, r#"<a href="/admin/posts/add">"#);
        has(&html, "Logged in as <strong>root</strong>");
        // The stylesheet: hashed, embedded, cached for long.
        let css = html
            .split(r#"<link rel="stylesheet" href=""#)
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .to_owned();
        assert!(css.starts_with("/admin/static/admin."), "{css}");
        let sheet = s.get(None, &css).await;
        assert_eq!(sheet.status(), 200, "{css}");
        assert!(sheet.text().contains(":focus-visible"));
    }
}

/// A list page's HTML (a `200`).
async fn list(s: &Site, admin: &Session, q: &str) -> String {
    let res = s.get(Some(admin), &format!("/admin/posts/{q}")).await;
    assert_eq!(res.status(), 200, "{q}: {}", res.text());
    res.text()
}

#[tokio::test]
async fn list_paginates_searches_sorts_filters() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let admin = s.staff("root", true).await;
        for (title, status) in [
            ("alpha one", "draft"),
            ("alpha two", "published"),
            ("alpha three", "draft"),
            ("beta one", "published"),
            ("beta two", "draft"),
        ] {
            s.post_row(title, status, "s").await;
        }
        let all = list(&s, &admin, "").await;
        has(&all, "5 rows");
        for title in ["alpha one", "beta two"] {
            has(&all, title);
        }
        // Pages of two: three pages, the third has one row.
        let first = list(&s, &admin, "?per_page=2").await;
        has(&first, "Page 1 of 3");
        has(&first, r#"aria-current="page""#);
        let third = list(&s, &admin, "?per_page=2&page=3&order=title").await;
        has(&third, "Page 3 of 3");
        has(&third, "beta two");
        lacks(&third, "alpha one");
        // The search.
        let beta = list(&s, &admin, "?q=beta").await;
        has(&beta, "2 rows");
        has(&beta, "beta one");
        lacks(&beta, "alpha");
        // The order, both ways, shown on the header.
        let down = list(&s, &admin, "?order=-title").await;
        let (b2, a1) = (
            down.find("beta two").unwrap(),
            down.find("alpha one").unwrap(),
        );
        assert!(b2 < a1, "{backend:?}: not descending");
        has(&down, r#"aria-sort="descending""#);
        let up = list(&s, &admin, "?order=title").await;
        assert!(up.find("alpha one").unwrap() < up.find("beta two").unwrap());
        has(&up, r#"aria-sort="ascending""#);
        // Filters, with the search.
        let published = list(&s, &admin, "?status=published").await;
        has(&published, "2 rows");
        lacks(&published, "alpha one");
        let both = list(&s, &admin, "?status=draft&q=alpha").await;
        has(&both, "2 rows");
        has(&both, "alpha three");
        lacks(&both, "beta two");
        // Search box and filters are labelled controls.
        has(&all, r#"<label for="search">"#);
        has(&all, r#"name="q""#);
    }
}

#[tokio::test]
async fn create_with_errors_then_fixed() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let admin = s.staff("root", true).await;
        let add = s.get(Some(&admin), "/admin/posts/add").await;
        assert_eq!(add.status(), 200, "{}", add.text());
        let html = add.text();
        has(&html, r#"<label for="field-title">"#);
        has(&html, r#"maxlength="100""#);
        has(&html, r#"name="csrf_token""#);
        has(&html, "Save and add another");
        // Two errors: no title, an author id that is no number.
        let bad = s
            .post(
                &admin,
                "/admin/posts/add",
                &[("status", "draft"), ("author_id", "abc"), ("secret", "x")],
            )
            .await;
        assert_eq!(bad.status(), 422, "{backend:?}: {}", bad.text());
        let html = bad.text();
        has(&html, "There are 2 problems");
        has(&html, r#"role="alert""#);
        has(&html, r##"href="#field-title""##);
        has(&html, r##"href="#field-author_id""##);
        has(&html, r#"aria-invalid="true""#);
        has(&html, r#"aria-describedby="field-title-error""#);
        has(&html, r#"id="field-title-error""#);
        // What was sent is filled in again.
        has(&html, r#"value="abc""#);
        assert_eq!(s.posts().await, 0, "{backend:?}: a row despite errors");
        assert!(s.log().await.is_empty());
        // Fixed: saved, to the row's page with a notice.
        let good = s
            .post(
                &admin,
                "/admin/posts/add",
                &[
                    ("title", "Hello"),
                    ("status", "draft"),
                    ("author_id", ""),
                    ("secret", "x"),
                ],
            )
            .await;
        assert_eq!(good.status(), 303, "{backend:?}: {}", good.text());
        let to = location(&good).to_owned();
        assert!(
            to.starts_with("/admin/posts/") && to.ends_with("?saved=1"),
            "{to}"
        );
        let id = saved_id(&to);
        let post = s.find(id).await.unwrap();
        assert_eq!(
            (post.title.as_str(), post.status.as_str()),
            ("Hello", "draft")
        );
        assert!(!post.published);
        assert_eq!(post.author_id, None);
        let shown = s.get(Some(&admin), &to).await;
        assert_eq!(shown.status(), 200);
        has(&shown.text(), r#"class="notice""#);
        has(&shown.text(), r#"value="Hello""#);
        // "Save and add another": back to an empty add page.
        let again = s
            .post(
                &admin,
                "/admin/posts/add",
                &[
                    ("title", "Second"),
                    ("status", "published"),
                    ("secret", "y"),
                    ("_next", "add"),
                ],
            )
            .await;
        assert_eq!(again.status(), 303, "{}", again.text());
        assert!(
            location(&again).starts_with("/admin/posts/add"),
            "{}",
            location(&again)
        );
        assert_eq!(s.posts().await, 2);
    }
}

#[tokio::test]
async fn edit_saves_and_redirects() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let admin = s.staff("root", true).await;
        let post = s.post_row("Before", "draft", "old secret").await;
        let path = format!("/admin/posts/{}", post.id);
        let form = s.get(Some(&admin), &path).await;
        assert_eq!(form.status(), 200, "{}", form.text());
        let html = form.text();
        has(&html, r#"value="Before""#);
        has(&html, &format!(r#"action="{path}""#));
        has(&html, &format!(r#"href="{path}/delete""#));
        let saved = s
            .post(
                &admin,
                &path,
                &[
                    ("title", "After"),
                    ("status", "published"),
                    ("published", "on"),
                    ("author_id", &admin.user.id.to_string()),
                    ("secret", "new secret"),
                ],
            )
            .await;
        assert_eq!(saved.status(), 303, "{backend:?}: {}", saved.text());
        assert_eq!(location(&saved), format!("{path}?saved=1"));
        let after = s.find(post.id).await.unwrap();
        assert_eq!(after.title, "After");
        assert_eq!(after.status, "published");
        assert!(after.published);
        assert_eq!(after.author_id, Some(admin.user.id));
        assert_eq!(after.secret.0, "new secret");
        // The database's own column kept its value.
        assert_eq!(after.created_at, post.created_at);
        // An error on edit: 422, the row unchanged.
        let bad = s
            .post(
                &admin,
                &path,
                &[
                    ("title", &"x".repeat(101)),
                    ("status", "draft"),
                    ("secret", "z"),
                ],
            )
            .await;
        assert_eq!(bad.status(), 422, "{backend:?}: {}", bad.text());
        has(&bad.text(), r##"href="#field-title""##);
        assert_eq!(s.find(post.id).await.unwrap().title, "After");
    }
}

#[tokio::test]
async fn delete_asks_then_deletes() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let admin = s.staff("root", true).await;
        let post = s.post_row("Doomed", "draft", "s").await;
        let kept = s.post_row("Kept", "draft", "s").await;
        let path = format!("/admin/posts/{}/delete", post.id);
        let ask = s.get(Some(&admin), &path).await;
        assert_eq!(ask.status(), 200, "{}", ask.text());
        let html = ask.text();
        has(&html, r#"name="confirm" value="yes""#);
        has(&html, &format!(r#"action="{path}""#));
        assert!(s.find(post.id).await.is_some(), "asking deleted it");
        let done = s.post(&admin, &path, &[("confirm", "yes")]).await;
        assert_eq!(done.status(), 303, "{backend:?}: {}", done.text());
        assert!(
            location(&done).starts_with("/admin/posts/"),
            "{}",
            location(&done)
        );
        assert!(s.find(post.id).await.is_none(), "{backend:?}: not deleted");
        assert!(s.find(kept.id).await.is_some());
        // Its page is gone.
        assert_eq!(
            s.get(Some(&admin), &format!("/admin/posts/{}", post.id))
                .await
                .status(),
            404
        );
    }
}

#[tokio::test]
async fn bulk_delete_asks_then_deletes() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let admin = s.staff("root", true).await;
        let a = s.post_row("first doomed", "draft", "s").await;
        let b = s.post_row("second doomed", "draft", "s").await;
        let c = s.post_row("survivor", "draft", "s").await;
        let list = s.get(Some(&admin), "/admin/posts/").await.text();
        has(&list, r#"name="_selected""#);
        has(&list, r#"<option value="delete">"#);
        let (ak, bk) = (a.id.to_string(), b.id.to_string());
        let ask = s
            .post(
                &admin,
                "/admin/posts/",
                &[("action", "delete"), ("_selected", &ak), ("_selected", &bk)],
            )
            .await;
        assert_eq!(ask.status(), 200, "{backend:?}: {}", ask.text());
        let html = ask.text();
        // Without `show`, a row's name is the model's and its key.
        has(&html, &format!("<li>post {}</li>", a.id));
        has(&html, &format!("<li>post {}</li>", b.id));
        lacks(&html, &format!("<li>post {}</li>", c.id));
        has(&html, &format!(r#"name="_selected" value="{ak}""#));
        assert_eq!(s.posts().await, 3, "asking deleted rows");
        let done = s
            .post(
                &admin,
                "/admin/posts/",
                &[
                    ("action", "delete"),
                    ("confirm", "yes"),
                    ("_selected", &ak),
                    ("_selected", &bk),
                ],
            )
            .await;
        assert_eq!(done.status(), 303, "{backend:?}: {}", done.text());
        assert_eq!(s.posts().await, 1);
        assert!(s.find(c.id).await.is_some());
        // Each deleted row has its log entry.
        let deletes = s
            .log()
            .await
            .into_iter()
            .filter(|e| e.action == "delete")
            .count();
        assert_eq!(deletes, 2);
    }
}

#[tokio::test]
async fn login_page_redirects_back() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        s.user("root", true, true).await;
        // Anonymous: to the login page, with the way back.
        let away = s.get(None, "/admin/posts/?q=x").await;
        assert_eq!(away.status(), 303, "{}", away.text());
        let to = location(&away).to_owned();
        let (page, query) = to.split_once('?').unwrap();
        assert_eq!(page, "/admin/login");
        let next: Vec<(String, String)> = serde_urlencoded::from_str(query).unwrap();
        assert_eq!(next, [("next".to_owned(), "/admin/posts/?q=x".to_owned())]);
        // The login page: a labelled form posting to tern-auth with it.
        let login = s.get(None, &to).await;
        assert_eq!(login.status(), 200, "{}", login.text());
        let html = login.text();
        has(&html, r#"autocomplete="username""#);
        has(&html, r#"autocomplete="current-password""#);
        has(&html, r#"<label for="password">"#);
        let action = html
            .split(r#"<form method="post" action=""#)
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .replace("&amp;", "&");
        assert!(action.starts_with("/auth/login?next="), "{action}");
        // Logging in there goes back to the list.
        let res = s
            .client
            .post(&action)
            .header("accept", support::BROWSER)
            .form(&[("username", "root"), ("password", support::PASSWORD)])
            .send()
            .await;
        assert_eq!(res.status(), 303, "{}", res.text());
        assert_eq!(location(&res), "/admin/posts/?q=x");
        // A wrong password: back to the login page with its message.
        let wrong = s.get(None, "/admin/login?error=invalid").await;
        has(&wrong.text(), r#"role="alert""#);
        // Already logged in: the login page sends to the dashboard.
        let admin = s.login("root").await;
        let again = s.get(Some(&admin), "/admin/login").await;
        assert_eq!(again.status(), 303);
        assert_eq!(location(&again), "/admin/");
        // A `next` elsewhere is not followed.
        let elsewhere = s.get(None, "/admin/login?next=https://evil.example/").await;
        lacks(&elsewhere.text(), "evil.example");
    }
}

/// The action the next test registers: publish the selected posts.
fn publish(posts: Vec<Post>) -> Result<Vec<Post>, String> {
    Ok(posts
        .into_iter()
        .map(|mut p| {
            p.status = "published".to_owned();
            p.published = true;
            p
        })
        .collect())
}

/// An action that refuses, with markup in its message.
fn refuse(_: Vec<Post>) -> Result<Vec<Post>, String> {
    Err("<b>not today</b>".to_owned())
}

/// An action whose rows break a rule of the model (`choices`).
fn corrupt(posts: Vec<Post>) -> Result<Vec<Post>, String> {
    Ok(posts
        .into_iter()
        .map(|mut p| {
            p.status = "gone".to_owned();
            p
        })
        .collect())
}

/// Sets the author of a new post: the user who adds it.
fn authored(post: &mut Post, user: &tern_auth::User, created: bool) {
    if created {
        post.author_id = Some(user.id);
    }
}

#[tokio::test]
async fn custom_action_updates_and_audits() {
    for backend in BACKENDS {
        let admin = Admin::new().model_with::<Post>(|m| {
            m.action("publish", "Publish", publish)
                .action("refuse", "Refuse", refuse)
                .action("corrupt", "Corrupt", corrupt)
                .show(|p| format!("«{}»", p.title))
                .before_save(authored)
        });
        let Some(s) = site_with(backend, admin).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let a = s.post_row("first", "draft", "s").await;
        let b = s.post_row("second", "draft", "s").await;
        let c = s.post_row("third", "draft", "s").await;
        let list = s.get(Some(&root), "/admin/posts/").await.text();
        has(&list, r#"<option value="publish">Publish</option>"#);
        // `show` names the rows.
        has(&list, "Select «first»");
        let (ak, bk) = (a.id.to_string(), b.id.to_string());
        let res = s
            .post(
                &root,
                "/admin/posts/",
                &[
                    ("action", "publish"),
                    ("_selected", &ak),
                    ("_selected", &bk),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        for (id, published) in [(a.id, true), (b.id, true), (c.id, false)] {
            let p = s.find(id).await.unwrap();
            assert_eq!(p.published, published, "{backend:?} {id}");
            assert_eq!(p.status == "published", published);
        }
        let log = s.log().await;
        assert_eq!(log.len(), 2, "{log:?}");
        for e in &log {
            assert_eq!(e.action, "action:publish");
            assert_eq!(support::parsed(&e.before)["published"], false);
            assert_eq!(support::parsed(&e.after)["published"], true);
        }
        // A refusal: its message shown as text, nothing written.
        let res = s
            .post(
                &root,
                "/admin/posts/",
                &[("action", "refuse"), ("_selected", &ak)],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), "not today");
        lacks(&res.text(), "<b>");
        // Rows the model refuses: the whole action rolls back.
        let res = s
            .post(
                &root,
                "/admin/posts/",
                &[
                    ("action", "corrupt"),
                    ("_selected", &ak),
                    ("_selected", &bk),
                ],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        assert_eq!(s.find(a.id).await.unwrap().status, "published");
        assert_eq!(s.log().await.len(), 2);
        // An action needs `change`: a viewer may not run it.
        let viewer = s.staff("viewer", false).await;
        s.grant(&viewer.user, "posts", "view").await;
        let ck = c.id.to_string();
        let res = s
            .post(
                &viewer,
                "/admin/posts/",
                &[("action", "publish"), ("_selected", &ck)],
            )
            .await;
        assert_eq!(res.status(), 403, "{backend:?}: {}", res.text());
        assert!(!s.find(c.id).await.unwrap().published);
        // `before_save`: the author of an added post is who added it.
        let res = s
            .post(
                &root,
                "/admin/posts/add",
                &[("title", "authored"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(res.status(), 303, "{}", res.text());
        let id = saved_id(location(&res));
        assert_eq!(s.find(id).await.unwrap().author_id, Some(root.user.id));
    }
}

#[tokio::test]
async fn every_page_keeps_the_markup_rules() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let a = s.post_row("first", "draft", "s").await;
        let b = s.post_row("second", "published", "s").await;
        let edited = s
            .post(
                &root,
                &format!("/admin/posts/{}", a.id),
                &[("title", "first!"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(edited.status(), 303, "{}", edited.text());
        let mut pages = vec![];
        for path in [
            "/admin/".to_owned(),
            "/admin/posts/".to_owned(),
            "/admin/posts/?q=first&status=draft&order=-title&per_page=1".to_owned(),
            "/admin/posts/?page=9".to_owned(),
            "/admin/posts/add".to_owned(),
            format!("/admin/posts/{}", a.id),
            format!("/admin/posts/{}?saved=1", a.id),
            format!("/admin/posts/{}/delete", a.id),
            "/admin/log/".to_owned(),
            "/admin/log/?model=posts".to_owned(),
            "/admin/posts/?order=nothing".to_owned(),
            "/admin/posts/99999".to_owned(),
        ] {
            let res = s.get(Some(&root), &path).await;
            assert!(
                matches!(res.status().as_u16(), 200 | 400 | 404),
                "{path}: {}",
                res.status()
            );
            pages.push((path, res.text()));
        }
        // A log entry's page, the login page, a form with errors, the
        // bulk confirmation, a 403.
        let log = pages
            .iter()
            .find(|(p, _)| p == "/admin/log/")
            .unwrap()
            .1
            .clone();
        let entry = log
            .split(r#"href="/admin/log/"#)
            .skip(1)
            .find_map(|r| {
                r.split('"')
                    .next()
                    .filter(|k| !k.is_empty() && !k.starts_with('?'))
            })
            .unwrap()
            .to_owned();
        let entry = format!("/admin/log/{entry}");
        pages.push((entry.clone(), s.get(Some(&root), &entry).await.text()));
        pages.push((
            "/admin/login".into(),
            s.get(None, "/admin/login?error=invalid").await.text(),
        ));
        let errors = s
            .post(
                &root,
                "/admin/posts/add",
                &[("status", "nope"), ("author_id", "x")],
            )
            .await;
        assert_eq!(errors.status(), 422);
        pages.push(("add with errors".into(), errors.text()));
        let (ak, bk) = (a.id.to_string(), b.id.to_string());
        let bulk = s
            .post(
                &root,
                "/admin/posts/",
                &[("action", "delete"), ("_selected", &ak), ("_selected", &bk)],
            )
            .await;
        assert_eq!(bulk.status(), 200);
        pages.push(("bulk".into(), bulk.text()));
        let stranger = s.staff("stranger", false).await;
        let denied = s.get(Some(&stranger), "/admin/posts/").await;
        assert_eq!(denied.status(), 403);
        pages.push(("403".into(), denied.text()));
        for (path, html) in &pages {
            support::check_markup(path, html);
        }
        // The error summary links each field, whose error it describes.
        let form = &pages
            .iter()
            .find(|(p, _)| p == "add with errors")
            .unwrap()
            .1;
        has(form, r#"tabindex="-1""#);
        has(form, r#"aria-describedby="field-status-error""#);
    }
}

#[tokio::test]
async fn another_prefix_and_title() {
    for backend in BACKENDS {
        let admin = Admin::new()
            .prefix("/staff")
            .title("Back office")
            .model::<Post>();
        let Some(s) = site_with(backend, admin).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let dash = s.get(Some(&root), "/staff/").await;
        assert_eq!(dash.status(), 200, "{backend:?}: {}", dash.text());
        let html = dash.text();
        has(&html, "<title>Back office</title>");
        has(&html, r#"<a href="/staff/posts/">"#);
        has(&html, r#"href="/staff/static/admin."#);
        has(&html, r#"action="/auth/logout?next=%2Fstaff%2Flogin""#);
        assert_eq!(s.get(Some(&root), "/admin/").await.status(), 404);
        let away = s.get(None, "/staff/posts/").await;
        assert_eq!(away.status(), 303);
        assert_eq!(location(&away), "/staff/login?next=%2Fstaff%2Fposts%2F");
        let added = s
            .post(
                &root,
                "/staff/posts/add",
                &[("title", "t"), ("status", "draft"), ("secret", "s")],
            )
            .await;
        assert_eq!(added.status(), 303, "{}", added.text());
        assert!(
            location(&added).starts_with("/staff/posts/"),
            "{}",
            location(&added)
        );
    }
}

#[tokio::test]
async fn per_page_setting_and_its_bounds() {
    for backend in BACKENDS {
        let Some(s) =
            support::site_configured(backend, support::admin(), &[("ADMIN_PER_PAGE", "2")]).await
        else {
            continue;
        };
        let root = s.staff("root", true).await;
        for i in 0..3 {
            s.post_row(&format!("row {i}"), "draft", "s").await;
        }
        let html = list(&s, &root, "").await;
        has(&html, "Page 1 of 2");
        // The URL's `per_page` still wins.
        has(&list(&s, &root, "?per_page=3").await, "Posts: page 1 of 1");
    }
    // Out of bounds: the app does not build, and says which setting.
    for bad in ["0", "501", "many"] {
        let config =
            tern::Config::from_settings([("SECRET_KEY", support::SECRET), ("ADMIN_PER_PAGE", bad)])
                .unwrap();
        let app = tern_admin::install(
            tern_auth::install(tern::App::new().settings::<tern_data::Database>("database")),
            support::admin(),
        );
        let err = app
            .build_with(config)
            .err()
            .unwrap_or_else(|| panic!("{bad} accepted"));
        assert!(err.to_string().contains("ADMIN_PER_PAGE"), "{bad}: {err}");
    }
}

#[tokio::test]
async fn foreign_keys_are_a_select_and_deletes_count_what_goes() {
    for backend in BACKENDS {
        let admin = Admin::new()
            .model_with::<Post>(|m| m.show(|p| p.title.clone()))
            .model::<Comment>();
        let Some(s) = site_with(backend, admin).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let a = s.post_row("commented", "draft", "s").await;
        let b = s.post_row("quiet", "draft", "s").await;
        // The add form offers the posts by name.
        let add = s.get(Some(&root), "/admin/comments/add").await;
        assert_eq!(add.status(), 200, "{backend:?}: {}", add.text());
        let html = add.text();
        has(&html, r#"<select id="field-post_id" name="post_id""#);
        has(&html, &format!(r#"<option value="{}">"#, a.id));
        has(&html, "commented");
        for body in ["first", "second"] {
            let res = s
                .post(
                    &root,
                    "/admin/comments/add",
                    &[("post_id", &a.id.to_string()), ("body", body)],
                )
                .await;
            assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        }
        // A post that is not there: refused, by the form or the database.
        let res = s
            .post(
                &root,
                "/admin/comments/add",
                &[("post_id", "99999"), ("body", "orphan")],
            )
            .await;
        assert!(
            matches!(res.status().as_u16(), 409 | 422),
            "{backend:?}: {} {}",
            res.status(),
            res.text()
        );
        // Deleting the post says what else goes.
        let ask = s
            .get(Some(&root), &format!("/admin/posts/{}/delete", a.id))
            .await;
        assert_eq!(ask.status(), 200, "{}", ask.text());
        has(&ask.text(), "2 comments");
        has(&ask.text(), "<strong>commented</strong>");
        let quiet = s
            .get(Some(&root), &format!("/admin/posts/{}/delete", b.id))
            .await;
        lacks(&quiet.text(), "comments</li>");
        let done = s
            .post(
                &root,
                &format!("/admin/posts/{}/delete", a.id),
                &[("confirm", "yes")],
            )
            .await;
        assert_eq!(done.status(), 303, "{backend:?}: {}", done.text());
        let left: i64 = tern_data::query("SELECT COUNT(*) FROM comments")
            .scalar(s.db.pool())
            .await
            .unwrap();
        assert_eq!(left, 0, "{backend:?}: ON DELETE CASCADE");
    }
}

#[tokio::test]
async fn list_filters_by_foreign_key_and_dates() {
    for backend in BACKENDS {
        let Some(s) = site_with(backend, support::admin().users()).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let ada = s.user("ada", false, false).await;
        let mut by_ada = Post::new("by ada", "draft", "s");
        by_ada.author_id = Some(ada.id);
        tern_data::Model::insert(&by_ada, s.db.pool())
            .await
            .unwrap();
        s.post_row("by nobody", "draft", "s").await;
        let res = s.get(Some(&root), "/admin/posts/").await;
        assert_eq!(res.status(), 200);
        let html = res.text();
        support::check_markup("/admin/posts/", &html);
        // The author: a select of the users; the date: from and before.
        has(&html, r#"<select id="filter-author_id" name="author_id">"#);
        has(
            &html,
            &format!(r#"<option value="{}">ada ({})</option>"#, ada.id, ada.id),
        );
        has(
            &html,
            r#"<input type="date" id="filter-created_at__ge" name="created_at__ge" value="""#,
        );
        has(
            &html,
            r#"<label for="filter-created_at__lt">Created at before</label>"#,
        );
        // As a browser submits the form: "Any" and blank dates are empty.
        let path = format!(
            "/admin/posts/?q=&published=&author_id={}&created_at__ge=&created_at__lt=",
            ada.id
        );
        let res = s.get(Some(&root), &path).await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        has(&res.text(), "by ada");
        lacks(&res.text(), "by nobody");
        has(
            &res.text(),
            &format!(r#"<option value="{}" selected>ada"#, ada.id),
        );
        // Dates: every post is after 2000 and before 2999.
        let res = s
            .get(Some(&root), "/admin/posts/?created_at__ge=2000-01-01")
            .await;
        has(&res.text(), "by nobody");
        has(&res.text(), r#"value="2000-01-01""#);
        let res = s
            .get(Some(&root), "/admin/posts/?created_at__lt=2000-01-01")
            .await;
        lacks(&res.text(), "by nobody");
        let res = s
            .get(Some(&root), "/admin/posts/?created_at__ge=2999-01-01")
            .await;
        lacks(&res.text(), "by ada");
        // Junk: a 400 page naming the parameter.
        let res = s
            .get(Some(&root), "/admin/posts/?created_at__ge=yesterday")
            .await;
        assert_eq!(res.status(), 400, "{backend:?}: {}", res.text());
        has(&res.text(), "created_at");
        let res = s.get(Some(&root), "/admin/posts/?author_id=x").await;
        assert_eq!(res.status(), 400);
    }
}

#[tokio::test]
async fn a_large_table_is_a_key_filter() {
    for backend in BACKENDS {
        let settings = [("ADMIN_FK_SELECT_MAX", "1")];
        let Some(s) = support::site_configured(backend, support::admin().users(), &settings).await
        else {
            continue;
        };
        let root = s.staff("root", true).await;
        s.user("ada", false, false).await;
        let res = s.get(Some(&root), "/admin/posts/").await;
        has(
            &res.text(),
            r#"<input type="number" id="filter-author_id" name="author_id" value="" step="1">"#,
        );
    }
}

#[tokio::test]
async fn an_edit_over_someone_elses_change_is_refused() {
    for backend in BACKENDS {
        let Some(s) = site(backend).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let post = s.post_row("original", "draft", "secret").await;
        let page = format!("/admin/posts/{}", post.id);
        let html = s.get(Some(&root), &page).await.text();
        let version = html
            .split(r#"name="_version" value=""#)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .to_owned();
        assert_eq!(version.len(), 32, "{version}");
        // Another staff user (another process) saves first.
        tern_data::query("UPDATE posts SET title = 'theirs' WHERE id = $1")
            .bind(post.id)
            .execute(s.db.pool())
            .await
            .unwrap();
        let mine = [
            ("_version", version.as_str()),
            ("title", "mine"),
            ("status", "draft"),
            ("secret", "secret"),
        ];
        let res = s.post(&root, &page, &mine).await;
        assert_eq!(res.status(), 409, "{backend:?}: {}", res.text());
        let html = res.text();
        has(&html, "Someone else changed this row");
        has(&html, r#"value="theirs""#);
        assert_eq!(s.find(post.id).await.unwrap().title, "theirs");
        // Saved again from the page as it is now.
        let now = html
            .split(r#"name="_version" value=""#)
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .to_owned();
        assert_ne!(now, version);
        let again = [
            ("_version", now.as_str()),
            ("title", "mine"),
            ("status", "draft"),
            ("secret", "secret"),
        ];
        let res = s.post(&root, &page, &again).await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert_eq!(s.find(post.id).await.unwrap().title, "mine");
    }
}
