//! Conduit, the [RealWorld](https://github.com/gothinkster/realworld) API
//! (a Medium clone's back end), on Tern: the accounts, passwords and API
//! tokens are tern-auth's, the tables tern-data's models, the joined rows
//! `#[derive(Row)]`s and the lists `Listing`s. SQLite by default,
//! PostgreSQL with `DATABASE_URL`; the migrations run at start in
//! development (`realworld migrate` otherwise).
//!
//! Every route is under `/api`; authenticated requests send
//! `Authorization: Token <token>` (the token that registering or logging
//! in answers). Errors are Conduit's `{"errors": {"body": [...]}}` with
//! the status of the problem that Tern or the app raised.

pub mod articles;
pub mod comments;
pub mod profiles;
pub mod users;

use serde_json::json;
use tern::{
    routing::{get, post},
    App, IntoResponse, Json, Problem, Requested, Response, StatusCode,
};
use tern_auth::AuthError;
use tern_data::DataError;

/// Conduit's tables, beside tern-auth's.
static MIGRATIONS: tern_data::Migrations = tern_data::migrations!("migrations");

/// The whole app.
pub fn app() -> App {
    let api = App::new()
        // Conduit's clients send `Authorization: Token ...`.
        .setting_default("AUTH_TOKEN_SCHEMES", "Token,Bearer")
        .scope("/api", |api| {
            api.route("/users", post(users::register))
                .route("/users/login", post(users::login))
                .route("/user", get(users::current).put(users::update))
                .route("/profiles/{username}", get(profiles::show))
                .route(
                    "/profiles/{username}/follow",
                    post(profiles::follow).delete(profiles::unfollow),
                )
                .route("/articles", get(articles::list).post(articles::create))
                .route("/articles/feed", get(articles::feed))
                .route(
                    "/articles/{slug}",
                    get(articles::show)
                        .put(articles::update)
                        .delete(articles::remove),
                )
                .route(
                    "/articles/{slug}/favorite",
                    post(articles::favorite).delete(articles::unfavorite),
                )
                .route(
                    "/articles/{slug}/comments",
                    get(comments::list).post(comments::create),
                )
                .route(
                    "/articles/{slug}/comments/{id:i64}",
                    tern::routing::delete(comments::remove),
                )
                .route("/tags", get(articles::tags_in_use))
                // One transaction per request: committed on a success.
                .route_layer(tern_data::transactions())
        })
        .problem_renderer(conduit_errors);
    let app = tern_data::install(api, [&tern_auth::MIGRATIONS, &MIGRATIONS]);
    tern_auth::install(app)
}

/// Every problem as Conduit's error body: `{"errors": {"body": [..]}}`,
/// one line per violation when there are several.
fn conduit_errors(problem: &Problem, _: &Requested) -> Response {
    let body: Vec<String> = match problem.extension("errors").and_then(|e| e.as_array()) {
        Some(errors) => errors
            .iter()
            .map(|e| match (e["pointer"].as_str(), e["detail"].as_str()) {
                (Some(at), Some(detail)) => format!("{at} {detail}"),
                _ => e.to_string(),
            })
            .collect(),
        None => vec![problem.detail().to_owned()],
    };
    Json(json!({ "errors": { "body": body } })).into_response()
}

/// What a handler can fail with.
#[derive(Debug)]
pub enum Error {
    /// The accounts' errors (401, 429, ...).
    Auth(AuthError),
    /// The database's (404, a taken name is a 409).
    Data(DataError),
    /// The app's own refusals.
    Problem(Box<Problem>),
}

impl Error {
    fn new(status: StatusCode, detail: &'static str) -> Error {
        Error::Problem(Box::new(Problem::new(status).with_detail(detail)))
    }
}

impl From<AuthError> for Error {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::Data(e) => Error::Data(e),
            e => Error::Auth(e),
        }
    }
}

impl From<DataError> for Error {
    fn from(e: DataError) -> Self {
        Error::Data(e)
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        match self {
            // Conduit says 422 for a taken username, email or slug.
            Error::Data(e) if e.status() == StatusCode::CONFLICT => {
                Error::new(StatusCode::UNPROCESSABLE_ENTITY, "has already been taken")
                    .into_response()
            }
            Error::Data(e) => e.into_response(),
            Error::Auth(e) => e.into_response(),
            Error::Problem(p) => p.into_response(),
        }
    }
}

/// A field Conduit requires: present and not blank.
fn required(value: Option<String>, field: &'static str) -> Result<String, Error> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(Error::Problem(Box::new(
            Problem::new(StatusCode::UNPROCESSABLE_ENTITY)
                .with_detail(format!("{field} can't be blank")),
        ))),
    }
}
