// Handlers that take `State<Db>` in an app made with `App::new()`.

use tern::{extract::State, routing::get, App};

#[derive(Clone)]
struct Db;

async fn count(State(_db): State<Db>) -> &'static str {
    "0"
}

fn main() {
    let _app = App::new().route("/count", get(count));
}
