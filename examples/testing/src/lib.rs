//! Testing a Tern app: the app is a function your tests call, and
//! [`tern::test::TestClient`] sends it requests without a socket, through
//! the same middleware, routing, extractors and error rendering a real
//! request meets. Run with `cargo test -p example-testing`.

use serde::{Deserialize, Serialize};
use tern::{
    extract::{Path, Query},
    routing::get,
    App, Json,
};

/// A greeting.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
pub struct Greeting {
    /// Whom it greets.
    pub name: String,
    /// How many times.
    pub times: u8,
}

/// How loud the greeting is.
#[derive(Deserialize)]
pub struct Options {
    /// Repetitions, 1 to 10.
    pub times: Option<u8>,
}

async fn greet(Path(name): Path<String>, Query(o): Query<Options>) -> Json<Greeting> {
    Json(Greeting {
        name,
        times: o.times.unwrap_or(1).clamp(1, 10),
    })
}

/// The app under test.
pub fn app() -> App {
    App::new().route("/greet/{name}", get(greet))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tern::test::TestClient;

    #[tokio::test]
    async fn greets() {
        let client = TestClient::new(app());
        let res = client.get("/greet/ada?times=3").send().await;
        assert_eq!(res.status(), 200);
        assert_eq!(
            res.json::<Greeting>(),
            Greeting {
                name: "ada".into(),
                times: 3
            }
        );
    }

    #[tokio::test]
    async fn bad_input_is_a_problem_naming_the_field() {
        let client = TestClient::new(app());
        let res = client.get("/greet/ada?times=lots").send().await;
        assert_eq!(res.status(), 400);
        let problem = res.problem();
        assert_eq!(problem["field"], "times");
        assert!(problem["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("`lots`"));
    }

    #[tokio::test]
    async fn unknown_paths_and_methods() {
        let client = TestClient::new(app());
        assert_eq!(client.get("/nope").send().await.status(), 404);
        let res = client.post("/greet/ada").send().await;
        assert_eq!(res.status(), 405);
        assert_eq!(res.header("allow"), Some("GET, HEAD, OPTIONS"));
    }
}
