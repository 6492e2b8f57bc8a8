// Two extractors that read the body: the error is at the second.

use serde::Deserialize;
use tern::Json;

#[derive(Deserialize)]
struct NewMember {
    name: String,
}

#[tern::handler]
async fn join(Json(member): Json<NewMember>, note: String) -> String {
    format!("{} joins: {note}", member.name)
}

fn main() {}
