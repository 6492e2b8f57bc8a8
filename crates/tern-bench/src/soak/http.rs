//! The soak's HTTP traffic: a table of the showcase's pages, its
//! contract API in JSON and CBOR, and a logged-in user's notes, replayed
//! by wrk at a bounded rate (each connection waits between requests), with
//! the requests sent and answered counted in the script.

use std::{net::SocketAddr, path::Path, process::Command};

use anyhow::{ensure, Context, Result};
use serde::{Deserialize, Serialize};

use crate::{client::Client, wrk::TableRequest};

/// The user the table logs in as and writes notes for: the `admin` the
/// showcase makes at start in development.
pub(super) const USER: &str = "admin";

/// A logged-in session: its cookie and CSRF token.
pub(super) struct Session {
    pub(super) cookie: String,
    pub(super) csrf: String,
}

/// `POST /auth/login` (JSON) through `addr`.
pub(super) fn login(addr: SocketAddr, password: &str) -> Result<Session> {
    let mut c = Client::connect(addr)?;
    let body = serde_json::json!({"username": USER, "password": password}).to_string();
    let res = c.send(
        "POST",
        "/auth/login",
        &[("Content-Type", "application/json")],
        Some(body.as_bytes()),
    )?;
    ensure!(
        res.status == 200,
        "the login answered {}: {}",
        res.status,
        String::from_utf8_lossy(&res.body)
    );
    let cookie = res
        .header("set-cookie")
        .and_then(|c| c.split(';').next())
        .context("the login set no cookie")?
        .to_owned();
    let json: serde_json::Value = serde_json::from_slice(&res.body)?;
    let csrf = json["csrf_token"]
        .as_str()
        .context("the login answered no CSRF token")?
        .to_owned();
    Ok(Session { cookie, csrf })
}

fn request(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Vec<u8>>,
) -> TableRequest {
    TableRequest {
        method: method.to_owned(),
        path: path.to_owned(),
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        body,
    }
}

fn cbor(value: &serde_json::Value) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    ciborium::into_writer(value, &mut out)?;
    Ok(out)
}

/// One cycle of the table, in the order wrk replays it: 48 requests, of
/// which 15 pages, 20 of the contract API (8 in CBOR, 8 writes), 8 notes
/// pages, 4 notes written by the logged-in user and 1 login.
pub(super) fn table(session: &Session, password: &str) -> Result<Vec<TableRequest>> {
    let item = serde_json::json!({
        "name": "soak item", "qty": 3, "owner": "ada@example.com", "tags": ["soak"]
    });
    let json_item = serde_json::to_vec(&item)?;
    let cbor_item = cbor(&item)?;
    let login = serde_json::json!({"username": USER, "password": password}).to_string();
    let cookie = session.cookie.as_str();
    let note = format!("csrf_token={}&text=a+note+from+the+soak", session.csrf);
    let json = [("Accept", "application/json")];
    let cbor_accept = [("Accept", "application/cbor")];
    let json_post = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
    ];
    let cbor_post = [
        ("Content-Type", "application/cbor"),
        ("Accept", "application/cbor"),
    ];
    let html = ("Accept", "text/html");
    let form = [
        html,
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Cookie", cookie),
    ];
    // A quarter of the cycle; four of them, the last with the login.
    let mut out = Vec::new();
    for quarter in 0..4 {
        let guide = ["guide", "configuration", "performance", "roadmap"][quarter];
        out.push(request("GET", "/", &[html], None));
        out.push(request("GET", &format!("/guide/{guide}"), &[html], None));
        out.push(request("GET", "/index.json", &[], None));
        out.push(request("GET", "/items?limit=10", &json, None));
        out.push(request(
            "POST",
            "/items",
            &json_post,
            Some(json_item.clone()),
        ));
        out.push(request("GET", "/items?limit=10", &cbor_accept, None));
        out.push(request(
            "POST",
            "/items",
            &cbor_post,
            Some(cbor_item.clone()),
        ));
        out.push(request("GET", "/notes", &[html, ("Cookie", cookie)], None));
        out.push(request(
            "POST",
            "/notes",
            &form,
            Some(note.clone().into_bytes()),
        ));
        out.push(request("GET", "/notes?page=2", &[html], None));
        out.push(request("GET", "/items?q=soak&limit=5", &json, None));
        out.push(match quarter {
            0 => request("GET", "/guide", &[html], None),
            1 => request("GET", "/chat", &[html], None),
            2 => request("GET", "/login", &[html], None),
            _ => request(
                "POST",
                "/auth/login",
                &[("Content-Type", "application/json")],
                Some(login.clone().into_bytes()),
            ),
        });
    }
    Ok(out)
}

/// Every request of `table` once, through `addr`: each answered in 2xx
/// or 3xx. Returns how many requests that was.
pub(super) fn check(addr: SocketAddr, table: &[TableRequest]) -> Result<u64> {
    let mut c = Client::connect(addr)?;
    for r in table {
        let headers: Vec<(&str, &str)> = r
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let res = c.send(&r.method, &r.path, &headers, r.body.as_deref())?;
        ensure!(
            (200..400).contains(&res.status),
            "{} {} answered {}: {}",
            r.method,
            r.path,
            res.status,
            String::from_utf8_lossy(&res.body)
        );
    }
    Ok(table.len() as u64)
}

/// A Lua string literal for any bytes.
fn lua_str(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03}")),
        }
    }
    out.push('"');
    out
}

/// The wrk script: `table` in order, cycling, `delay_ms` between a
/// connection's answer and its next request; `done()` prints wrk's
/// summary and the requests every thread sent and had answered.
pub(super) fn script(table: &[TableRequest], delay_ms: u64) -> String {
    let mut lua = String::from(
        "local reqs = {}\nlocal i = 0\nlocal threads = {}\nsent = 0\nanswered = 0\nbad = 0\n\
         setup = function(thread) table.insert(threads, thread) end\n\
         init = function(args)\n",
    );
    for r in table {
        let headers: Vec<String> = r
            .headers
            .iter()
            .map(|(k, v)| format!("[{}] = {}", lua_str(k.as_bytes()), lua_str(v.as_bytes())))
            .collect();
        let body = r.body.as_deref().map_or("nil".to_owned(), lua_str);
        lua.push_str(&format!(
            "  reqs[#reqs + 1] = wrk.format({}, {}, {{{}}}, {})\n",
            lua_str(r.method.as_bytes()),
            lua_str(r.path.as_bytes()),
            headers.join(", "),
            body
        ));
    }
    lua.push_str(&format!(
        "end\n\
         request = function()\n  i = i % #reqs + 1\n  sent = sent + 1\n  return reqs[i]\nend\n\
         response = function(status, headers, body)\n  answered = answered + 1\n  \
         if status < 200 or status > 399 then bad = bad + 1 end\nend\n\
         delay = function() return {delay_ms} end\n"
    ));
    lua.push_str(DONE);
    lua
}

const DONE: &str = r#"done = function(summary, latency, requests)
  local s, a, b = 0, 0, 0
  for _, t in ipairs(threads) do
    s = s + t:get("sent")
    a = a + t:get("answered")
    b = b + t:get("bad")
  end
  io.write(string.format(
    'TERNSOAK {"requests":%d,"duration_us":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"non_2xx_3xx":%d,"sent":%d,"answered":%d,"bad":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
    summary.errors.status, s, a, b,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"#;

/// What wrk counted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WrkCounts {
    /// Responses wrk completed (its own count).
    pub requests: u64,
    /// Wall time, microseconds.
    pub duration_us: u64,
    /// Connect errors.
    pub connect_errors: u64,
    /// Read errors.
    pub read_errors: u64,
    /// Write errors.
    pub write_errors: u64,
    /// Timeouts (5 s).
    pub timeouts: u64,
    /// Answers with a status above 399 (wrk's count).
    pub non_2xx_3xx: u64,
    /// Requests the script handed to wrk to send.
    pub sent: u64,
    /// Answers the script saw.
    pub answered: u64,
    /// Answers outside 2xx and 3xx the script saw.
    pub bad: u64,
    /// Latency, microseconds: median, 99th percentile, maximum.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Maximum.
    pub max_us: u64,
}

impl WrkCounts {
    /// Every kind of failure wrk saw.
    pub fn errors(&self) -> u64 {
        self.connect_errors
            + self.read_errors
            + self.write_errors
            + self.timeouts
            + self.non_2xx_3xx.max(self.bad)
    }
}

/// Runs wrk (one thread, `connections` connections) against `addr` for
/// `seconds` with the script at `script_path`.
pub(super) fn run_wrk(
    script_path: &Path,
    addr: SocketAddr,
    connections: usize,
    seconds: u64,
) -> Result<WrkCounts> {
    crate::wrk::run_script(
        Command::new("wrk"),
        script_path,
        addr,
        connections,
        seconds,
        "TERNSOAK ",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_mixes_what_the_issue_names() {
        let session = Session {
            cookie: "tern_session=x".into(),
            csrf: "t".into(),
        };
        let table = table(&session, "pw").unwrap_or_default();
        assert_eq!(table.len(), 48);
        let count = |method: &str, path: &str, accept: Option<&str>| {
            table
                .iter()
                .filter(|r| r.method == method && r.path.starts_with(path))
                .filter(|r| {
                    accept.is_none_or(|a| r.headers.iter().any(|(k, v)| k == "Accept" && v == a))
                })
                .count()
        };
        assert_eq!(count("POST", "/items", Some("application/cbor")), 4);
        assert_eq!(count("POST", "/items", Some("application/json")), 4);
        assert_eq!(count("GET", "/items", Some("application/cbor")), 4);
        assert_eq!(count("POST", "/notes", None), 4);
        assert_eq!(count("POST", "/auth/login", None), 1);
        assert_eq!(count("GET", "/guide/", None), 4);
        let lua = script(&table, 80);
        assert!(lua.contains("delay = function() return 80 end"));
        assert!(lua.contains("TERNSOAK"));
    }

    #[test]
    fn lua_strings_escape_binary_bodies() {
        assert_eq!(lua_str(b"a\"\\\n\xa1"), "\"a\\\"\\\\\\010\\161\"");
    }
}
