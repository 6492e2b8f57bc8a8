//! Static files: [`StaticFiles`], from a directory or embedded in the
//! binary, with the HTTP caching and range rules browsers and proxies
//! rely on.
//!
//! | the request | the answer |
//! |---|---|
//! | a file | `200`, `Content-Type` from the name (text with `charset=utf-8`), exact `Content-Length`, a strong `ETag` (SHA-256 of the content), `Last-Modified`, `Accept-Ranges: bytes`, `Cache-Control` |
//! | `If-None-Match` with its `ETag` (or `If-Modified-Since` not older than it) | `304`, no body |
//! | `If-Match` / `If-Unmodified-Since` that fail | `412` |
//! | `Range: bytes=a-b` (one range; `If-Range` honoured) | `206` with `Content-Range`; the whole file when `If-Range` no longer holds or several ranges are asked |
//! | a range past the end | `416` with `Content-Range: bytes */LEN` |
//! | `Accept-Encoding: br` (`zstd`, `gzip`) and a sibling `NAME.br` (`.zst`, `.gz`) | the sibling, `Content-Encoding`, `Vary: Accept-Encoding`; never for a range |
//! | `NAME.<10 hex>.EXT`, the fingerprint [`StaticFiles::url`] made | the file, `Cache-Control: public, max-age=31536000, immutable` |
//! | `..`, `%2e%2e`, `%2f`, `%5c`, `\`, NUL, `:`, `//`, a bad escape | `400` saying which |
//! | a hidden file (`.env`), a directory, a link out of the root, nothing | `404` |
//!
//! `HEAD` gets the same headers without the body; other methods get `405`.

mod body;
mod conditional;
mod path;
mod source;

use std::{io, path::Path, sync::Arc};

use http::{header, request::Parts, HeaderValue, Method, StatusCode};
use tern::{routing::MethodRouter, IntoResponse, Problem, Request, Response};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use body::FileBody;
use conditional::{Coding, Precondition, Range};
use source::{Content, Found, Source};

/// `Cache-Control` of a fingerprinted URL: its content never changes.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// A static-file service; see the [module](self).
///
/// ```no_run
/// use tern::App;
/// use tern_site::StaticFiles;
///
/// // Or embedded: `#[derive(rust_embed::RustEmbed)] #[folder = "static/"]
/// // struct Assets;` and `StaticFiles::embedded::<Assets>()`.
/// let files = StaticFiles::dir("static")?;
/// let app = App::new().route(&files.pattern(), files.service());
/// // In a template: <link rel="stylesheet" href="{{ files.url("app.css") }}">
/// // gives /static/app.3f2a9c1b7e.css, cached for a year.
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct StaticFiles {
    inner: Arc<Inner>,
}

struct Inner {
    source: Source,
    mount: String,
    cache_control: HeaderValue,
}

impl std::fmt::Debug for StaticFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticFiles")
            .field("mount", &self.inner.mount)
            .finish_non_exhaustive()
    }
}

impl StaticFiles {
    /// The files under `root`, read as they are asked for (changes show at
    /// once), mounted at `/static`.
    ///
    /// # Errors
    /// `root` is not a readable directory (the error names it).
    pub fn dir(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(Source::Dir(source::Dir::new(root.as_ref())?)))
    }

    /// The files embedded in the binary by a `#[derive(RustEmbed)]` type,
    /// mounted at `/static`. A moved binary still serves them; in debug
    /// builds rust-embed reads them from their folder, so edits show
    /// without a rebuild.
    pub fn embedded<E: rust_embed::RustEmbed>() -> Self {
        Self::new(Source::Embedded(E::get))
    }

    fn new(source: Source) -> Self {
        StaticFiles {
            inner: Arc::new(Inner {
                source,
                mount: "/static".to_owned(),
                cache_control: HeaderValue::from_static("no-cache"),
            }),
        }
    }

    fn with(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Arc::try_unwrap(self.inner)
            .unwrap_or_else(|_| panic!("StaticFiles is configured before it is cloned or mounted"));
        change(&mut inner);
        StaticFiles {
            inner: Arc::new(inner),
        }
    }

    /// Serves the files under `prefix` (`/assets`; default `/static`).
    ///
    /// # Panics
    /// When called after the service was cloned, or if `prefix` does not
    /// start with `/` or ends with one.
    pub fn mount(self, prefix: &str) -> Self {
        assert!(
            prefix.starts_with('/') && !prefix.ends_with('/'),
            "a mount point starts with `/` and does not end with one: {prefix:?}"
        );
        self.with(|i| i.mount = prefix.to_owned())
    }

    /// `Cache-Control` for URLs without a fingerprint (default `no-cache`:
    /// caches keep the file and ask whether it changed, a `304` when not).
    ///
    /// # Panics
    /// When called after the service was cloned.
    pub fn cache_control(self, value: &'static str) -> Self {
        self.with(|i| i.cache_control = HeaderValue::from_static(value))
    }

    /// The route pattern: the mount point and `{*path}`.
    pub fn pattern(&self) -> String {
        format!("{}/{{*path}}", self.inner.mount)
    }

    /// The `GET` (and `HEAD`) handler to route at [`pattern`](Self::pattern).
    pub fn service<S>(&self) -> MethodRouter<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        let files = self.clone();
        tern::routing::get(move |FileRequest(req): FileRequest<true>| {
            let files = files.clone();
            async move { files.serve(&req.into_parts().0).await }
        })
    }

    /// A handler that serves the one file `rel` (`llms.txt`,
    /// `favicon.ico`) at whatever route it is given, by the same rules
    /// (without fingerprints).
    pub fn file<S>(&self, rel: &str) -> MethodRouter<S>
    where
        S: Clone + Send + Sync + 'static,
    {
        let files = self.clone();
        let rel: Arc<str> = Arc::from(rel.trim_start_matches('/'));
        tern::routing::get(move |FileRequest(req): FileRequest<false>| {
            let (files, rel) = (files.clone(), Arc::clone(&rel));
            async move {
                let (req, _) = req.into_parts();
                let answer = files.answer_file(&req, &rel, false).await;
                files.or_500(&req, answer)
            }
        })
    }

    /// The URL of `file` (`css/app.css`) with its content's fingerprint in
    /// the name (`/static/css/app.3f2a9c1b7e.css`), for pages to link:
    /// served with a year of caching, and a new URL whenever the content
    /// changes. The plain URL when there is no such file.
    pub fn url(&self, file: &str) -> String {
        let file = file.trim_start_matches('/');
        let mount = &self.inner.mount;
        let Some(hash) = self.inner.source.hash(file) else {
            tracing::warn!(file, "StaticFiles::url: no such file");
            return format!("{mount}/{file}");
        };
        let print = &hex(&hash)[..10];
        let (dir, name) = file.rsplit_once('/').map_or(("", file), |(d, n)| (d, n));
        let dir = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => format!("{mount}/{dir}{stem}.{print}.{ext}"),
            _ => format!("{mount}/{dir}{name}.{print}"),
        }
    }

    /// Answers the request `req` (a `GET` or `HEAD` under the mount point;
    /// its head: `Request::into_parts`).
    pub async fn serve(&self, req: &Parts) -> Response {
        let answer = self.answer(req).await;
        self.or_500(req, answer)
    }

    fn or_500(&self, req: &Parts, answer: io::Result<Response>) -> Response {
        match answer {
            Ok(res) => res,
            Err(e) => {
                tracing::error!(error = %e, path = req.uri.path(), "static file not readable");
                Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                    .with_detail("the file could not be read")
                    .into_response()
            }
        }
    }

    async fn answer(&self, req: &Parts) -> io::Result<Response> {
        let rel = match path::relative(req.uri.path(), &self.inner.mount) {
            Ok(rel) => rel,
            Err(path::Refusal::NotMounted | path::Refusal::Hidden) => return Ok(not_found()),
            Err(refusal) => {
                return Ok(Problem::new(StatusCode::BAD_REQUEST)
                    .with_detail(refusal.to_string())
                    .into_response())
            }
        };
        self.answer_file(req, &rel, true).await
    }

    /// Serves `rel`; with `fingerprints`, `NAME.<print>.EXT` too.
    async fn answer_file(
        &self,
        req: &Parts,
        rel: &str,
        fingerprints: bool,
    ) -> io::Result<Response> {
        let source = &self.inner.source;
        let (plain, found, fingerprinted) = match source.open(rel).await? {
            Some(found) => (rel.to_owned(), found, false),
            None if !fingerprints => return Ok(not_found()),
            None => match unfingerprint(rel) {
                Some((plain, print)) => match source.open(&plain).await? {
                    Some(found) if hex(&found.hash).starts_with(print.as_str()) => {
                        (plain, found, true)
                    }
                    _ => return Ok(not_found()),
                },
                None => return Ok(not_found()),
            },
        };
        let content_type = content_type(&plain);
        let compressible = compressible(&content_type);
        let headers = &req.headers;
        // A precompressed sibling, when one is accepted (never for a
        // range: a range is of the identity representation).
        let mut chosen = (None, found);
        if compressible && !headers.contains_key(header::RANGE) {
            let mut accepted: Vec<Coding> = Coding::ALL.to_vec();
            while let Some(c) = conditional::choose(headers, &accepted) {
                if let Some(sibling) = source.open(&format!("{plain}{}", c.suffix())).await? {
                    chosen = (Some(c), sibling);
                    break;
                }
                accepted.retain(|&a| a != c);
            }
        }
        let (coding, file) = chosen;
        let etag = format!("\"{}\"", &hex(&file.hash)[..32]);
        let modified = file.modified.map(conditional::to_second);

        let mut res = match conditional::evaluate(&req.method, headers, &etag, modified) {
            Precondition::NotModified => StatusCode::NOT_MODIFIED.into_response(),
            Precondition::Failed => Problem::new(StatusCode::PRECONDITION_FAILED)
                .with_detail("the file does not meet the request's If-Match / If-Unmodified-Since")
                .into_response(),
            Precondition::Serve => {
                let range = if coding.is_none() && req.method == Method::GET {
                    conditional::range(headers, &etag, modified, file.len)
                } else {
                    Range::Full
                };
                let len = file.len;
                match range {
                    Range::Full => {
                        let mut res = body(file, 0, len).await?;
                        if let Some(c) = coding {
                            res.headers_mut().insert(
                                header::CONTENT_ENCODING,
                                HeaderValue::from_static(c.token()),
                            );
                        }
                        res
                    }
                    Range::Part { start, end } => {
                        let mut res = body(file, start, end).await?;
                        *res.status_mut() = StatusCode::PARTIAL_CONTENT;
                        res.headers_mut().insert(
                            header::CONTENT_RANGE,
                            value(&format!("bytes {start}-{}/{len}", end - 1)),
                        );
                        res
                    }
                    Range::Unsatisfiable => {
                        let mut res = Problem::new(StatusCode::RANGE_NOT_SATISFIABLE)
                            .with_detail(format!("the range is past the file's end ({len} bytes)"))
                            .into_response();
                        res.headers_mut()
                            .insert(header::CONTENT_RANGE, value(&format!("bytes */{len}")));
                        return Ok(res);
                    }
                }
            }
        };
        if res.status() == StatusCode::PRECONDITION_FAILED {
            return Ok(res);
        }
        let not_modified = res.status() == StatusCode::NOT_MODIFIED;
        let h = res.headers_mut();
        if !not_modified {
            h.insert(header::CONTENT_TYPE, value(&content_type));
        }
        h.insert(header::ETAG, value(&etag));
        if let Some(modified) = modified {
            h.insert(
                header::LAST_MODIFIED,
                value(&httpdate::fmt_http_date(modified)),
            );
        }
        h.insert(
            header::CACHE_CONTROL,
            if fingerprinted {
                HeaderValue::from_static(IMMUTABLE)
            } else {
                self.inner.cache_control.clone()
            },
        );
        h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        if compressible {
            h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        Ok(res)
    }
}

/// The response with bytes `start..end` of `file` as its body.
async fn body(file: Found, start: u64, end: u64) -> io::Result<Response> {
    let body = match file.content {
        Content::Bytes(b) => tern::body::Body::from(b.slice(start as usize..end as usize)),
        Content::File(mut f) => {
            if start > 0 {
                f.seek(io::SeekFrom::Start(start)).await?;
            }
            tern::body::Body::new(FileBody::new(f.take(end - start), end - start))
        }
    };
    Ok(Response::new(body))
}

fn not_found() -> Response {
    Problem::new(StatusCode::NOT_FOUND)
        .with_detail("no such file")
        .into_response()
}

fn value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s)
        .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"))
}

/// `name.<10 hex>.ext` (or `name.<10 hex>`): the plain name and the print.
fn unfingerprint(rel: &str) -> Option<(String, String)> {
    let (dir, name) = rel.rsplit_once('/').map_or(("", rel), |(d, n)| (d, n));
    let parts: Vec<&str> = name.split('.').collect();
    let is_print = |p: &str| {
        p.len() == 10
            && p.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    };
    let plain = match parts.as_slice() {
        [stem @ .., print, ext] if !stem.is_empty() && is_print(print) && !stem[0].is_empty() => {
            (format!("{}.{ext}", stem.join(".")), (*print).to_owned())
        }
        [stem, print] if !stem.is_empty() && is_print(print) => {
            ((*stem).to_owned(), (*print).to_owned())
        }
        _ => return None,
    };
    let (name, print) = plain;
    Some((
        if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        },
        print,
    ))
}

/// The media type from the name; text types in UTF-8.
fn content_type(rel: &str) -> String {
    let mime = mime_guess::from_path(rel).first_or_octet_stream();
    let essence = mime.essence_str();
    let texty = mime.type_() == mime_guess::mime::TEXT
        || matches!(
            essence,
            "application/javascript" | "application/json" | "application/xml" | "image/svg+xml"
        );
    if texty && mime.get_param(mime_guess::mime::CHARSET).is_none() {
        format!("{essence}; charset=utf-8")
    } else {
        mime.to_string()
    }
}

/// Whether compression helps: text, scripts, JSON, XML, SVG, WebAssembly,
/// fonts that are not compressed already.
fn compressible(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.starts_with("text/")
        || matches!(
            essence,
            "application/javascript"
                | "application/json"
                | "application/xml"
                | "application/wasm"
                | "application/manifest+json"
                | "image/svg+xml"
                | "font/ttf"
                | "font/otf"
        )
}

/// Lower-case hex.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// The request a file route's handler takes: the request itself, and
/// what a file route answers, for API documents. `MOUNTED`: at
/// [`StaticFiles::pattern`], where the request's path names the file;
/// else one file at a route of its own.
struct FileRequest<const MOUNTED: bool>(Request);

impl<S: Send + Sync, const MOUNTED: bool> tern::extract::FromRequest<S> for FileRequest<MOUNTED> {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, _: &S) -> Result<Self, Self::Rejection> {
        Ok(FileRequest(req))
    }

    /// Every answer: the file (whole, a range, `304`), `404`, `412`,
    /// `416`; mounted, the rules of `{*path}` too (one segment as a
    /// client sends it, since a `/` it percent-encodes is refused) and
    /// the `400` of a path that breaks them.
    fn describe(op: &mut tern::doc::Operation) {
        if MOUNTED {
            op.parameters.push(path_parameter());
            op.problem(
                "400",
                "The path breaks a rule of `path` (see the parameter).",
            );
        }
        op.responses.insert(
            "200".to_owned(),
            serde_json::json!({
                "description": "The file, with its `Content-Type`, `ETag` and `Last-Modified` \
                    (`Content-Encoding: br` or `gzip` where a compressed copy exists and the \
                    client accepts it).",
                "content": { "*/*": { "schema": { "type": "string", "format": "binary" } } },
            }),
        );
        op.responses.insert(
            "206".to_owned(),
            serde_json::json!({ "description": "The `Range` asked for." }),
        );
        op.responses.insert(
            "304".to_owned(),
            serde_json::json!({ "description": "Not modified since the client's copy \
                (`If-None-Match`, `If-Modified-Since`)." }),
        );
        op.problem("404", "No such file (or a hidden one).");
        op.problem(
            "412",
            "An `If-Match` or `If-Unmodified-Since` precondition failed.",
        );
        op.problem("416", "The `Range` is past the end of the file.");
    }
}

/// `{*path}` and its rules (`path::relative`), for API documents.
fn path_parameter() -> serde_json::Value {
    serde_json::json!({
        "name": "path",
        "in": "path",
        "required": true,
        "description": "the file under the mount point (`css/app.css`; fingerprinted names \
            such as `app.3f2a9c1b7e.css` too). Each segment is percent-decoded once and must \
            not be empty, hold `/`, `\\`, `:` or a control character (C0, DEL, C1), be `.` \
            or `..` in any spelling (`400`), or start with `.` (hidden: `404`)",
        "schema": {
            "type": "string",
            "pattern": "^[^./\\\\:\\x00-\\x20\\x7f-\\x9f][^/\\\\:\\x00-\\x1f\\x7f-\\x9f]*$",
            "maxLength": 255,
        },
    })
}
