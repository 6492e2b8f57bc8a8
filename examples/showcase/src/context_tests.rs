//! The request context in the composed showcase (issue 26): every
//! battery and layer installed (the rate limit, the database, accounts,
//! the problem renderer, the API document), a handler that hands its
//! work to tasks of their own reads the request's context there.

use serde_json::Value;
use tern::{routing::get, test::TestClient, RequestContext};
use tern_data::{sqlx, Pool};

/// Work a handler starts on three kinds of task, each reading the
/// request's ID, its route parameter, the showcase's settings and the
/// app's database through the context it was handed.
async fn spawned(ctx: RequestContext) -> tern::Json<Value> {
    // A bare `tokio::spawn`: the handle carries the values.
    let bare = {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let showcase = ctx.settings::<crate::Showcase>().map(|s| s.rate_limit);
            serde_json::json!({
                "id": ctx.request_id(),
                "n": ctx.param("n"),
                "rate_limit": showcase,
            })
        })
    };
    // `ctx.spawn`: the app is current there too, and the database the app
    // loaded answers a query from the task.
    let counted = {
        let task = ctx.clone();
        ctx.spawn(async move {
            let db = task.settings::<tern_data::Database>()?;
            match db.pool() {
                Pool::Sqlite(pool) => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM notes")
                    .fetch_one(pool)
                    .await
                    .ok(),
                Pool::Postgres(pool) => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM notes")
                    .fetch_one(pool)
                    .await
                    .ok(),
            }
        })
    };
    let blocking = {
        let task = ctx.clone();
        ctx.spawn_blocking(move || {
            (
                task.request_id().into_owned(),
                task.config().is_production(),
            )
        })
    };
    let bare = bare.await.unwrap_or_default();
    let counted = counted.await.ok().flatten();
    let (blocking_id, production) = blocking.await.unwrap_or_default();
    tern::Json(serde_json::json!({
        "bare": bare,
        "notes": counted,
        "blocking": { "id": blocking_id, "production": production },
    }))
}

#[tokio::test]
async fn a_handler_that_spawns_tasks_reads_the_request_context_there() {
    let dir = std::env::temp_dir().join(format!("showcase-context-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!("sqlite://{}/app.db", dir.display());
    let config = tern::Config::from_settings([
        ("DATABASE_URL", url.as_str()),
        ("SHOWCASE_RATE_LIMIT", "77"),
    ])
    .unwrap();
    let showcase: crate::Showcase = tern::settings::load("showcase", &config).unwrap();
    let app = || {
        crate::app(&showcase)
            .unwrap()
            .route("/spawned/{n:u64}", get(spawned))
            .config(config.clone())
    };
    // The tables, as `showcase migrate` makes them.
    tern::command::serve(app(), ["showcase", "migrate"])
        .await
        .unwrap();
    let client = TestClient::new(app());
    // Several at once: each task sees its own request, never another's.
    let answers = futures_util::future::join_all(
        (0..16).map(|n| client.get(&format!("/spawned/{n}")).send()),
    )
    .await;
    for (n, res) in answers.into_iter().enumerate() {
        assert_eq!(res.status(), 200, "{}", res.text());
        let id = res.header("x-request-id").unwrap().to_owned();
        let doc: Value = res.json();
        assert_eq!(doc["bare"]["id"], id.as_str(), "{doc}");
        assert_eq!(doc["bare"]["n"], n.to_string(), "{doc}");
        assert_eq!(doc["bare"]["rate_limit"], 77, "{doc}");
        assert_eq!(
            doc["notes"], 0,
            "the task reached the app's database: {doc}"
        );
        assert_eq!(doc["blocking"]["id"], id.as_str(), "{doc}");
        assert_eq!(doc["blocking"]["production"], false, "{doc}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
