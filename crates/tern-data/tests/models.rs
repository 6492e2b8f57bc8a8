//! `#[derive(Model)]` over real sockets, on SQLite and PostgreSQL: CRUD,
//! lists with filters, search, order and pages, and SQL injection through
//! every list parameter.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::{fresh, spawn, Server, BACKENDS};
use serde_json::{json, Value};
use tern::{
    extract::Path,
    routing::{get, post},
    App, Json, StatusCode,
};
use tern_data::{
    model::{Column, Kind},
    time::{Duration, UtcOffset},
    with_pool, Backend, DataError, Database, Db, ListQuery, Migrations, Model, OffsetDateTime,
    Page, Pool, Transaction, Uuid,
};

static MIGRATIONS: Migrations = tern_data::migrations!("tests/migrations");

#[derive(Debug, Clone, PartialEq, Model, serde::Serialize, serde::Deserialize)]
#[model(table = "notes")]
struct Note {
    #[model(primary_key)]
    #[serde(default)]
    id: i64,
    #[model(label = "Title", searchable, sortable, listed, unique)]
    title: String,
    #[model(searchable)]
    body: String,
    #[model(sortable, listed)]
    stars: i32,
}

async fn list(Db(pool): Db, query: ListQuery<Note>) -> Result<Json<Page<Note>>, DataError> {
    Ok(Json(Note::list(&pool, &query).await?))
}

async fn show(Db(pool): Db, Path(id): Path<i64>) -> Result<Json<Note>, DataError> {
    Ok(Json(Note::get(&pool, id).await?))
}

async fn create(
    Db(pool): Db,
    Json(note): Json<Note>,
) -> Result<(StatusCode, Json<Note>), DataError> {
    Ok((StatusCode::CREATED, Json(note.insert(&pool).await?)))
}

async fn update(
    Db(pool): Db,
    Path(id): Path<i64>,
    Json(mut note): Json<Note>,
) -> Result<Json<Note>, DataError> {
    note.id = id;
    Ok(Json(note.update(&pool).await?))
}

async fn remove(Db(pool): Db, Path(id): Path<i64>) -> Result<StatusCode, DataError> {
    Note::delete(&pool, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

fn app() -> App {
    App::new()
        .settings::<Database>("database")
        .route("/notes", get(list).post(create))
        .route("/notes/{id:i64}", get(show).put(update).delete(remove))
        .route("/reset", post(|| async { "" }))
}

#[test]
fn metadata_is_constant() {
    assert_eq!(Note::TABLE, "notes");
    assert_eq!(
        Note::COLUMNS.iter().map(|c| c.name).collect::<Vec<_>>(),
        ["id", "title", "body", "stars"]
    );
    let title: &Column = Note::column("title").unwrap();
    assert_eq!(title.kind, Kind::Text);
    assert!(title.searchable && title.sortable && title.listed && !title.nullable);
    let id = Note::column("id").unwrap();
    assert!(id.primary_key && id.read_only && id.has_default);
    assert!(!Note::column("body").unwrap().listed);
    assert_eq!(
        Note::INSERT,
        r#"INSERT INTO "notes" ("title", "body", "stars") VALUES ($1, $2, $3) RETURNING "id", "title", "body", "stars""#
    );
    assert_eq!(
        Note::UPDATE,
        r#"UPDATE "notes" SET "title" = $1, "body" = $2, "stars" = $3 WHERE "id" = $4 RETURNING "id", "title", "body", "stars""#
    );
}

async fn seeded(backend: Backend) -> Option<Server> {
    let url = fresh(backend).await?;
    let server = spawn(app(), &[("DATABASE_URL", &url)]).await;
    server.db().migrate(&MIGRATIONS).await.unwrap();
    let pool = server.db().pool().clone();
    for i in 1..=30 {
        Note {
            id: 0,
            title: format!("note {i:02}"),
            body: if i % 3 == 0 {
                "Tea, green".into()
            } else {
                "coffee".into()
            },
            stars: i % 5,
        }
        .insert(&pool)
        .await
        .unwrap();
    }
    Some(server)
}

fn page(body: &str) -> (u64, Vec<String>) {
    let v: Value = serde_json::from_str(body).unwrap();
    let titles = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap().to_owned())
        .collect();
    (v["total"].as_u64().unwrap(), titles)
}

#[tokio::test]
async fn crud_over_a_socket() {
    for backend in BACKENDS {
        let Some(server) = seeded(backend).await else {
            continue;
        };
        let (status, _, body) = server
            .send(
                "POST",
                "/notes",
                Some(json!({"title": "new", "body": "", "stars": 4})),
            )
            .await;
        assert_eq!(status, 201, "{backend:?}: {body}");
        let made: Note = serde_json::from_str(&body).unwrap();
        assert_eq!(made.id, 31);
        let (status, _, body) = server.send("GET", "/notes/31", None).await;
        assert_eq!(
            (status, serde_json::from_str::<Note>(&body).unwrap()),
            (200, made.clone())
        );
        let (status, _, body) = server
            .send(
                "PUT",
                "/notes/31",
                Some(json!({"title": "renamed", "body": "b", "stars": 1})),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            serde_json::from_str::<Note>(&body).unwrap().title,
            "renamed"
        );
        // A title that is taken: 409; a row that is not there: 404.
        let (status, _, _) = server
            .send(
                "PUT",
                "/notes/31",
                Some(json!({"title": "note 01", "body": "", "stars": 1})),
            )
            .await;
        assert_eq!(status, 409, "{backend:?}");
        let (status, _, _) = server
            .send(
                "PUT",
                "/notes/99",
                Some(json!({"title": "x", "body": "", "stars": 1})),
            )
            .await;
        assert_eq!(status, 404, "{backend:?}");
        assert_eq!(server.send("DELETE", "/notes/31", None).await.0, 204);
        assert_eq!(server.send("DELETE", "/notes/31", None).await.0, 404);
        assert_eq!(server.send("GET", "/notes/31", None).await.0, 404);
    }
}

/// A NUL character in a text field: PostgreSQL's text refuses it (the
/// driver's error was a 500 and an ERROR in the log per request), SQLite
/// kept it. Both now answer 422 naming the field, before any query, and
/// store nothing.
#[tokio::test]
async fn a_nul_in_a_text_field_is_a_422_naming_it_on_both_backends() {
    for backend in BACKENDS {
        let Some(server) = seeded(backend).await else {
            continue;
        };
        for (method, path) in [("POST", "/notes"), ("PUT", "/notes/1")] {
            for (field, note) in [
                ("title", json!({"title": "a\u{0}b", "body": "", "stars": 1})),
                (
                    "body",
                    json!({"title": "fine", "body": "x\u{0}", "stars": 1}),
                ),
            ] {
                let (status, _, body) = server.send(method, path, Some(note)).await;
                assert_eq!(status, 422, "{backend:?} {method} {field}: {body}");
                assert!(
                    body.contains(&format!("`{field}` must not contain a NUL")),
                    "{backend:?}: {body}"
                );
            }
        }
        let (_, _, body) = server.send("GET", "/notes?per_page=100", None).await;
        let (total, titles) = page(&body);
        assert_eq!(total, 30, "{backend:?}: a row was written");
        assert!(titles.iter().all(|t| !t.contains('\0')));
        assert_eq!(titles.iter().filter(|t| *t == "note 01").count(), 1);
    }
}

#[tokio::test]
async fn lists_filter_search_order_and_page() {
    for backend in BACKENDS {
        let Some(server) = seeded(backend).await else {
            continue;
        };
        let get = |q: &'static str| {
            let server = &server;
            async move {
                let (status, _, body) = server.send("GET", &format!("/notes?{q}"), None).await;
                assert_eq!(status, 200, "{backend:?} {q}: {body}");
                page(&body)
            }
        };
        let (total, titles) = get("").await;
        assert_eq!((total, titles.len()), (30, 20));
        assert_eq!(titles[0], "note 01");
        let (total, titles) = get("page=2&per_page=25").await;
        assert_eq!((total, titles.len()), (30, 5));
        assert_eq!(titles[0], "note 26");
        // Search is case-insensitive, over the searchable columns.
        let (total, _) = get("q=TEA").await;
        assert_eq!(total, 10, "{backend:?}");
        let (total, titles) = get("q=note%2007").await;
        assert_eq!((total, titles), (1, vec!["note 07".to_owned()]));
        // `%` and `_` in a search are literal.
        assert_eq!(get("q=%25").await.0, 0);
        assert_eq!(get("q=_").await.0, 0);
        // Filters, with comparisons; order, descending.
        let (total, titles) = get("stars=4&order=-title").await;
        assert_eq!(total, 6);
        assert_eq!(titles[0], "note 29");
        assert_eq!(get("stars__ge=3").await.0, 12);
        assert_eq!(get("stars__ne=0&q=tea").await.0, 8);
        let (_, titles) = get("order=-stars&per_page=3").await;
        assert_eq!(titles, ["note 04", "note 09", "note 14"]);
    }
}

/// Every list parameter, with payloads that would change or reveal data if
/// any reached the statement's text. Each answer is a 200 that matches
/// nothing or a 400; the rows are the same afterwards.
#[tokio::test]
async fn sql_injection_through_every_list_parameter_changes_nothing() {
    let payloads = [
        "' OR '1'='1",
        "1; DROP TABLE notes; --",
        "1' ; DELETE FROM notes; --",
        "\" OR \"\"=\"",
        "1 OR 1=1",
        "') OR ('a'='a",
        "1 UNION SELECT id, title, body, stars FROM notes --",
        "%' AND 1=0 UNION SELECT 1,2,3,4 --",
        "title; DROP TABLE notes",
        "\\'; DROP TABLE notes; --",
        "id\"; DROP TABLE notes; --",
        "stars) OR (1=1",
        "0x27",
        "1e999",
        "NaN",
        "\u{0}",
    ];
    for backend in BACKENDS {
        let Some(server) = seeded(backend).await else {
            continue;
        };
        let (_, _, before) = server.send("GET", "/notes?per_page=500", None).await;
        for payload in payloads {
            let value: String = url_encode(payload);
            for target in [
                format!("/notes?q={value}"),
                format!("/notes?title={value}"),
                format!("/notes?stars={value}"),
                format!("/notes?stars__gt={value}"),
                format!("/notes?order={value}"),
                format!("/notes?order=-{value}"),
                format!("/notes?{value}=1"),
                format!("/notes?{value}__ne=1"),
                format!("/notes?page={value}"),
                format!("/notes?per_page={value}"),
            ] {
                let (status, head, body) = server.send("GET", &target, None).await;
                match status {
                    200 => {
                        let (total, _) = page(&body);
                        assert_eq!(total, 0, "{backend:?} {target}: matched rows: {body}");
                    }
                    400 => assert!(head.contains("application/problem+json"), "{head}"),
                    other => panic!("{backend:?} {target}: {other} {body}"),
                }
            }
        }
        let (_, _, after) = server.send("GET", "/notes?per_page=500", None).await;
        assert_eq!(before, after, "{backend:?}: the rows changed");
        assert_eq!(page(&after).0, 30);
    }
}

#[tokio::test]
async fn a_bad_list_parameter_is_a_400_naming_it() {
    let Some(server) = seeded(Backend::Sqlite).await else {
        return;
    };
    for (q, says) in [
        (
            "order=body",
            "`order`: `body` is not a column this list can be ordered by (id, title, stars)",
        ),
        ("colour=red", "`colour` is not a parameter of this list"),
        ("stars=many", "`stars` must be an integer (it is `many`)"),
        ("per_page=501", "`per_page` must be at most 500"),
        ("page=0", "`page` must be a whole number from 1"),
    ] {
        let (status, _, body) = server.send("GET", &format!("/notes?{q}"), None).await;
        assert_eq!(status, 400, "{q}");
        assert!(body.contains(says), "{q}: {body}");
    }
    let many: Vec<String> = (0..33).map(|i| format!("stars={i}")).collect();
    let (status, _, body) = server
        .send("GET", &format!("/notes?{}", many.join("&")), None)
        .await;
    assert_eq!(status, 400);
    assert!(body.contains("at most 32 parameters"), "{body}");
}

/// `#[model(unique)]` on `title` (UNIQUE in migration 0001): found, a
/// `404` when absent, `None` from `_opt`, and the `_in` forms see the
/// transaction's own uncommitted row, which the pool does not.
#[tokio::test]
async fn unique_columns_have_finders() {
    let title = Note::column("title").unwrap();
    assert!(title.unique);
    assert!(!Note::column("body").unwrap().unique);
    assert!(!Note::column("id").unwrap().unique);
    for backend in BACKENDS {
        let Some(server) = seeded(backend).await else {
            continue;
        };
        let pool = server.db().pool().clone();
        let found = Note::find_by_title(&pool, "note 07").await.unwrap();
        assert_eq!((found.id, found.stars), (7, 2), "{backend:?}");
        assert_eq!(
            Note::find_by_title_opt(&pool, "note 08").await.unwrap(),
            Some(Note::get(&pool, 8).await.unwrap())
        );
        let missing = Note::find_by_title(&pool, "note 99").await.unwrap_err();
        assert!(matches!(missing, DataError::Sqlx(_)), "{missing:?}");
        assert_eq!(
            tern::IntoResponse::into_response(missing).status(),
            StatusCode::NOT_FOUND,
            "{backend:?}"
        );
        assert_eq!(
            Note::find_by_title_opt(&pool, "note 99").await.unwrap(),
            None
        );
        // The value is bound: a quote finds nothing and breaks nothing.
        assert_eq!(
            Note::find_by_title_opt(&pool, "' OR '1'='1").await.unwrap(),
            None
        );

        let mut tx = match &pool {
            Pool::Sqlite(p) => Transaction::Sqlite(p.begin().await.unwrap()),
            Pool::Postgres(p) => Transaction::Postgres(p.begin().await.unwrap()),
        };
        let made = Note {
            id: 0,
            title: "uncommitted".into(),
            body: String::new(),
            stars: 3,
        }
        .insert_in(&mut tx)
        .await
        .unwrap();
        assert_eq!(
            Note::find_by_title_in(&mut tx, "uncommitted")
                .await
                .unwrap(),
            made
        );
        assert_eq!(
            Note::find_by_title_opt_in(&mut tx, "uncommitted")
                .await
                .unwrap(),
            Some(made)
        );
        assert_eq!(
            Note::find_by_title_opt_in(&mut tx, "note 99")
                .await
                .unwrap(),
            None
        );
        let missing = Note::find_by_title_in(&mut tx, "note 99")
            .await
            .unwrap_err();
        assert_eq!(
            tern::IntoResponse::into_response(missing).status(),
            StatusCode::NOT_FOUND
        );
        // Another connection does not see it.
        assert_eq!(
            Note::find_by_title_opt(&pool, "uncommitted").await.unwrap(),
            None
        );
        drop(tx);
        assert_eq!(
            Note::find_by_title_opt(&pool, "uncommitted").await.unwrap(),
            None
        );
    }
}

/// Unique columns that are not text: a UUID (`&Uuid`), and an optional
/// date-time (`&OffsetDateTime`, the inner type).
#[derive(Debug, Clone, PartialEq, Model)]
#[model(table = "slots")]
struct Slot {
    #[model(primary_key)]
    id: i64,
    #[model(unique)]
    public_id: Uuid,
    #[model(unique)]
    starts: Option<OffsetDateTime>,
}

/// On SQLite a date-time is found only if the finder binds it as the model
/// wrote it (UTC, fixed width): here it is asked for in another offset,
/// with a fraction sqlx's own text would trim.
#[tokio::test]
async fn unique_uuid_and_date_time_columns_have_finders() {
    assert!(Slot::column("public_id").unwrap().unique && Slot::column("starts").unwrap().unique);
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let db = Database::from_url(&url).unwrap();
        let sql = match backend {
            Backend::Sqlite => {
                "CREATE TABLE slots (id INTEGER PRIMARY KEY AUTOINCREMENT, \
                 public_id BLOB NOT NULL UNIQUE, starts TEXT UNIQUE)"
            }
            Backend::Postgres => {
                "CREATE TABLE slots (id BIGSERIAL PRIMARY KEY, \
                 public_id UUID NOT NULL UNIQUE, starts TIMESTAMPTZ UNIQUE)"
            }
        };
        with_pool!(db.pool(), p => {
            tern_data::sqlx::raw_sql(sql).execute(p).await.unwrap();
        });
        let pool = db.pool();
        let at = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
            + Duration::milliseconds(500);
        let made = Slot {
            id: 0,
            public_id: Uuid::new_v4(),
            starts: Some(at),
        }
        .insert(pool)
        .await
        .unwrap();
        let east = at.to_offset(UtcOffset::from_hms(2, 0, 0).unwrap());
        assert_eq!(
            Slot::find_by_starts(pool, &east).await.unwrap(),
            made,
            "{backend:?}"
        );
        assert_eq!(
            Slot::find_by_starts_opt(pool, &(at + Duration::seconds(1)))
                .await
                .unwrap(),
            None
        );
        assert_eq!(
            Slot::find_by_public_id(pool, &made.public_id)
                .await
                .unwrap(),
            made
        );
        assert_eq!(
            Slot::find_by_public_id_opt(pool, &Uuid::new_v4())
                .await
                .unwrap(),
            None
        );
    }
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
