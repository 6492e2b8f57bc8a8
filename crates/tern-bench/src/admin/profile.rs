//! Where a list request's instructions go: one list request under
//! callgrind, split by the functions of each part.

use super::*;

/// A part of a list request: its name, the function whose inclusive
/// cost it is, a function inside that one whose cost is another part's
/// (subtracted), and what the part is.
pub(super) type Part = (
    &'static str,
    &'static str,
    Option<&'static str>,
    &'static str,
);

/// The parts of a list request, disjoint: each function runs inside none
/// of the others (but `record`, inside the list's statements, and
/// subtracted from them). Names as callgrind_annotate prints them.
pub(super) const PARTS: [Part; 5] = [
    (
        "session+permission",
        "<tern_admin::access::AdminUser as tern_core::extract::FromRequestParts<S>>::from_request_parts::{{closure}}",
        None,
        "the AdminUser extractor: tern-auth's session and user lookup (one statement), the staff check, the permissions (superuser: no statement)",
    ),
    (
        "database",
        "as tern_admin::registry::AdminModel>::list::{{closure}}",
        Some("tern_admin::registry::Registered<M>::record"),
        "the list's statement (its rows with COUNT(*) OVER ()) through sqlx, each row decoded into the model (FromRow)",
    ),
    (
        "rows as text",
        "tern_admin::registry::Registered<M>::record",
        None,
        "each row's fields as text for the page (Fields: integers, booleans, the timestamp formatted), 200 rows",
    ),
    (
        "view",
        "tern_admin::pages::list::list_page",
        None,
        "the page's data: headers, cells, links to each row, sort and page links",
    ),
    (
        "template",
        "<impl askama::Template for tern_admin::views::ListPage>::render_into_with_values",
        None,
        "askama's render of list.html into the body (HTML escaping included)",
    ),
];

/// One list request's instructions, split: the peer under callgrind, list
/// requests to warm it, the counters zeroed (`callgrind_control -z`), `n`
/// list requests, then stopped; `callgrind_annotate --inclusive=yes`
/// gives each part's cost. The output file is kept at
/// `opts.callgrind_out`.
pub(super) fn profile_list(opts: &Options, binary: &Path, url: &str) -> Result<Profile> {
    progress("the list under callgrind ...");
    let n = opts.callgrind_requests;
    let out = &opts.callgrind_out;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out_arg = format!("--callgrind-out-file={}", out.display());
    let binary_arg = binary.display().to_string();
    let url = peer_url(url);
    let mut env = SETTINGS.to_vec();
    env.push(("DATABASE_URL", &url));
    let server = ServerProcess::start_with(
        Path::new("valgrind"),
        &["--tool=callgrind", &out_arg, &binary_arg],
        &opts.server_cores,
        "TERN_ADDR",
        &env,
    )?;
    let cookies = Cookies::login(&server)?;
    let list = WORKLOADS
        .iter()
        .find(|w| w.name == "list")
        .context("no list workload")?;
    let t = table(list, &cookies);
    for _ in 0..5 {
        check(&server, "list", &t)?;
    }
    let zero = std::process::Command::new("callgrind_control")
        .args(["-z", &server.pid().to_string()])
        .output()
        .context("cannot run callgrind_control")?;
    ensure!(
        zero.status.success(),
        "callgrind_control -z failed: {}",
        String::from_utf8_lossy(&zero.stderr)
    );
    for _ in 0..n {
        check(&server, "list", &t)?;
    }
    server.stop()?;
    let annotated = std::process::Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--threshold=100"])
        .arg(out)
        .output()
        .context("cannot run callgrind_annotate")?;
    ensure!(
        annotated.status.success(),
        "callgrind_annotate failed: {}",
        String::from_utf8_lossy(&annotated.stderr)
    );
    let text = String::from_utf8_lossy(&annotated.stdout);
    split(&text, n)
}

/// The total and each part's inclusive cost per request from
/// callgrind_annotate's inclusive listing (`Ir (pct) file:function`).
pub(super) fn split(annotated: &str, n: usize) -> Result<Profile> {
    let parse = |l: &str| -> Option<(u64, String)> {
        let l = l.trim();
        let (count, rest) = l.split_once(' ')?;
        let ir: u64 = count.replace(',', "").parse().ok()?;
        Some((ir, rest.to_owned()))
    };
    let total = annotated
        .lines()
        .find(|l| l.contains("PROGRAM TOTALS"))
        .and_then(parse)
        .map(|(ir, _)| ir)
        .context("no PROGRAM TOTALS in callgrind_annotate's output")?;
    let per = |ir: u64| ir as f64 / n.max(1) as f64;
    // Inclusive costs: the largest entry of a function (callgrind_annotate
    // lists a function once per source file its inlined code comes from;
    // the entry of its own file holds everything it calls).
    // A function not found is an error: a renamed function would
    // otherwise move its cost to "other" without a word.
    let inclusive = |function: &str| -> Result<u64> {
        annotated
            .lines()
            .filter(|l| l.contains(function))
            .filter_map(parse)
            .map(|(ir, _)| ir)
            .max()
            .with_context(|| format!("`{function}` is not in callgrind_annotate's output: renamed? (PARTS in admin.rs)"))
    };
    let mut parts = Vec::new();
    let mut counted = 0;
    for (name, function, inner, what) in PARTS {
        let ir =
            inclusive(function)?.saturating_sub(inner.map(inclusive).transpose()?.unwrap_or(0));
        counted += ir;
        parts.push((name.to_owned(), per(ir), what.to_owned()));
    }
    parts.push((
        "other".to_owned(),
        per(total.saturating_sub(counted)),
        "the rest: HTTP parsing and writing, routing, middleware (CSRF, security headers), the runtime".to_owned(),
    ));
    Ok(Profile {
        requests: n,
        total: per(total),
        parts,
    })
}
