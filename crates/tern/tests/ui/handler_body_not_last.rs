// A body extractor before a head extractor: the error is at its type.

use serde::Deserialize;
use tern::{extract::Path, Json};

#[derive(Deserialize)]
struct NewMember {
    name: String,
}

#[tern::handler]
async fn join(Json(member): Json<NewMember>, Path(team): Path<u64>) -> String {
    format!("{} joins team {team}", member.name)
}

fn main() {}
