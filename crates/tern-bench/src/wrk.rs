//! The load generators: wrk (HTTP/1.1, Lua request tables, a `done()` hook
//! printing JSON) and h2load (HTTP/2).

use std::{net::SocketAddr, path::Path, process::Command};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::process::ServerProcess;

/// One request of a table replayed by wrk.
#[derive(Debug, Clone)]
pub struct TableRequest {
    /// Method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body, if any.
    pub body: Option<Vec<u8>>,
}

/// What one load-generator run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoadResult {
    /// Completed requests (responses).
    pub requests: u64,
    /// Wall time, microseconds.
    pub duration_us: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Connect errors.
    pub connect_errors: u64,
    /// Read errors.
    pub read_errors: u64,
    /// Write errors.
    pub write_errors: u64,
    /// Timeouts.
    pub timeouts: u64,
    /// Responses with a status outside 2xx and 3xx.
    pub non_2xx: u64,
    /// Latency percentiles and maximum, microseconds.
    pub p50_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Maximum.
    pub max_us: f64,
    /// Mean latency, microseconds (h2load reports no percentiles: for
    /// HTTP/2 only the mean and maximum are filled).
    #[serde(default)]
    pub mean_us: f64,
}

impl LoadResult {
    /// Requests per second.
    pub fn rps(&self) -> f64 {
        if self.duration_us == 0 {
            0.0
        } else {
            self.requests as f64 / (self.duration_us as f64 / 1e6)
        }
    }

    /// Socket errors of any kind.
    pub fn socket_errors(&self) -> u64 {
        self.connect_errors + self.read_errors + self.write_errors + self.timeouts
    }

    /// `N answers outside 2xx and M socket errors in R requests`, when
    /// there was either.
    pub fn failures(&self) -> Option<String> {
        (self.non_2xx > 0 || self.socket_errors() > 0).then(|| {
            format!(
                "{} answers outside 2xx and {} socket errors in {} requests",
                self.non_2xx,
                self.socket_errors(),
                self.requests
            )
        })
    }
}

/// A wrk run against a server process and the server CPU it took.
pub(crate) struct Measured {
    /// What wrk measured.
    pub(crate) load: LoadResult,
    /// The server's CPU seconds (user and system) during the run.
    pub(crate) cpu_s: f64,
    /// Of which system time.
    pub(crate) system_s: f64,
}

impl Measured {
    /// Server CPU (user and system) per completed request, microseconds.
    pub(crate) fn cpu_us_per_req(&self) -> f64 {
        self.cpu_s * 1e6 / self.load.requests.max(1) as f64
    }
}

/// Runs wrk (see [`run_wrk`]) against `server`, reading its CPU time
/// before and after.
pub(crate) fn measure(
    server: &ServerProcess,
    script_path: &Path,
    cores: &str,
    connections: usize,
    seconds: f64,
) -> Result<Measured> {
    let before = server.usage()?;
    let load = run_wrk(script_path, server.addr, cores, connections, seconds)?;
    let after = server.usage()?;
    Ok(Measured {
        load,
        cpu_s: after.cpu_s_since(&before),
        system_s: after.system_s - before.system_s,
    })
}

/// A Lua string literal for any bytes.
fn lua_str(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03}")),
        }
    }
    out.push('"');
    out
}

const DONE: &str = r#"
done = function(summary, latency, requests)
  io.write(string.format(
    'TERNBENCH {"requests":%d,"duration_us":%d,"bytes":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,"non_2xx":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout, summary.errors.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
"#;

/// Requests per Lua function of a script: LuaJIT refuses a function with
/// more than 65,536 constants, and every distinct body is one.
const REQUESTS_PER_CHUNK: usize = 8192;

/// A wrk script that replays `table` in order, cycling, with `pipeline`
/// requests per write (1 for none).
pub fn script(table: &[TableRequest], pipeline: usize) -> String {
    let mut lua = String::from("local reqs = {}\nlocal i = 0\nlocal chunks = {}\n");
    for chunk in table.chunks(REQUESTS_PER_CHUNK) {
        lua.push_str("chunks[#chunks + 1] = function()\n");
        for r in chunk {
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
        lua.push_str("end\n");
    }
    lua.push_str("init = function(args)\n  for _, add in ipairs(chunks) do add() end\n");
    if pipeline > 1 {
        lua.push_str(&format!(
            "  local batch = {{}}\n  for k = 1, {pipeline} do batch[k] = reqs[(k - 1) % #reqs + 1] end\n  reqs = {{ table.concat(batch) }}\n"
        ));
    }
    lua.push_str("end\nrequest = function()\n  i = i % #reqs + 1\n  return reqs[i]\nend\n");
    lua.push_str(DONE);
    lua
}

/// Runs wrk with one thread pinned to `cores`.
pub fn run_wrk(
    script_path: &Path,
    addr: SocketAddr,
    cores: &str,
    connections: usize,
    seconds: f64,
) -> Result<LoadResult> {
    let mut wrk = Command::new("taskset");
    wrk.args(["-c", cores, "wrk"]);
    run_script(
        wrk,
        script_path,
        addr,
        connections,
        seconds.max(1.0).round() as u64,
        "TERNBENCH ",
    )
}

/// Runs `wrk` (a command that ends in `wrk`: `wrk` itself, or `taskset
/// -c CORES wrk`) with one thread, `connections` connections, for
/// `seconds`, with the Lua script at `script_path`, and reads the JSON its
/// `done()` prints on the line that starts with `marker`.
pub(crate) fn run_script<T: serde::de::DeserializeOwned>(
    mut wrk: Command,
    script_path: &Path,
    addr: SocketAddr,
    connections: usize,
    seconds: u64,
    marker: &str,
) -> Result<T> {
    let out = wrk
        .arg("-t1")
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .args(["--timeout", "5s", "-s"])
        .arg(script_path)
        .arg(format!("http://{addr}/"))
        .output()
        .context("cannot run wrk: install it with `apt-get install -y wrk`")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text.lines().find_map(|l| l.strip_prefix(marker)) else {
        bail!(
            "wrk printed no result (exit {:?}): {}{}",
            out.status.code(),
            text,
            String::from_utf8_lossy(&out.stderr)
        );
    };
    serde_json::from_str(line).with_context(|| format!("bad wrk JSON: {line}"))
}

/// Runs h2load (h2c, prior knowledge) for `seconds` with `connections`
/// connections and 10 concurrent streams each.
pub fn run_h2load(
    path: &str,
    addr: SocketAddr,
    cores: &str,
    connections: usize,
    seconds: f64,
) -> Result<LoadResult> {
    let duration = seconds.max(1.0).round() as u64;
    let out = Command::new("taskset")
        .args(["-c", cores, "h2load", "-t1"])
        .arg(format!("-c{connections}"))
        .args(["-m10", "-D"])
        .arg(duration.to_string())
        .arg(format!("http://{addr}{path}"))
        .output()
        .context("cannot run h2load: install it with `apt-get install -y nghttp2-client`")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    parse_h2load(&text, duration)
}

fn parse_h2load(text: &str, duration_s: u64) -> Result<LoadResult> {
    let mut r = LoadResult {
        duration_us: duration_s * 1_000_000,
        ..LoadResult::default()
    };
    let num = |s: &str| s.trim().trim_end_matches(',').parse::<f64>().unwrap_or(0.0);
    let mut found = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("requests:") {
            // requests: N total, N started, N done, N succeeded, N failed, N errored, N timeout
            for part in rest.split(',') {
                let mut words = part.split_whitespace();
                let (Some(n), Some(what)) = (words.next(), words.next()) else {
                    continue;
                };
                match what {
                    "succeeded" => {
                        r.requests = num(n) as u64;
                        found = true;
                    }
                    "errored" => r.read_errors = num(n) as u64,
                    "timeout" => r.timeouts = num(n) as u64,
                    _ => {}
                }
            }
        } else if let Some(rest) = line.strip_prefix("status codes:") {
            // status codes: N 2xx, N 3xx, N 4xx, N 5xx
            for part in rest.split(',') {
                let mut words = part.split_whitespace();
                if let (Some(n), Some(class)) = (words.next(), words.next()) {
                    if class == "4xx" || class == "5xx" {
                        r.non_2xx += num(n) as u64;
                    }
                }
            }
        } else if let Some(rest) = line.strip_prefix("time for request:") {
            // min max mean sd +/- sd, with units
            let values: Vec<f64> = rest.split_whitespace().filter_map(to_us).collect();
            if values.len() >= 3 {
                r.max_us = values[1];
                r.mean_us = values[2];
            }
        }
    }
    if !found {
        bail!("h2load printed no result: {text}");
    }
    Ok(r)
}

fn to_us(token: &str) -> Option<f64> {
    let (num, factor) = if let Some(n) = token.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = token.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = token.strip_suffix('s') {
        (n, 1e6)
    } else {
        return None;
    };
    num.parse::<f64>().ok().map(|v| v * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lua_strings_escape_everything() {
        assert_eq!(lua_str(b"a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\001\"");
    }

    #[test]
    fn h2load_output_parses() {
        let text = "finished in 2.00s, 50000.00 req/s, 2.00MB/s\nrequests: 100000 total, 100000 started, 100000 done, 99990 succeeded, 10 failed, 10 errored, 0 timeout\nstatus codes: 99990 2xx, 0 3xx, 0 4xx, 0 5xx\ntime for request:      100us      9.00ms       250us       40us    90.00%\n";
        let r = parse_h2load(text, 2).unwrap_or_default();
        assert_eq!(r.requests, 99990);
        assert_eq!(r.read_errors, 10);
        assert_eq!(r.max_us, 9000.0);
        assert_eq!(r.mean_us, 250.0);
    }
}
