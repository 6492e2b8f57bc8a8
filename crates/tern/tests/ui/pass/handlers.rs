// Correct handlers carry the attribute without an error or a warning, and
// still route.

#![deny(warnings)]

use std::future::Future;

use serde::Deserialize;
use tern::{
    extract::{FromRequestParts, OptionalFromRequestParts, Path, Query, State},
    http::request::Parts,
    routing::{get, post},
    App, IntoResponse, Json, Problem, Request, StatusCode,
};

#[derive(Deserialize)]
struct Page {
    page: Option<u32>,
}

#[derive(Deserialize)]
struct NewMember {
    name: String,
}

#[derive(Clone)]
struct Db;

/// An extractor of our own.
struct ApiKey(String);

impl<S: Sync> FromRequestParts<S> for ApiKey {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Problem> {
        parts
            .headers
            .get("x-api-key")
            .and_then(|v| v.to_str().ok())
            .map(|v| ApiKey(v.to_owned()))
            .ok_or_else(|| Problem::new(StatusCode::UNAUTHORIZED))
    }
}

/// `Option<ApiKey>`: `None` without the header, `401` for one that is
/// not text.
impl<S: Sync> OptionalFromRequestParts<S> for ApiKey {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Option<Self>, Problem> {
        match parts.headers.get("x-api-key") {
            None => Ok(None),
            Some(v) => v
                .to_str()
                .map(|v| Some(ApiKey(v.to_owned())))
                .map_err(|_| Problem::new(StatusCode::UNAUTHORIZED)),
        }
    }
}

#[tern::handler]
async fn hello() -> &'static str {
    "Hello, World!"
}

#[tern::handler]
async fn list(Path(team): Path<u64>, Query(page): Query<Page>) -> Json<(u64, u32)> {
    Json((team, page.page.unwrap_or(1)))
}

#[tern::handler]
async fn join(
    State(_db): State<Db>,
    key: ApiKey,
    Path(team): Path<u64>,
    Json(member): Json<NewMember>,
) -> Result<(StatusCode, String), Problem> {
    Ok((
        StatusCode::CREATED,
        format!("{} joins {team} ({})", member.name, key.0),
    ))
}

#[tern::handler]
async fn echo(body: String) -> impl IntoResponse {
    body
}

#[tern::handler]
async fn whole(req: Request) -> String {
    req.uri().to_string()
}

#[tern::handler]
async fn maybe(key: Option<ApiKey>) -> StatusCode {
    match key {
        Some(_) => StatusCode::OK,
        None => StatusCode::UNAUTHORIZED,
    }
}

#[tern::handler]
fn later(Path(id): Path<u64>) -> impl Future<Output = String> + Send {
    async move { id.to_string() }
}

#[tern::handler]
async fn generic<T: Clone + Send + Sync + 'static>(State(_state): State<T>) -> &'static str {
    "generic handlers are checked where they are routed"
}

// Configured out: its checks go with it (they would name a missing type).
#[tern::handler]
#[cfg(any())]
async fn gone(missing: NotAType) {}

fn main() {
    let _plain = App::new()
        .route("/", get(hello))
        .route("/teams/{team}", get(list))
        .route("/echo", post(echo).put(whole))
        .route("/key", get(maybe))
        .route("/later/{id}", get(later));
    let _with_state = App::with_state(Db)
        .route("/teams/{team}/members", post(join))
        .route("/generic", get(generic::<Db>));
}
