//! Cookies: plain, signed and private (encrypted), with safe defaults
//! (the `cookies` feature, on by default).

use cookie::{CookieJar, Key};
use http::{header, request::Parts, HeaderValue};
use tern_core::{extract::FromRequestParts, response::IntoResponseParts, Response};

use super::Rejection;

/// The `time` crate the cookie attributes use (`Max-Age`, `Expires`).
pub use cookie::time;
pub use cookie::{Cookie, SameSite};

/// The request's cookies, and the ones the response will set.
///
/// Three kinds, by who can read or forge them:
/// - plain ([`get`](Cookies::get), [`add`](Cookies::add)): the client can
///   read and change them;
/// - signed ([`get_signed`](Cookies::get_signed),
///   [`add_signed`](Cookies::add_signed)): the client can read but not
///   change them (HMAC-SHA256 with a key derived from `SECRET_KEY`);
/// - private ([`get_private`](Cookies::get_private),
///   [`add_private`](Cookies::add_private)): the client can neither read
///   nor change them (AES-256-GCM, same key).
///
/// A tampered signed or private cookie reads as absent. Cookies added
/// without explicit attributes get `Path=/`, `HttpOnly`, `SameSite=Lax`,
/// and `Secure` in production. Return the `Cookies` with the response
/// (`(cookies, body)`) to send the changes as `Set-Cookie`.
///
/// ```
/// use tern::extract::cookie::{Cookie, Cookies};
///
/// async fn visit(mut cookies: Cookies) -> (Cookies, String) {
///     let n: u32 = cookies.get_signed("visits").and_then(|c| c.value().parse().ok()).unwrap_or(0);
///     cookies.add_signed(Cookie::new("visits", (n + 1).to_string()));
///     (cookies, format!("visit number {}", n + 1))
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::get(visit);
/// ```
#[derive(Clone)]
pub struct Cookies {
    jar: CookieJar,
    key: Key,
    secure: bool,
}

impl std::fmt::Debug for Cookies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values of signed and private cookies are not for logs.
        f.debug_struct("Cookies")
            .field(
                "names",
                &self.jar.iter().map(|c| c.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Cookies {
    /// A plain cookie.
    pub fn get(&self, name: &str) -> Option<&Cookie<'static>> {
        self.jar.get(name)
    }

    /// A signed cookie, verified; `None` when absent or tampered with.
    pub fn get_signed(&self, name: &str) -> Option<Cookie<'static>> {
        self.jar.signed(&self.key).get(name)
    }

    /// A private cookie, decrypted; `None` when absent or tampered with.
    pub fn get_private(&self, name: &str) -> Option<Cookie<'static>> {
        self.jar.private(&self.key).get(name)
    }

    /// Sets a plain cookie.
    pub fn add(&mut self, cookie: impl Into<Cookie<'static>>) {
        let cookie = self.defaults(cookie.into());
        self.jar.add(cookie);
    }

    /// Sets a signed cookie.
    pub fn add_signed(&mut self, cookie: impl Into<Cookie<'static>>) {
        let cookie = self.defaults(cookie.into());
        self.jar.signed_mut(&self.key).add(cookie);
    }

    /// Sets a private (encrypted) cookie.
    pub fn add_private(&mut self, cookie: impl Into<Cookie<'static>>) {
        let cookie = self.defaults(cookie.into());
        self.jar.private_mut(&self.key).add(cookie);
    }

    /// Tells the client to delete a cookie (of any kind, set with
    /// `Path=/`), whether or not this request sent it.
    pub fn remove(&mut self, name: impl Into<String>) {
        let mut cookie = Cookie::new(name.into(), "");
        cookie.set_path("/");
        cookie.make_removal();
        self.jar.add(cookie);
    }

    /// Every cookie the request sent, as the client sent it.
    pub fn iter(&self) -> impl Iterator<Item = &Cookie<'static>> {
        self.jar.iter()
    }

    fn defaults(&self, mut cookie: Cookie<'static>) -> Cookie<'static> {
        if cookie.path().is_none() {
            cookie.set_path("/");
        }
        if cookie.http_only().is_none() {
            cookie.set_http_only(true);
        }
        if cookie.same_site().is_none() {
            cookie.set_same_site(SameSite::Lax);
        }
        if cookie.secure().is_none() && self.secure {
            cookie.set_secure(true);
        }
        cookie
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Cookies {
    type Rejection = Rejection;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Rejection> {
        let (key, secure) = crate::context::with(&parts.extensions, |ctx| {
            (
                ctx.shared.cookie_key.clone(),
                ctx.shared.config.is_production(),
            )
        })
        .ok_or_else(|| Rejection::internal("`Cookies` needs a request received by a Tern app"))?;
        let mut jar = CookieJar::new();
        for value in parts.headers.get_all(header::COOKIE) {
            let Ok(value) = value.to_str() else { continue };
            for cookie in Cookie::split_parse_encoded(value.to_owned()).flatten() {
                jar.add_original(cookie);
            }
        }
        Ok(Cookies { jar, key, secure })
    }
}

impl IntoResponseParts for Cookies {
    fn into_response_parts(self, res: &mut Response) {
        for cookie in self.jar.delta() {
            if let Ok(value) = HeaderValue::from_str(&cookie.encoded().to_string()) {
                res.headers_mut().append(header::SET_COOKIE, value);
            }
        }
    }
}

/// The key for signed and private cookies: derived from `SECRET_KEY`, or
/// random for this process when there is none (development only:
/// production refuses to start without one).
pub(crate) fn cookie_key(secret: Option<&[u8]>) -> Key {
    match secret {
        Some(secret) if secret.len() >= 32 => Key::derive_from(secret),
        _ => Key::generate(),
    }
}
