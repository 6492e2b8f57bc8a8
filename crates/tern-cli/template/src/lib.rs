//! __NAME__: a Tern app. `main.rs` runs it; `tests/` test it.

use std::sync::OnceLock;

use serde::Deserialize;
use tern::{extract::Query, routing::get, App};
use tern_site::{Page, StaticFiles};

/// The files of `static/`: embedded in release builds (the binary can be
/// moved), read from the folder in debug builds (edits show at once).
#[derive(rust_embed::RustEmbed)]
#[folder = "static/"]
struct Assets;

fn files() -> &'static StaticFiles {
    static FILES: OnceLock<StaticFiles> = OnceLock::new();
    FILES.get_or_init(StaticFiles::embedded::<Assets>)
}

/// `templates/index.html`, which extends `templates/base.html`. Askama
/// checks it when the crate builds and escapes every value.
#[derive(askama::Template)]
#[template(path = "index.html")]
struct Index {
    css: String,
    name: String,
}

#[derive(Deserialize)]
struct Greeting {
    name: Option<String>,
}

async fn index(Query(greeting): Query<Greeting>) -> Page<Index> {
    Page(Index {
        css: files().url("app.css"),
        name: greeting.name.unwrap_or_else(|| "world".to_owned()),
    })
}

/// The app: a page, the static files, HTML error pages for browsers.
pub fn app() -> App {
    let files = files();
    App::new()
        .route("/", get(index))
        .route(&files.pattern(), files.service())
        .problem_renderer(tern_site::html_errors)
}
