// Without `#[tern::handler]` the error is at the route, generic, and says
// how to get one that names the fault.

use serde::Deserialize;
use tern::{extract::Path, routing::post, App, Json};

#[derive(Deserialize)]
struct NewMember {
    name: String,
}

async fn join(Json(member): Json<NewMember>, Path(team): Path<u64>) -> String {
    format!("{} joins team {team}", member.name)
}

fn main() {
    let _app = App::new().route("/teams/{team}", post(join));
}
