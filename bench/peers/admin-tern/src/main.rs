//! Bench peer: Tern's admin on PostgreSQL. `TERN_ADDR`, `DATABASE_URL`,
//! `SECRET_KEY` (and `TERN_ENV`, `ALLOWED_HOSTS`) as for any Tern app; one
//! current-thread runtime; prints `listening on ADDR`.
//!
//! - `GET /ping`: `pong`, as text (the reference of every ratio);
//! - `GET /`: a small welcome page (an askama template, tern-site's `Page`);
//! - `/admin/...`: tern-admin with one model, [`Row200`] on `bench_rows`;
//! - `/auth/...`: tern-auth's login and logout.
//!
//! `peer-admin-tern migrate` makes the tables (tern-auth's, tern-admin's,
//! then `bench_rows`) in `DATABASE_URL` and exits: the bench seeds them
//! after.
//!
//! With `PEER_COUNT_QUERIES=1`, a `tracing` subscriber counts sqlx's
//! statement events (target `sqlx::query`: one per statement, at DEBUG,
//! or WARN when slow; sqlx-core 0.9's `QueryLogger`) and `GET /__queries`
//! answers the count so far. Without it there is no subscriber at all (so
//! sqlx skips building its events) and `/__queries` is a `404`: the
//! process the bench times never counts.

use std::sync::atomic::{AtomicU64, Ordering};

use askama::Template;
use tern::{routing::get, App};
use tern_admin::Admin;
use tern_data::{Database, Migrations, Model, OffsetDateTime};
use tern_site::Page;

/// `bench_rows`.
static MIGRATIONS: Migrations =
    tern_data::migrations!("migrations").with_table("_peer_admin_migrations");

/// The bench's model: 200 rows seeded by the bench.
#[derive(Debug, Clone, Model)]
#[model(table = "bench_rows", name = "row", plural = "rows")]
struct Row200 {
    #[model(primary_key)]
    id: i64,
    #[model(searchable, sortable, listed, max_length = 200)]
    title: String,
    #[model(listed)]
    published: bool,
    #[model(listed, sortable)]
    stars: i32,
    #[model(default, read_only, sortable, listed)]
    created_at: OffsetDateTime,
}

/// The welcome page.
#[derive(Template)]
#[template(path = "welcome.html")]
struct Welcome {
    title: &'static str,
    admin: &'static str,
}

async fn welcome() -> Page<Welcome> {
    Page(Welcome {
        title: "Welcome",
        admin: "/admin/",
    })
}

async fn ping() -> &'static str {
    "pong"
}

/// Statements seen (only with `PEER_COUNT_QUERIES=1`).
static QUERIES: AtomicU64 = AtomicU64::new(0);

async fn queries() -> String {
    QUERIES.load(Ordering::Relaxed).to_string()
}

/// Counts sqlx's statement events; never records or prints anything.
struct CountQueries;

const SQLX_QUERY: &str = "sqlx::query";

impl tracing::Subscriber for CountQueries {
    fn register_callsite(
        &self,
        meta: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        if meta.target() == SQLX_QUERY {
            tracing::subscriber::Interest::always()
        } else {
            tracing::subscriber::Interest::never()
        }
    }

    fn enabled(&self, meta: &tracing::Metadata<'_>) -> bool {
        meta.target() == SQLX_QUERY
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target() == SQLX_QUERY {
            QUERIES.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

fn migrate(rt: &tokio::runtime::Runtime) -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL").map_err(|_| "DATABASE_URL is not set")?;
    rt.block_on(async {
        let db = Database::from_url(&url)?;
        for m in [&tern_auth::MIGRATIONS, &tern_admin::MIGRATIONS, &MIGRATIONS] {
            db.migrate(m).await?;
        }
        db.pool().close().await;
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if std::env::args().nth(1).as_deref() == Some("migrate") {
        return migrate(&rt);
    }
    let counting = std::env::var("PEER_COUNT_QUERIES").as_deref() == Ok("1");
    if counting {
        tracing::subscriber::set_global_default(CountQueries)?;
    }
    let mut config = tern::Config::from_env()?;
    config.access_log = false;
    config.health_path = None;
    let mut app = App::new()
        .settings::<Database>("database")
        .route("/ping", get(ping))
        .route("/", get(welcome));
    if counting {
        app = app.route("/__queries", get(queries));
    }
    let app = tern_auth::install(app);
    let app = tern_admin::install(app, Admin::new().model::<Row200>());
    let service = app.build_with(config.clone())?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(config.addr).await?;
        println!("listening on {}", listener.local_addr()?);
        tern::Server::new(service)
            .serve_with_shutdown(listener, tern::shutdown_signal())
            .await
    })?;
    Ok(())
}
