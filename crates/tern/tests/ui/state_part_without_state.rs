// A handler takes a part of the app's state (`Cache: FromRef<AppState>`),
// but the app was built with `App::new()`.

use tern::{
    extract::{FromRef, State},
    routing::get,
    App,
};

#[derive(Clone)]
struct Cache;

#[derive(Clone)]
struct AppState {
    cache: Cache,
}

impl FromRef<AppState> for Cache {
    fn from_ref(state: &AppState) -> Self {
        state.cache.clone()
    }
}

async fn hits(State(_cache): State<Cache>) -> &'static str {
    "0"
}

fn main() {
    let _app = App::new().route("/hits", get(hits));
}
