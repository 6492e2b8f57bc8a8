//! `cargo run`: serves on http://127.0.0.1:3000 (`TERN_ADDR`).
//! `cargo run -- --help`: the app's other commands (`routes`, `check`).

fn main() -> Result<(), tern::Error> {
    tern::run(__CRATE__::app())
}
