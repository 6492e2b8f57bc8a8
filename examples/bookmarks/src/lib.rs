//! A bookmarks service: JSON CRUD with validation, the app's own settings
//! and a bearer token for writes. The guide's longer example.
//!
//! Run it (any token works in development; production wants 16 bytes or
//! more):
//!
//! ```sh
//! export TOKEN=$(openssl rand -base64 32)
//! BOOKMARKS_API_TOKEN=$TOKEN cargo run -p example-bookmarks
//! ```
//!
//! Use it (reads are public; writes send the token):
//!
//! ```sh
//! curl -i localhost:3000/bookmarks -H "authorization: Bearer $TOKEN" \
//!   -H 'content-type: application/json' \
//!   -d '{"url": "https://www.rust-lang.org", "title": "Rust", "tags": ["rust", "lang"]}'
//! curl 'localhost:3000/bookmarks?tag=rust&tag=lang&q=rust&page=1&per_page=20'
//! curl localhost:3000/bookmarks/1
//! curl -X PATCH localhost:3000/bookmarks/1 -H "authorization: Bearer $TOKEN" \
//!   -H 'content-type: application/json' -d '{"title": "The Rust language"}'
//! curl -X DELETE localhost:3000/bookmarks/1 -H "authorization: Bearer $TOKEN"
//! ```
//!
//! Settings: `BOOKMARKS_API_TOKEN` (required) and `BOOKMARKS_MAX_PAGE_SIZE`
//! (default 100), or `api_token` and `max_page_size` under `[bookmarks]`
//! in a `tern.toml` in the working directory (the variables win). Tern's
//! own settings (`TERN_ADDR`, `TERN_ENV`, ...) work as for any Tern app.
//!
//! Test it with `cargo test -p example-bookmarks`: `tests/api.rs` sends
//! requests in-process with `tern::test::TestClient`; `tests/binary.rs`
//! starts the real binary and talks to it over a socket.

use std::{
    collections::BTreeMap,
    sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
};

use serde::{Deserialize, Serialize};
use tern::{
    extract::{Path, Query, State},
    headers::{authorization::Bearer, Authorization, HeaderMapExt},
    http::header,
    middleware::{from_fn, Next},
    routing::get,
    settings::{Secret, Settings},
    App, IntoResponse, Json, Method, Problem, Request, Response, StatusCode,
};

/// The app: state, settings, routes, and the token check for writes.
/// `main` serves it; the tests give it a configuration of their own with
/// `App::config`.
pub fn app() -> App<Store> {
    App::with_state(Store::default())
        .settings::<BookmarksSettings>("bookmarks")
        .route("/bookmarks", get(list).post(create))
        .route(
            "/bookmarks/{id:u64}",
            get(show).put(replace).patch(update).delete(remove),
        )
        // After routing: an unknown path stays a 404 and a wrong method a
        // 405, whether or not the request has the token.
        .route_layer(from_fn(require_token_for_writes))
}

// Settings -----------------------------------------------------------------

/// Read once at startup from the `[bookmarks]` table of `tern.toml`, then
/// the variables `BOOKMARKS_<FIELD>`. A missing token, a misspelt variable
/// or a malformed value stops the start with an error naming the variable.
#[derive(Deserialize)]
struct BookmarksSettings {
    /// What writes send as `Authorization: Bearer <token>`. A `Secret` is
    /// never printed, and production refuses a short or example one.
    api_token: Secret,
    /// The most bookmarks one page of a list holds, whatever `per_page` asks.
    #[serde(default = "default_max_page_size")]
    max_page_size: u32,
}

fn default_max_page_size() -> u32 {
    100
}

/// A page's size when the request names none (capped by `max_page_size`).
const DEFAULT_PER_PAGE: u32 = 20;

// The store ----------------------------------------------------------------

/// A bookmark, as the API sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bookmark {
    /// Given by the store: 1, 2, 3, ... in creation order, never reused.
    pub id: u64,
    /// An `http://` or `https://` URL.
    pub url: String,
    /// 1 to 200 characters, not blank.
    pub title: String,
    /// For filtering lists (`?tag=rust`).
    pub tags: Vec<String>,
}

/// The app's state: the bookmarks, in memory, so they are gone when the
/// process stops. A database replaces this in a later issue. Cloned for
/// every request, which only clones the `Arc`.
#[derive(Clone, Default)]
pub struct Store {
    inner: Arc<RwLock<Bookmarks>>,
}

#[derive(Default)]
struct Bookmarks {
    last_id: u64,
    /// By id, which is creation order.
    by_id: BTreeMap<u64, Bookmark>,
}

impl Store {
    // A handler that panics while holding the lock "poisons" it. Every
    // change here is a single insert, replace or remove, so the data is
    // whole even then: keep serving rather than fail every later request.
    fn read(&self) -> RwLockReadGuard<'_, Bookmarks> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Bookmarks> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }
}

// Errors -------------------------------------------------------------------

/// What a handler answers when it cannot do what was asked. Each becomes
/// an `application/problem+json` response (RFC 9457), like Tern's own
/// errors.
#[derive(Debug)]
enum AppError {
    /// No bookmark has this id: 404.
    NotFound(u64),
    /// A value the client sent is wrong: 422, naming it the way Tern's
    /// own 422s do: a body's value by its JSON pointer (`"pointer":
    /// "/title"`), a query parameter by its name (`"field": "page"`).
    Invalid {
        member: &'static str,
        at: String,
        message: String,
    },
    /// A write without the right token: 401.
    Unauthorized,
}

impl AppError {
    /// A field of the JSON body.
    fn body(field: &str, message: impl Into<String>) -> Self {
        AppError::Invalid {
            member: "pointer",
            at: format!("/{field}"),
            message: message.into(),
        }
    }

    /// A query parameter.
    fn query(field: &str, message: impl Into<String>) -> Self {
        AppError::Invalid {
            member: "field",
            at: field.to_owned(),
            message: message.into(),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        match self {
            AppError::NotFound(id) => Problem::new(StatusCode::NOT_FOUND)
                .with_detail(format!("there is no bookmark {id}"))
                .into_response(),
            AppError::Invalid {
                member,
                at,
                message,
            } => Problem::new(StatusCode::UNPROCESSABLE_ENTITY)
                .with_detail(format!("`{at}` {message}"))
                .with_extension(member, at)
                .into_response(),
            AppError::Unauthorized => (
                [(header::WWW_AUTHENTICATE, "Bearer")],
                Problem::new(StatusCode::UNAUTHORIZED)
                    .with_detail("writes need the API token: send `Authorization: Bearer <token>`"),
            )
                .into_response(),
        }
    }
}

// Authentication -----------------------------------------------------------

/// Reads (`GET`, `HEAD`) are public, so a list can be shared; every other
/// method changes bookmarks and needs the token. Attached with `App::route_layer`, so it only runs for requests that
/// matched a route and a method.
async fn require_token_for_writes(req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD) {
        return next.run(req).await;
    }
    let Some(settings) = Settings::<BookmarksSettings>::of(&req) else {
        // Only if `app()` stopped loading the settings: our bug, so a 500.
        return Problem::new(StatusCode::INTERNAL_SERVER_ERROR).into_response();
    };
    match req.headers().typed_get::<Authorization<Bearer>>() {
        // `matches` compares in constant time: no timing hints for guessers.
        Some(auth) if settings.api_token.matches(auth.token()) => next.run(req).await,
        _ => AppError::Unauthorized.into_response(),
    }
}

// Input and validation -----------------------------------------------------

/// The body of `POST` and `PUT`: a whole bookmark but its id.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)] // a misspelt field is a 422, not ignored
struct BookmarkInput {
    url: String,
    title: String,
    #[serde(default)]
    tags: Vec<String>,
}

/// The body of `PATCH`: the fields to change.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BookmarkPatch {
    url: Option<String>,
    title: Option<String>,
    tags: Option<Vec<String>>,
}

const MAX_TITLE_CHARS: usize = 200;

fn check_url(url: &str) -> Result<(), AppError> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() => Ok(()),
        _ => Err(AppError::body(
            "url",
            "must be a URL starting with `http://` or `https://`",
        )),
    }
}

fn check_title(title: &str) -> Result<(), AppError> {
    let chars = title.chars().count();
    if title.trim().is_empty() || chars > MAX_TITLE_CHARS {
        return Err(AppError::body(
            "title",
            format!("must be 1 to {MAX_TITLE_CHARS} characters and not blank (it has {chars})"),
        ));
    }
    Ok(())
}

// Handlers -----------------------------------------------------------------

async fn create(
    State(store): State<Store>,
    Json(input): Json<BookmarkInput>,
) -> Result<impl IntoResponse, AppError> {
    check_url(&input.url)?;
    check_title(&input.title)?;
    let mut bookmarks = store.write();
    bookmarks.last_id += 1;
    let bookmark = Bookmark {
        id: bookmarks.last_id,
        url: input.url,
        title: input.title,
        tags: input.tags,
    };
    bookmarks.by_id.insert(bookmark.id, bookmark.clone());
    let location = format!("/bookmarks/{}", bookmark.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(bookmark),
    ))
}

async fn show(State(store): State<Store>, Path(id): Path<u64>) -> Result<Json<Bookmark>, AppError> {
    let bookmarks = store.read();
    let bookmark = bookmarks.by_id.get(&id).ok_or(AppError::NotFound(id))?;
    Ok(Json(bookmark.clone()))
}

/// `PUT`: replaces the whole bookmark.
async fn replace(
    State(store): State<Store>,
    Path(id): Path<u64>,
    Json(input): Json<BookmarkInput>,
) -> Result<Json<Bookmark>, AppError> {
    check_url(&input.url)?;
    check_title(&input.title)?;
    let mut bookmarks = store.write();
    let bookmark = bookmarks.by_id.get_mut(&id).ok_or(AppError::NotFound(id))?;
    *bookmark = Bookmark {
        id,
        url: input.url,
        title: input.title,
        tags: input.tags,
    };
    Ok(Json(bookmark.clone()))
}

/// `PATCH`: changes the fields the body names.
async fn update(
    State(store): State<Store>,
    Path(id): Path<u64>,
    Json(patch): Json<BookmarkPatch>,
) -> Result<Json<Bookmark>, AppError> {
    if let Some(url) = &patch.url {
        check_url(url)?;
    }
    if let Some(title) = &patch.title {
        check_title(title)?;
    }
    let mut bookmarks = store.write();
    let bookmark = bookmarks.by_id.get_mut(&id).ok_or(AppError::NotFound(id))?;
    if let Some(url) = patch.url {
        bookmark.url = url;
    }
    if let Some(title) = patch.title {
        bookmark.title = title;
    }
    if let Some(tags) = patch.tags {
        bookmark.tags = tags;
    }
    Ok(Json(bookmark.clone()))
}

async fn remove(State(store): State<Store>, Path(id): Path<u64>) -> Result<StatusCode, AppError> {
    match store.write().by_id.remove(&id) {
        Some(_) => Ok(StatusCode::NO_CONTENT),
        None => Err(AppError::NotFound(id)),
    }
}

/// `GET /bookmarks?tag=rust&tag=web&q=text&page=2&per_page=20`.
#[derive(Deserialize)]
struct ListQuery {
    /// Bookmarks with every one of these tags (`tag` repeated).
    #[serde(default)]
    tag: Vec<String>,
    /// Text in the title or URL, ignoring case.
    q: Option<String>,
    /// From 1.
    page: Option<u32>,
    /// At most the settings' `max_page_size`.
    per_page: Option<u32>,
}

/// One page of a list.
#[derive(Debug, Serialize, Deserialize)]
pub struct BookmarkPage {
    /// The bookmarks of this page, oldest first.
    pub items: Vec<Bookmark>,
    /// How many bookmarks match, on all pages.
    pub total: usize,
    /// This page's number, from 1.
    pub page: u32,
    /// The page size used: the one asked for, capped by `max_page_size`.
    pub per_page: u32,
}

async fn list(
    State(store): State<Store>,
    Settings(settings): Settings<BookmarksSettings>,
    Query(query): Query<ListQuery>,
) -> Result<Json<BookmarkPage>, AppError> {
    let page = query.page.unwrap_or(1);
    if page == 0 {
        return Err(AppError::query("page", "starts at 1"));
    }
    let per_page = query.per_page.unwrap_or(DEFAULT_PER_PAGE);
    if per_page == 0 {
        return Err(AppError::query("per_page", "must be at least 1"));
    }
    let per_page = per_page.min(settings.max_page_size);
    let text = query.q.as_deref().map(str::to_lowercase);

    let bookmarks = store.read();
    let matching: Vec<&Bookmark> = bookmarks
        .by_id
        .values()
        .filter(|b| query.tag.iter().all(|tag| b.tags.contains(tag)))
        .filter(|b| {
            text.as_deref().is_none_or(|text| {
                b.title.to_lowercase().contains(text) || b.url.to_lowercase().contains(text)
            })
        })
        .collect();
    let skip = (page as usize - 1).saturating_mul(per_page as usize);
    Ok(Json(BookmarkPage {
        total: matching.len(),
        items: matching
            .into_iter()
            .skip(skip)
            .take(per_page as usize)
            .cloned()
            .collect(),
        page,
        per_page,
    }))
}
