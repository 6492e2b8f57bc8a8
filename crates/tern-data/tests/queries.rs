//! Hand-written statements through `tern_data::query`, on SQLite and
//! PostgreSQL: one answer type for both databases, rows read as models,
//! `Row` structs and tuples, typed `NULL`s, date-times that sort with the
//! model's, and a helper that runs on the pool or in a transaction.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::{fresh, BACKENDS};
use tern_data::{
    query,
    time::{Duration, UtcOffset},
    Backend, Conn, DataError, Database, Done, JsonColumn, Model, OffsetDateTime, Row, Uuid,
};

#[derive(Debug, Clone, PartialEq, Model)]
#[model(table = "events")]
struct Event {
    #[model(primary_key)]
    id: i64,
    #[model(unique)]
    name: String,
    #[model(sortable)]
    at: OffsetDateTime,
    note: Option<String>,
    public_id: Option<Uuid>,
    tags: JsonColumn<Vec<String>>,
}

#[derive(Debug, PartialEq, Row)]
struct Named {
    name: String,
    #[row(rename = "n")]
    count: i64,
}

/// A row with another row inside, read from the same columns.
#[derive(Debug, PartialEq, Row)]
struct Tally {
    #[row(rename = "n")]
    count: i64,
    #[row(flatten)]
    named: Named,
}

const SQLITE: &str = "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, \
     name TEXT NOT NULL UNIQUE, at TEXT NOT NULL, note TEXT, public_id BLOB, \
     tags TEXT NOT NULL DEFAULT '[]')";
const POSTGRES: &str = "CREATE TABLE events (id BIGSERIAL PRIMARY KEY, \
     name TEXT NOT NULL UNIQUE, at TIMESTAMPTZ NOT NULL, note TEXT, public_id UUID, \
     tags JSONB NOT NULL DEFAULT '[]')";

async fn database(backend: Backend) -> Option<Database> {
    let url = fresh(backend).await?;
    let db = Database::from_url(&url).unwrap();
    let sql = match backend {
        Backend::Sqlite => SQLITE,
        Backend::Postgres => POSTGRES,
    };
    query(sql).execute(db.pool()).await.unwrap();
    Some(db)
}

fn base() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
}

const INSERT: &str =
    "INSERT INTO events (name, at, note, public_id, tags) VALUES ($1, $2, $3, $4, $5)";

#[tokio::test]
async fn statements_rows_and_scalars_on_both_databases() {
    for backend in BACKENDS {
        let Some(db) = database(backend).await else {
            continue;
        };
        let pool = db.pool();
        let id = Uuid::new_v4();
        let done = query(INSERT)
            .bind("a")
            .bind(base())
            .bind(None::<String>) // a typed NULL: PostgreSQL checks it
            .bind(Some(id))
            .bind(JsonColumn::from(vec!["x".to_owned(), "y".to_owned()]))
            .execute(pool)
            .await
            .unwrap();
        assert_eq!(done, Done { rows_affected: 1 }, "{backend:?}");
        let name = String::from("b");
        query(INSERT)
            .bind(&name)
            .bind(base() + Duration::seconds(1))
            .bind(Some("noted"))
            .bind(None::<Uuid>)
            .bind(JsonColumn::from(Vec::<String>::new()))
            .execute(pool)
            .await
            .unwrap();

        // A model, a `Row` struct, tuples, a scalar.
        let a: Event = query("SELECT * FROM events WHERE public_id = $1")
            .bind(id)
            .fetch_one(pool)
            .await
            .unwrap();
        assert_eq!((a.name.as_str(), a.note.as_deref()), ("a", None));
        assert_eq!(a.at, base(), "{backend:?}");
        assert_eq!(a.tags.0, ["x", "y"], "{backend:?}");
        let named: Named =
            query("SELECT name, COUNT(*) AS n FROM events WHERE name = $1 GROUP BY name")
                .bind("b")
                .fetch_one(pool)
                .await
                .unwrap();
        assert_eq!(
            named,
            Named {
                name: "b".into(),
                count: 1
            }
        );
        let tally: Tally =
            query("SELECT name, COUNT(*) AS n FROM events WHERE name = $1 GROUP BY name")
                .bind("b")
                .fetch_one(pool)
                .await
                .unwrap();
        assert_eq!(
            (tally.count, tally.named.name.as_str()),
            (1, "b"),
            "{backend:?}"
        );
        let all: Vec<(String, Option<String>)> =
            query("SELECT name, note FROM events ORDER BY name")
                .fetch_all(pool)
                .await
                .unwrap();
        assert_eq!(
            all,
            [("a".into(), None), ("b".into(), Some("noted".into()))]
        );
        let none: Option<Named> = query("SELECT name, 1 AS n FROM events WHERE name = $1")
            .bind("nobody")
            .fetch_optional(pool)
            .await
            .unwrap();
        assert_eq!(none, None);
        let missing = query("SELECT name, 1 AS n FROM events WHERE name = $1")
            .bind("nobody")
            .fetch_one::<Named>(pool)
            .await
            .unwrap_err();
        assert_eq!(missing.status(), tern::StatusCode::NOT_FOUND);
        let n: i64 = query("SELECT COUNT(*) FROM events WHERE at > $1")
            .bind(base() - Duration::milliseconds(1))
            .scalar(pool)
            .await
            .unwrap();
        assert_eq!(n, 2, "{backend:?}");
        let exists: bool = query("SELECT EXISTS (SELECT 1 FROM events WHERE name = $1)")
            .bind("a")
            .scalar(pool)
            .await
            .unwrap();
        assert!(exists, "{backend:?}");
        // A placeholder used twice and out of order is one value.
        let (a, b): (i64, String) = query("SELECT $2 + $2, $1")
            .bind("one")
            .bind(20_i64)
            .fetch_one(pool)
            .await
            .unwrap();
        assert_eq!((a, b.as_str()), (40, "one"), "{backend:?}");

        // A statement that changes nothing, and a unique conflict (409).
        let gone = query("DELETE FROM events WHERE name = $1")
            .bind("nobody")
            .execute(pool)
            .await
            .unwrap();
        assert_eq!(gone.rows_affected, 0);
        let taken = query(INSERT)
            .bind("a")
            .bind(base())
            .bind(None::<String>)
            .bind(None::<Uuid>)
            .bind(JsonColumn::from(Vec::<String>::new()))
            .execute(pool)
            .await
            .unwrap_err();
        assert_eq!(taken.status(), tern::StatusCode::CONFLICT, "{backend:?}");
        // A client's text is a value, never SQL.
        let n: i64 = query("SELECT COUNT(*) FROM events WHERE name = $1")
            .bind("' OR 1=1 --")
            .scalar(pool)
            .await
            .unwrap();
        assert_eq!(n, 0);
    }
}

/// Date-times bound by `query` and written by the model sort together,
/// and compare by instant, on SQLite too (whose text sqlx would write
/// with the value's offset and a trimmed fraction).
#[tokio::test]
async fn date_times_bound_by_a_query_sort_with_the_models() {
    for backend in BACKENDS {
        let Some(db) = database(backend).await else {
            continue;
        };
        let pool = db.pool();
        let east = UtcOffset::from_hms(2, 0, 0).unwrap();
        let by_model = [
            base() + Duration::milliseconds(500),
            (base() + Duration::seconds(2)).to_offset(east),
        ];
        let by_query = [
            base(),
            (base() + Duration::seconds(1)).to_offset(east),
            base() + Duration::microseconds(1),
        ];
        for (i, at) in by_model.into_iter().enumerate() {
            Event {
                id: 0,
                name: format!("model {i}"),
                at,
                note: None,
                public_id: None,
                tags: JsonColumn::from(vec![]),
            }
            .insert(pool)
            .await
            .unwrap();
        }
        for (i, at) in by_query.into_iter().enumerate() {
            query(INSERT)
                .bind(format!("query {i}"))
                .bind(at)
                .bind(None::<String>)
                .bind(None::<Uuid>)
                .bind(JsonColumn::from(Vec::<String>::new()))
                .execute(pool)
                .await
                .unwrap();
        }
        let names: Vec<(String,)> = query("SELECT name FROM events ORDER BY at")
            .fetch_all(pool)
            .await
            .unwrap();
        let names: Vec<String> = names.into_iter().map(|(n,)| n).collect();
        assert_eq!(
            names,
            ["query 0", "query 2", "model 0", "query 1", "model 1"],
            "{backend:?}"
        );
        // Equality on the instant, whatever the offset it is bound in.
        let found: Option<(String,)> = query("SELECT name FROM events WHERE at = $1")
            .bind(base() + Duration::seconds(2))
            .fetch_optional(pool)
            .await
            .unwrap();
        assert_eq!(found, Some(("model 1".to_owned(),)), "{backend:?}");
        // After a model's own row, by time, with a bound date-time.
        let later: Vec<Event> = query("SELECT * FROM events WHERE at > $1 ORDER BY at DESC")
            .bind((base() + Duration::milliseconds(500)).to_offset(east))
            .fetch_all(pool)
            .await
            .unwrap();
        let later: Vec<&str> = later.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(later, ["model 1", "query 1"], "{backend:?}");
    }
}

/// Runs on whatever it is given: two statements on one `Conn`.
async fn rename_twice(on: impl Into<Conn<'_>>, from: &str, to: &str) -> Result<u64, DataError> {
    let mut c = on.into();
    let first = query("UPDATE events SET name = $1 WHERE name = $2")
        .bind(format!("{to} (draft)"))
        .bind(from.to_owned())
        .execute(&mut c)
        .await?;
    let event = Event::get(&mut c, 1).await?;
    let second = query("UPDATE events SET name = $1 WHERE id = $2")
        .bind(to.to_owned())
        .bind(event.id)
        .execute(&mut c)
        .await?;
    Ok(first.rows_affected + second.rows_affected)
}

#[tokio::test]
async fn a_helper_runs_on_the_pool_or_in_a_transaction() {
    for backend in BACKENDS {
        let Some(db) = database(backend).await else {
            continue;
        };
        let pool = db.pool();
        let event = Event {
            id: 0,
            name: "first".into(),
            at: base(),
            note: None,
            public_id: None,
            tags: JsonColumn::from(vec!["t".into()]),
        }
        .insert(pool)
        .await
        .unwrap();
        assert_eq!(event.id, 1);
        assert_eq!(rename_twice(pool, "first", "second").await.unwrap(), 2);
        assert_eq!(Event::get(pool, 1).await.unwrap().name, "second");

        // In a transaction rolled back: nothing stays. The model's own
        // methods take the transaction too.
        let mut tx = match pool {
            tern_data::Pool::Sqlite(p) => tern_data::Transaction::Sqlite(p.begin().await.unwrap()),
            tern_data::Pool::Postgres(p) => {
                tern_data::Transaction::Postgres(p.begin().await.unwrap())
            }
        };
        assert_eq!(rename_twice(&mut tx, "second", "third").await.unwrap(), 2);
        let inside = Event::find_by_name_opt(&mut tx, "third").await.unwrap();
        assert_eq!(inside.map(|e| e.id), Some(1), "{backend:?}");
        let mut changed = Event::get(&mut tx, 1).await.unwrap();
        changed.note = Some("in the transaction".into());
        changed.update(&mut tx).await.unwrap();
        Event::delete(&mut tx, 1).await.unwrap();
        assert_eq!(
            Event::get(&mut tx, 1).await.unwrap_err().status(),
            tern::StatusCode::NOT_FOUND
        );
        // Lists see the transaction's rows too (none now), the pool its
        // own (the row, uncommitted changes unseen).
        let list = tern_data::model::List::default();
        assert_eq!(Event::list(&mut tx, &list).await.unwrap().total, 0);
        let listing = tern_data::Listing::<tern_data::Pages>::default();
        let listed = query("SELECT * FROM events")
            .list::<Event, _>(&mut tx, &listing)
            .await
            .unwrap();
        assert_eq!(listed.total, 0, "{backend:?}");
        let listed = query("SELECT * FROM events")
            .list::<Event, _>(pool, &listing)
            .await
            .unwrap();
        assert_eq!((listed.total, listed.items[0].name.as_str()), (1, "second"));
        drop(tx); // rolled back
        let after = Event::get(pool, 1).await.unwrap();
        assert_eq!(
            (after.name.as_str(), after.note),
            ("second", None),
            "{backend:?}"
        );
    }
}

#[tokio::test]
async fn json_columns_round_trip() {
    for backend in BACKENDS {
        let Some(db) = database(backend).await else {
            continue;
        };
        let pool = db.pool();
        let tags = vec!["dragons".to_owned(), "o'clock \"quoted\"".to_owned()];
        let mut event = Event {
            id: 0,
            name: "tagged".into(),
            at: base(),
            note: None,
            public_id: None,
            tags: JsonColumn::from(tags.clone()),
        }
        .insert(pool)
        .await
        .unwrap();
        assert_eq!(event.tags.0, tags, "{backend:?}");
        assert_eq!(Event::get(pool, event.id).await.unwrap(), event);
        event.tags.0.push("training".into());
        event.update(pool).await.unwrap();
        let read = Event::find_by_name(pool, "tagged").await.unwrap();
        assert_eq!(read.tags.0.len(), 3, "{backend:?}");
        assert_eq!(read, event);
        // Stored as JSON text the database can read (`->>`, JSONB on
        // PostgreSQL).
        let sql = match backend {
            Backend::Sqlite => "SELECT json_extract(tags, '$[2]') FROM events WHERE name = $1",
            Backend::Postgres => "SELECT tags->>2 FROM events WHERE name = $1",
        };
        let third: String = query(sql).bind("tagged").scalar(pool).await.unwrap();
        assert_eq!(third, "training", "{backend:?}");
        // As a bound value, compared as JSON.
        let sql = match backend {
            Backend::Sqlite => "SELECT COUNT(*) FROM events WHERE json(tags) = json($1)",
            Backend::Postgres => "SELECT COUNT(*) FROM events WHERE tags = $1",
        };
        let n: i64 = query(sql).bind(&read.tags).scalar(pool).await.unwrap();
        assert_eq!(n, 1, "{backend:?}");
    }
}
