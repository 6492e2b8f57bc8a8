//! Hello, World! with Tern: `cargo run -p example-hello`, then
//! `curl localhost:3000`.

use tern::{routing::get, App};

async fn hello() -> &'static str {
    "Hello, World!"
}

fn main() -> Result<(), tern::Error> {
    tern::run(App::new().route("/", get(hello)))
}
