//! Encrypted fields over real sockets, on SQLite and PostgreSQL: stored as
//! ciphertext under a key id, read back, refused when tampered with or
//! truncated, rotated, and failing closed without a key.
//!
//! The keys are process-wide, so this file is one test that runs its steps
//! in order.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use base64::Engine as _;
use common::{fresh, spawn, Server, BACKENDS};
use serde_json::{json, Value};
use tern::{extract::Path, routing::get, App, Config, Json, StatusCode};
use tern_data::{Backend, DataError, Database, Db, Encrypted, FieldKeys, Migrations, Model, Pool};

static MIGRATIONS: Migrations = tern_data::migrations!("tests/migrations");

#[derive(Debug, Clone, PartialEq, Model, serde::Serialize, serde::Deserialize)]
#[model(table = "accounts")]
struct Account {
    #[model(primary_key)]
    #[serde(default)]
    id: i64,
    name: String,
    secret: Encrypted<String>,
}

async fn create(
    Db(pool): Db,
    Json(a): Json<Account>,
) -> Result<(StatusCode, Json<Account>), DataError> {
    Ok((StatusCode::CREATED, Json(a.insert(&pool).await?)))
}

async fn show(Db(pool): Db, Path(id): Path<i64>) -> Result<Json<Account>, DataError> {
    Ok(Json(Account::get(&pool, id).await?))
}

fn app() -> App {
    App::new()
        .settings::<Database>("database")
        .settings::<FieldKeys>("field_encryption")
        .route("/accounts", tern::routing::post(create))
        .route("/accounts/{id:i64}", get(show))
}

fn key(byte: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

/// The stored bytes of account `id`'s secret.
async fn stored(pool: &Pool, id: i64) -> Vec<u8> {
    let sql = "SELECT secret FROM accounts WHERE id = $1";
    match pool {
        Pool::Sqlite(p) => sqlx::query_scalar(sql).bind(id).fetch_one(p).await.unwrap(),
        Pool::Postgres(p) => sqlx::query_scalar(sql).bind(id).fetch_one(p).await.unwrap(),
    }
}

async fn store(pool: &Pool, id: i64, bytes: &[u8]) {
    let sql = "UPDATE accounts SET secret = $1 WHERE id = $2";
    match pool {
        Pool::Sqlite(p) => drop(
            sqlx::query(sql)
                .bind(bytes)
                .bind(id)
                .execute(p)
                .await
                .unwrap(),
        ),
        Pool::Postgres(p) => drop(
            sqlx::query(sql)
                .bind(bytes)
                .bind(id)
                .execute(p)
                .await
                .unwrap(),
        ),
    }
}

async fn create_account(server: &Server, name: &str, secret: &str) -> (u16, String) {
    let (status, _, body) = server
        .send(
            "POST",
            "/accounts",
            Some(json!({"name": name, "secret": secret})),
        )
        .await;
    (status, body)
}

#[tokio::test]
async fn encrypted_fields_end_to_end() {
    for backend in BACKENDS {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let k1 = format!("k1:{}", key(1));
        let server = spawn(
            app(),
            &[("DATABASE_URL", &url), ("FIELD_ENCRYPTION_KEY", &k1)],
        )
        .await;
        server.db().migrate(&MIGRATIONS).await.unwrap();
        let pool = server.db().pool().clone();

        // Stored as ciphertext under `k1`; read back as the value.
        let (status, body) = create_account(&server, "ada", "the launch code").await;
        assert_eq!(status, 201, "{backend:?}: {body}");
        let (_, _, body) = server.send("GET", "/accounts/1", None).await;
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap()["secret"],
            "the launch code"
        );
        let raw = stored(&pool, 1).await;
        assert_eq!(FieldKeys::key_id(&raw), Some("k1"));
        assert!(
            !raw.windows(6).any(|w| w == b"launch"),
            "{backend:?}: plaintext stored"
        );
        assert_eq!(format!("{:?}", Encrypted("x".to_owned())), "Encrypted(***)");

        // A flipped byte, then a truncated value: an error, not garbage.
        let mut tampered = raw.clone();
        *tampered.last_mut().unwrap() ^= 1;
        store(&pool, 1, &tampered).await;
        let (status, _, body) = server.send("GET", "/accounts/1", None).await;
        assert_eq!(status, 500, "{backend:?}: {body}");
        assert!(body.contains("does not verify"), "{body}");
        assert!(!body.contains("launch"), "{body}");
        store(&pool, 1, &raw[..raw.len() - 20]).await;
        let (status, _, body) = server.send("GET", "/accounts/1", None).await;
        assert_eq!(status, 500, "{backend:?}: {body}");
        assert!(body.contains("malformed or truncated"), "{body}");
        store(&pool, 1, &raw).await;
        drop(server);

        // Rotation: `k2` first encrypts, `k1` still decrypts; then every
        // row is rewritten under `k2`, and `k1` can go.
        let k21 = format!("k2:{},k1:{}", key(2), key(1));
        let server = spawn(
            app(),
            &[("DATABASE_URL", &url), ("FIELD_ENCRYPTION_KEY", &k21)],
        )
        .await;
        create_account(&server, "bob", "second").await;
        assert_eq!(FieldKeys::key_id(&stored(&pool, 2).await), Some("k2"));
        assert_eq!(server.send("GET", "/accounts/1", None).await.0, 200);
        // The rewrite, through the app's command line: `app reencrypt`.
        let config = Config::from_settings([
            ("DATABASE_URL", url.as_str()),
            ("FIELD_ENCRYPTION_KEY", &k21),
        ])
        .unwrap();
        let with_command = app()
            .command(tern_data::reencrypt().model::<Account>().command())
            .config(config);
        tern::command::serve(with_command, ["app", "reencrypt"])
            .await
            .unwrap();
        assert_eq!(FieldKeys::key_id(&stored(&pool, 1).await), Some("k2"));
        drop(server);
        let k2 = format!("k2:{}", key(2));
        let server = spawn(
            app(),
            &[("DATABASE_URL", &url), ("FIELD_ENCRYPTION_KEY", &k2)],
        )
        .await;
        let (status, _, body) = server.send("GET", "/accounts/1", None).await;
        assert_eq!(status, 200, "{backend:?}: {body}");
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap()["secret"],
            "the launch code"
        );
        drop(server);

        // Without a key (development): writes fail, nothing is stored.
        let server = spawn(app(), &[("DATABASE_URL", &url)]).await;
        let (status, body) = create_account(&server, "eve", "plain?").await;
        assert_eq!(status, 500, "{backend:?}: {body}");
        assert!(body.contains("no field encryption key"), "{body}");
        assert_eq!(
            Account::list(&pool, &Default::default())
                .await
                .map(|p| p.total)
                .ok(),
            None,
            "reading without the key fails too"
        );
        let count = match &pool {
            Pool::Sqlite(p) => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM accounts")
                .fetch_one(p)
                .await
                .unwrap(),
            Pool::Postgres(p) => sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM accounts")
                .fetch_one(p)
                .await
                .unwrap(),
        };
        assert_eq!(count, 2, "{backend:?}");
        drop(server);
        if backend == Backend::Sqlite {
            // Production does not start without the key.
            let config =
                Config::from_settings([("TERN_ENV", "production"), ("DATABASE_URL", url.as_str())])
                    .unwrap();
            let err = app().build_with(config).unwrap_err().to_string();
            assert!(err.contains("FIELD_ENCRYPTION_KEY"), "{err}");
        }
    }
}
