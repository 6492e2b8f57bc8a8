//! The website (issue 14): Tern's own site, served by the showcase
//! (`examples/showcase`), beside Tern's `/plaintext` in the same process.
//!
//! | row | request | what the server does per request |
//! |---|---|---|
//! | `plaintext` | `GET /plaintext` | a `&'static str` (13 bytes): the reference of every ratio |
//! | `home` | `GET /` | the home page (about 26 KB of HTML) rendered from askama templates |
//! | `index.json` | `GET /index.json` | the site's pages as a `serde_json::Value`, built and serialized |
//! | `llms.txt` | `GET /llms.txt` | a static file embedded in the binary (strong `ETag`, `Last-Modified`) |
//!
//! Each row is measured twice: without `Accept-Encoding`, and with
//! `Accept-Encoding: br`. The showcase runs with
//! `SHOWCASE_COMPRESSION=true` (`tern_site::compression::install`:
//! brotli, zstd and gzip for text of [`COMPRESSION_FLOOR`] bytes or
//! more, with its cache of compressed answers), so the `br` rows of the
//! home page and `/index.json` are rendered on every request and
//! compressed once per distinct body; `/plaintext` and a `/llms.txt`
//! under the floor are sent as they are, and their `br` rows are the
//! same bytes as their plain rows. `plaintext br` is still measured: it
//! is the reference of the `br` rows, taken under the same headers. The
//! showcase runs with `TERN_METRICS=on`, and the lab reads the cache's
//! counts at `/metrics` before and after every trial: each row reports
//! the hit rate of its own measured load.
//!
//! **Method.** One showcase process per run, started in a scratch
//! directory (its SQLite database under `./data/` there), pinned to the
//! server cores with one worker (`TERN_WORKERS=1`) and a rate limit it
//! never reaches; wrk (one thread, `--connections`, default 16) pinned to
//! the load cores. Every row is checked before the load and after it
//! ([`check`]): status `200`, the expected media type, a body that is the
//! page (the greeting, `<h1>Tern</h1>`, a JSON object with its pages,
//! `# Tern`), `Content-Encoding: br` and `Vary: Accept-Encoding` exactly
//! where the body is above the floor, a compressed body smaller than the
//! page and of the same size every time. A failed check before the load
//! fails the run; after it, a changed answer, a wrk error or an answer
//! outside 2xx is a problem, reported with the figures, and the command
//! fails after writing them. Each row is warmed up once before the first
//! round; in each round every row runs against the same process, the
//! order rotated by one row each round. Each row's req/s is divided by
//! the req/s of the plaintext row of the same encoding *in the same
//! round*; the report gives the median and the range of those ratios over
//! the rounds, and the goal met when the median reaches it.
//!
//! **Limits.** One server core over loopback: the figures are what one
//! core serves, not what a site behind a network does, and wrk's own
//! reading of 26 KB answers is on its core, not the server's. Every
//! request of a row is the same request, so the home page is rendered
//! from the same data each time (the docs' summaries and the roadmap are
//! prepared once per process, at the first request). The brotli bodies
//! are checked by their headers, size and stability, not decoded (the
//! lab has no brotli decoder; tern-site's tests decode every coding).
//! The rate limiter, the CSRF check and the other layers of the showcase
//! run on every row, `/plaintext` included.

use std::path::PathBuf;

// The pages and the rows measured (pages), the check of their answers
// (check), the cache's counts (cache), the run (lab), and what it
// records and prints (report).
mod cache;
mod check;
mod lab;
mod pages;
mod report;

pub use cache::CacheCounts;
pub use check::{check, Answer};
pub use lab::run;
pub use pages::{rotation, rows, Page, Row, PAGES};
pub use report::{ratio_summary, terminal, Report, RowResult, Trial};

/// `tern_site::compression::MIN_SIZE`: bodies below it are never
/// compressed.
pub const COMPRESSION_FLOOR: usize = 1024;

/// How to run the lab.
#[derive(Debug, Clone)]
pub struct Options {
    /// The showcase binary.
    pub showcase: PathBuf,
    /// Rounds.
    pub rounds: usize,
    /// Seconds per trial.
    pub seconds: f64,
    /// Warm-up seconds per row before the first round (0: none).
    pub warmup_s: f64,
    /// wrk connections.
    pub connections: usize,
    /// `taskset` cores of the server.
    pub server_cores: String,
    /// `taskset` cores of wrk.
    pub load_cores: String,
    /// Quick mode (CI): answers checked, figures not meaningful.
    pub quick: bool,
}
