//! `GET /metrics` (`TERN_METRICS_PATH`): the app's metrics, for a
//! Prometheus scraper; behind `Authorization: Bearer <METRICS_TOKEN>` in
//! production (and whenever a token is set).

use http::{header, HeaderMap, HeaderValue, StatusCode};
use subtle::ConstantTimeEq;
use tern_core::{response::IntoResponse, Problem, Response};

use super::Metrics;
use crate::config::MetricsToken;

/// The route's handler.
pub(crate) fn method_router<S: Clone + Send + Sync + 'static>(
    metrics: Metrics,
    token: Option<MetricsToken>,
) -> crate::routing::MethodRouter<S> {
    crate::routing::get(move |headers: HeaderMap| {
        let metrics = metrics.clone();
        let token = token.clone();
        async move { answer(&metrics, token.as_ref(), &headers) }
    })
}

/// Whether `headers` carry `Authorization: Bearer <token>`, compared in
/// constant time.
fn authorized(token: &MetricsToken, headers: &HeaderMap) -> bool {
    let Some(given) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
    else {
        return false;
    };
    let want = token.as_bytes();
    // The length is not secret (it is the setting's length); the bytes are.
    given.len() == want.len() && bool::from(given.ct_eq(want))
}

fn answer(metrics: &Metrics, token: Option<&MetricsToken>, headers: &HeaderMap) -> Response {
    if let Some(token) = token {
        if !authorized(token, headers) {
            let mut res = Problem::new(StatusCode::UNAUTHORIZED)
                .with_detail(
                    "the metrics need `Authorization: Bearer <token>` with the server's \
                     METRICS_TOKEN",
                )
                .into_response();
            res.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return res;
        }
    }
    let openmetrics = headers.get_all(header::ACCEPT).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.contains("application/openmetrics-text"))
    });
    let (body, content_type) = if openmetrics {
        (
            metrics.render_openmetrics(),
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )
    } else {
        (
            metrics.render(),
            prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
        )
    };
    let mut res = body.into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}
