// `Option<T>` of an extractor that does not say when it is absent: the
// error names the type and the two ways out (implement
// `OptionalFromRequestParts`, or take `Result<T, R>`), first or last.
// And an optional body is still a body: it must be last.

use tern::{extract::Path, Json};

#[tern::handler]
async fn id(id: Option<Path<u64>>) -> String {
    format!("{id:?}")
}

#[tern::handler]
async fn ids(id: Option<Path<u64>>, Path(other): Path<u64>) -> String {
    format!("{id:?} {other}")
}

#[tern::handler]
async fn create(body: Option<Json<String>>, Path(id): Path<u64>) -> String {
    format!("{id} {}", body.is_some())
}

fn main() {}
