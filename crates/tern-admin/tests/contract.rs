//! A model that is also a contract (`ModelAdmin::contract`, feature
//! `contract`), on SQLite and PostgreSQL: a save breaking its rules is a
//! `422` naming each field with the contract's words, and writes nothing.
#![cfg(feature = "contract")]
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use support::{has, site_with, BACKENDS};
use tern_admin::Admin;
use tern_contract::contract;
use tern_data::{query, Model};

#[contract]
#[derive(Debug, Clone, Model)]
#[model(table = "reviews", name = "review", plural = "reviews")]
struct Review {
    #[model(primary_key)]
    id: i64,
    #[contract(length(min = 3, max = 40))]
    title: String,
    #[contract(email)]
    email: String,
    #[contract(range(min = 1, max = 5))]
    stars: i64,
}

#[tokio::test]
async fn a_contracts_rules_are_the_forms_errors() {
    for backend in BACKENDS {
        let admin = Admin::new().model_with::<Review>(|m| m.contract());
        let Some(s) = site_with(backend, admin).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let res = s
            .post(
                &root,
                "/admin/reviews/add",
                &[("title", "ok"), ("email", "not an address"), ("stars", "9")],
            )
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        let html = res.text();
        has(&html, "There are 3 problems");
        for field in ["title", "email", "stars"] {
            has(&html, &format!(r##"href="#field-{field}""##));
            has(&html, &format!(r#"id="field-{field}-error""#));
        }
        let rows: i64 = query("SELECT COUNT(*) FROM reviews")
            .scalar(s.db.pool())
            .await
            .unwrap();
        assert_eq!(rows, 0);
        let res = s
            .post(
                &root,
                "/admin/reviews/add",
                &[
                    ("title", "a good one"),
                    ("email", "ada@example.com"),
                    ("stars", "5"),
                ],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
    }
}
