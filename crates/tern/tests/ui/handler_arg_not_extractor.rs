// Arguments that are not extractors: the error is at each one's type,
// before the last (`FromRequestParts`) and last (`FromRequest`).

use tern::extract::Path;

struct Db;

struct User {
    name: String,
}

#[tern::handler]
async fn count(db: Db, Path(id): Path<u64>) -> String {
    let _ = db;
    format!("{id}")
}

#[tern::handler]
async fn greet(Path(id): Path<u64>, user: User) -> String {
    format!("{id}: {}", user.name)
}

fn main() {}
