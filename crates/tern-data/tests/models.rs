//! `#[derive(Model)]` over real sockets, on SQLite and PostgreSQL: CRUD,
//! lists with filters, search, order and pages, and SQL injection through
//! every list parameter; `Fields` (rows as form text, both ways) and the
//! declared text checks (`max_length`, `choices`).
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
    model::{Column, Kind, Widget},
    time::{Duration, UtcOffset},
    with_pool, Backend, DataError, Database, Db, Encrypted, FieldValue, Fields, Input, JsonColumn,
    ListQuery, Migrations, Model, OffsetDateTime, Page, Pool, Transaction, Uuid,
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
    // No `name`/`plural`: the struct's name in words, and `s`.
    assert_eq!((Note::NAME, Note::PLURAL), ("note", "notes"));
    assert_eq!(
        (Item::NAME, Item::PLURAL),
        ("catalogue item", "catalogue items")
    );
    assert_eq!((Vault::NAME, Vault::PLURAL), ("vault", "vaults"));
    let title: &Column = Note::column("title").unwrap();
    assert_eq!(title.max_length, None);
    assert!(title.choices.is_empty() && title.references.is_none());
    assert_eq!(title.widget, Widget::Default);
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

/// Every field type a form reads: the round trip's model.
#[derive(Debug, Clone, PartialEq, Model)]
#[model(table = "items", name = "catalogue item", plural = "catalogue items")]
struct Item {
    #[model(primary_key)]
    id: i64,
    #[model(max_length = 10, widget = "textarea")]
    title: String,
    #[model(choices("draft", "published"))]
    status: String,
    #[model(max_length = 5)]
    note: Option<String>,
    count: i32,
    small: i16,
    ratio: f64,
    flag: bool,
    at: OffsetDateTime,
    until: Option<OffsetDateTime>,
    public_id: Uuid,
    #[model(references = "notes")]
    note_id: Option<i64>,
    tags: JsonColumn<Vec<String>>,
    raw: Vec<u8>,
}

/// Fields named like `from_form`'s own names: it compiles, and reads them.
#[derive(Debug, Clone, PartialEq, Model)]
struct Clash {
    #[model(primary_key)]
    id: i64,
    #[model(max_length = 3)]
    input: String,
    errors: Option<String>,
    column: String,
    base: i64,
    text: String,
}

#[test]
fn field_names_do_not_clash_with_the_generated_code() {
    let form = [
        ("input", Some("abcd".to_owned())),
        ("errors", Some("e".to_owned())),
        ("column", Some("c".to_owned())),
        ("base", Some("4".to_owned())),
        ("text", Some("t".to_owned())),
    ];
    let errors = from::<Clash>(&form, None).unwrap_err();
    assert_eq!(
        errors,
        [("input", "has at most 3 characters (this has 4)".to_owned())]
    );
    let mut form = form;
    form[0].1 = Some("abc".to_owned());
    let row: Clash = from(&form, None).unwrap();
    assert_eq!(
        row,
        Clash {
            id: 0,
            input: "abc".to_owned(),
            errors: Some("e".to_owned()),
            column: "c".to_owned(),
            base: 4,
            text: "t".to_owned(),
        }
    );
}

/// Encrypted values and bytes, as a form sees them (no database: the
/// keys are another test's).
#[derive(Debug, Clone, PartialEq, Model)]
struct Vault {
    #[model(primary_key)]
    id: i64,
    secret: Encrypted<String>,
    maybe: Option<Encrypted<String>>,
    raw: Option<Vec<u8>>,
}

async fn items_table(db: &Database, backend: Backend) {
    let sql = match backend {
        Backend::Sqlite => {
            "CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, \
             status TEXT NOT NULL, note TEXT, count INTEGER NOT NULL, small INTEGER NOT NULL, \
             ratio REAL NOT NULL, flag BOOLEAN NOT NULL, at TEXT NOT NULL, until TEXT, \
             public_id BLOB NOT NULL, note_id BIGINT, tags TEXT NOT NULL, raw BLOB NOT NULL)"
        }
        Backend::Postgres => {
            "CREATE TABLE items (id BIGSERIAL PRIMARY KEY, title TEXT NOT NULL, \
             status TEXT NOT NULL, note TEXT, count INTEGER NOT NULL, small SMALLINT NOT NULL, \
             ratio DOUBLE PRECISION NOT NULL, flag BOOLEAN NOT NULL, at TIMESTAMPTZ NOT NULL, \
             until TIMESTAMPTZ, public_id UUID NOT NULL, note_id BIGINT, tags JSONB NOT NULL, \
             raw BYTEA NOT NULL)"
        }
    };
    with_pool!(db.pool(), p => {
        tern_data::sqlx::raw_sql(sql).execute(p).await.unwrap();
    });
}

fn an_item() -> Item {
    Item {
        id: 0,
        title: "Ærø café".to_owned(),
        status: "draft".to_owned(),
        note: Some("hi".to_owned()),
        count: -42,
        small: 7,
        ratio: 0.1 + 0.2,
        flag: true,
        at: OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
            + Duration::microseconds(250),
        until: None,
        public_id: Uuid::new_v4(),
        note_id: Some(3),
        tags: JsonColumn(vec!["a".to_owned(), "b".to_owned()]),
        raw: vec![1, 2, 3],
    }
}

/// What a form page sends for `row`: each value's text, the key and the
/// columns not typed in (bytes, JSON) kept; an unticked checkbox absent.
fn form_of<M: Fields>(row: &M) -> Vec<(&'static str, Option<String>)> {
    M::COLUMNS
        .iter()
        .zip(row.values())
        .filter(|(c, _)| !c.primary_key && c.kind != Kind::Bytes && c.name != "tags")
        .map(|(c, v)| match v {
            FieldValue::Bool(false) => (c.name, None),
            FieldValue::Bool(true) => (c.name, Some("on".to_owned())),
            v => (c.name, Some(v.form_text())),
        })
        .collect()
}

fn from<M: Fields>(
    form: &[(&'static str, Option<String>)],
    base: Option<&M>,
) -> Result<M, Vec<(&'static str, String)>> {
    M::from_form(
        &|c: &'static Column| match form.iter().find(|(n, _)| *n == c.name) {
            Some((_, v)) => Input::Given(v.as_deref()),
            None => Input::Keep,
        },
        base,
    )
}

#[tokio::test]
async fn fields_round_trip() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let db = Database::from_url(&url).unwrap();
        items_table(&db, backend).await;
        let pool = db.pool();
        let stored = an_item().insert(pool).await.unwrap();
        assert_eq!(Item::parse_key(&stored.key_text()), Some(stored.id));
        assert_eq!(Item::parse_key("abc"), None, "{backend:?}");
        assert_eq!(Item::get(pool, stored.id).await.unwrap(), stored);
        let values = stored.values();
        assert_eq!(values.len(), Item::COLUMNS.len());
        assert_eq!(values[7], FieldValue::Bool(true));
        assert_eq!(values[9], FieldValue::Null);
        assert_eq!(values[13], FieldValue::Binary(3));
        assert_eq!(values[12], FieldValue::Text(r#"["a","b"]"#.to_owned()));

        // An edit: the form's text read back is the same row.
        let form = form_of(&stored);
        let edited: Item = from(&form, Some(&stored)).unwrap();
        assert_eq!(edited, stored, "{backend:?}");
        assert_eq!(edited.update(pool).await.unwrap(), stored, "{backend:?}");

        // A create from the same text: the same values, a new key; the
        // kept columns are placeholders.
        let made: Item = from(&form, None).unwrap();
        assert_eq!(made.id, 0);
        assert_eq!((made.tags.0.len(), made.raw.len()), (0, 0));
        let made = made.insert(pool).await.unwrap();
        assert_ne!(made.id, stored.id);
        assert_eq!(
            Item {
                id: stored.id,
                tags: stored.tags.clone(),
                raw: stored.raw.clone(),
                ..made
            },
            stored,
            "{backend:?}"
        );

        // Changed text is read as typed: a date-time in another form, the
        // checkbox unticked, an optional value emptied, another set.
        let mut changed = form.clone();
        for (name, value) in &mut changed {
            *value = match *name {
                "flag" => None,
                "note" => Some(String::new()),
                "until" => Some("2026-12-04T10:30".to_owned()),
                "ratio" => Some(" 2.5 ".to_owned()),
                _ => value.clone(),
            };
        }
        let edited: Item = from(&changed, Some(&stored)).unwrap();
        assert!(!edited.flag && edited.note.is_none() && edited.ratio == 2.5);
        assert_eq!(
            edited.until,
            Some(OffsetDateTime::from_unix_timestamp(1_796_380_200).unwrap())
        );
        let saved = edited.update(pool).await.unwrap();
        assert_eq!(saved, edited, "{backend:?}");
    }
}

#[test]
fn every_problem_of_a_form_is_named_once() {
    let stored = Item { id: 5, ..an_item() };
    let mut form = form_of(&stored);
    for (name, value) in &mut form {
        *value = match *name {
            "title" => Some("x".repeat(11)),
            "status" => Some("archived".to_owned()),
            "note" => Some("abc\0".to_owned()),
            "count" => Some("many".to_owned()),
            "small" => Some("70000".to_owned()),
            "ratio" => Some("NaN".to_owned()),
            "flag" => Some("maybe".to_owned()),
            "at" => None,
            "public_id" => Some("nope".to_owned()),
            "note_id" => Some("1.5".to_owned()),
            _ => value.clone(),
        };
    }
    let errors = from::<Item>(&form, Some(&stored)).unwrap_err();
    let names: Vec<&str> = errors.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "title",
            "status",
            "note",
            "count",
            "small",
            "ratio",
            "flag",
            "at",
            "public_id",
            "note_id"
        ]
    );
    let says = |name: &str| errors.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    assert_eq!(says("title"), "has at most 10 characters (this has 11)");
    assert_eq!(says("status"), "must be one of: draft, published");
    assert!(says("note").contains("NUL"), "{errors:?}");
    assert_eq!(says("at"), "this field is required");
    assert!(says("count").contains("whole number"), "{errors:?}");
    // A length in characters, not bytes: ten non-ASCII ones are fine.
    let mut ok = form_of(&stored);
    ok[0].1 = Some("é".repeat(10));
    assert_eq!(
        from::<Item>(&ok, Some(&stored)).unwrap().title,
        "é".repeat(10)
    );
}

#[test]
fn encrypted_values_are_secrets_and_bytes_are_kept() {
    let vault = Vault {
        id: 1,
        secret: Encrypted("hush".to_owned()),
        maybe: None,
        raw: Some(vec![0; 4]),
    };
    assert_eq!(
        vault.values(),
        [
            FieldValue::Text("1".to_owned()),
            FieldValue::Secret("hush".to_owned()),
            FieldValue::Null,
            FieldValue::Binary(4),
        ]
    );
    // Never in a `Debug`.
    assert!(!format!("{:?}", vault.values()).contains("hush"));
    let form = vec![
        ("secret", Some("new".to_owned())),
        ("maybe", Some("also".to_owned())),
    ];
    let edited: Vault = from(&form, Some(&vault)).unwrap();
    assert_eq!(edited.secret, Encrypted("new".to_owned()));
    assert_eq!(edited.maybe, Some(Encrypted("also".to_owned())));
    assert_eq!(edited.raw, Some(vec![0; 4]));
    let errors =
        from::<Vault>(&[("secret", None), ("raw", Some("x".to_owned()))], None).unwrap_err();
    assert_eq!(
        errors.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        ["secret", "raw"]
    );
}

#[tokio::test]
async fn max_length_and_choices_refused_on_insert() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let db = Database::from_url(&url).unwrap();
        items_table(&db, backend).await;
        let pool = db.pool();
        for (item, names, says) in [
            (
                Item {
                    title: "x".repeat(11),
                    ..an_item()
                },
                "`title`",
                "at most 10",
            ),
            (
                Item {
                    status: "Draft".to_owned(),
                    ..an_item()
                },
                "`status`",
                "one of: draft",
            ),
            (
                Item {
                    note: Some("toolong".to_owned()),
                    ..an_item()
                },
                "`note`",
                "at most 5",
            ),
            (
                Item {
                    title: "a\0b".to_owned(),
                    ..an_item()
                },
                "`title`",
                "NUL",
            ),
        ] {
            let e = item.insert(pool).await.unwrap_err();
            assert_eq!(
                e.status(),
                StatusCode::UNPROCESSABLE_ENTITY,
                "{backend:?}: {e}"
            );
            let text = e.to_string();
            assert!(
                text.contains(names) && text.contains(says),
                "{backend:?}: {text}"
            );
            // The same on update, and nothing written.
            let stored = an_item().insert(pool).await.unwrap();
            let e = Item {
                id: stored.id,
                ..item
            }
            .update(pool)
            .await
            .unwrap_err();
            assert_eq!(e.status(), StatusCode::UNPROCESSABLE_ENTITY);
            assert_eq!(Item::get(pool, stored.id).await.unwrap(), stored);
        }
        // At the limits: stored.
        let edge = Item {
            title: "é".repeat(10),
            status: "published".to_owned(),
            note: Some("12345".to_owned()),
            ..an_item()
        };
        let stored = edge.insert(pool).await.unwrap();
        assert_eq!(stored.title, "é".repeat(10), "{backend:?}");
        let n: i64 = with_pool!(pool, p => {
            tern_data::sqlx::query_scalar("SELECT COUNT(*) FROM items").fetch_one(p).await.unwrap()
        });
        assert_eq!(n, 5, "{backend:?}: four good rows and the edge");
    }
}
