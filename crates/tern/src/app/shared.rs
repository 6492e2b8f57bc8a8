//! What every request of one built app shares.

use std::{net::SocketAddr, sync::Arc};

use http::{header, HeaderValue};

use super::Renderer;
use crate::{config::Config, routing::table::Table};

/// What every request of one app shares: configuration and hooks.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(super) renderer: Option<Renderer>,
    pub(super) security_headers: Vec<(header::HeaderName, HeaderValue)>,
    #[cfg(feature = "cookies")]
    pub(crate) cookie_key: cookie::Key,
    pub(crate) table: Arc<Table>,
    pub(crate) settings: crate::settings::AppSettings,
    pub(crate) metrics: crate::metrics::Metrics,
    /// The server's own cells, when `TERN_METRICS` is on.
    pub(crate) http_metrics: Option<Arc<crate::metrics::http::HttpMetrics>>,
    /// The path of the built-in metrics route, when it is served (any
    /// host may ask it, like the health check).
    pub(crate) metrics_path: Option<String>,
    /// The path of the built-in readiness route, when it is served.
    pub(crate) ready_path: Option<String>,
}

/// What operators see of an app: its metrics and the built-in probes'
/// paths.
pub(crate) struct Operations {
    pub(crate) metrics: crate::metrics::Metrics,
    pub(crate) http_metrics: Option<Arc<crate::metrics::http::HttpMetrics>>,
    pub(crate) metrics_path: Option<String>,
    pub(crate) ready_path: Option<String>,
}

impl Shared {
    pub(super) fn new(
        config: Config,
        renderer: Option<Renderer>,
        table: Arc<Table>,
        settings: crate::settings::AppSettings,
        operations: Operations,
    ) -> Self {
        let Operations {
            metrics,
            http_metrics,
            metrics_path,
            ready_path,
        } = operations;
        let security_headers = if config.security_headers {
            vec![
                (
                    header::STRICT_TRANSPORT_SECURITY,
                    HeaderValue::from_static("max-age=63072000; includeSubDomains"),
                ),
                (
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'",
                    ),
                ),
                (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
                (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
                // OWASP: turn off the legacy XSS auditor of old browsers,
                // itself a source of cross-site leaks; CSP does the job.
                (header::X_XSS_PROTECTION, HeaderValue::from_static("0")),
                (
                    header::REFERRER_POLICY,
                    HeaderValue::from_static("strict-origin-when-cross-origin"),
                ),
                (
                    header::HeaderName::from_static("cross-origin-opener-policy"),
                    HeaderValue::from_static("same-origin"),
                ),
            ]
        } else {
            Vec::new()
        };
        #[cfg(feature = "cookies")]
        let cookie_key =
            crate::extract::cookie::cookie_key(config.secret_key.as_ref().map(|k| k.as_bytes()));
        Shared {
            config,
            renderer,
            #[cfg(feature = "cookies")]
            cookie_key,
            table,
            security_headers,
            settings,
            metrics,
            http_metrics,
            metrics_path,
            ready_path,
        }
    }

    /// Whether the proxy headers of a request from `peer` are believed.
    pub(crate) fn is_trusted_proxy(&self, peer: Option<SocketAddr>) -> bool {
        peer.is_some_and(|p| {
            self.config
                .trusted_proxies
                .iter()
                .any(|n| n.contains(p.ip()))
        })
    }
}
