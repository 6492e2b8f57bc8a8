//! Field types a form shows differently, on SQLite and PostgreSQL: a
//! `Uuid` is typed as text (and checked), encrypted bytes are kept as
//! stored (a form cannot type them), and a row with both saves.
#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use support::{has, lacks, location, site_with, BACKENDS};
use tern_admin::Admin;
use tern_data::{Encrypted, Model, Uuid};

#[derive(Debug, Clone, Model)]
#[model(table = "gadgets", name = "gadget", plural = "gadgets")]
struct Gadget {
    #[model(primary_key)]
    id: i64,
    name: String,
    code: Uuid,
    sealed: Encrypted<Vec<u8>>,
}

#[tokio::test]
async fn uuid_is_typed_and_encrypted_bytes_are_kept() {
    for backend in BACKENDS {
        let Some(s) = site_with(backend, Admin::new().model::<Gadget>()).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let stored = Gadget {
            id: 0,
            name: "first".to_owned(),
            code: Uuid::nil(),
            sealed: Encrypted(vec![1, 2, 3]),
        }
        .insert(s.db.pool())
        .await
        .unwrap();
        let page = format!("/admin/gadgets/{}", stored.id);
        let res = s.get(Some(&root), &page).await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        let html = res.text();
        // The UUID is an input; the bytes are shown, not typed.
        has(
            &html,
            r#"name="code" value="00000000-0000-0000-0000-000000000000""#,
        );
        lacks(&html, r#"name="sealed""#);
        // Not a UUID: that field's error.
        let res = s
            .post(&root, &page, &[("name", "first"), ("code", "not-a-uuid")])
            .await;
        assert_eq!(res.status(), 422, "{backend:?}: {}", res.text());
        has(&res.text(), "must be a UUID");
        // Saved: the new UUID, the bytes as they were.
        let code = "67e55044-10b1-426f-9247-bb680e5fe0c8";
        let res = s
            .post(&root, &page, &[("name", "renamed"), ("code", code)])
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        let now = Gadget::get(s.db.pool(), stored.id).await.unwrap();
        assert_eq!(now.name, "renamed");
        assert_eq!(now.code, Uuid::parse_str(code).unwrap());
        assert_eq!(now.sealed.0, vec![1, 2, 3]);
        // Added through the form: the bytes start empty.
        let res = s
            .post(
                &root,
                "/admin/gadgets/add",
                &[("name", "second"), ("code", code)],
            )
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert!(location(&res).starts_with("/admin/gadgets/"));
    }
}

#[derive(Debug, Clone, Model)]
#[model(table = "kits", name = "kit", plural = "kits")]
struct Kit {
    #[model(primary_key)]
    id: Uuid,
    name: String,
}

#[derive(Debug, Clone, Model)]
#[model(table = "parts", name = "part", plural = "parts")]
struct Part {
    #[model(primary_key)]
    id: i64,
    #[model(references = "kits")]
    kit_id: Uuid,
}

#[tokio::test]
async fn a_uuid_key_is_counted_and_deleted() {
    for backend in BACKENDS {
        let admin = Admin::new().model::<Kit>().model::<Part>();
        let Some(s) = site_with(backend, admin).await else {
            continue;
        };
        let root = s.staff("root", true).await;
        let kit = Kit {
            id: Uuid::nil(),
            name: "kit".to_owned(),
        }
        .insert(s.db.pool())
        .await
        .unwrap();
        for _ in 0..2 {
            Part {
                id: 0,
                kit_id: kit.id,
            }
            .insert(s.db.pool())
            .await
            .unwrap();
        }
        let page = format!("/admin/kits/{}", kit.id.hyphenated());
        assert_eq!(s.get(Some(&root), &page).await.status(), 200);
        // The confirmation counts what references it (bound as a UUID).
        let res = s.get(Some(&root), &format!("{page}/delete")).await;
        assert_eq!(res.status(), 200, "{backend:?}: {}", res.text());
        has(&res.text(), "2 parts");
        // The part's form offers the kit by name.
        let res = s.get(Some(&root), "/admin/parts/add").await;
        has(
            &res.text(),
            &format!(r#"<option value="{}">kit {}</option>"#, kit.id, kit.id),
        );
        let res = s
            .post(&root, &format!("{page}/delete"), &[("confirm", "yes")])
            .await;
        assert_eq!(res.status(), 303, "{backend:?}: {}", res.text());
        assert!(Kit::get(s.db.pool(), kit.id).await.is_err());
    }
}
