// The state type of the checks: from a `State<T>` argument, or named with
// `state = ...` when the handler takes a part of the state.

#![deny(warnings)]

use tern::{
    extract::{FromRef, State},
    routing::get,
    App,
};

#[derive(Clone)]
struct AppState {
    greeting: Greeting,
}

#[derive(Clone)]
struct Greeting(&'static str);

impl FromRef<AppState> for Greeting {
    fn from_ref(state: &AppState) -> Self {
        state.greeting.clone()
    }
}

#[tern::handler]
async fn whole(State(state): State<AppState>) -> &'static str {
    state.greeting.0
}

#[tern::handler(state = AppState)]
async fn part(State(Greeting(text)): State<Greeting>) -> &'static str {
    text
}

fn main() {
    let state = AppState {
        greeting: Greeting("hi"),
    };
    let _app = App::with_state(state)
        .route("/", get(whole))
        .route("/part", get(part))
        .scope("/api", |api| {
            api.route("/part", get(part))
                .named_route("p", "/p", get(whole))
        });
}
