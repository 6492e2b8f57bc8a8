//! The check of a row's answer, before the load and after it.

use anyhow::{Context, Result};
use serde::Serialize;

use super::{Row, COMPRESSION_FLOOR, PAGES};
use crate::{
    client::{Client, Response},
    process::ServerProcess,
};

/// What a row's checked answer was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// `Content-Type`.
    pub content_type: String,
    /// `Content-Encoding`, if any.
    pub content_encoding: Option<String>,
    /// Body bytes as sent (compressed on a compressed row).
    pub body_bytes: usize,
}

fn fetch(server: &ServerProcess, row: Row) -> Result<Response> {
    let headers: &[(&str, &str)] = if row.br {
        &[("Accept-Encoding", "br")]
    } else {
        &[]
    };
    Client::connect(server.addr)?.send("GET", PAGES[row.page].path, headers, None)
}

/// Checks a row's answer (see the [module](super)); `page` is the same
/// page's plain answer, for a `br` row.
pub fn check(row: Row, res: &Response, page: Option<&Response>) -> Result<Answer, String> {
    let p = &PAGES[row.page];
    if res.status != 200 {
        return Err(format!(
            "answered {}: {}",
            res.status,
            String::from_utf8_lossy(&res.body)
        ));
    }
    let content_type = res.header("content-type").unwrap_or_default();
    if !content_type.starts_with(p.content_type) {
        return Err(format!(
            "Content-Type `{content_type}`, expected {}",
            p.content_type
        ));
    }
    let encoding = res.header("content-encoding");
    match page {
        None => {
            if let Some(e) = encoding {
                return Err(format!("Content-Encoding `{e}` without Accept-Encoding"));
            }
            (p.body_ok)(&res.body)?;
        }
        Some(page) => {
            let above = page.body.len() >= COMPRESSION_FLOOR;
            if p.must_compress && !above {
                return Err(format!(
                    "the page is {} bytes, under the compression floor",
                    page.body.len()
                ));
            }
            if above {
                if encoding != Some("br") {
                    return Err(format!(
                        "Content-Encoding {encoding:?}, expected `br` (is the showcase run with SHOWCASE_COMPRESSION=true?)"
                    ));
                }
                let vary = res.header("vary").unwrap_or_default();
                if !vary.to_ascii_lowercase().contains("accept-encoding") {
                    return Err(format!("Vary `{vary}` without Accept-Encoding"));
                }
                if res.body.is_empty() || res.body.len() >= page.body.len() {
                    return Err(format!(
                        "{} compressed bytes for a page of {}",
                        res.body.len(),
                        page.body.len()
                    ));
                }
            } else if encoding.is_some() || res.body != page.body {
                return Err(format!(
                    "a body under the floor ({} bytes) answered differently with Accept-Encoding: br",
                    page.body.len()
                ));
            }
        }
    }
    Ok(Answer {
        content_type: content_type.to_owned(),
        content_encoding: encoding.map(str::to_owned),
        body_bytes: res.body.len(),
    })
}

/// Every row's answer, and every page's size; the first failure fails.
pub(super) fn check_all(server: &ServerProcess, rows: &[Row]) -> Result<(Vec<Answer>, Vec<usize>)> {
    let mut pages: Vec<Option<Response>> = vec![None; PAGES.len()];
    let mut answers = Vec::new();
    for &row in rows {
        let mut res =
            fetch(server, row).with_context(|| format!("GET {}", PAGES[row.page].path))?;
        if row.br {
            // The compression cache keeps a body from its second sighting
            // (compressed at level 1 the first time, at its own level
            // after): the answer under load is the second one.
            res = fetch(server, row).with_context(|| format!("GET {}", PAGES[row.page].path))?;
        }
        let page = if row.br {
            let plain = match &pages[row.page] {
                Some(plain) => plain.clone(),
                None => fetch(server, Row { br: false, ..row })?,
            };
            Some(plain)
        } else {
            None
        };
        let answer = check(row, &res, page.as_ref())
            .map_err(|e| anyhow::anyhow!("{} (GET {}): {e}", row.name(), PAGES[row.page].path))?;
        if !row.br {
            pages[row.page] = Some(res);
        }
        answers.push(answer);
    }
    // The plain rows come first: every page was read.
    let sizes = pages
        .iter()
        .map(|res| res.as_ref().map_or(0, |res| res.body.len()))
        .collect();
    Ok((answers, sizes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_vec(),
        }
    }

    #[test]
    fn answers_are_checked_table() {
        let html = format!(
            "<!doctype html><h1>Tern</h1>{}</html>\n",
            "x".repeat(20_000)
        );
        let home = response(
            200,
            &[("content-type", "text/html; charset=utf-8")],
            html.as_bytes(),
        );
        let plain = |page| Row { page, br: false };
        let br = |page| Row { page, br: true };
        let br_ok = response(
            200,
            &[
                ("content-type", "text/html; charset=utf-8"),
                ("content-encoding", "br"),
                ("vary", "accept-encoding"),
            ],
            b"compressed",
        );
        let cases: Vec<(Row, Response, Option<&Response>, bool)> = vec![
            (plain(1), home.clone(), None, true),
            (plain(1), response(429, &[], b"slow down"), None, false),
            (
                plain(1),
                response(200, &[("content-type", "text/plain")], html.as_bytes()),
                None,
                false,
            ),
            (
                plain(1),
                response(
                    200,
                    &[("content-type", "text/html")],
                    b"<h1>Tern</h1></html>",
                ),
                None,
                false,
            ),
            (br(1), br_ok.clone(), Some(&home), true),
            // Not compressed: the showcase runs without compression.
            (br(1), home.clone(), Some(&home), false),
            (
                br(1),
                response(
                    200,
                    &[("content-type", "text/html"), ("content-encoding", "br")],
                    b"compressed",
                ),
                Some(&home),
                false,
            ),
            (
                plain(0),
                response(200, &[("content-type", "text/plain")], b"Hello, World!"),
                None,
                true,
            ),
            (
                plain(2),
                response(
                    200,
                    &[("content-type", "application/json")],
                    br#"{"pages":[{"path":"/"},{"path":"/guide"}]}"#,
                ),
                None,
                true,
            ),
            (
                plain(2),
                response(200, &[("content-type", "application/json")], b"{}"),
                None,
                false,
            ),
        ];
        for (i, (row, res, page, ok)) in cases.into_iter().enumerate() {
            assert_eq!(check(row, &res, page).is_ok(), ok, "case {i}: {res:?}");
        }
        // Under the floor, the br row must be the page itself.
        let llms = response(200, &[("content-type", "text/plain")], b"# Tern\n");
        assert!(check(br(3), &llms, Some(&llms)).is_ok());
        let other = response(200, &[("content-type", "text/plain")], b"# Tern!\n");
        assert!(check(br(3), &other, Some(&llms)).is_err());
    }
}
