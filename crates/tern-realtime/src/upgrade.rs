//! The handshake: [`WebSocketUpgrade`], the extractor that checks a
//! client's request to open a WebSocket and answers `101`.

use std::{future::Future, sync::Arc};

use http::{header, request::Parts, HeaderMap, HeaderValue, StatusCode};
use tern::{
    extract::{ClientIp, FromRequestParts, Host, Scheme},
    settings::Settings,
    IntoResponse, Problem, Response, Shutdown,
};
use tokio_tungstenite::{
    tungstenite::{handshake::derive_accept_key, protocol::Role},
    WebSocketStream,
};

use crate::{settings::WebSockets, WebSocket};

/// A client's request to open a WebSocket, checked (RFC 6455's handshake
/// and the `Origin`); answer it with [`on_upgrade`](Self::on_upgrade).
///
/// Over HTTP/1.1 the request is a `GET` with `Upgrade: websocket`; over
/// HTTP/2 (RFC 8441) an extended `CONNECT` with `:protocol` `websocket`,
/// which Tern routes to the same `GET` handler; the answer is `101` or
/// `200` accordingly.
///
/// | the request | the answer |
/// |---|---|
/// | no `Upgrade: websocket` or `Connection: upgrade` | `426`, `Upgrade: websocket` |
/// | `Sec-WebSocket-Version` other than `13` | `426`, `Sec-WebSocket-Version: 13` |
/// | no valid `Sec-WebSocket-Key` | `400` |
/// | an `Origin` other than this server's own (scheme, host and port compared), not in `WEBSOCKET_ORIGINS` | `403` |
/// | an extended `CONNECT` for another protocol | `400` |
/// | an in-process request ([`TestClient::send`](tern::test::TestRequest::send)), or HTTP/2 without extended `CONNECT` | `426` |
///
/// Each is a `problem+json` saying what was wrong.
pub struct WebSocketUpgrade {
    on_upgrade: tern::upgrade::OnUpgrade,
    /// `Sec-WebSocket-Accept` (HTTP/1.1); `None` over HTTP/2.
    accept: Option<HeaderValue>,
    offered: Option<HeaderValue>,
    protocol: Option<HeaderValue>,
    settings: Arc<WebSockets>,
    shutdown: Shutdown,
    client_ip: Option<std::net::IpAddr>,
    /// The app's socket counts, when it records realtime's metrics.
    counted: Option<tern::metrics::Connections>,
}

impl std::fmt::Debug for WebSocketUpgrade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketUpgrade")
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

fn refuse(
    status: StatusCode,
    detail: &'static str,
    header: Option<(&'static str, &'static str)>,
) -> Response {
    let mut res = Problem::new(status).with_detail(detail).into_response();
    if let Some((name, value)) = header {
        res.headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    res
}

/// Whether the comma-separated header `name` has the token `token`.
fn has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// A `Sec-WebSocket-Key`: the base64 of 16 bytes (24 characters, `==` last).
fn valid_key(key: &[u8]) -> bool {
    key.len() == 24
        && key.ends_with(b"==")
        && key[..22]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
}

impl<S: Send + Sync> FromRequestParts<S> for WebSocketUpgrade {
    type Rejection = Response;

    /// A WebSocket route: API documents leave it out of their operations
    /// and name it (OpenAPI cannot describe a protocol switch).
    fn describe(op: &mut tern::doc::Operation) {
        op.upgrade = Some("websocket".to_owned());
    }

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        let headers = &parts.headers;
        // RFC 8441: HTTP/2's extended CONNECT.
        let h2 = parts.method == http::Method::CONNECT;
        if h2 {
            let protocol = parts.extensions.get::<hyper::ext::Protocol>();
            if protocol.is_none_or(|p| !p.as_str().eq_ignore_ascii_case("websocket")) {
                return Err(refuse(
                    StatusCode::BAD_REQUEST,
                    "this is a WebSocket endpoint: an extended CONNECT here names the protocol `websocket`",
                    None,
                ));
            }
        } else if parts.method != http::Method::GET {
            return Err(refuse(
                StatusCode::METHOD_NOT_ALLOWED,
                "a WebSocket opens with a GET (or, over HTTP/2, an extended CONNECT)",
                Some(("allow", "GET")),
            ));
        }
        if !h2
            && (!has_token(headers, header::UPGRADE, "websocket")
                || !has_token(headers, header::CONNECTION, "upgrade"))
        {
            return Err(refuse(
                StatusCode::UPGRADE_REQUIRED,
                "this is a WebSocket endpoint: send `Connection: upgrade` and `Upgrade: websocket`",
                Some(("upgrade", "websocket")),
            ));
        }
        if headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .map(HeaderValue::as_bytes)
            != Some(b"13")
        {
            return Err(refuse(
                StatusCode::UPGRADE_REQUIRED,
                "only WebSocket version 13 is spoken (`Sec-WebSocket-Version: 13`)",
                Some(("sec-websocket-version", "13")),
            ));
        }
        // Over HTTP/2 there is no key to answer (RFC 8441 §5).
        let accept =
            if h2 {
                None
            } else {
                let Some(key) = headers
                    .get(header::SEC_WEBSOCKET_KEY)
                    .filter(|k| valid_key(k.as_bytes()))
                else {
                    return Err(refuse(
                        StatusCode::BAD_REQUEST,
                        "`Sec-WebSocket-Key` is missing or not the base64 of 16 bytes",
                        None,
                    ));
                };
                let accept = derive_accept_key(key.as_bytes());
                Some(HeaderValue::from_str(&accept).map_err(|_| {
                    refuse(StatusCode::INTERNAL_SERVER_ERROR, "the accept key", None)
                })?)
            };
        let offered = headers.get(header::SEC_WEBSOCKET_PROTOCOL).cloned();
        let settings = match Settings::<WebSockets>::from_request_parts(parts, &()).await {
            Ok(Settings(s)) => s,
            Err(_) => Arc::new(WebSockets::default()),
        };
        if let Some(origin) = parts.headers.get(header::ORIGIN).cloned() {
            let host = Host::from_request_parts(parts, &())
                .await
                .map(|h| h.0)
                .unwrap_or_default();
            let scheme = Scheme::from_request_parts(parts, &())
                .await
                .map_or("http", Scheme::as_str);
            let allowed = origin
                .to_str()
                .is_ok_and(|o| settings.origin_allowed(o, scheme, &host));
            if !allowed {
                return Err(refuse(
                    StatusCode::FORBIDDEN,
                    "the page that opens this WebSocket is from another site: its `Origin` is \
                     neither this server's own (scheme, host and port) nor in WEBSOCKET_ORIGINS \
                     (behind a TLS proxy, have it send `X-Forwarded-Proto: https`)",
                    None,
                ));
            }
        }
        let Some(on_upgrade) = tern::upgrade::on_parts(parts) else {
            return Err(refuse(
                StatusCode::UPGRADE_REQUIRED,
                "this connection cannot switch to a WebSocket (a request made in process, or \
                 HTTP/2 without an extended CONNECT)",
                Some(("upgrade", "websocket")),
            ));
        };
        let shutdown = Shutdown::from_request_parts(parts, &())
            .await
            .map_err(IntoResponse::into_response)?;
        let client_ip = ClientIp::from_request_parts(parts, &())
            .await
            .ok()
            .map(|ClientIp(ip)| ip);
        let counted = match Settings::<crate::Realtime>::from_request_parts(parts, &()).await {
            Ok(Settings(r)) => r.meter.get().map(|m| m.websocket.clone()),
            Err(_) => None,
        };
        Ok(WebSocketUpgrade {
            counted,
            on_upgrade: on_upgrade.idle_timeout(settings.idle_timeout),
            accept,
            offered,
            protocol: None,
            settings,
            shutdown,
            client_ip,
        })
    }
}

impl WebSocketUpgrade {
    /// Picks the subprotocol: the first of the client's
    /// `Sec-WebSocket-Protocol` list that is in `supported`; none if no
    /// one matches (the client then decides whether to stay).
    pub fn protocols<I>(mut self, supported: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let supported: Vec<I::Item> = supported.into_iter().collect();
        self.protocol = self
            .offered
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .and_then(|offered| {
                offered
                    .split(',')
                    .map(str::trim)
                    .find(|p| supported.iter().any(|s| s.as_ref() == *p))
                    .and_then(|p| HeaderValue::from_str(p).ok())
            });
        self
    }

    /// The subprotocol [`protocols`](Self::protocols) picked.
    pub fn selected_protocol(&self) -> Option<&str> {
        self.protocol.as_ref().and_then(|p| p.to_str().ok())
    }

    /// Answers `101 Switching Protocols` and runs `callback` with the
    /// socket in a task of its own once the switch is done. The server's
    /// drain waits for the task (up to `TERN_SHUTDOWN_TIMEOUT`); the
    /// socket says goodbye (`1001`) when the drain starts.
    pub fn on_upgrade<F, Fut>(self, callback: F) -> Response
    where
        F: FnOnce(WebSocket) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let WebSocketUpgrade {
            on_upgrade,
            accept,
            protocol,
            settings,
            shutdown,
            client_ip,
            counted,
            ..
        } = self;
        let guard = shutdown.guard();
        let chosen = protocol
            .as_ref()
            .and_then(|p| p.to_str().ok())
            .map(str::to_owned);
        tokio::spawn(async move {
            let io = match on_upgrade.await {
                Ok(io) => io,
                Err(e) => {
                    tracing::debug!(error = %e, "websocket: the upgrade did not happen");
                    return;
                }
            };
            if settings.send_buffer > 0 {
                if let Err(e) = io.set_send_buffer(settings.send_buffer) {
                    tracing::debug!(error = %e, "websocket: WEBSOCKET_SEND_BUFFER not applied");
                }
            }
            let stream = WebSocketStream::from_raw_socket(
                io,
                Role::Server,
                Some(crate::socket::config(&settings)),
            )
            .await;
            // Open from the switch until the callback is done with it.
            let _open = counted.as_ref().map(tern::metrics::Connections::open);
            let socket = WebSocket::new(stream, settings, shutdown, guard, chosen, client_ip);
            callback(socket).await;
        });
        let mut res = match accept {
            Some(accept) => {
                let mut res = StatusCode::SWITCHING_PROTOCOLS.into_response();
                let headers = res.headers_mut();
                headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
                headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
                headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
                res
            }
            // HTTP/2: a 2xx to the CONNECT opens the stream.
            None => StatusCode::OK.into_response(),
        };
        let headers = res.headers_mut();
        if let Some(p) = protocol {
            headers.insert(header::SEC_WEBSOCKET_PROTOCOL, p);
        }
        res
    }
}
