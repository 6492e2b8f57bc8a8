//! A JSON API for todos, kept in memory: `cargo run -p example-json-api`.
//!
//! ```sh
//! curl -s localhost:3000/todos -H 'content-type: application/json' -d '{"title":"write docs"}'
//! curl -s 'localhost:3000/todos?done=false&limit=10'
//! curl -s localhost:3000/todos/1
//! curl -s -X PATCH localhost:3000/todos/1 -H 'content-type: application/json' -d '{"done":true}'
//! curl -s -X DELETE localhost:3000/todos/1
//! ```

use std::{
    collections::BTreeMap,
    sync::{Arc, RwLock},
};

use serde::{Deserialize, Serialize};
use tern::{
    extract::{Path, Query, State},
    routing::get,
    App, Json, Problem, StatusCode,
};

#[derive(Clone, Serialize, Deserialize, Debug, PartialEq)]
struct Todo {
    id: u64,
    title: String,
    done: bool,
}

#[derive(Deserialize)]
struct NewTodo {
    title: String,
}

#[derive(Deserialize)]
struct Patch {
    title: Option<String>,
    done: Option<bool>,
}

#[derive(Deserialize)]
struct Filter {
    done: Option<bool>,
    limit: Option<usize>,
}

#[derive(Clone, Default)]
struct Db {
    todos: Arc<RwLock<BTreeMap<u64, Todo>>>,
}

fn not_found(id: u64) -> Problem {
    Problem::new(StatusCode::NOT_FOUND).with_detail(format!("there is no todo {id}"))
}

fn poisoned() -> Problem {
    Problem::new(StatusCode::INTERNAL_SERVER_ERROR).with_detail("the store is unavailable")
}

async fn list(State(db): State<Db>, Query(f): Query<Filter>) -> Result<Json<Vec<Todo>>, Problem> {
    let todos = db.todos.read().map_err(|_| poisoned())?;
    let items = todos
        .values()
        .filter(|t| f.done.is_none_or(|d| t.done == d))
        .take(f.limit.unwrap_or(100))
        .cloned()
        .collect();
    Ok(Json(items))
}

async fn create(
    State(db): State<Db>,
    Json(new): Json<NewTodo>,
) -> Result<(StatusCode, Json<Todo>), Problem> {
    if new.title.trim().is_empty() {
        return Err(Problem::new(StatusCode::UNPROCESSABLE_ENTITY)
            .with_detail("`title` must not be empty")
            .with_extension("field", "title"));
    }
    let mut todos = db.todos.write().map_err(|_| poisoned())?;
    let id = todos.keys().next_back().map_or(1, |last| last + 1);
    let todo = Todo {
        id,
        title: new.title,
        done: false,
    };
    todos.insert(id, todo.clone());
    Ok((StatusCode::CREATED, Json(todo)))
}

async fn show(State(db): State<Db>, Path(id): Path<u64>) -> Result<Json<Todo>, Problem> {
    let todos = db.todos.read().map_err(|_| poisoned())?;
    todos
        .get(&id)
        .cloned()
        .map(Json)
        .ok_or_else(|| not_found(id))
}

async fn update(
    State(db): State<Db>,
    Path(id): Path<u64>,
    Json(patch): Json<Patch>,
) -> Result<Json<Todo>, Problem> {
    let mut todos = db.todos.write().map_err(|_| poisoned())?;
    let todo = todos.get_mut(&id).ok_or_else(|| not_found(id))?;
    if let Some(title) = patch.title {
        todo.title = title;
    }
    if let Some(done) = patch.done {
        todo.done = done;
    }
    Ok(Json(todo.clone()))
}

async fn remove(State(db): State<Db>, Path(id): Path<u64>) -> Result<StatusCode, Problem> {
    let mut todos = db.todos.write().map_err(|_| poisoned())?;
    todos
        .remove(&id)
        .map(|_| StatusCode::NO_CONTENT)
        .ok_or_else(|| not_found(id))
}

fn app() -> App<Db> {
    App::with_state(Db::default())
        .route("/todos", get(list).post(create))
        .route("/todos/{id}", get(show).patch(update).delete(remove))
}

fn main() -> Result<(), tern::Error> {
    tern::run(app())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern::test::TestClient;

    #[tokio::test]
    async fn crud() {
        let client = TestClient::new(app());
        let res = client
            .post("/todos")
            .json(&serde_json_value("write docs"))
            .send()
            .await;
        assert_eq!(res.status(), 201);
        let todo: Todo = res.json();
        assert_eq!(todo.id, 1);
        let res = client
            .patch("/todos/1")
            .header("content-type", "application/json")
            .body(r#"{"done":true}"#)
            .send()
            .await;
        assert!(res.json::<Todo>().done);
        assert_eq!(
            client
                .get("/todos?done=true")
                .send()
                .await
                .json::<Vec<Todo>>()
                .len(),
            1
        );
        assert_eq!(
            client
                .get("/todos?done=false")
                .send()
                .await
                .json::<Vec<Todo>>()
                .len(),
            0
        );
        assert_eq!(client.delete("/todos/1").send().await.status(), 204);
        let res = client.get("/todos/1").send().await;
        assert_eq!(res.status(), 404);
        assert_eq!(res.detail().as_deref(), Some("there is no todo 1"));
        let res = client
            .post("/todos")
            .json(&serde_json_value(" "))
            .send()
            .await;
        assert_eq!(res.status(), 422);
        assert_eq!(client.get("/todos?limit=many").send().await.status(), 400);
    }

    fn serde_json_value(title: &str) -> BTreeMap<&'static str, String> {
        BTreeMap::from([("title", title.to_owned())])
    }
}
