//! A transaction per request over real sockets, on SQLite and PostgreSQL:
//! committed with a success, rolled back with an error, and refused
//! without its middleware.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::{fresh, spawn, BACKENDS};
use serde_json::json;
use tern::{extract::Path, routing::post, App, Json, StatusCode};
use tern_data::{query, with_pool, Conn, DataError, Database, Db, Migrations, Model, Tx};

static MIGRATIONS: Migrations = tern_data::migrations!("tests/migrations");

#[derive(Debug, Clone, Model, serde::Serialize, serde::Deserialize)]
#[model(table = "notes")]
struct Note {
    #[model(primary_key)]
    #[serde(default)]
    id: i64,
    title: String,
    body: String,
    stars: i32,
}

/// Inserts two notes in the request's transaction, then answers `status`.
async fn two(
    tx: Tx,
    Path(status): Path<u16>,
    Json(titles): Json<Vec<String>>,
) -> Result<StatusCode, DataError> {
    let mut t = tx.lock().await;
    for title in titles {
        Note {
            id: 0,
            title,
            body: String::new(),
            stars: 1,
        }
        .insert_in(&mut t)
        .await?;
    }
    Ok(StatusCode::from_u16(status).unwrap())
}

/// A helper that runs where its caller says: a model's insert and a
/// hand-written statement on one `Conn`.
async fn add_note(on: impl Into<Conn<'_>>, title: String) -> Result<(), DataError> {
    let mut c = on.into();
    let note = Note {
        id: 0,
        title,
        body: String::new(),
        stars: 0,
    }
    .insert(&mut c)
    .await?;
    let done = query("UPDATE notes SET stars = stars + 1, body = $1 WHERE id = $2")
        .bind("by the helper")
        .bind(note.id)
        .execute(&mut c)
        .await?;
    assert_eq!(done.rows_affected, 1);
    Ok(())
}

/// The helper twice in the request's transaction, then `status`.
async fn helper_in_tx(
    tx: Tx,
    Path(status): Path<u16>,
    Json(titles): Json<Vec<String>>,
) -> Result<StatusCode, DataError> {
    let mut guard = tx.lock().await;
    for title in titles {
        add_note(&mut guard, title).await?;
    }
    Ok(StatusCode::from_u16(status).unwrap())
}

/// The helper twice on the pool, then `status`.
async fn helper_on_pool(
    db: Db,
    Path(status): Path<u16>,
    Json(titles): Json<Vec<String>>,
) -> Result<StatusCode, DataError> {
    for title in titles {
        add_note(&db, title).await?;
    }
    Ok(StatusCode::from_u16(status).unwrap())
}

fn app(with_middleware: bool) -> App {
    let app = App::new()
        .settings::<Database>("database")
        .route("/two/{status:u64}", post(two))
        .route("/helper/tx/{status:u64}", post(helper_in_tx))
        .route("/helper/pool/{status:u64}", post(helper_on_pool));
    if with_middleware {
        app.route_layer(tern_data::transactions())
    } else {
        app
    }
}

async fn titles(db: &Database) -> Vec<String> {
    let sql = "SELECT title FROM notes ORDER BY id";
    with_pool!(db.pool(), p => tern_data::sqlx::query_scalar(sql).fetch_all(p).await.unwrap())
}

#[tokio::test]
async fn a_request_commits_all_or_nothing() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = spawn(app(true), &[("DATABASE_URL", &url)]).await;
        let db = server.db();
        db.migrate(&MIGRATIONS).await.unwrap();
        let (status, _, body) = server
            .send("POST", "/two/201", Some(json!(["a", "b"])))
            .await;
        assert_eq!(status, 201, "{backend:?}: {body}");
        assert_eq!(titles(&db).await, ["a", "b"]);
        // An answer of 400 or more: both inserts rolled back.
        let (status, _, _) = server
            .send("POST", "/two/409", Some(json!(["c", "d"])))
            .await;
        assert_eq!(status, 409);
        assert_eq!(titles(&db).await, ["a", "b"], "{backend:?}");
        // A statement that fails (a taken title) rolls back the first one.
        let (status, _, _) = server
            .send("POST", "/two/201", Some(json!(["e", "a"])))
            .await;
        assert_eq!(status, 409, "{backend:?}");
        assert_eq!(titles(&db).await, ["a", "b"], "{backend:?}");
    }
}

#[tokio::test]
async fn helper_takes_the_pool_or_the_request_transaction() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = spawn(app(true), &[("DATABASE_URL", &url)]).await;
        let db = server.db();
        db.migrate(&MIGRATIONS).await.unwrap();
        // In the request's transaction, answered 409: neither row stays.
        let (status, _, body) = server
            .send("POST", "/helper/tx/409", Some(json!(["a", "b"])))
            .await;
        assert_eq!(status, 409, "{backend:?}: {body}");
        assert_eq!(titles(&db).await, Vec::<String>::new(), "{backend:?}");
        // Answered 201: both, with the helper's second statement.
        let (status, _, body) = server
            .send("POST", "/helper/tx/201", Some(json!(["a", "b"])))
            .await;
        assert_eq!(status, 201, "{backend:?}: {body}");
        assert_eq!(titles(&db).await, ["a", "b"], "{backend:?}");
        // On the pool each statement commits at once: a 409 answer
        // keeps both rows.
        let (status, _, body) = server
            .send("POST", "/helper/pool/409", Some(json!(["c", "d"])))
            .await;
        assert_eq!(status, 409, "{backend:?}: {body}");
        assert_eq!(titles(&db).await, ["a", "b", "c", "d"], "{backend:?}");
        let helped: i64 =
            query("SELECT COUNT(*) FROM notes WHERE stars = 1 AND body = 'by the helper'")
                .scalar(db.pool())
                .await
                .unwrap();
        assert_eq!(helped, 4, "{backend:?}");
    }
}

#[tokio::test]
async fn tx_without_its_middleware_is_a_500_saying_so() {
    let url = fresh(tern_data::Backend::Sqlite).await.unwrap();
    let server = spawn(app(false), &[("DATABASE_URL", &url)]).await;
    let (status, _, body) = server.send("POST", "/two/201", Some(json!([]))).await;
    assert_eq!(status, 500);
    assert!(body.contains("tern_data::transactions()"), "{body}");
}
