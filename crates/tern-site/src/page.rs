//! Pages from templates: [`Page`], an askama template as a response.
//!
//! Templates are compiled into the binary (askama): a typo in a template
//! or a field it names is a build error, and every `{{ value }}` is
//! HTML-escaped unless marked `|safe`. Layouts by inheritance
//! (`{% extends "base.html" %}` and `{% block %}`), partials by
//! `{% include %}`.
//!
//! Because they are compiled, a changed template shows after a rebuild
//! (`cargo watch -x run` rebuilds on save); static files
//! ([`StaticFiles`](crate::StaticFiles)) show without one.

use http::StatusCode;
use tern::{response::Html, IntoResponse, Problem, Response};

/// An askama template rendered as an HTML page: `200`,
/// `text/html; charset=utf-8`, an exact `Content-Length`. A template that
/// fails to render (a filter's error) is a `500`, logged with the reason.
///
/// ```
/// use tern_site::Page;
///
/// #[derive(askama::Template)]
/// #[template(source = "<h1>Hello, {{ name }}</h1>", ext = "html")]
/// struct Hello<'a> {
///     name: &'a str,
/// }
///
/// async fn hello() -> Page<Hello<'static>> {
///     Page(Hello { name: "<world>" }) // <h1>Hello, &#60;world&#62;</h1>
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::get(hello);
/// ```
#[derive(Debug, Clone)]
pub struct Page<T>(pub T);

impl<T: askama::Template> IntoResponse for Page<T> {
    fn into_response(self) -> Response {
        match self.0.render() {
            Ok(html) => Html(html).into_response(),
            Err(e) => {
                tracing::error!(error = %e, "a template failed to render");
                Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                    .with_detail("the page could not be rendered")
                    .into_response()
            }
        }
    }
}
