// A return type that is not a response: the error is at the type.

use tern::extract::Path;

struct User {
    id: u64,
}

#[tern::handler]
async fn show(Path(id): Path<u64>) -> User {
    User { id }
}

fn main() {}
