//! The database layer over real sockets, on SQLite (always) and on
//! PostgreSQL (when `POSTGRES_URL` is set, as `.ci/run` sets it).
#![allow(clippy::unwrap_used, missing_docs)]

use serde_json::{json, Value};
use tern::{
    extract::Path,
    routing::{get, post},
    App, Config, Json, StatusCode,
};
use tern_data::{Backend, DataError, Database, Db, Migrations, Pool};

static MIGRATIONS: Migrations = tern_data::migrations!("tests/migrations");
static BROKEN: Migrations = tern_data::migrations!("tests/broken");

mod common;

use common::{fresh, spawn, BACKENDS};

async fn count(Db(pool): Db) -> Result<String, DataError> {
    let n: i64 = match &pool {
        Pool::Sqlite(p) => {
            sqlx::query_scalar("SELECT COUNT(*) FROM notes")
                .fetch_one(p)
                .await?
        }
        Pool::Postgres(p) => {
            sqlx::query_scalar("SELECT COUNT(*) FROM notes")
                .fetch_one(p)
                .await?
        }
    };
    Ok(n.to_string())
}

#[derive(serde::Deserialize)]
struct NewNote {
    title: String,
    stars: i32,
}

async fn create(
    Db(pool): Db,
    Json(note): Json<NewNote>,
) -> Result<(StatusCode, String), DataError> {
    let id: i64 = match &pool {
        Pool::Sqlite(p) => {
            sqlx::query_scalar("INSERT INTO notes (title, stars) VALUES ($1, $2) RETURNING id")
                .bind(&note.title)
                .bind(note.stars)
                .fetch_one(p)
                .await?
        }
        Pool::Postgres(p) => {
            sqlx::query_scalar("INSERT INTO notes (title, stars) VALUES ($1, $2) RETURNING id")
                .bind(&note.title)
                .bind(note.stars)
                .fetch_one(p)
                .await?
        }
    };
    Ok((StatusCode::CREATED, id.to_string()))
}

async fn show(Db(pool): Db, Path(id): Path<i64>) -> Result<Json<Value>, DataError> {
    let (title, stars): (String, i32) = match &pool {
        Pool::Sqlite(p) => {
            sqlx::query_as("SELECT title, stars FROM notes WHERE id = $1")
                .bind(id)
                .fetch_one(p)
                .await?
        }
        Pool::Postgres(p) => {
            sqlx::query_as("SELECT title, stars FROM notes WHERE id = $1")
                .bind(id)
                .fetch_one(p)
                .await?
        }
    };
    Ok(Json(json!({ "title": title, "stars": stars })))
}

/// Holds its connection for 10 s on PostgreSQL: a request in flight
/// when its connection dies.
async fn sleep(Db(pool): Db) -> Result<&'static str, DataError> {
    match &pool {
        Pool::Postgres(p) => {
            sqlx::query("SELECT pg_sleep(10)").execute(p).await?;
            Ok("slept")
        }
        Pool::Sqlite(_) => Ok("PostgreSQL only"),
    }
}

fn app() -> App {
    App::new()
        .settings::<Database>("database")
        .route("/notes", post(create))
        .route("/notes/count", get(count))
        .route("/notes/{id:i64}", get(show))
        .route("/sleep", get(sleep))
}

/// The names of the tables and of `notes`' columns.
async fn schema(db: &Database) -> (Vec<String>, Vec<String>) {
    match db.pool() {
        Pool::Sqlite(p) => {
            let tables = sqlx::query_scalar(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
            )
            .fetch_all(p)
            .await
            .unwrap();
            let columns =
                sqlx::query_scalar("SELECT name FROM pragma_table_info('notes') ORDER BY cid")
                    .fetch_all(p)
                    .await
                    .unwrap();
            (tables, columns)
        }
        Pool::Postgres(p) => {
            let tables = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
            )
            .fetch_all(p)
            .await
            .unwrap();
            let columns = sqlx::query_scalar(
                "SELECT column_name::text FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = 'notes' ORDER BY ordinal_position",
            )
            .fetch_all(p)
            .await
            .unwrap();
            (tables, columns)
        }
    }
}

#[tokio::test]
async fn migrations_apply_once_and_one_that_fails_leaves_the_schema_as_it_was() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let db = Database::from_url(&url).unwrap();
        db.migrate(&MIGRATIONS).await.unwrap();
        // Again: nothing to do.
        db.migrate(&MIGRATIONS).await.unwrap();
        let before = schema(&db).await;
        assert_eq!(before.1, ["id", "title", "body", "stars"], "{backend:?}");
        let err = db.migrate(&BROKEN).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("0009_half_done.sql"), "{backend:?}: {text}");
        assert!(matches!(err, DataError::Migration { .. }), "{backend:?}");
        // The table it made and the column it added are gone with it.
        assert_eq!(schema(&db).await, before, "{backend:?}");
    }
}

#[tokio::test]
async fn handlers_read_and_write_and_errors_get_their_statuses() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let server = spawn(app(), &[("DATABASE_URL", &url)]).await;
        server.db().migrate(&MIGRATIONS).await.unwrap();
        let note = json!({"title": "first", "stars": 3});
        let (status, _, id) = server.send("POST", "/notes", Some(note.clone())).await;
        assert_eq!(status, 201, "{backend:?}: {id}");
        let (status, _, body) = server.send("GET", &format!("/notes/{id}"), None).await;
        assert_eq!(status, 200, "{backend:?}");
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), note);
        let (status, head, body) = server.send("POST", "/notes", Some(note)).await;
        assert_eq!(status, 409, "{backend:?}: {body}");
        assert!(head.contains("application/problem+json"), "{head}");
        let (status, _, body) = server
            .send(
                "POST",
                "/notes",
                Some(json!({"title": "second", "stars": -1})),
            )
            .await;
        assert_eq!(status, 422, "{backend:?}: {body}");
        let (status, _, _) = server.send("GET", "/notes/999", None).await;
        assert_eq!(status, 404, "{backend:?}");
        assert_eq!(server.send("GET", "/notes/count", None).await.2, "1");
    }
}

#[tokio::test]
async fn the_sqlite_file_and_its_directories_are_made_on_first_use() {
    let url = fresh(Backend::Sqlite).await.unwrap();
    let file = url.strip_prefix("sqlite://").unwrap();
    assert!(!std::path::Path::new(file).exists());
    let db = Database::from_url(&url).unwrap();
    db.check().await.unwrap();
    assert!(std::path::Path::new(file).exists());
}

#[tokio::test]
async fn an_unreachable_database_is_a_503_and_the_server_keeps_serving() {
    // Nothing listens on port 1: every connection is refused.
    let server = spawn(
        app(),
        &[
            ("DATABASE_URL", "postgres://tern@127.0.0.1:1/test"),
            ("DATABASE_ACQUIRE_TIMEOUT", "1s"),
        ],
    )
    .await;
    let started = std::time::Instant::now();
    let (status, head, body) = server.send("GET", "/notes/count", None).await;
    assert_eq!(status, 503, "{body}");
    assert!(head.contains("retry-after: 1"), "{head}");
    assert!(body.contains("the database is unavailable"), "{body}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // Routes without the database still answer.
    assert_eq!(server.send("GET", "/health", None).await.0, 200);
}

#[tokio::test]
async fn the_pool_recovers_when_its_connections_are_killed_between_and_during_requests() {
    let Some(url) = fresh(Backend::Postgres).await else {
        return;
    };
    // Named, so that only this pool's connections are killed (the other
    // tests run at the same time).
    let name = format!("tern_recover_{}", std::process::id());
    let url = format!("{url}&application_name={name}");
    let server = spawn(app(), &[("DATABASE_URL", &url)]).await;
    server.db().migrate(&MIGRATIONS).await.unwrap();
    assert_eq!(server.send("GET", "/notes/count", None).await.0, 200);
    // The pool's connections die.
    let admin = sqlx::PgPool::connect(&std::env::var("POSTGRES_URL").unwrap())
        .await
        .unwrap();
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    )
    .bind(&name)
    .fetch_all(&admin)
    .await
    .unwrap();
    assert!(!killed.is_empty());
    // The pool tests a connection before handing it out: the next
    // requests get new ones.
    for _ in 0..3 {
        let (status, _, body) = server.send("GET", "/notes/count", None).await;
        assert_eq!(status, 200, "{body}");
    }
    // A connection that dies while its request's query runs: that request
    // is a 503 problem (try again), and the server and the pool go on.
    let kill_when_running = async {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let killed: Vec<bool> = sqlx::query_scalar(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE application_name = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'",
            )
            .bind(&name)
            .fetch_all(&admin)
            .await
            .unwrap();
            if !killed.is_empty() {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "the query never ran");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    let started = std::time::Instant::now();
    let ((status, head, body), ()) =
        tokio::join!(server.send("GET", "/sleep", None), kill_when_running);
    assert_eq!(status, 503, "{body}");
    assert!(started.elapsed() < std::time::Duration::from_secs(9));
    let head = head.to_lowercase();
    assert!(
        head.contains("content-type: application/problem+json"),
        "{head}"
    );
    assert!(head.contains("retry-after: 1"), "{head}");
    assert!(body.contains("the database is unavailable"), "{body}");
    for _ in 0..3 {
        let (status, _, body) = server.send("GET", "/notes/count", None).await;
        assert_eq!(status, 200, "{body}");
    }
}

#[tokio::test]
async fn bad_settings_stop_the_start_naming_the_variable() {
    for (url, says) in [
        ("mysql://x/y", "must start with `sqlite:` or `postgres://`"),
        ("postgres://a:b@[::1/x", "is not a PostgreSQL URL"),
    ] {
        let config = Config::from_settings([("DATABASE_URL", url)]).unwrap();
        let err = app().build_with(config).unwrap_err().to_string();
        assert!(err.starts_with("DATABASE_URL"), "{err}");
        assert!(err.contains(says), "{err}");
        assert!(
            !err.contains(":b@"),
            "the URL's password is not repeated: {err}"
        );
    }
    let config = Config::from_settings([("DATABASE_ACQUIRE_TIMEOUT", "soon")]).unwrap();
    let err = app().build_with(config).unwrap_err().to_string();
    assert!(err.starts_with("DATABASE_ACQUIRE_TIMEOUT"), "{err}");
}

#[tokio::test]
async fn two_processes_migrating_one_database_at_once_both_succeed() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        // Two databases (two pools), as two processes have.
        let (a, b) = (
            Database::from_url(&url).unwrap(),
            Database::from_url(&url).unwrap(),
        );
        let (ra, rb) = tokio::join!(a.migrate(&MIGRATIONS), b.migrate(&MIGRATIONS));
        ra.unwrap();
        rb.unwrap();
        assert_eq!(
            schema(&a).await.1,
            ["id", "title", "body", "stars"],
            "{backend:?}"
        );
    }
}
