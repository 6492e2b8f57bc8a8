//! The hub across processes: messages off the backend, presence
//! announcements, and forgetting processes that fell silent.

use std::{
    sync::{atomic::Ordering, Arc},
    time::Duration,
};

use bytes::Bytes;
use tokio::time::Instant;

use super::{Delivery, Hub, Member};
use crate::{
    bus::{Incoming, Wire},
    Text,
};

impl Hub {
    /// A message from another process, off the backend.
    #[cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]
    pub(crate) fn on_wire(&self, bytes: &Bytes) {
        let Some((node, seq, message)) = Incoming::decode(bytes) else {
            tracing::warn!("realtime: an unreadable message from the backend, ignored");
            return;
        };
        if node == self.inner.node {
            return;
        }
        {
            let mut peers = self.inner.peers.lock().unwrap_or_else(|e| e.into_inner());
            let last = peers.entry(node.to_owned()).or_insert(0);
            if *last > 0 && seq > *last + 1 {
                let lost = seq - *last - 1;
                self.inner.counters.lost.fetch_add(lost, Ordering::Relaxed);
                tracing::warn!(
                    process = node,
                    lost,
                    "realtime: messages of another process were lost (the backend connection dropped meanwhile)"
                );
            }
            if seq <= *last {
                return;
            }
            *last = seq;
        }
        match message {
            Incoming::Deliver {
                topic,
                event,
                id,
                json,
            } => self.deliver(
                Delivery {
                    topic: Arc::from(topic),
                    event: Arc::from(event),
                    id: Some(Arc::from(id)),
                    text: Text::from(json.to_owned()),
                    cbor: Arc::default(),
                    sse: Arc::default(),
                },
                false,
            ),
            Incoming::Join { topic, member } => self.remote_presence(node, topic, |m| {
                m.insert(member.id.clone(), member);
            }),
            Incoming::Leave { topic, id } => self.remote_presence(node, topic, |m| {
                m.remove(id);
            }),
            Incoming::State { topic, members } => self.remote_presence(node, topic, |m| {
                *m = members.into_iter().map(|x| (x.id.clone(), x)).collect();
            }),
            Incoming::Sync { topic } => self.announce(Some(topic)),
        }
    }

    /// Tells the other processes who this one holds (in `only`, or in
    /// every topic).
    pub(super) fn announce(&self, only: Option<&str>) {
        if self.inner.bus.is_none() {
            return;
        }
        let states: Vec<(Arc<str>, Vec<Member>)> = self
            .topics()
            .iter()
            .filter(|(name, t)| only.is_none_or(|o| o == &***name) && !t.local.is_empty())
            .map(|(name, t)| {
                (
                    Arc::clone(name),
                    t.local.values().map(|(m, _)| m.clone()).collect(),
                )
            })
            .collect();
        for (topic, members) in states {
            self.send_wire(Wire::State {
                topic: &topic,
                members: &members,
            });
        }
    }

    /// Forgets processes silent for three intervals, and topics unused
    /// for five minutes.
    pub(super) fn sweep(&self) {
        let now = Instant::now();
        let silent = self.inner.presence_interval * 3;
        let mut topics = self.topics();
        let names: Vec<Arc<str>> = topics.keys().cloned().collect();
        for key in names {
            let Some(topic) = topics.get_mut(&key) else {
                continue;
            };
            let stale: Vec<String> = topic
                .remote
                .iter()
                .filter(|(_, n)| now.duration_since(n.seen) > silent)
                .map(|(node, _)| node.clone())
                .collect();
            if !stale.is_empty() {
                let before = topic.members();
                for node in &stale {
                    tracing::info!(process = %node, topic = %key, "realtime: a process fell silent; its members left");
                    topic.remote.remove(node);
                }
                self.presence_diff(topic, &key, &before);
            }
            let unused = topic
                .last_used
                .is_none_or(|t| now.duration_since(t) > Duration::from_secs(300));
            if topic.idle() && unused {
                topics.remove(&key);
            }
        }
    }

    /// Re-announces this process's members after the backend came back.
    #[cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]
    pub(crate) fn after_reconnect(&self) {
        self.announce(None);
        let names: Vec<Arc<str>> = self.topics().keys().cloned().collect();
        for topic in names {
            self.send_wire(Wire::Sync { topic: &topic });
        }
    }

    #[cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]
    pub(crate) fn count_unsent(&self, n: u64) {
        self.inner.counters.unsent.fetch_add(n, Ordering::Relaxed);
    }

    /// The backend connected (`true`) or lost (`false`).
    #[cfg(any(feature = "redis", feature = "nats"))]
    pub(crate) fn set_bus_up(&self, up: bool) {
        self.inner.counters.bus_up.store(up, Ordering::Relaxed);
    }
}
