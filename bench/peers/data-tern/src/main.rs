//! Bench peer: the database endpoints on Tern. `TERN_ADDR`, `DATABASE_URL`
//! and `SECRET_KEY` as for any Tern app; one current-thread runtime;
//! prints `listening on ADDR`.
//!
//! - `GET /rows/{id}`: one row by key (`Model::get`), as JSON;
//! - `GET /rows?page=N`: a page of 20 with the total (`Model::list`);
//! - `POST /ping`: the session's user (signed cookie, session lookup, CSRF
//!   check by `tern_auth`);
//! - `POST /plain`: the same answer with no session (the CSRF check runs
//!   and finds no cookie).

use serde::Serialize;
use tern::{
    extract::Path,
    routing::{get, post},
    App, Json,
};
use tern_auth::User;
use tern_data::{DataError, Database, Db, ListQuery, Model, Page};

#[derive(Debug, Clone, Model, Serialize)]
#[model(table = "bench_rows")]
struct Row {
    #[model(primary_key)]
    id: i64,
    #[model(sortable)]
    title: String,
    body: String,
    stars: i32,
}

async fn one(Db(pool): Db, Path(id): Path<i64>) -> Result<Json<Row>, DataError> {
    Ok(Json(Row::get(&pool, id).await?))
}

async fn list(Db(pool): Db, query: ListQuery<Row>) -> Result<Json<Page<Row>>, DataError> {
    Ok(Json(Row::list(&pool, &query).await?))
}

#[derive(Serialize)]
struct Who {
    id: i64,
    username: String,
}

async fn ping(user: User) -> Json<Who> {
    Json(Who {
        id: user.id,
        username: user.username,
    })
}

async fn plain() -> Json<Who> {
    Json(Who {
        id: 1,
        username: "bench".to_owned(),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = tern::Config::from_env()?;
    config.access_log = false;
    config.health_path = None;
    let app = App::new()
        .settings::<Database>("database")
        .route("/rows/{id:i64}", get(one))
        .route("/rows", get(list))
        .route("/ping", post(ping))
        .route("/plain", post(plain));
    let service = tern_auth::install(app).build_with(config.clone())?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(config.addr).await?;
            println!("listening on {}", listener.local_addr()?);
            tern::Server::new(service)
                .serve_with_shutdown(listener, tern::shutdown_signal())
                .await
        })?;
    Ok(())
}
