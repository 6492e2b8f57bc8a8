//! Date-time and UUID columns through `#[derive(Model)]`, on SQLite and
//! PostgreSQL: written, read back equal, updated, and ordered by time
//! (whole seconds, fractions and other offsets mixed).
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::{fresh, BACKENDS};
use tern_data::{
    model::List,
    sqlx::{self, AssertSqlSafe},
    time::{Duration, UtcOffset},
    with_pool, Backend, Database, Model, OffsetDateTime, Uuid,
};

#[derive(Debug, Clone, PartialEq, Model)]
#[model(table = "events")]
struct Event {
    #[model(primary_key)]
    id: i64,
    public_id: Uuid,
    #[model(sortable)]
    at: OffsetDateTime,
    done_at: Option<OffsetDateTime>,
    parent: Option<Uuid>,
}

const SQLITE: &str = "CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, \
     public_id BLOB NOT NULL UNIQUE, at TEXT NOT NULL, done_at TEXT, parent BLOB)";
const POSTGRES: &str = "CREATE TABLE events (id BIGSERIAL PRIMARY KEY, \
     public_id UUID NOT NULL UNIQUE, at TIMESTAMPTZ NOT NULL, done_at TIMESTAMPTZ, parent UUID)";

async fn database(backend: Backend) -> Option<Database> {
    let url = fresh(backend).await?;
    let db = Database::from_url(&url).unwrap();
    let sql = match backend {
        Backend::Sqlite => SQLITE,
        Backend::Postgres => POSTGRES,
    };
    with_pool!(db.pool(), p => {
        sqlx::raw_sql(sql).execute(p).await.unwrap();
    });
    Some(db)
}

/// PostgreSQL keeps microseconds: times with whole microseconds compare
/// equal after a round trip on both databases.
fn base() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
}

fn event(at: OffsetDateTime) -> Event {
    Event {
        id: 0,
        public_id: Uuid::new_v4(),
        at,
        done_at: None,
        parent: None,
    }
}

#[tokio::test]
async fn date_times_and_uuids_round_trip() {
    for backend in BACKENDS {
        let Some(db) = database(backend).await else {
            continue;
        };
        let pool = db.pool();
        let east = UtcOffset::from_hms(2, 0, 0).unwrap();
        let mut first = event((base() + Duration::microseconds(250)).to_offset(east));
        first.done_at = Some(base() + Duration::days(1));
        let stored = first.insert(pool).await.unwrap();
        first.id = stored.id;
        // The same instant (`OffsetDateTime` compares instants) and the
        // same UUID.
        assert_eq!(stored, first, "{backend:?}");
        let read = Event::get(pool, stored.id).await.unwrap();
        assert_eq!(read, first, "{backend:?}");
        assert_eq!(
            read.at.unix_timestamp_nanos(),
            first.at.unix_timestamp_nanos()
        );

        let mut second = event(base());
        second.parent = Some(first.public_id);
        let second = second.insert(pool).await.unwrap();
        assert_eq!(
            Event::get(pool, second.id).await.unwrap().parent,
            Some(first.public_id)
        );

        let mut changed = read.clone();
        changed.at = base() - Duration::hours(5);
        changed.done_at = None;
        changed.public_id = Uuid::new_v4();
        assert_eq!(changed.update(pool).await.unwrap(), changed, "{backend:?}");
        assert_eq!(
            Event::get(pool, changed.id).await.unwrap(),
            changed,
            "{backend:?}"
        );

        // The UUID is found by a bound parameter of its own type.
        let sql = "SELECT id FROM events WHERE public_id = $1";
        let id: i64 = with_pool!(pool, p => sqlx::query_scalar(sql)
            .bind(changed.public_id)
            .fetch_one(p)
            .await
            .unwrap());
        assert_eq!(id, changed.id);
    }
}

#[tokio::test]
async fn ordered_by_time() {
    for backend in BACKENDS {
        let Some(db) = database(backend).await else {
            continue;
        };
        let pool = db.pool();
        let east = UtcOffset::from_hms(2, 0, 0).unwrap();
        let west = UtcOffset::from_hms(-7, 0, 0).unwrap();
        // Inserted out of order; as text in sqlx's own format (RFC 3339,
        // trimmed fraction, the value's offset) SQLite would put `:00.5Z`
        // before `:00Z` and `+02:00` among `Z`s.
        let times = [
            base() + Duration::milliseconds(500),
            base(),
            (base() + Duration::seconds(1)).to_offset(east),
            base() + Duration::microseconds(1),
            (base() - Duration::minutes(30)).to_offset(east),
            (base() + Duration::hours(3)).to_offset(west),
            base() + Duration::seconds(1) + Duration::microseconds(999_999),
        ];
        for at in times {
            event(at).insert(pool).await.unwrap();
        }
        let mut expected = times.to_vec();
        expected.sort();

        let sql = format!("{} ORDER BY \"at\"", Event::SELECT_ALL);
        let rows: Vec<Event> = with_pool!(pool, p => sqlx::query_as(AssertSqlSafe(sql.clone()))
            .fetch_all(p)
            .await
            .unwrap());
        let got: Vec<OffsetDateTime> = rows.iter().map(|e| e.at).collect();
        assert_eq!(got, expected, "{backend:?}: ORDER BY");

        // A list ordered by the column, descending, the client's way.
        let pairs = [("order".to_owned(), "-at".to_owned())];
        let list = List::from_pairs::<Event>(&pairs).unwrap();
        let page = Event::list(pool, &list).await.unwrap();
        let got: Vec<OffsetDateTime> = page.items.iter().map(|e| e.at).collect();
        expected.reverse();
        assert_eq!(got, expected, "{backend:?}: list order=-at");
    }
}
