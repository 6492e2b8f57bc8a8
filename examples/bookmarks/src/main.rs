//! Serves the bookmarks app; see `src/lib.rs`.

fn main() -> Result<(), tern::Error> {
    tern::run(bookmarks::app())
}
