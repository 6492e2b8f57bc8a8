//! Reports from evidence: a terminal table and an offline HTML page with
//! charts (inline SVG, no scripts, no network).

use std::fmt::Write as _;

use crate::evidence::{Evidence, Row};

fn kfmt(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// The summary as a fixed-width table, one block per workload and
/// concurrency.
pub fn terminal(e: &Evidence) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} cores, {} | {} | commit {}{}",
        e.machine.cores,
        e.machine.cpu_model,
        e.machine.rustc,
        &e.machine
            .git_commit
            .get(..10)
            .unwrap_or(&e.machine.git_commit),
        if e.machine.git_dirty { " (dirty)" } else { "" }
    );
    let _ = writeln!(
        out,
        "{} round(s) x {} s per trial, server on cores {}, load on {}{}",
        e.settings.rounds,
        e.settings.duration_s,
        e.settings.server_cores,
        e.settings.load_cores,
        if e.settings.quick {
            " -- QUICK MODE: correctness only, figures not meaningful"
        } else {
            ""
        }
    );
    let (peers, table) = ratios(e);
    if !peers.is_empty() {
        let _ = write!(
            out,
            "\nTern's throughput / each server's (median; above 1 is Tern faster)\n  {:<28}",
            "workload (connections)"
        );
        for peer in &peers {
            let _ = write!(out, " {peer:>8}");
        }
        let _ = writeln!(out);
        for (key, cells) in &table {
            let _ = write!(out, "  {key:<28}");
            for cell in cells {
                let _ = write!(
                    out,
                    " {:>8}",
                    cell.map_or("-".to_owned(), |x| format!("{x:.3}"))
                );
            }
            let _ = writeln!(out);
        }
    }
    let mut keys: Vec<(String, usize)> = Vec::new();
    for r in &e.summary {
        if !keys.contains(&(r.workload.clone(), r.connections)) {
            keys.push((r.workload.clone(), r.connections));
        }
    }
    for (workload, conns) in keys {
        let _ = writeln!(out, "\n{workload} ({conns} connections)");
        let _ = writeln!(
            out,
            "  {:<7} {:>9} {:>19} {:>9} {:>10} {:>9} {:>8} {:>7} {:>10}",
            "server", "rps", "min-max", "cv", "p99", "cpu/req", "user", "errors", "tern/this"
        );
        for r in e
            .summary
            .iter()
            .filter(|r| r.workload == workload && r.connections == conns)
        {
            let _ = writeln!(out, "  {}", line(r));
        }
    }
    if !e.idle_connections.is_empty() {
        let _ = writeln!(out, "\nRSS per idle keep-alive connection");
        for i in &e.idle_connections {
            let _ = writeln!(
                out,
                "  {:<7} {:>8.1} KiB ({} connections)",
                i.server, i.per_connection_kib, i.connections
            );
        }
    }
    out
}

/// Whether the load generator measured latency for this row: pipelined
/// wrk reports 0 us (it times a pipeline's first answer only), and h2load
/// reports no percentiles.
fn has_p99(r: &Row) -> bool {
    r.p99_us.median > 0.0
}

fn p99(r: &Row) -> String {
    if has_p99(r) {
        format!("{:.0}us", r.p99_us.median)
    } else {
        "n/a".to_owned()
    }
}

/// The other servers, and per `workload (connections)` Tern's ratio to
/// each (`None` where that server did not run it).
pub type Ratios = (Vec<String>, Vec<(String, Vec<Option<f64>>)>);

/// Tern's throughput against each other server, per workload and
/// concurrency: `tern/this` medians, the first thing a reader wants.
pub fn ratios(e: &Evidence) -> Ratios {
    let mut peers: Vec<String> = Vec::new();
    for r in &e.summary {
        if r.server != "tern" && !peers.contains(&r.server) {
            peers.push(r.server.clone());
        }
    }
    let mut rows: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    for r in &e.summary {
        let key = format!("{} ({})", r.workload, r.connections);
        if rows.iter().any(|(k, _)| *k == key) {
            continue;
        }
        let cells = peers
            .iter()
            .map(|peer| {
                e.summary
                    .iter()
                    .find(|x| {
                        x.workload == r.workload
                            && x.connections == r.connections
                            && x.server == *peer
                    })
                    .and_then(|x| x.tern_ratio)
            })
            .collect();
        rows.push((key, cells));
    }
    (peers, rows)
}

fn line(r: &Row) -> String {
    format!(
        "{:<7} {:>9} {:>19} {:>8.1}% {:>10} {:>7.2}us {:>6.2}us {:>7} {:>10}",
        r.server,
        kfmt(r.rps.median),
        format!("{}-{}", kfmt(r.rps.min), kfmt(r.rps.max)),
        r.rps.cv * 100.0,
        p99(r),
        r.cpu_us_per_req.median,
        r.cpu_user_us_per_req,
        r.errors,
        r.tern_ratio.map_or("-".to_owned(), |x| format!("{x:.3}")),
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Horizontal bars with min–max whiskers for one figure of every row of
/// one workload and concurrency.
fn chart(
    title: &str,
    rows: &[&Row],
    value: impl Fn(&Row) -> (f64, f64, f64),
    unit: &str,
) -> String {
    let max = rows
        .iter()
        .map(|r| value(r).2)
        .fold(0.0_f64, f64::max)
        .max(1e-9);
    let (w, bar_h, left) = (640.0, 22.0, 70.0);
    let h = 30.0 + rows.len() as f64 * (bar_h + 8.0);
    let scale = (w - left - 90.0) / max;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="{t}"><text x="4" y="16" font-size="13" font-weight="bold">{t}</text>"#,
        t = escape(title)
    );
    for (i, r) in rows.iter().enumerate() {
        let (median, lo, hi) = value(r);
        let y = 26.0 + i as f64 * (bar_h + 8.0);
        let color = if r.server == "tern" {
            "#1f6feb"
        } else {
            "#8b949e"
        };
        let _ = write!(
            svg,
            r#"<text x="4" y="{ty}" font-size="12">{name}</text><rect x="{left}" y="{y}" width="{bw:.1}" height="{bar_h}" fill="{color}"/><line x1="{x1:.1}" x2="{x2:.1}" y1="{my}" y2="{my}" stroke="black"/><line x1="{x1:.1}" x2="{x1:.1}" y1="{wy1}" y2="{wy2}" stroke="black"/><line x1="{x2:.1}" x2="{x2:.1}" y1="{wy1}" y2="{wy2}" stroke="black"/><text x="{tx:.1}" y="{ty}" font-size="12">{label} {unit}</text>"#,
            ty = y + 15.0,
            name = escape(&r.server),
            bw = median * scale,
            x1 = left + lo * scale,
            x2 = left + hi * scale,
            my = y + bar_h / 2.0,
            wy1 = y + 5.0,
            wy2 = y + bar_h - 5.0,
            tx = left + hi * scale + 6.0,
            label = kfmt(median),
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The whole run as one HTML page, viewable offline.
pub fn html(e: &Evidence) -> String {
    let mut page = String::from(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Tern bench lab</title><style>body{font:14px system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{background:#f6f8fa;padding:1rem;overflow:auto}section{margin-bottom:2rem}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.2rem .6rem;text-align:right}td:first-child,th:first-child{text-align:left}.win{color:#116329;font-weight:bold}.loss{color:#a40e26}</style></head><body><h1>Tern bench lab</h1>",
    );
    let _ = write!(
        page,
        "<p>{} cores, {}, {} MiB memory, kernel {}; {}; {}; commit {}{}.</p><p>{} rounds, {} s per trial after {} s warm-up, server pinned to cores {}, load generator to {}.{}</p>",
        e.machine.cores,
        escape(&e.machine.cpu_model),
        e.machine.memory_kib / 1024,
        escape(&e.machine.kernel),
        escape(&e.machine.rustc),
        escape(&e.machine.wrk),
        escape(&e.machine.git_commit),
        if e.machine.git_dirty { " (dirty)" } else { "" },
        e.settings.rounds,
        e.settings.duration_s,
        e.settings.warmup_s,
        escape(&e.settings.server_cores),
        escape(&e.settings.load_cores),
        if e.settings.quick { " <strong>Quick mode: correctness only; the figures mean nothing.</strong>" } else { "" },
    );
    if e.machine.git_dirty {
        page.push_str("<p><strong>Measured from a tree with uncommitted changes: the commit above does not name all the code measured.</strong></p>");
    }
    let (peers, table) = ratios(e);
    if !peers.is_empty() {
        page.push_str("<section><h2>Tern against each server</h2><p>Tern's requests per second divided by the other server's, medians of the rounds; above 1.00 Tern is faster.</p><table><thead><tr><th>workload (connections)</th>");
        for peer in &peers {
            let _ = write!(page, "<th>{}</th>", escape(peer));
        }
        page.push_str("</tr></thead><tbody>");
        for (key, cells) in &table {
            let _ = write!(page, "<tr><td>{}</td>", escape(key));
            for cell in cells {
                match cell {
                    Some(x) if *x >= 1.0 => {
                        let _ = write!(page, "<td class=\"win\">{x:.3}</td>");
                    }
                    Some(x) => {
                        let _ = write!(page, "<td class=\"loss\">{x:.3}</td>");
                    }
                    None => page.push_str("<td>-</td>"),
                }
            }
            page.push_str("</tr>");
        }
        page.push_str("</tbody></table></section>");
    }
    let mut keys: Vec<(String, usize)> = Vec::new();
    for r in &e.summary {
        if !keys.contains(&(r.workload.clone(), r.connections)) {
            keys.push((r.workload.clone(), r.connections));
        }
    }
    for (workload, conns) in keys {
        let rows: Vec<&Row> = e
            .summary
            .iter()
            .filter(|r| r.workload == workload && r.connections == conns)
            .collect();
        let _ = write!(
            page,
            "<section><h2>{} ({} connections)</h2>",
            escape(&workload),
            conns
        );
        page.push_str(&chart(
            "Throughput (median, min-max whiskers)",
            &rows,
            |r| (r.rps.median, r.rps.min, r.rps.max),
            "req/s",
        ));
        if rows.iter().all(|r| has_p99(r)) {
            page.push_str(&chart(
                "p99 latency (median, min-max whiskers)",
                &rows,
                |r| (r.p99_us.median, r.p99_us.min, r.p99_us.max),
                "us",
            ));
        } else {
            page.push_str("<p>p99 latency: n/a (the load generator does not measure it here: pipelined wrk times only a pipeline's first answer; h2load reports no percentiles).</p>");
        }
        page.push_str("</section>");
    }
    page.push_str("<section><h2>Summary</h2><pre>");
    page.push_str(&escape(&terminal(e)));
    page.push_str("</pre><h2>Limitations</h2><ul>");
    for l in &e.limitations {
        let _ = write!(page, "<li>{}</li>", escape(l));
    }
    page.push_str("</ul></body></html>");
    page
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The published run of 2026-11-30, read back.
    fn published() -> Evidence {
        serde_json::from_str(include_str!(
            "../../../bench/results/2026-11-30/evidence.json"
        ))
        .unwrap()
    }

    #[test]
    fn the_ratio_table_comes_first_and_pipelined_p99_is_not_a_zero() {
        let e = published();
        let text = terminal(&e);
        let table = text.find("Tern's throughput / each server's").unwrap();
        let first_block = text.find("(16 connections)\n").unwrap();
        assert!(table < first_block, "{text}");
        let pipeline = text
            .split("\npipeline (16 connections)\n")
            .nth(1)
            .unwrap()
            .lines()
            .nth(1)
            .unwrap();
        assert!(pipeline.contains("n/a"), "{pipeline}");
        assert!(!pipeline.contains(" 0us"), "{pipeline}");
        let page = html(&e);
        let section = page.find("<h2>Tern against each server</h2>").unwrap();
        assert!(section < page.find("<h2>pipeline").unwrap());
        assert!(
            page.contains("p99 latency: n/a"),
            "no n/a note for pipelined rows"
        );
        // Every peer's ratio on plaintext at 16 connections is in the table.
        let (peers, rows) = ratios(&e);
        let plaintext = rows.iter().find(|(k, _)| k == "plaintext (16)").unwrap();
        assert_eq!(plaintext.1.len(), peers.len());
        assert!(plaintext.1.iter().all(Option::is_some));
    }
}
