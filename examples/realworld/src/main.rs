//! Serves Conduit; see `src/lib.rs`. `cargo run -p example-realworld`,
//! then point a front end (or the Postman collection) at
//! `http://127.0.0.1:3000/api`.

fn main() -> Result<(), tern::Error> {
    tern::run(realworld::app())
}
