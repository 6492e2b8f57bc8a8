//! Readiness: `GET /ready` (`TERN_READY_PATH`) answers `200 ready` when
//! every check the app and its batteries registered passes
//! ([`App::ready_check`](crate::App::ready_check): the database answers,
//! the message bus is connected), else `503` naming the failing checks.
//!
//! `/health` says the process is alive (a liveness probe: restart it if
//! not); `/ready` says it can serve now (a readiness probe: send it
//! traffic). While the server drains, `/ready` is `503` at once and
//! `/health` stays `200`, so a load balancer stops sending before the
//! process exits. Each check has one second; results are kept for one
//! second, so a storm of probes from many balancers runs each check at
//! most once a second. A check's error is logged (`warn`), never sent: it
//! may name a host or a user.

use std::{
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use http::{header, HeaderValue, StatusCode};
use tern_core::{response::IntoResponse, Response};

use crate::RequestContext;

type CheckFn = Arc<
    dyn Fn(RequestContext) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>
        + Send
        + Sync,
>;

/// One registered check.
#[derive(Clone)]
pub(crate) struct Check {
    pub(crate) name: &'static str,
    pub(crate) run: CheckFn,
}

impl Check {
    pub(crate) fn new<F, Fut>(name: &'static str, check: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        Check {
            name,
            run: Arc::new(move |ctx| Box::pin(check(ctx))),
        }
    }
}

/// How long a check may take, and how long a verdict is kept.
const CHECK_TIMEOUT: Duration = Duration::from_secs(1);
const KEEP: Duration = Duration::from_secs(1);

struct Ready {
    checks: Vec<Check>,
    /// The last verdict: when, and the failing checks' names.
    last: Mutex<Option<(Instant, Vec<&'static str>)>>,
}

impl Ready {
    async fn failing(&self, ctx: &RequestContext) -> Vec<&'static str> {
        if let Some((at, failing)) = &*self.last.lock().unwrap_or_else(|e| e.into_inner()) {
            if at.elapsed() < KEEP {
                return failing.clone();
            }
        }
        let runs = self.checks.iter().map(|check| {
            let fut = (check.run)(ctx.clone());
            async move {
                match tokio::time::timeout(CHECK_TIMEOUT, fut).await {
                    Ok(Ok(())) => None,
                    Ok(Err(why)) => {
                        tracing::warn!(check = check.name, error = %why, "readiness check failed");
                        Some(check.name)
                    }
                    Err(_) => {
                        tracing::warn!(check = check.name, "readiness check took more than 1 s");
                        Some(check.name)
                    }
                }
            }
        });
        let failing: Vec<&'static str> = futures_util::future::join_all(runs)
            .await
            .into_iter()
            .flatten()
            .collect();
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((Instant::now(), failing.clone()));
        failing
    }
}

/// The route's handler.
pub(crate) fn method_router<S: Clone + Send + Sync + 'static>(
    checks: Vec<Check>,
) -> crate::routing::MethodRouter<S> {
    let ready = Arc::new(Ready {
        checks,
        last: Mutex::new(None),
    });
    crate::routing::get(move |ctx: RequestContext| {
        let ready = Arc::clone(&ready);
        async move {
            let failing = if ctx.shutdown().is_signaled() {
                vec!["draining"]
            } else {
                ready.failing(&ctx).await
            };
            answer(&failing)
        }
    })
}

fn answer(failing: &[&str]) -> Response {
    let mut res = if failing.is_empty() {
        "ready".into_response()
    } else {
        let body = serde_json::json!({ "ready": false, "failing": failing });
        let mut res = (StatusCode::SERVICE_UNAVAILABLE, body.to_string()).into_response();
        res.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        res
    };
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}
