//! Which login answers are a browser's `303` and which stay JSON: the
//! form routes read `Accept` as every Tern crate does (`tern::accept`:
//! weights, `q=0`, names in any case), so a client that prefers JSON gets
//! JSON even when it also names `text/html`. Before, any element that
//! began with `text/html` made the answer a redirect (`text/html;q=0`
//! included) and `TEXT/HTML` did not.
#![allow(clippy::unwrap_used, missing_docs)]

use tern::{test::TestClient, App, Config};
use tern_auth::{create_user, Passwords};
use tern_data::{testing::fresh, Backend, Database};

const SECRET: &str = "Zt3pQ9wLx2Nc8RvB5mKj7HdF4sGy6UaE";
const PASSWORD: &str = "a long enough password";

#[tokio::test]
async fn a_form_login_redirects_only_when_html_is_preferred() {
    let Some(url) = fresh(Backend::Sqlite).await else {
        return;
    };
    let config =
        Config::from_settings([("DATABASE_URL", url.as_str()), ("SECRET_KEY", SECRET)]).unwrap();
    let app = tern_auth::install(App::new().settings::<Database>("database"));
    let service = app.build_with(config).unwrap();
    let db = service.settings::<Database>().unwrap();
    db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
    create_user(db.pool(), &Passwords::default(), "ada", PASSWORD, false)
        .await
        .unwrap();
    let client = TestClient::from_service(service);

    // (Accept, whether the answer is the browser's redirect)
    let table = [
        ("text/html", true),
        (
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            true,
        ),
        ("application/json;q=0.1, text/html", true),
        ("TEXT/HTML", true),
        ("text/html;q=0, application/json", false),
        ("application/json, text/html;q=0.5", false),
        ("text/html;q=0.9, application/json", false),
        ("application/json", false),
        ("*/*", false),
    ];
    for (wrong, password) in [(false, PASSWORD), (true, "not the password")] {
        for (accept, html) in table {
            let res = client
                .post("/auth/login")
                .header("accept", accept)
                .form(&[("username", "ada"), ("password", password)])
                .send()
                .await;
            let status = res.status().as_u16();
            match (html, wrong) {
                (true, false) => {
                    assert_eq!(status, 303, "{accept}: {}", res.text());
                    assert_eq!(res.header("location"), Some("/"), "{accept}");
                }
                (true, true) => {
                    assert_eq!(status, 303, "{accept}: {}", res.text());
                    assert_eq!(
                        res.header("location"),
                        Some("/login?error=invalid"),
                        "{accept}"
                    );
                }
                (false, false) => {
                    assert_eq!(status, 200, "{accept}: {}", res.text());
                    let body: serde_json::Value = res.json();
                    assert_eq!(body["user"]["username"], "ada", "{accept}");
                }
                (false, true) => {
                    assert_eq!(status, 401, "{accept}: {}", res.text());
                    assert_eq!(res.header("location"), None, "{accept}");
                }
            }
        }
    }
}
