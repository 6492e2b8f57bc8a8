//! Bench peer: the database endpoints on axum 0.8 and sqlx 0.9, doing the
//! same queries as Tern's (`peer-data-tern`) and the same session and
//! CSRF checks, written by hand: the signed cookie (the `cookie` crate's
//! key derived from `SECRET_KEY`, as Tern derives it), the SHA-256 of the
//! token looked up with its user, the expiry, the CSRF token compared in
//! constant time.
//!
//! `BENCH_ADDR`, `DATABASE_URL` (`sqlite://...` or `postgres://...`),
//! `SECRET_KEY`; the pools sized and configured as Tern's defaults
//! (SQLite: 5 connections, WAL, foreign keys, busy timeout 5 s;
//! PostgreSQL: 10). Prints `listening on ADDR`.

use std::{io, str::FromStr, time::Duration};

use axum::{
    extract::{Path, Query, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use cookie::{Cookie, CookieJar, Key};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::{
    postgres::PgPoolOptions,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions},
    PgPool, SqlitePool,
};
use subtle::ConstantTimeEq;

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

#[derive(Clone)]
struct AppState {
    pool: Pool,
    key: Key,
}

#[derive(Serialize)]
struct Row {
    id: i64,
    title: String,
    body: String,
    stars: i32,
}

#[derive(Serialize)]
struct Page {
    items: Vec<Row>,
    total: u64,
    page: u32,
    per_page: u32,
}

#[derive(Deserialize)]
struct PageQuery {
    page: Option<u32>,
}

#[derive(Serialize)]
struct Who {
    id: i64,
    username: String,
}

const ONE: &str = r#"SELECT "id", "title", "body", "stars" FROM "bench_rows" WHERE "id" = $1"#;
const COUNT: &str = r#"SELECT COUNT(*) FROM "bench_rows""#;
const PAGE: &str = r#"SELECT "id", "title", "body", "stars" FROM "bench_rows" ORDER BY "id" ASC LIMIT $1 OFFSET $2"#;
const SESSION: &str =
    "SELECT s.csrf, s.created_at, s.last_seen, u.id, u.username, u.is_staff, u.is_active \
     FROM tern_sessions s JOIN tern_users u ON u.id = s.user_id WHERE s.id_hash = $1";

fn fail(e: sqlx::Error) -> Response {
    match e {
        sqlx::Error::RowNotFound => StatusCode::NOT_FOUND.into_response(),
        _ => StatusCode::SERVICE_UNAVAILABLE.into_response(),
    }
}

type RowTuple = (i64, String, String, i32);

fn row((id, title, body, stars): RowTuple) -> Row {
    Row {
        id,
        title,
        body,
        stars,
    }
}

async fn one(State(s): State<AppState>, Path(id): Path<i64>) -> Result<Json<Row>, Response> {
    let found: Result<RowTuple, _> = match &s.pool {
        Pool::Sqlite(p) => sqlx::query_as(ONE).bind(id).fetch_one(p).await,
        Pool::Postgres(p) => sqlx::query_as(ONE).bind(id).fetch_one(p).await,
    };
    found.map(|r| Json(row(r))).map_err(fail)
}

async fn list(
    State(s): State<AppState>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Page>, Response> {
    let page = q.page.unwrap_or(1).max(1);
    let per_page = 20u32;
    let offset = i64::from(page - 1) * i64::from(per_page);
    let (total, items): (i64, Vec<RowTuple>) = match &s.pool {
        Pool::Sqlite(p) => (
            sqlx::query_scalar(COUNT).fetch_one(p).await.map_err(fail)?,
            sqlx::query_as(PAGE)
                .bind(i64::from(per_page))
                .bind(offset)
                .fetch_all(p)
                .await
                .map_err(fail)?,
        ),
        Pool::Postgres(p) => (
            sqlx::query_scalar(COUNT).fetch_one(p).await.map_err(fail)?,
            sqlx::query_as(PAGE)
                .bind(i64::from(per_page))
                .bind(offset)
                .fetch_all(p)
                .await
                .map_err(fail)?,
        ),
    };
    Ok(Json(Page {
        items: items.into_iter().map(row).collect(),
        total: u64::try_from(total).unwrap_or(0),
        page,
        per_page,
    }))
}

type SessionRow = (String, i64, i64, i64, String, bool, bool);

/// The session's user, checked as Tern checks it.
async fn ping(State(s): State<AppState>, headers: HeaderMap) -> Result<Json<Who>, Response> {
    let forbidden = || StatusCode::FORBIDDEN.into_response();
    let unauthorized = || StatusCode::UNAUTHORIZED.into_response();
    let mut jar = CookieJar::new();
    for value in headers.get_all(header::COOKIE) {
        let Ok(value) = value.to_str() else { continue };
        for c in Cookie::split_parse_encoded(value).flatten() {
            jar.add_original(c.into_owned());
        }
    }
    let token = jar
        .signed(&s.key)
        .get("tern_session")
        .ok_or_else(unauthorized)?;
    let digest: String = Sha256::digest(token.value().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let row: Option<SessionRow> = match &s.pool {
        Pool::Sqlite(p) => {
            sqlx::query_as(SESSION)
                .bind(&digest)
                .fetch_optional(p)
                .await
        }
        Pool::Postgres(p) => {
            sqlx::query_as(SESSION)
                .bind(&digest)
                .fetch_optional(p)
                .await
        }
    }
    .map_err(fail)?;
    let (csrf, created, seen, id, username, _staff, active) = row.ok_or_else(unauthorized)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    if now - created >= 14 * 86_400 || now - seen >= 86_400 || !active {
        return Err(unauthorized());
    }
    let sent = headers
        .get("x-csrf-token")
        .map(|v| v.as_bytes())
        .ok_or_else(forbidden)?;
    if sent.len() != csrf.len() || !bool::from(sent.ct_eq(csrf.as_bytes())) {
        return Err(forbidden());
    }
    Ok(Json(Who { id, username }))
}

async fn plain() -> Json<Who> {
    Json(Who {
        id: 1,
        username: "bench".to_owned(),
    })
}

fn main() -> io::Result<()> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve())
}

async fn serve() -> io::Result<()> {
    let url =
        std::env::var("DATABASE_URL").map_err(|_| io::Error::other("DATABASE_URL is not set"))?;
    let secret =
        std::env::var("SECRET_KEY").map_err(|_| io::Error::other("SECRET_KEY is not set"))?;
    let pool = if url.starts_with("sqlite:") {
        let options = SqliteConnectOptions::from_str(&url)
            .map_err(io::Error::other)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        Pool::Sqlite(
            SqlitePoolOptions::new()
                .max_connections(5)
                .acquire_timeout(Duration::from_secs(5))
                .connect_lazy_with(options),
        )
    } else {
        Pool::Postgres(
            PgPoolOptions::new()
                .max_connections(10)
                .acquire_timeout(Duration::from_secs(5))
                .connect_lazy(&url)
                .map_err(io::Error::other)?,
        )
    };
    let state = AppState {
        pool,
        key: Key::derive_from(secret.as_bytes()),
    };
    let app = Router::new()
        .route("/rows/{id}", get(one))
        .route("/rows", get(list))
        .route("/ping", post(ping))
        .route("/plain", post(plain))
        .with_state(state);
    let listener = tokio::net::TcpListener::from_std(peer_common::bind()?)?;
    peer_common::announce(listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown())
        .await
}

async fn shutdown() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
