//! The admin lab's report as the terminal shows it.

use super::*;

pub(super) fn fmt_ratio(s: &Summary) -> String {
    format!("{:.3} ({:.3}-{:.3})", s.median, s.min, s.max)
}

/// The report for a terminal.
pub fn terminal(r: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "machine: {}\nmethod: {} round(s) of {} s per workload, order rotated each round, {} connections over loopback; peer-admin-tern on core(s) {}, wrk -t1 on core(s) {}; PostgreSQL on the same machine, not pinned{}\nsettings: {}\n\n",
        r.machine.summary(true),
        r.rounds,
        r.seconds,
        r.connections,
        r.server_cores,
        r.load_cores,
        if r.quick { " (QUICK: figures mean nothing)" } else { "" },
        r.settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    ));
    out.push_str(&format!(
        "{:<16} {:>9} {:>17} {:>24} {:>6} {:>5} {:>10} {:>10} {:>9} {:>9}\n",
        "workload",
        "req/s",
        "req/s min-max",
        "ratio to /ping (range)",
        "goal",
        "met",
        "CPU/req",
        "PG CPU/req",
        "CPU ratio",
        "queries"
    ));
    for row in &r.rows {
        let queries = row
            .queries
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let met = if row.goal == 0.0 {
            "-"
        } else if row.ratio.median >= row.goal {
            "yes"
        } else {
            "NO"
        };
        out.push_str(&format!(
            "{:<16} {:>9.0} {:>8.0}-{:<8.0} {:>24} {:>6} {:>5} {:>8.1}us {:>8.1}us {:>9.3} {:>9}\n",
            row.workload,
            row.rps.median,
            row.rps.min,
            row.rps.max,
            fmt_ratio(&row.ratio),
            if row.goal == 0.0 {
                "ref".to_owned()
            } else {
                format!("{:.2}", row.goal)
            },
            met,
            row.cpu_us_per_req.median,
            row.db_cpu_us_per_req.median,
            row.cpu_ratio,
            queries
        ));
    }
    if let Some(p) = &r.profile {
        out.push_str(&format!(
            "\nthe list (200 rows) under callgrind: {:.0} instructions per request over {} requests\n",
            p.total, p.requests
        ));
        for (name, ir, what) in &p.parts {
            out.push_str(&format!(
                "  {:<20} {:>11.0} {:>5.1}%  {}\n",
                name,
                ir,
                ir * 100.0 / p.total.max(1.0),
                what
            ));
        }
    }
    out
}
