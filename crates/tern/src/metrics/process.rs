//! The process's own figures (Linux: read from `/proc` at each scrape),
//! under the names every Prometheus client library uses.

use super::{Metrics, Sample};

/// Clock ticks per second of `/proc/self/stat`'s times: `USER_HZ`, 100
/// on every Linux architecture (the kernel converts to it for user space).
const USER_HZ: f64 = 100.0;

pub(super) fn install(metrics: &Metrics) {
    if std::fs::metadata("/proc/self/stat").is_err() {
        return;
    }
    metrics.source(sample);
}

fn sample(out: &mut Sample<'_>) {
    if let Some((cpu, start)) = cpu_and_start() {
        out.counter_seconds(
            "process_cpu_seconds",
            "User and system CPU time spent, in seconds",
            cpu,
        );
        if let Some(start) = start {
            out.gauge(
                "process_start_time_seconds",
                "Start time of the process since the Unix epoch, in seconds",
                &[],
                start,
            );
        }
    }
    if let Some(rss) = status_kb("VmRSS:") {
        out.gauge(
            "process_resident_memory_bytes",
            "Resident memory size, in bytes",
            &[],
            rss * 1024.0,
        );
    }
    if let Some(vm) = status_kb("VmSize:") {
        out.gauge(
            "process_virtual_memory_bytes",
            "Virtual memory size, in bytes",
            &[],
            vm * 1024.0,
        );
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        // The directory's own descriptor, open while it is read, is one.
        let open = fds.count().saturating_sub(1);
        out.gauge(
            "process_open_fds",
            "Open file descriptors",
            &[],
            open as f64,
        );
    }
    if let Some(max) = max_fds() {
        out.gauge(
            "process_max_fds",
            "Limit on open file descriptors",
            &[],
            max,
        );
    }
    if let Some(threads) = status_kb("Threads:") {
        out.gauge("process_threads", "Threads of the process", &[], threads);
    }
}

/// CPU seconds (user + system) and the start time since the epoch.
fn cpu_and_start() -> Option<(f64, Option<f64>)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    // Fields 14 and 15 (utime, stime) and 22 (starttime), counted from 1;
    // `after` starts at field 3.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let start_ticks: f64 = fields.get(19)?.parse().ok()?;
    let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("btime "))
            .and_then(|v| v.trim().parse::<f64>().ok())
    });
    Some((
        (utime + stime) / USER_HZ,
        boot.map(|b| b + start_ticks / USER_HZ),
    ))
}

/// A `/proc/self/status` line's number (kB for memory lines).
fn status_kb(key: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

fn max_fds() -> Option<f64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
