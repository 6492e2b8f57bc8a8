//! The website battery for Tern: what a site needs beside its handlers.
//!
//! - **Static files** ([`StaticFiles`]): from a directory, or embedded in
//!   the binary so that a moved binary still has them, with the caching
//!   and range rules of HTTP that browsers, CDNs and proxies rely on,
//!   precompressed variants, fingerprinted URLs for assets that caches may
//!   keep for a year, and no way out of the root in any spelling.
//! - **Pages** ([`Page`]): askama templates, checked at build time and
//!   HTML-escaped, as responses.
//! - **Compression** ([`compression()`]): gzip, brotli and zstd for
//!   text-like bodies of 1 KiB or more, never for ranges, images or event
//!   streams; a page sent again with the same bytes is not compressed
//!   again (a bounded cache of compressed answers per process).
//! - **Error pages** ([`html_errors`]): browsers get an HTML page for
//!   every problem (`404`, `405`, `403`, `500`, ...), API clients keep
//!   `problem+json`; one renderer, replaceable.
//!
//! ```no_run
//! use tern::App;
//! use tern_site::StaticFiles;
//!
//! // The files of ./static, read as they are asked for.
//! let files = StaticFiles::dir("static")?;
//! let app = App::new().route(&files.pattern(), files.service());
//! // A page links `files.url("app.css")`: `/static/app.3f2a9c1b7e.css`.
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The rules, request by request, are in the [`files`] module.

pub mod compression;
pub mod errors;
pub mod files;
pub mod page;

pub use compression::compression;
pub use errors::html_errors;
pub use files::StaticFiles;
pub use page::Page;
