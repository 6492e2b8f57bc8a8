//! Logging in and out from an HTML form, without a script.
//!
//! A browser that submits `<form method="post" action="/auth/login">`
//! navigates to the answer, so a JSON body would be the page it shows.
//! When the request is a form (`application/x-www-form-urlencoded`) sent
//! by a navigation (its `Accept` prefers `text/html` to JSON), the account routes
//! answer `303 See Other` instead:
//!
//! | route | outcome | `Location` |
//! |---|---|---|
//! | `POST /auth/login` | logged in (the session cookie is set) | the `next` query parameter, else `/` |
//! | `POST /auth/login` | wrong name or password, throttled, busy | the form's page (the same-origin `Referer`'s path, else `/login`) with `?error=invalid`, `throttled` or `busy` (and `next` kept) |
//! | `POST /auth/logout` | logged out | `next`, else `/` |
//!
//! `next` must be a path on this site (`/notes`, never `//other.example`
//! or `https://...`): anything else is ignored. The error is one of three
//! fixed words, never text from the request, so a page that shows it
//! cannot be made to say something else. Scripts (`fetch`, JSON or
//! forms with another `Accept`) get the JSON answers as before.
//!
//! A page's form, under the production CSP (no inline script needed):
//!
//! ```html
//! <form method="post" action="/auth/login?next=/notes">
//!   <input name="username" autocomplete="username" required>
//!   <input name="password" type="password" autocomplete="current-password" required>
//!   <button type="submit">Log in</button>
//! </form>
//! <form method="post" action="/auth/logout">
//!   <input type="hidden" name="csrf_token" value="…the session's token…">
//!   <button type="submit">Log out</button>
//! </form>
//! ```

use http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use tern::{body::Body, middleware::Next, Request, Response};

/// Which account route a form posts to.
#[derive(Clone, Copy)]
pub(crate) enum Route {
    Login,
    Logout,
}

/// The middleware of [`Route::Login`].
pub(crate) async fn login(req: Request, next: Next) -> Response {
    answer(Route::Login, req, next).await
}

/// The middleware of [`Route::Logout`].
pub(crate) async fn logout(req: Request, next: Next) -> Response {
    answer(Route::Logout, req, next).await
}

async fn answer(route: Route, req: Request, next: Next) -> Response {
    if !from_a_form_navigation(req.headers()) {
        return next.run(req).await;
    }
    let target = local(req.uri().query().and_then(|q| param(q, "next")).as_deref());
    let back = back(req.headers());
    let res = next.run(req).await;
    let status = res.status();
    if status.is_success() {
        return see_other(res, target.as_deref().unwrap_or("/"));
    }
    let error = match (route, status) {
        (Route::Login, StatusCode::UNAUTHORIZED | StatusCode::UNPROCESSABLE_ENTITY) => "invalid",
        (Route::Login, StatusCode::TOO_MANY_REQUESTS) => "throttled",
        (Route::Login, StatusCode::SERVICE_UNAVAILABLE) => "busy",
        // Anything else (a CSRF refusal, no session to end, a server
        // error) is the app's own error page.
        _ => return res,
    };
    let mut location = format!("{back}?error={error}");
    if let Some(target) = target {
        location.push_str("&next=");
        location.push_str(&encode(&target));
    }
    see_other(res, &location)
}

/// A form, sent by a browser navigating to the answer.
fn from_a_form_navigation(headers: &HeaderMap) -> bool {
    let form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.get(..33)
                .is_some_and(|t| t.eq_ignore_ascii_case("application/x-www-form-urlencoded"))
        });
    form && prefers_html(headers)
}

/// Whether the `Accept` header prefers an HTML page to JSON, decided as
/// the app's error pages decide it ([`tern::Requested::prefers_html`], over
/// [`tern::accept`]): weights and `q=0` count, names in any case. Several
/// `Accept` lines are one list (RFC 9110 §5.3).
fn prefers_html(headers: &HeaderMap) -> bool {
    let accept = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(", ");
    tern::Requested::with_accept(&accept).prefers_html()
}

/// The answer as a `303` to `location`: its headers kept (the session
/// cookie), its body and extensions dropped (a problem's extension would
/// have the app's renderer draw an error page over the redirect).
fn see_other(res: Response, location: &str) -> Response {
    let (parts, _) = res.into_parts();
    let mut out = Response::new(Body::empty());
    *out.status_mut() = StatusCode::SEE_OTHER;
    *out.headers_mut() = parts.headers;
    out.headers_mut().remove(header::CONTENT_TYPE);
    out.headers_mut().remove(header::CONTENT_LENGTH);
    let location =
        HeaderValue::from_str(location).unwrap_or_else(|_| HeaderValue::from_static("/"));
    out.headers_mut().insert(header::LOCATION, location);
    out
}

/// The page the form was on: the path of a same-origin `Referer` (the
/// CSRF check has refused any other origin before the handler ran),
/// else `/login`.
fn back(headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .and_then(|r| r.parse::<Uri>().ok())
        .filter(|r| r.authority().map(|a| a.as_str()) == host)
        .and_then(|r| local(Some(r.path())))
        .unwrap_or_else(|| "/login".to_owned())
}

/// `path` when it is a path on this site: starts with one `/` (not `//`
/// or `/\`, which browsers read as another host) and holds only visible
/// ASCII.
fn local(path: Option<&str>) -> Option<String> {
    let path = path?;
    let bytes = path.as_bytes();
    let ok = bytes.first() == Some(&b'/')
        && !matches!(bytes.get(1), Some(b'/' | b'\\'))
        && bytes.iter().all(|b| b.is_ascii_graphic())
        && path.parse::<http::uri::PathAndQuery>().is_ok();
    ok.then(|| path.to_owned())
}

/// A query parameter, decoded.
fn param(query: &str, name: &str) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(query)
        .ok()?
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn encode(value: &str) -> String {
    serde_urlencoded::to_string([("", value)])
        .map(|s| s.trim_start_matches('=').to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_on_this_site_are_followed() {
        for ok in ["/", "/notes", "/notes?page=2", "/a/b%20c"] {
            assert_eq!(local(Some(ok)).as_deref(), Some(ok), "{ok}");
        }
        for bad in [
            "",
            "notes",
            "//evil.example",
            "/\\evil.example",
            "https://evil.example/",
            "/a b",
            "/a\tb",
            "/\u{e9}",
            "javascript:alert(1)",
        ] {
            assert_eq!(local(Some(bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn the_page_to_go_back_to_is_a_same_origin_referer() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:3000"));
        assert_eq!(back(&h), "/login");
        h.insert(
            header::REFERER,
            HeaderValue::from_static("http://127.0.0.1:3000/sign-in?x=1"),
        );
        assert_eq!(back(&h), "/sign-in");
        h.insert(
            header::REFERER,
            HeaderValue::from_static("http://evil.example/sign-in"),
        );
        assert_eq!(back(&h), "/login");
        assert_eq!(encode("/notes?a=1&b"), "%2Fnotes%3Fa%3D1%26b");
    }
}
