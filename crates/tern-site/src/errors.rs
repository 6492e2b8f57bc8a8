//! Error pages for browsers: [`html_errors`], a problem renderer that
//! answers a browser with an HTML page and every other client with the
//! default `application/problem+json`.
//!
//! ```
//! use tern::App;
//!
//! let app = App::new().problem_renderer(tern_site::html_errors);
//! ```
//!
//! Every problem goes through it: `404` and `405` from the router, `403`
//! from the CSRF check, `413`, `500` (whose detail production hides) and
//! the problems handlers return. To change the page, write a renderer of
//! your own on the same plan: `requested.prefers_html()` decides, and
//! `problem.clone().into_response()` is the `problem+json` answer.

use tern::{response::Html, IntoResponse, Problem, Requested, Response};

/// The page: the problem's status, title and detail, escaped.
#[derive(askama::Template)]
#[template(path = "error.html")]
pub struct ErrorPage<'a> {
    /// The status code (`404`).
    pub status: u16,
    /// The problem's title (`Not Found`).
    pub title: &'a str,
    /// What went wrong, for the reader.
    pub detail: &'a str,
}

/// Renders `problem` as an HTML page when the client prefers HTML (a
/// browser), as `problem+json` otherwise; see the [module](self).
pub fn html_errors(problem: &Problem, requested: &Requested) -> Response {
    if !requested.prefers_html() {
        return problem.clone().into_response();
    }
    let page = ErrorPage {
        status: problem.status().as_u16(),
        title: problem.title(),
        detail: problem.detail(),
    };
    match askama::Template::render(&page) {
        Ok(html) => {
            let mut res = Html(html).into_response();
            *res.status_mut() = problem.status();
            res
        }
        Err(e) => {
            tracing::error!(error = %e, "the error page failed to render");
            problem.clone().into_response()
        }
    }
}
