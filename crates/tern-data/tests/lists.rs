//! Lists of a configurable shape over real sockets, on SQLite and
//! PostgreSQL: a query's rows by `?limit=&offset=` in RealWorld's
//! `{"articles": [..], "articlesCount": n}`, filters on joined tables,
//! bad parameters answered 400, the default pages' JSON unchanged, and a
//! shape that is not well made refused when the app is built.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::{fresh, spawn, Server, BACKENDS};
use serde_json::Value;
use tern::{routing::get, App, Config, Json};
use tern_data::{
    list::{ListShape, Page, Paging, Where},
    query,
    time::Duration,
    DataError, Database, Db, ListQuery, Listing, Migrations, Model, OffsetDateTime, Pages, Row,
};

static LISTS: Migrations = tern_data::migrations!("tests/lists");

/// RealWorld's article lists: offsets, its names, two filters (one on
/// another table), newest first.
struct Posts;

impl ListShape for Posts {
    const PAGING: Paging = Paging::Offset { limit: 3, max: 100 };
    const ITEMS: &'static str = "articles";
    const TOTAL: &'static str = "articlesCount";
    const FILTERS: &'static [Where] = &[
        Where {
            param: "tag",
            sql: "id IN (SELECT post_id FROM post_tags WHERE tag = {})",
        },
        Where {
            param: "author",
            sql: "author = {}",
        },
    ];
    const ORDER: &'static str = "created_at DESC, id DESC";
}

#[derive(Debug, Row, serde::Serialize)]
struct PostRow {
    id: i64,
    title: String,
    author: String,
    #[serde(with = "tern_data::timestamp")]
    created_at: OffsetDateTime,
}

#[derive(Debug, Model, serde::Serialize)]
#[model(table = "posts")]
struct Post {
    #[model(primary_key)]
    id: i64,
    author_id: i64,
    #[model(searchable, sortable)]
    title: String,
    created_at: OffsetDateTime,
}

/// A query with a bound value of its own (`$1`): the filters' values
/// come after it.
const POSTS: &str = "SELECT p.id, p.title, a.name AS author, p.created_at \
    FROM posts p JOIN authors a ON a.id = p.author_id WHERE p.title <> $1";

async fn posts(db: Db, listing: Listing<Posts>) -> Result<Json<Page<PostRow, Posts>>, DataError> {
    Ok(Json(query(POSTS).bind("hidden").list(&db, &listing).await?))
}

async fn paged(db: Db, listing: Listing) -> Result<Json<Page<PostRow>>, DataError> {
    Ok(Json(query(POSTS).bind("hidden").list(&db, &listing).await?))
}

async fn model_pages(db: Db, q: ListQuery<Post>) -> Result<Json<Page<Post>>, DataError> {
    Ok(Json(Post::list(&db, &q).await?))
}

async fn model_posts(
    db: Db,
    q: ListQuery<Post, Posts>,
) -> Result<Json<Page<Post, Posts>>, DataError> {
    Ok(Json(Post::list(&db, &q).await?.into_shape()))
}

fn app() -> App {
    App::new()
        .settings::<Database>("database")
        .route("/posts", get(posts))
        .route("/paged", get(paged))
        .route("/model", get(model_pages))
        .route("/model-posts", get(model_posts))
}

fn base() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
}

/// ada: 1 (dragons), 2 (dragons, training), 4; bob: 3 (dragons), 5
/// (training), and a "hidden" one the query leaves out; newer by id.
async fn seed(db: &Database) {
    let pool = db.pool();
    for name in ["ada", "bob"] {
        query("INSERT INTO authors (name) VALUES ($1)")
            .bind(name)
            .execute(pool)
            .await
            .unwrap();
    }
    let posts = [
        (1_i64, "one", &["dragons"][..]),
        (1, "two", &["dragons", "training"]),
        (2, "three", &["dragons"]),
        (1, "four", &[]),
        (2, "five", &["training"]),
        (2, "hidden", &["dragons"]),
    ];
    for (i, (author, title, tags)) in posts.into_iter().enumerate() {
        let at = base() + Duration::seconds(i as i64);
        let id: i64 = query(
            "INSERT INTO posts (author_id, title, created_at) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(author)
        .bind(title)
        .bind(at)
        .scalar(pool)
        .await
        .unwrap();
        for tag in tags {
            query("INSERT INTO post_tags (post_id, tag) VALUES ($1, $2)")
                .bind(id)
                .bind(*tag)
                .execute(pool)
                .await
                .unwrap();
        }
    }
}

async fn server(backend: tern_data::Backend) -> Option<Server> {
    let url = fresh(backend).await?;
    let server = spawn(app(), &[("DATABASE_URL", &url)]).await;
    server.db().migrate(&LISTS).await.unwrap();
    seed(&server.db()).await;
    Some(server)
}

async fn json(server: &Server, path: &str) -> Value {
    let (status, _, body) = server.send("GET", path, None).await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn titles(v: &Value, items: &str) -> Vec<String> {
    v[items]
        .as_array()
        .unwrap_or_else(|| panic!("no `{items}` in {v}"))
        .iter()
        .map(|p| p["title"].as_str().unwrap().to_owned())
        .collect()
}

fn keys(v: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn an_offset_shape_answers_in_its_names_with_the_full_count() {
    for backend in BACKENDS {
        let Some(server) = server(backend).await else {
            continue;
        };
        // The shape's default limit (3), newest first, the query's own
        // `$1` leaving "hidden" out of the rows and of the count.
        let v = json(&server, "/posts").await;
        assert_eq!(keys(&v), ["articles", "articlesCount"], "{backend:?}");
        assert_eq!(titles(&v, "articles"), ["five", "four", "three"]);
        assert_eq!(v["articlesCount"], 5, "{backend:?}");
        let first = &v["articles"][0];
        assert_eq!(first["author"], "bob");
        assert_eq!(first["created_at"], "2027-01-15T08:00:04.000Z");

        let v = json(&server, "/posts?limit=2&offset=1").await;
        assert_eq!(titles(&v, "articles"), ["four", "three"], "{backend:?}");
        assert_eq!(v["articlesCount"], 5);
        let v = json(&server, "/posts?offset=4&limit=100").await;
        assert_eq!(titles(&v, "articles"), ["one"], "{backend:?}");
        assert_eq!(v["articlesCount"], 5);
        let v = json(&server, "/posts?offset=40").await;
        assert_eq!(titles(&v, "articles"), Vec::<String>::new());
        assert_eq!(v["articlesCount"], 5);
    }
}

#[tokio::test]
async fn filters_on_joined_tables_filter_and_count() {
    for backend in BACKENDS {
        let Some(server) = server(backend).await else {
            continue;
        };
        let v = json(&server, "/posts?tag=dragons").await;
        assert_eq!(
            titles(&v, "articles"),
            ["three", "two", "one"],
            "{backend:?}"
        );
        assert_eq!(v["articlesCount"], 3);
        let v = json(&server, "/posts?tag=dragons&author=ada&limit=1").await;
        assert_eq!(titles(&v, "articles"), ["two"], "{backend:?}");
        assert_eq!(v["articlesCount"], 2);
        let v = json(&server, "/posts?author=bob&tag=training").await;
        assert_eq!(titles(&v, "articles"), ["five"], "{backend:?}");
        assert_eq!(v["articlesCount"], 1);
        // Nothing matches: 200 with an empty list and a zero count.
        let v = json(&server, "/posts?author=nobody").await;
        assert_eq!(v, serde_json::json!({"articles": [], "articlesCount": 0}));
        // A value is bound, never SQL: these match nothing.
        for attempt in [
            "%27%20OR%201%3D1%20--",
            "x%27)%20OR%20(%271%27%3D%271",
            "dragons%27%20OR%20%27a%27%3D%27a",
        ] {
            let v = json(&server, &format!("/posts?tag={attempt}")).await;
            assert_eq!(v["articlesCount"], 0, "{backend:?}: {attempt}");
            assert_eq!(v["articles"], serde_json::json!([]));
        }
        // The shape's filters on a model's list too, in the shape's JSON.
        let v = json(&server, "/model-posts?tag=dragons&limit=2&order=-title").await;
        assert_eq!(keys(&v), ["articles", "articlesCount"], "{backend:?}");
        assert_eq!(titles(&v, "articles"), ["two", "three"], "{backend:?}");
        assert_eq!(v["articlesCount"], 4, "{backend:?}: hidden is a model row");
    }
}

#[tokio::test]
async fn bad_parameters_are_a_400_naming_them() {
    for backend in BACKENDS {
        let Some(server) = server(backend).await else {
            continue;
        };
        for (path, says) in [
            ("/posts?limit=0", "`limit` must be a whole number from 1 to 100"),
            ("/posts?limit=101", "`limit` must be a whole number from 1 to 100"),
            ("/posts?limit=two", "`limit` must be a whole number from 1 to 100"),
            ("/posts?offset=-1", "`offset` must be a whole number from 0"),
            ("/posts?offset=99999999999999999999", "`offset` must be a whole number from 0"),
            ("/posts?page=2", "`page` is not a parameter of this list (limit, offset, tag, author)"),
            ("/posts?colour=red", "`colour` is not a parameter of this list"),
            ("/posts?tag=a%00b", "`tag` must not contain a NUL character"),
            ("/paged?limit=2", "`limit` is not a parameter of this list (page, per_page)"),
            ("/paged?per_page=501", "`per_page` must be at most 500"),
            ("/model-posts?page=1", "`page` is not a parameter of this list (q, order, limit, offset, tag, author, or a column"),
            ("/model-posts?limit=0", "`limit` must be a whole number from 1 to 100"),
        ] {
            let (status, head, body) = server.send("GET", path, None).await;
            assert_eq!(status, 400, "{backend:?} {path}: {body}");
            assert!(head.contains("application/problem+json"), "{head}");
            assert!(body.contains(says), "{path}: {body}");
        }
    }
}

#[tokio::test]
async fn the_default_pages_keep_their_json() {
    for backend in BACKENDS {
        let Some(server) = server(backend).await else {
            continue;
        };
        // A model's list (`ListQuery<M>`): pages of `items`.
        let v = json(&server, "/model?per_page=2&page=2&order=id").await;
        assert_eq!(
            keys(&v),
            ["items", "page", "per_page", "total"],
            "{backend:?}"
        );
        assert_eq!(titles(&v, "items"), ["three", "four"]);
        assert_eq!(
            (&v["total"], &v["page"], &v["per_page"]),
            (&6.into(), &2.into(), &2.into())
        );
        // A query's list in the default shape (no order: the database's):
        // the same names.
        let v = json(&server, "/paged?per_page=4").await;
        assert_eq!(
            keys(&v),
            ["items", "page", "per_page", "total"],
            "{backend:?}"
        );
        assert_eq!(titles(&v, "items").len(), 4, "{backend:?}");
        assert_eq!(
            (&v["total"], &v["page"], &v["per_page"]),
            (&5.into(), &1.into(), &4.into())
        );
    }
}

/// Shapes that are not well made.
struct NoPlaceholder;
impl ListShape for NoPlaceholder {
    const FILTERS: &'static [Where] = &[Where {
        param: "tag",
        sql: "tag = 'x'",
    }];
}

struct Twice;
impl ListShape for Twice {
    const FILTERS: &'static [Where] = &[
        Where {
            param: "tag",
            sql: "tag = {}",
        },
        Where {
            param: "tag",
            sql: "name = {}",
        },
    ];
}

struct LikePaging;
impl ListShape for LikePaging {
    const PAGING: Paging = Paging::Offset {
        limit: 20,
        max: 100,
    };
    const FILTERS: &'static [Where] = &[Where {
        param: "limit",
        sql: "n < {}",
    }];
}

struct DefaultOverMax;
impl ListShape for DefaultOverMax {
    const PAGING: Paging = Paging::Offset {
        limit: 200,
        max: 100,
    };
}

struct NamedLikeTheSearch;
impl ListShape for NamedLikeTheSearch {
    const FILTERS: &'static [Where] = &[Where {
        param: "q",
        sql: "title = {}",
    }];
}

async fn listing<S: ListShape>(_: Listing<S>) -> &'static str {
    "listed"
}

async fn model_query<S: ListShape>(_: ListQuery<Post, S>) -> &'static str {
    "listed"
}

#[tokio::test]
async fn a_shape_that_is_not_well_made_fails_the_build_naming_it() {
    let url = fresh(tern_data::Backend::Sqlite).await.unwrap();
    let build = |app: App| {
        let config = Config::from_settings([("DATABASE_URL", url.as_str())]).unwrap();
        match app.settings::<Database>("database").build_with(config) {
            Ok(_) => panic!("built"),
            Err(e) => e.to_string(),
        }
    };
    for (app, says) in [
        (
            App::new().route("/l", get(listing::<NoPlaceholder>)),
            "the list shape `lists::NoPlaceholder`: the filter `tag` must have exactly one `{}`",
        ),
        (
            App::new().route("/l", get(listing::<Twice>)),
            "`lists::Twice`: the filter `tag` is named twice",
        ),
        (
            App::new().route("/l", get(listing::<LikePaging>)),
            "`lists::LikePaging`: the filter `limit` is named like another parameter",
        ),
        (
            App::new().route("/l", get(listing::<DefaultOverMax>)),
            "`lists::DefaultOverMax`: its paging's default (200) must be from 1 to its maximum (100)",
        ),
        (
            App::new().route("/l", get(model_query::<NamedLikeTheSearch>)),
            "`lists::NamedLikeTheSearch`: the filter `q` is named like another parameter",
        ),
    ] {
        let e = build(app);
        assert!(e.contains(says), "{e}");
    }
    // The same shape is fine for a query's list, whose only parameters
    // are the shape's.
    let config = Config::from_settings([("DATABASE_URL", url.as_str())]).unwrap();
    App::new()
        .settings::<Database>("database")
        .route("/l", get(listing::<NamedLikeTheSearch>))
        .route("/p", get(listing::<Pages>))
        .build_with(config)
        .unwrap();
}

/// A date-time column is filtered by a date (its UTC midnight), an RFC
/// 3339 date-time in any offset, or a `datetime-local` text (UTC),
/// compared as times on both databases; junk is a 400 naming the filter.
#[tokio::test]
async fn date_time_filters() {
    assert_eq!(
        Post::column("created_at").unwrap().kind,
        tern_data::model::Kind::DateTime
    );
    // The posts are at 2027-01-15T08:00:00Z plus 0 to 5 seconds.
    for backend in BACKENDS {
        let Some(server) = server(backend).await else {
            continue;
        };
        for (query, want) in [
            (
                "created_at__ge=2027-01-15T08:00:03Z",
                &["four", "five", "hidden"][..],
            ),
            // 09:00:03 at +01:00 is 08:00:03Z.
            (
                "created_at__lt=2027-01-15T09:00:03%2B01:00",
                &["one", "two", "three"],
            ),
            ("created_at=2027-01-15T08:00:02", &["three"]),
            ("created_at__gt=2027-01-15T08:00:04.5Z", &["hidden"]),
            (
                "created_at__ge=2027-01-15&created_at__lt=2027-01-16",
                &["one", "two", "three", "four", "five", "hidden"],
            ),
            ("created_at__lt=2027-01-15", &[]),
            ("created_at__ge=2027-01-16", &[]),
            (
                "created_at__ne=2027-01-15T08:00:00Z&order=-title",
                &["two", "three", "hidden", "four", "five"],
            ),
        ] {
            let v = json(&server, &format!("/model?{query}")).await;
            assert_eq!(titles(&v, "items"), want, "{backend:?} {query}");
            assert_eq!(v["total"], want.len(), "{backend:?} {query}");
        }
        for junk in [
            "yesterday",
            "2027-13-01",
            "2027-01-15T25:00",
            "10000-01-01",
            "%27%20OR%201%3D1",
        ] {
            let path = format!("/model?created_at__ge={junk}");
            let (status, _, body) = server.send("GET", &path, None).await;
            assert_eq!(status, 400, "{backend:?} {path}: {body}");
            assert!(
                body.contains("`created_at__ge` must be a date"),
                "{path}: {body}"
            );
        }
    }
}
