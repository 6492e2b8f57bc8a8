//! The realtime lab's figures over the rounds, its problems, and its
//! report for a terminal.

use crate::{
    stats::{summarize, Summary},
    ws::fmt_value,
};

use super::{
    FanoutTrial, Figure, HeldTrial, Latency, Report, SlowTrial, Stalled, FAN_TOPIC, IDLE_TOPIC,
    SLOW_VARIANTS,
};

const LATENCY_METRICS: [(&str, &str); 5] = [
    ("p50_us", "p50"),
    ("p99_us", "p99"),
    ("max_us", "max"),
    ("last_p50_us", "last p50"),
    ("last_max_us", "last max"),
];

fn latency_metric(l: &Latency, name: &str) -> f64 {
    f64::from(match name {
        "p50_us" => l.p50_us,
        "p99_us" => l.p99_us,
        "max_us" => l.max_us,
        "last_p50_us" => l.last_p50_us,
        _ => l.last_max_us,
    })
}

/// A metric's value in a `held` trial, if it has one.
type HeldValue = fn(&HeldTrial) -> Option<f64>;

/// `held`'s metrics, in table order, and their value in a trial.
const HELD_METRICS: [(&str, HeldValue); 4] = [
    ("rps", |t| Some(t.rps)),
    ("ratio_to_none", |t| t.ratio_to_none),
    ("kib_per_socket", |t| t.kib_per_socket),
    ("server_busy", |t| Some(t.server_busy)),
];

/// What a `fanout*` or `slow` trial cost, in table order: the client's
/// and the server's CPU over wall time, the server's CPU per delivery.
const COST_METRICS: [&str; 3] = ["client_busy", "server_busy", "server_cpu_us_per_delivery"];

/// The broadcast workloads, in table order.
const FANOUT_WORKLOADS: [&str; 3] = ["fanout", "fanout-redis", "fanout-nats"];

/// A `fanout*` figure's case: the subscriber count, and the group of
/// subscribers when not all of them (`1000 other server`).
fn fanout_case(n: usize, group: &str) -> String {
    if group == "all" {
        n.to_string()
    } else {
        format!("{n} {group}")
    }
}

/// Adds a figure over the rounds, when there are values.
fn push(out: &mut Vec<Figure>, workload: &str, case: String, metric: &str, values: Vec<f64>) {
    if !values.is_empty() {
        out.push(Figure {
            workload: workload.to_owned(),
            case,
            metric: metric.to_owned(),
            summary: summarize(&values),
        });
    }
}

/// Adds the [`LATENCY_METRICS`] of a case, from each trial's latency.
fn push_latency(out: &mut Vec<Figure>, workload: &str, case: &str, latencies: &[&Latency]) {
    for (metric, _) in LATENCY_METRICS {
        push(
            out,
            workload,
            case.to_owned(),
            metric,
            latencies
                .iter()
                .map(|l| latency_metric(l, metric))
                .collect(),
        );
    }
}

/// Adds the [`COST_METRICS`] of a `fanout*` or `slow` case, from each
/// trial's values in their order.
fn push_costs(
    out: &mut Vec<Figure>,
    workload: &str,
    case: &str,
    costs: impl Iterator<Item = [f64; 3]>,
) {
    let costs: Vec<[f64; 3]> = costs.collect();
    for (i, metric) in COST_METRICS.into_iter().enumerate() {
        push(
            out,
            workload,
            case.to_owned(),
            metric,
            costs.iter().map(|c| c[i]).collect(),
        );
    }
}

pub(super) fn figures(r: &Report) -> Vec<Figure> {
    let mut out = Vec::new();
    for &n in &r.settings.held {
        let trials: Vec<&HeldTrial> = r.held.iter().filter(|t| t.held == n).collect();
        for (metric, value) in HELD_METRICS {
            push(
                &mut out,
                "held",
                n.to_string(),
                metric,
                trials.iter().filter_map(|t| value(t)).collect(),
            );
        }
    }
    for w in FANOUT_WORKLOADS {
        for &n in &r.settings.fanout {
            let trials: Vec<&FanoutTrial> = r
                .fanout
                .iter()
                .filter(|t| t.workload == w && t.subscribers == n)
                .collect();
            let Some(first) = trials.first() else {
                continue;
            };
            for (group, _) in &first.groups {
                let case = fanout_case(n, group);
                let latencies: Vec<&Latency> = trials
                    .iter()
                    .filter_map(|t| t.groups.iter().find(|(g, _)| g == group))
                    .map(|(_, l)| l)
                    .collect();
                push_latency(&mut out, w, &case, &latencies);
            }
            let costs = trials
                .iter()
                .map(|t| [t.client_busy, t.server_busy, t.server_cpu_us_per_delivery]);
            push_costs(&mut out, w, &n.to_string(), costs);
        }
    }
    for variant in SLOW_VARIANTS {
        let trials: Vec<&SlowTrial> = r.slow.iter().filter(|t| t.variant == variant).collect();
        let latencies: Vec<&Latency> = trials.iter().map(|t| &t.latency).collect();
        push_latency(&mut out, "slow", variant, &latencies);
        let after: Vec<&Latency> = trials
            .iter()
            .filter_map(|t| t.latency_after.as_ref())
            .collect();
        push_latency(&mut out, "slow", &format!("{variant} after"), &after);
        let costs = trials
            .iter()
            .map(|t| [t.client_busy, t.server_busy, t.server_cpu_us_per_delivery]);
        push_costs(&mut out, "slow", variant, costs);
    }
    out
}

/// Pushes `{at}: {n} {what}` when `n` is not zero.
fn note<N: std::fmt::Display + Default + PartialEq>(
    out: &mut Vec<String>,
    at: &str,
    n: N,
    what: &str,
) {
    if n != N::default() {
        out.push(format!("{at}: {n} {what}"));
    }
}

/// What a `fanout*` or `slow` trial can get wrong on its sockets.
fn broadcast_problems(out: &mut Vec<String>, at: &str, unexpected: u64, unclean: usize) {
    note(out, at, unexpected, "unexpected or repeated messages");
    note(out, at, unclean, "closes not answered");
}

pub(super) fn problems(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for t in &r.held {
        let at = format!("round {}, held {}", t.round + 1, t.held);
        note(
            &mut out,
            &at,
            t.load.socket_errors() + t.load.non_2xx,
            "wrk errors or non-2xx answers",
        );
        if t.load.requests == 0 {
            out.push(format!("{at}: wrk completed no request"));
        }
        note(
            &mut out,
            &at,
            t.unexpected_messages,
            "messages on idle sockets",
        );
        note(&mut out, &at, t.ended, "held sockets ended");
        note(&mut out, &at, t.unclean_closes, "closes not answered");
    }
    for t in &r.fanout {
        let at = format!("round {}, {} {}", t.round + 1, t.workload, t.subscribers);
        for (group, l) in &t.groups {
            note(
                &mut out,
                &format!("{at} ({group})"),
                l.missing,
                "deliveries missing",
            );
        }
        broadcast_problems(&mut out, &at, t.unexpected_messages, t.unclean_closes);
    }
    for t in &r.slow {
        let at = format!("round {}, slow {}", t.round + 1, t.variant);
        note(
            &mut out,
            &at,
            t.latency.missing,
            "deliveries to fast subscribers missing",
        );
        broadcast_problems(&mut out, &at, t.unexpected_messages, t.unclean_closes);
        if let Some(s) = &t.stalled {
            // The stalled client must have overflowed its queue: it holds
            // fewer messages than were published, or the variant measures
            // nothing.
            if s.received >= s.published {
                out.push(format!(
                    "{at}: the stalled client got all {} messages: it never fell behind (publish more)",
                    s.published
                ));
            }
            let expected_closed = t.variant == "stalled-close";
            if s.closed != expected_closed {
                out.push(format!(
                    "{at}: the stalled client was {} (REALTIME_SLOW_CONSUMER={})",
                    if s.closed { "closed" } else { "not closed" },
                    if expected_closed { "close" } else { "drop" }
                ));
            }
        }
    }
    out
}

fn cell(r: &Report, workload: &str, case: &str, metric: &str, scale: f64) -> String {
    r.figures
        .iter()
        .find(|f| f.workload == workload && f.case == case && f.metric == metric)
        .map_or_else(
            || "-".to_owned(),
            |f| {
                format!(
                    "{} [{}-{}]",
                    fmt_value(f.summary.median * scale),
                    fmt_value(f.summary.min * scale),
                    fmt_value(f.summary.max * scale)
                )
            },
        )
}

/// Client and server CPU busy, and the server's CPU per delivery: medians.
fn busy(r: &Report, workload: &str, case: &str) -> String {
    let m = |metric| median_of(r, workload, case, metric).map_or(f64::NAN, |s| s.median);
    format!(
        "{} / {}; {} us",
        fmt_value(m("client_busy")),
        fmt_value(m("server_busy")),
        fmt_value(m("server_cpu_us_per_delivery"))
    )
}

/// A count with thousands separators.
fn count(n: usize) -> String {
    if n >= 1000 {
        fmt_value(n as f64)
    } else {
        n.to_string()
    }
}

fn median_of(r: &Report, workload: &str, case: &str, metric: &str) -> Option<Summary> {
    r.figures
        .iter()
        .find(|f| f.workload == workload && f.case == case && f.metric == metric)
        .map(|f| f.summary)
}

/// The report for a terminal: each figure's median with its range over
/// the rounds, and the goals of issue 13.
pub fn terminal(r: &Report) -> String {
    let s = &r.settings;
    let mut out = format!(
        "machine: {}\n\
         method: {} round(s); a fresh peer-realtime-tern (one current-thread runtime) per trial on core(s) {} \
         (both servers of fanout-redis/-nats there too); the client (tern-bench, tokio-tungstenite, one \
         current-thread runtime) and wrk on core(s) {}{}\n",
        r.machine.summary(false),
        s.rounds,
        s.server_cores,
        s.load_cores,
        if s.quick { " (QUICK: figures mean nothing)" } else { "" }
    );
    for skipped in &r.skipped {
        out.push_str(&format!("{skipped}\n"));
    }
    if !r.held.is_empty() {
        out.push_str(&format!(
            "\nheld: N idle sockets joined to {IDLE_TOPIC}, then wrk -t1 -c{} GET /json for {} s \
             ({} s of wrk before the sockets open)\n{:<8} {:>26} {:>22} {:>22} {:>18}\n",
            s.connections,
            s.seconds,
            s.warmup_s,
            "held",
            "json req/s",
            "ratio to 0 held",
            "RSS KiB/socket",
            "server CPU busy"
        ));
        for &n in &s.held {
            let case = n.to_string();
            out.push_str(&format!(
                "{:<8} {:>26} {:>22} {:>22} {:>18}\n",
                count(n),
                cell(r, "held", &case, "rps", 1.0),
                cell(r, "held", &case, "ratio_to_none", 1.0),
                cell(r, "held", &case, "kib_per_socket", 1.0),
                cell(r, "held", &case, "server_busy", 1.0),
            ));
        }
    }
    if !r.fanout.is_empty() {
        out.push_str(&format!(
            "\nfan-out: {} broadcasts (after {} unmeasured) to every subscriber of {FAN_TOPIC}, from a \
             publisher socket on the (first) server, each sent once the one before reached everyone \
             and at least {} ms after it; latency in ms, over every delivery; last: per broadcast, \
             its last delivery; CPU: the client's and the server's busy over the broadcasts' wall time, and \
             the server's CPU per delivery (two servers: summed)\n\
             {:<13} {:<26} {:>20} {:>20} {:>20} {:>20} {:>20} {:>26}\n",
            s.broadcasts,
            s.warm,
            s.interval_ms,
            "workload",
            "subscribers",
            "p50",
            "p99",
            "max",
            "last p50",
            "last max",
            "CPU busy; us/delivery"
        ));
        for w in FANOUT_WORKLOADS {
            for &n in &s.fanout {
                let Some(t) = r
                    .fanout
                    .iter()
                    .find(|t| t.workload == w && t.subscribers == n)
                else {
                    continue;
                };
                for (group, _) in &t.groups {
                    let case = fanout_case(n, group);
                    let label = if group == "all" {
                        count(n)
                    } else {
                        format!("{} on {group}", count(n / 2))
                    };
                    out.push_str(&format!(
                        "{:<13} {:<26} {:>20} {:>20} {:>20} {:>20} {:>20} {:>26}\n",
                        w,
                        label,
                        cell(r, w, &case, "p50_us", 1e-3),
                        cell(r, w, &case, "p99_us", 1e-3),
                        cell(r, w, &case, "max_us", 1e-3),
                        cell(r, w, &case, "last_p50_us", 1e-3),
                        cell(r, w, &case, "last_max_us", 1e-3),
                        busy(r, w, &n.to_string()),
                    ));
                }
            }
        }
    }
    if !r.slow.is_empty() {
        out.push_str(&format!(
            "\nslow consumer: {} fast subscribers of {FAN_TOPIC}, {} bursts (after {} unmeasured) of {} \
             messages of about 1 KiB, each once the one before reached every fast subscriber and at least \
             {} ms after it; the stalled client has SO_RCVBUF {} and never reads; before the server's \
             queue ({} messages) fills, its socket's send buffer takes up to {} KiB ({}); latency \
             in ms of the fast subscribers over every burst, and (`after`) over the bursts the stalled \
             client did not get; last: per burst, its last delivery\n\
             {:<20} {:>20} {:>20} {:>20} {:>20} {:>20} {:>26}  stalled client\n",
            s.slow_subscribers,
            s.bursts,
            s.warm,
            s.burst,
            s.interval_ms,
            s.stalled_rcvbuf,
            s.send_queue,
            if s.send_buffer > 0 { s.send_buffer } else { s.tcp_wmem_max } / 1024,
            if s.send_buffer > 0 {
                "WEBSOCKET_SEND_BUFFER, doubled by Linux"
            } else {
                "tcp_wmem"
            },
            "variant",
            "p50",
            "p99",
            "max",
            "last p50",
            "last max",
            "CPU busy; us/delivery"
        ));
        for variant in SLOW_VARIANTS {
            let trials: Vec<&SlowTrial> = r.slow.iter().filter(|t| t.variant == variant).collect();
            if trials.is_empty() {
                continue;
            }
            let stalled: Vec<&Stalled> = trials.iter().filter_map(|t| t.stalled.as_ref()).collect();
            let fate = if stalled.is_empty() {
                "-".to_owned()
            } else {
                let closed = stalled.iter().filter(|s| s.closed).count();
                let mut hows: Vec<&str> = stalled.iter().map(|s| s.how.as_str()).collect();
                hows.sort_unstable();
                hows.dedup();
                let got: Vec<f64> = stalled.iter().map(|s| s.received as f64).collect();
                format!(
                    "closed in {closed} of {} ({}); it held {} [{}-{}] of {} messages",
                    stalled.len(),
                    hows.join(", "),
                    count(summarize(&got).median as usize),
                    count(summarize(&got).min as usize),
                    count(summarize(&got).max as usize),
                    count(stalled[0].published as usize)
                )
            };
            let after = format!("{variant} after");
            for (case, fate) in [(variant, fate.as_str()), (after.as_str(), "")] {
                if median_of(r, "slow", case, "p50_us").is_none() {
                    continue;
                }
                let cpu = if fate.is_empty() {
                    String::new()
                } else {
                    busy(r, "slow", case)
                };
                out.push_str(&format!(
                    "{:<20} {:>20} {:>20} {:>20} {:>20} {:>20} {:>26}  {}\n",
                    case,
                    cell(r, "slow", case, "p50_us", 1e-3),
                    cell(r, "slow", case, "p99_us", 1e-3),
                    cell(r, "slow", case, "max_us", 1e-3),
                    cell(r, "slow", case, "last_p50_us", 1e-3),
                    cell(r, "slow", case, "last_max_us", 1e-3),
                    cpu,
                    fate
                ));
            }
        }
    }
    out.push_str("median [min-max] over the rounds\n");
    if s.held.contains(&10_000) && s.held.contains(&0) {
        let ratio = median_of(r, "held", "10000", "ratio_to_none");
        let rss = median_of(r, "held", "10000", "kib_per_socket");
        if let (Some(ratio), Some(rss)) = (ratio, rss) {
            out.push_str(&format!(
                "goal: 10,000 held with the JSON path >= 0.9x of none held: {} ({:.3} [{:.3}-{:.3}])\n\
                 goal: RSS per held socket <= 16 KiB: {} ({:.2} KiB [{:.2}-{:.2}])\n",
                if ratio.median >= 0.9 { "met" } else { "MISSED" },
                ratio.median,
                ratio.min,
                ratio.max,
                if rss.median <= 16.0 { "met" } else { "MISSED" },
                rss.median,
                rss.min,
                rss.max,
            ));
        }
    }
    if !r.problems.is_empty() {
        out.push_str(&format!("PROBLEMS ({}):\n", r.problems.len()));
        for p in &r.problems {
            out.push_str(&format!("  {p}\n"));
        }
    }
    out
}
