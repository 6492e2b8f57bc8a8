//! What the accounts count in the app's metrics: logins by result, and
//! the refusals of the CSRF check and the login throttle
//! (`tern_rejections_total{reason="csrf"|"throttle"}`; a [`RateLimit`]'s
//! with [`RateLimit::metrics`]).
//!
//! [`RateLimit`]: crate::RateLimit
//! [`RateLimit::metrics`]: crate::RateLimit::metrics

use std::sync::Arc;

use http::StatusCode;
use tern::{
    metrics::{Counter, Metrics},
    middleware::Next,
    Request, Response,
};

/// The counters `install` registers, shared by its layers.
#[derive(Debug)]
pub(crate) struct AuthMeter {
    ok: Counter,
    failed: Counter,
    throttled: Counter,
    busy: Counter,
    throttle: Counter,
    pub(crate) csrf: Counter,
}

impl AuthMeter {
    pub(crate) fn register(metrics: &Metrics) -> Arc<AuthMeter> {
        let login = |result| {
            metrics.counter(
                "tern_auth_logins",
                "Logins at POST /auth/login (JSON or a form), by result",
                &[("result", result)],
            )
        };
        Arc::new(AuthMeter {
            ok: login("ok"),
            failed: login("failed"),
            throttled: login("throttled"),
            busy: login("busy"),
            throttle: metrics.rejection("throttle"),
            csrf: metrics.rejection("csrf"),
        })
    }
}

/// Around the login handler (inside the form layer, so that a form's
/// `303` is counted by the handler's answer): the result by its status.
/// `401` is a wrong name or password, `422` credentials refused unread
/// (a password over 1,024 bytes), `429` the throttle, `503` the hashers
/// busy; anything else (a database error) is no login result.
pub(crate) async fn login(meter: Arc<AuthMeter>, req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    match res.status() {
        s if s.is_success() => meter.ok.inc(),
        StatusCode::UNAUTHORIZED | StatusCode::UNPROCESSABLE_ENTITY => meter.failed.inc(),
        StatusCode::TOO_MANY_REQUESTS => {
            meter.throttled.inc();
            meter.throttle.inc();
        }
        StatusCode::SERVICE_UNAVAILABLE => meter.busy.inc(),
        _ => {}
    }
    res
}

/// Around the password change, which checks the current password behind
/// the same throttle: its refusals.
pub(crate) async fn password(meter: Arc<AuthMeter>, req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    if res.status() == StatusCode::TOO_MANY_REQUESTS {
        meter.throttle.inc();
    }
    res
}
