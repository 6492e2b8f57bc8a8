//! The Tern showcase: `cargo run --release` at the workspace root.
//!
//! Serves on `TERN_ADDR` (default `127.0.0.1:3000`) with no setup. It is
//! Tern's website: a home page rendered from templates (`site`), the docs
//! rendered from the repository's Markdown (`/guide`), `/index.json`,
//! `/sitemap.xml`, HTML error pages for browsers. Beside it: a JSON
//! endpoint, typed parameters, static files embedded in the binary
//! (`/llms.txt`, `/static/...`), `/health`, a contract API (`/items`)
//! documented at `/openapi.json` and `/docs`, notes in a database (SQLite
//! in `./data/` unless `DATABASE_URL` names another) behind a login page,
//! the admin at `/admin/` (staff: the notes, with an audit log),
//! and a chat with presence (`/chat`: WebSockets, SSE at `/chat/events`;
//! shared by several processes with `REALTIME_BACKEND=redis` or `nats`).
//! With `COSE_KEYS` set, `/items` also takes and answers COSE.
//!
//! Its own settings (prefix `showcase`): `SHOWCASE_RATE_LIMIT` (requests
//! per minute per client address, 600), `SHOWCASE_REDIS_URL` (share that
//! limit with other processes; needs the `redis` feature),
//! `SHOWCASE_ADMIN_PASSWORD` (the `admin` account made in development on
//! an empty database, `tern-showcase`), `SHOWCASE_COMPRESSION` (`true`:
//! `tern_site::compression::install`, compression on every response with
//! a cache of compressed answers, `SITE_COMPRESSION_CACHE` bytes; off by
//! default).

mod chat;
mod content;
mod items;
mod notes;
mod site;

use serde::{Deserialize, Serialize};
use tern::{
    extract::{Path, Query},
    routing::{get, post},
    App, Json, Problem, StatusCode,
};

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

/// The bench lab's reference row: the site's pages are measured against
/// it in the same process (`tern-bench site`).
async fn plaintext() -> &'static str {
    "Hello, World!"
}

async fn json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

#[derive(Serialize)]
struct User {
    id: u64,
    name: String,
}

async fn user(Path(id): Path<u64>) -> Result<Json<User>, Problem> {
    if id == 0 {
        return Err(
            Problem::new(StatusCode::NOT_FOUND).with_detail("there is no user 0; ids start at 1")
        );
    }
    Ok(Json(User {
        id,
        name: format!("user-{id}"),
    }))
}

#[derive(Deserialize, Serialize)]
struct Search {
    q: String,
    #[serde(default)]
    tag: Vec<String>,
    page: Option<u32>,
}

async fn search(Query(search): Query<Search>) -> Json<Search> {
    Json(search)
}

async fn echo(Json(value): Json<serde_json::Value>) -> Json<serde_json::Value> {
    Json(value)
}

/// The showcase's own settings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Showcase {
    #[serde(default = "rate_limit")]
    rate_limit: u32,
    #[serde(default)]
    redis_url: Option<String>,
    #[serde(default = "admin_password")]
    admin_password: tern::settings::Secret,
    #[serde(default)]
    compression: bool,
}

fn rate_limit() -> u32 {
    600
}

fn admin_password() -> tern::settings::Secret {
    tern::settings::Secret::new("tern-showcase")
}

impl Default for Showcase {
    fn default() -> Self {
        Showcase {
            rate_limit: rate_limit(),
            redis_url: None,
            admin_password: admin_password(),
            compression: false,
        }
    }
}

/// The notes table.
static MIGRATIONS: tern_data::Migrations = tern_data::migrations!("migrations");

/// The showcase app; also used by the showcase's tests.
fn app(showcase: &Showcase) -> Result<App<items::Store>, String> {
    let mut app = App::with_state(items::Store::default());
    let mut limit =
        tern_auth::RateLimit::per(showcase.rate_limit, std::time::Duration::from_secs(60))
            .named("showcase")
            .metrics(app.metrics());
    if let Some(url) = &showcase.redis_url {
        limit = shared(limit, url)?;
    }
    let files = site::files();
    if std::env::var_os("COSE_KEYS").is_some() {
        app = app.settings::<tern_contract::cose::Keyring>("cose");
    }
    let app = app
        .route("/", get(site::home))
        .route("/guide", get(site::guide))
        .route("/guide/{slug}", get(site::doc))
        .route("/index.json", get(site::index_json))
        .route("/sitemap.xml", get(site::sitemap))
        .route("/json", get(json))
        .route("/plaintext", get(plaintext))
        .route("/llms.txt", files.file("llms.txt"))
        .route(&files.pattern(), files.service())
        .route("/users/{id:u64}", get(user))
        .route("/search", get(search))
        .route("/echo", post(echo))
        .route("/items", get(items::list).post(items::create))
        .route("/items/{id:u64}", get(items::show))
        .route("/login", get(notes::login_page))
        .route("/notes", get(notes::list).post(notes::create))
        .route("/chat", get(chat::page))
        .route("/chat/socket", get(chat::socket))
        .route("/chat/events", get(chat::events))
        .settings::<Showcase>("showcase")
        .settings::<tern_realtime::WebSockets>("websocket")
        .route_layer(limit.layer())
        // Browsers get HTML error pages, API clients problem+json.
        .problem_renderer(tern_site::html_errors);
    // The tables (the notes', the accounts'): `showcase migrate`, or at
    // start in development.
    let app = tern_data::install(
        app,
        [&MIGRATIONS, &tern_auth::MIGRATIONS, &tern_admin::MIGRATIONS],
    );
    let app = tern_auth::install(app);
    // Realtime's settings (`realtime`), its metrics and its readiness
    // (the bus, with Redis or NATS).
    let app = tern_realtime::install(app);
    let app = tern_admin::install(app, admin());
    let password = showcase.admin_password.expose().to_owned();
    let app = app.on_start(move |app| development_admin(app, password.clone()));
    // Compression, with its cache of compressed answers sized by
    // `SITE_COMPRESSION_CACHE` and counted at `/metrics`.
    let app = if showcase.compression {
        tern_site::compression::install(app)
    } else {
        app
    };
    Ok(
        tern_contract::openapi::OpenApi::new("Tern showcase", env!("CARGO_PKG_VERSION"))
            .description("The showcase's routes; `/items` is a contract API (JSON, CBOR, COSE).")
            .serve(app),
    )
}

/// The admin: the notes and the accounts. A note's author and time are
/// set by `POST /notes` from the session and the clock, so the admin
/// shows them read-only (and sets them on a note it adds).
fn admin() -> tern_admin::Admin {
    tern_admin::Admin::new()
        .model_with::<notes::Note>(|m| {
            m.read_only(&["author", "created_at"])
                .before_save(notes::stamp)
        })
        .users()
}

#[cfg(feature = "redis")]
fn shared(limit: tern_auth::RateLimit, url: &str) -> Result<tern_auth::RateLimit, String> {
    limit
        .shared(url)
        .map_err(|e| format!("SHOWCASE_REDIS_URL: {e}"))
}

#[cfg(not(feature = "redis"))]
fn shared(_: tern_auth::RateLimit, _: &str) -> Result<tern_auth::RateLimit, String> {
    Err("SHOWCASE_REDIS_URL: this showcase was built without the `redis` feature".to_owned())
}

/// In development, an `admin` superuser on an empty database (a start
/// hook: after the migrations, which `tern_data::install` applies at
/// start in development).
async fn development_admin(
    app: tern::AppService,
    password: String,
) -> Result<(), tern::command::BoxError> {
    if app.config().is_production() {
        return Ok(());
    }
    let (Some(db), Some(passwords)) = (
        app.settings::<tern_data::Database>(),
        app.settings::<tern_auth::Passwords>(),
    ) else {
        return Ok(());
    };
    // A superuser: every right in the admin.
    let made = tern_auth::NewUser::new("admin", &password)
        .superuser(true)
        .create(db.pool(), &passwords)
        .await;
    match made {
        Ok(_) => tracing::info!(
            "made the account `admin` (development): log in at /login, the admin at /admin/"
        ),
        // It exists already (another process, or an earlier start).
        Err(tern_auth::AuthError::Data(e)) if e.status() == StatusCode::CONFLICT => {}
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The showcase's command line: it serves by default; `showcase --help`
/// lists its commands (`routes`, `check`, `migrate`, `createsuperuser`).
/// Its logs are Tern's default output: text or JSON lines
/// (`TERN_LOG_FORMAT`), filtered by `RUST_LOG`, each with its request's
/// span (`docs/operations.md`).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = tern::Config::from_env()?;
    let showcase: Showcase = tern::settings::load("showcase", &config)?;
    tern::run(app(&showcase)?.config(config))?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod negotiation_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod context_tests;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use tern::test::TestClient;

    #[tokio::test]
    async fn every_showcase_page_answers() {
        let dir = std::env::temp_dir().join(format!("showcase-test-{}", std::process::id()));
        let url = format!("sqlite://{}/app.db", dir.display());
        let config = tern::Config::from_settings([("DATABASE_URL", url.as_str())]).unwrap();
        let showcase = super::Showcase::default();
        // The tables, as `showcase migrate` makes them; the `admin` account.
        let app = || super::app(&showcase).unwrap().config(config.clone());
        tern::command::serve(app(), ["showcase", "migrate"])
            .await
            .unwrap();
        let service = app().build().unwrap();
        super::development_admin(service, "tern-showcase".into())
            .await
            .unwrap();
        let client = TestClient::new(app());
        let home = client.get("/").send().await;
        assert_eq!(home.status(), 200);
        assert!(home.text().contains("<h1>Tern</h1>"));
        assert_eq!(
            home.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert_eq!(
            client.get("/json").send().await.text(),
            r#"{"message":"Hello, World!"}"#
        );
        assert_eq!(
            client
                .get("/users/7")
                .send()
                .await
                .json::<serde_json::Value>()["name"],
            "user-7"
        );
        assert_eq!(client.get("/users/0").send().await.status(), 404);
        let search = client.get("/search?q=tern&tag=a&tag[]=b").send().await;
        assert_eq!(
            search.json::<serde_json::Value>()["tag"],
            serde_json::json!(["a", "b"])
        );
        // The site: the home page rendered from templates (about 26 KB),
        // the docs from Markdown, the index and the sitemap.
        assert!(
            (20_000..40_000).contains(&home.text().len()),
            "{}",
            home.text().len()
        );
        let css = home
            .text()
            .split("href=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap()
            .to_owned();
        assert!(
            css.starts_with("/static/site.") && css.ends_with(".css"),
            "{css}"
        );
        let sheet = client.get(&css).send().await;
        assert_eq!(
            sheet.header("cache-control"),
            Some("public, max-age=31536000, immutable")
        );
        let guide = client.get("/guide").send().await.text();
        for slug in [
            "guide",
            "configuration",
            "hardening",
            "performance",
            "roadmap",
        ] {
            assert!(guide.contains(&format!("href=\"/guide/{slug}\"")), "{slug}");
            let page = client.get(&format!("/guide/{slug}")).send().await;
            assert_eq!(page.status(), 200, "{slug}");
            // rustdoc's hidden lines are not shown.
            assert!(!page.text().contains("# #[tokio::main"), "{slug}");
        }
        assert_eq!(client.get("/guide/nothing").send().await.status(), 404);
        // Code is highlighted once, at render: Rust keywords and shell
        // commands get classes; a language without a syntax stays plain.
        let guide_page = client.get("/guide/guide").send().await.text();
        assert!(
            guide_page
                .contains(r#"<span class="hl-storage hl-type hl-function hl-rust">fn</span>"#),
            "no highlighted Rust"
        );
        assert!(guide_page.contains(r#"<code class="language-text">$ my-app"#));
        let readme_like = client.get("/guide/configuration").send().await.text();
        assert!(
            !readme_like.contains("<pre><code"),
            "a code block was not rendered by the highlighter"
        );
        let index: serde_json::Value = client.get("/index.json").send().await.json();
        let paths: Vec<&str> = index["pages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["path"].as_str().unwrap())
            .collect();
        assert!(
            paths.contains(&"/guide/performance") && paths.contains(&"/chat"),
            "{paths:?}"
        );
        let sitemap = client
            .get("/sitemap.xml")
            .header("host", "example.com")
            .send()
            .await;
        assert_eq!(
            sitemap.header("content-type"),
            Some("application/xml; charset=utf-8")
        );
        assert!(sitemap
            .text()
            .contains("<loc>http://example.com/guide/roadmap</loc>"));
        let llms = client.get("/llms.txt").send().await;
        assert!(llms.text().starts_with("# Tern"));
        let echo = client
            .post("/echo")
            .json(&serde_json::json!({"a": [1, 2]}))
            .send()
            .await;
        assert_eq!(echo.text(), r#"{"a":[1,2]}"#);
        assert_eq!(client.get("/health").send().await.text(), "ok");
        let created = client
            .post("/items")
            .json(&serde_json::json!({"name": "hammer", "qty": 2, "owner": "ada@example.com"}))
            .send()
            .await;
        assert_eq!(created.status(), 200, "{}", created.text());
        let bad = client
            .post("/items")
            .json(&serde_json::json!({"name": "", "qty": 0, "owner": "ada"}))
            .send()
            .await;
        assert_eq!(bad.status(), 422);
        assert_eq!(bad.problem()["errors"].as_array().map(Vec::len), Some(3));
        let list: serde_json::Value = client.get("/items").send().await.json();
        assert_eq!(list["total"], 1);
        let none: serde_json::Value = client.get("/items?q=saw&limit=5").send().await.json();
        assert_eq!(none["total"], 0);
        let bad = client.get("/items?limit=0").send().await;
        assert_eq!(bad.status(), 422);
        assert_eq!(bad.problem()["errors"][0]["pointer"], "/limit");
        // Notes in the database, a login page, a login.
        assert!(client
            .get("/login")
            .send()
            .await
            .text()
            .contains("<h1>Log in</h1>"));
        let notes = client.get("/notes").send().await;
        assert_eq!(notes.status(), 200);
        assert!(notes.text().contains("Log in</a> to add a note"));
        // A browser gets error pages in HTML (the CSRF check's 403 below).
        const BROWSER: &str = "text/html,application/xhtml+xml,*/*;q=0.8";
        let missing = client.get("/nope").header("accept", BROWSER).send().await;
        assert_eq!(missing.status(), 404);
        assert_eq!(
            missing.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        assert!(missing.text().contains("<h1>Not Found</h1>"));
        assert_eq!(client.get("/nope").send().await.problem()["status"], 404);
        let login = client
            .post("/auth/login")
            .json(&serde_json::json!({"username": "admin", "password": "tern-showcase"}))
            .send()
            .await;
        assert_eq!(login.status(), 200, "{}", login.text());
        // A logged-in browser posting a form without its CSRF token.
        let session = login
            .header("set-cookie")
            .and_then(|c| c.split(';').next())
            .unwrap()
            .to_owned();
        let forged = client
            .post("/notes")
            .header("accept", BROWSER)
            .header("cookie", &session)
            .form(&[("text", "forged")])
            .send()
            .await;
        assert_eq!(forged.status(), 403, "{}", forged.text());
        assert!(
            forged.text().contains("<h1>Forbidden</h1>"),
            "{}",
            forged.text()
        );
        // The admin: the notes, for the `admin` superuser; the login
        // page for anyone else.
        let dash = client
            .get("/admin/")
            .header("accept", BROWSER)
            .header("cookie", &session)
            .send()
            .await;
        assert_eq!(dash.status(), 200, "{}", dash.text());
        assert!(
            dash.text().contains(r#"href="/admin/notes/""#),
            "{}",
            dash.text()
        );
        let admin_notes = client
            .get("/admin/notes/")
            .header("accept", BROWSER)
            .header("cookie", &session)
            .send()
            .await;
        assert_eq!(admin_notes.status(), 200, "{}", admin_notes.text());
        // A note added in the admin: the table's rule (1 to 500
        // characters) is the form's error, then it is saved.
        let csrf = login.json::<serde_json::Value>()["csrf_token"]
            .as_str()
            .unwrap()
            .to_owned();
        for (text, status) in [("", 422), (&*"x".repeat(501), 422), ("from the admin", 303)] {
            let added = client
                .post("/admin/notes/add")
                .header("accept", BROWSER)
                .header("cookie", &session)
                .form(&[("csrf_token", csrf.as_str()), ("text", text)])
                .send()
                .await;
            assert_eq!(added.status(), status, "{text:?}: {}", added.text());
        }
        // Stamped as a note of the notes page: its author and its time.
        let db = tern_data::Database::from_url(&url).unwrap();
        let (author, at): (String, i64) =
            tern_data::query("SELECT author, created_at FROM notes WHERE text = $1")
                .bind("from the admin")
                .fetch_one(db.pool())
                .await
                .unwrap();
        assert_eq!(author, "admin");
        assert!(at > 1_700_000_000, "{at}");
        let away = client.get("/admin/").header("accept", BROWSER).send().await;
        assert_eq!(away.status(), 303);
        assert_eq!(
            away.header("location"),
            Some("/admin/login?next=%2Fadmin%2F")
        );
        let doc: serde_json::Value = client.get("/openapi.json").send().await.json();
        assert!(doc["paths"]["/items"]["post"]["requestBody"].is_object());
        assert!(client
            .get("/docs")
            .send()
            .await
            .text()
            .contains("/openapi.json"));
        // The chat: its page, a guest's socket, a refused name.
        assert!(client
            .get("/chat")
            .send()
            .await
            .text()
            .contains("<h1>Chat</h1>"));
        use tern_realtime::testing::WebSocketClient as _;
        let mut ada = client.websocket("/chat/socket?name=ada").await.unwrap();
        ada.send(r#"{"op":"join","topic":"chat:lobby"}"#.to_owned())
            .await;
        let joined: serde_json::Value = serde_json::from_str(&ada.recv_text().await).unwrap();
        assert_eq!(joined["presence"][0]["name"], "ada (guest)");
        ada.send(
            r#"{"op":"publish","topic":"chat:lobby","event":"message","data":{"text":"hi"}}"#
                .to_owned(),
        )
        .await;
        let said: serde_json::Value = serde_json::from_str(&ada.recv_text().await).unwrap();
        assert_eq!(
            (said["data"]["text"].as_str(), said["from"]["name"].as_str()),
            (Some("hi"), Some("ada (guest)"))
        );
        ada.send(r#"{"op":"join","topic":"chat:other"}"#.to_owned())
            .await;
        let refused: serde_json::Value = serde_json::from_str(&ada.recv_text().await).unwrap();
        assert_eq!(refused["op"], "error");
        ada.close().await;
        for name in ["", "%3Cscript%3E", &"x".repeat(33)] {
            let refused = client
                .websocket(&format!("/chat/socket?name={name}"))
                .await
                .unwrap_err();
            assert_eq!(refused.status, 400, "{name}");
        }
    }
}
