// Handlers that take `State<Db>` in an app whose state is another type.

use tern::{extract::State, routing::get, App};

#[derive(Clone)]
struct Db;

#[derive(Clone)]
struct AppState;

async fn count(State(_db): State<Db>) -> &'static str {
    "0"
}

fn main() {
    let _app = App::with_state(AppState).route("/count", get(count));
}
