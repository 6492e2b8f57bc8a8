//! The site's pages measured, and the rows: each page plain and with
//! `Accept-Encoding: br`, in the order of each round.

/// A page of the site, measured plain and with `Accept-Encoding: br`.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    /// The row's name.
    pub name: &'static str,
    /// The request path.
    pub path: &'static str,
    /// What `Content-Type` starts with.
    pub content_type: &'static str,
    /// Whether its `br` row must be compressed (the page is above the
    /// floor by construction).
    pub must_compress: bool,
    /// The goal: req/s at least this share of the plaintext row's.
    pub goal: Option<f64>,
    /// Whether the (uncompressed) body is the page, with what it lacks.
    pub body_ok: fn(&[u8]) -> Result<(), String>,
}

fn greeting(body: &[u8]) -> Result<(), String> {
    if body == b"Hello, World!" {
        Ok(())
    } else {
        Err("not `Hello, World!`".to_owned())
    }
}

fn home_page(body: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(body);
    if body.len() < 10_000 {
        Err(format!("{} bytes: not the whole page", body.len()))
    } else if !text.contains("<h1>Tern</h1>") || !text.trim_end().ends_with("</html>") {
        Err("no `<h1>Tern</h1>`, or not ending with `</html>`".to_owned())
    } else {
        Ok(())
    }
}

fn index(body: &[u8]) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    match value["pages"].as_array() {
        Some(pages) if pages.len() >= 2 && pages.iter().all(|p| p["path"].is_string()) => Ok(()),
        _ => Err("no `pages` array of pages with a `path`".to_owned()),
    }
}

fn llms(body: &[u8]) -> Result<(), String> {
    if body.starts_with(b"# Tern") {
        Ok(())
    } else {
        Err("does not start with `# Tern`".to_owned())
    }
}

/// The pages, in table order; the first is the reference.
pub const PAGES: [Page; 4] = [
    Page {
        name: "plaintext",
        path: "/plaintext",
        content_type: "text/plain",
        must_compress: false,
        goal: None,
        body_ok: greeting,
    },
    Page {
        name: "home",
        path: "/",
        content_type: "text/html",
        must_compress: true,
        goal: Some(0.5),
        body_ok: home_page,
    },
    Page {
        name: "index.json",
        path: "/index.json",
        content_type: "application/json",
        must_compress: true,
        goal: Some(0.7),
        body_ok: index,
    },
    Page {
        name: "llms.txt",
        path: "/llms.txt",
        content_type: "text/plain",
        must_compress: false,
        goal: Some(0.85),
        body_ok: llms,
    },
];

/// A row: a page, plain or with `Accept-Encoding: br`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Index into [`PAGES`].
    pub page: usize,
    /// With `Accept-Encoding: br`.
    pub br: bool,
}

impl Row {
    /// `home`, `home br`.
    pub fn name(self) -> String {
        let page = PAGES[self.page].name;
        if self.br {
            format!("{page} br")
        } else {
            page.to_owned()
        }
    }

    /// The plaintext row of the same encoding: this row's reference.
    pub fn reference(self) -> Row {
        Row {
            page: 0,
            br: self.br,
        }
    }
}

/// Every row, in table order: the plain rows, then the `br` rows.
pub fn rows() -> Vec<Row> {
    [false, true]
        .into_iter()
        .flat_map(|br| (0..PAGES.len()).map(move |page| Row { page, br }))
        .collect()
}

/// The order of round `round` (from 0) over `n` rows: rotated by one
/// each round.
pub fn rotation(round: usize, n: usize) -> Vec<usize> {
    (0..n).map(|i| (i + round) % n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_pair_each_page_with_its_reference() {
        let rows = rows();
        assert_eq!(rows.len(), 2 * PAGES.len());
        let names: Vec<String> = rows.iter().map(|r| r.name()).collect();
        assert_eq!(names[0], "plaintext");
        assert_eq!(names[5], "home br");
        for row in rows {
            assert_eq!(
                row.reference(),
                Row {
                    page: 0,
                    br: row.br
                }
            );
        }
    }

    #[test]
    fn every_round_runs_every_row_once_from_another_start() {
        for round in 0..10 {
            let mut order = rotation(round, 8);
            assert_eq!(order[0], round % 8);
            order.sort_unstable();
            assert_eq!(order, (0..8).collect::<Vec<_>>());
        }
    }
}
