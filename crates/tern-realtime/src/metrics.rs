//! What realtime counts in the app's metrics: sockets and event streams
//! open (`tern_connections_open{protocol="websocket"|"sse"}`, beside the
//! server's HTTP connections), and the hub's figures, read at each
//! scrape of `/metrics`.

use tern::metrics::{Connections, Metrics, Sample};

use crate::Hub;

/// The connection counts `Realtime::record_metrics` registers, which
/// the socket and stream extractors find in the settings.
#[derive(Debug)]
pub(crate) struct RealtimeMeter {
    pub(crate) websocket: Connections,
    pub(crate) sse: Connections,
}

impl RealtimeMeter {
    pub(crate) fn register(metrics: &Metrics) -> RealtimeMeter {
        RealtimeMeter {
            websocket: metrics.connections("websocket"),
            sse: metrics.connections("sse"),
        }
    }
}

/// The hub's figures now.
pub(crate) fn sample(hub: Option<&Hub>, sample: &mut Sample<'_>) {
    // Before the hub is made (its first use), everything is at zero.
    let stats = hub.map(Hub::stats).unwrap_or_default();
    let counters = [
        (
            "tern_realtime_messages_published",
            "Messages published in this process",
            stats.published,
        ),
        (
            "tern_realtime_messages_dropped",
            "Messages not given to a slow client (REALTIME_SLOW_CONSUMER=drop)",
            stats.dropped,
        ),
        (
            "tern_realtime_slow_consumers_closed",
            "Slow clients closed (REALTIME_SLOW_CONSUMER=close)",
            stats.closed_slow,
        ),
        (
            "tern_realtime_bus_lost",
            "Messages of other processes that never arrived (gaps in their numbering)",
            stats.lost,
        ),
        (
            "tern_realtime_bus_unsent",
            "Messages of this process not sent to the others (the backend away or its queue full)",
            stats.unsent,
        ),
    ];
    for (name, help, value) in counters {
        sample.counter(name, help, &[], value);
    }
    sample.gauge(
        "tern_realtime_subscribers",
        "Connections in topics now, one per connection and topic",
        &[],
        hub.map_or(0, Hub::subscribers) as f64,
    );
    sample.gauge(
        "tern_realtime_queued_messages",
        "Messages waiting in the connections' queues now",
        &[],
        hub.map_or(0, Hub::queued) as f64,
    );
    if let Some(up) = hub.and_then(Hub::bus_up) {
        sample.gauge(
            "tern_realtime_bus_up",
            "Whether the backend between processes (REALTIME_BACKEND) is connected: 1 or 0",
            &[],
            if up { 1.0 } else { 0.0 },
        );
    }
}
