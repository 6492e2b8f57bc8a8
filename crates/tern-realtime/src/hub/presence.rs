//! Presence: who is in a topic, in this process and the others, and the
//! `presence.join` / `presence.leave` events that tell subscribers.

use std::{collections::HashMap, sync::Arc};

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{
    delivery::envelope,
    topic::{entry, Topic},
    Hub,
};

/// Who holds a connection, for presence: a user with two tabs (two
/// connections with the same `id`) is present once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// What makes two connections the same member (a user id).
    pub id: String,
    /// What others see.
    pub name: String,
}

impl Member {
    /// A member.
    pub fn new(id: impl Into<String>, name: impl Into<String>) -> Self {
        Member {
            id: id.into(),
            name: name.into(),
        }
    }
}

pub(super) struct NodePresence {
    pub(super) seen: Instant,
    pub(super) members: HashMap<String, Member>,
}

impl Topic {
    pub(super) fn present(&self, id: &str) -> bool {
        self.local.contains_key(id) || self.remote.values().any(|n| n.members.contains_key(id))
    }

    pub(super) fn members(&self) -> Vec<Member> {
        let mut seen: HashMap<&str, &Member> = HashMap::new();
        for (m, _) in self.local.values() {
            seen.insert(&m.id, m);
        }
        for node in self.remote.values() {
            for m in node.members.values() {
                seen.entry(&m.id).or_insert(m);
            }
        }
        let mut all: Vec<Member> = seen.into_values().cloned().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        all
    }
}

impl Hub {
    /// Who is in `topic`, in every process (sorted by name).
    pub fn presence(&self, topic: &str) -> Vec<Member> {
        self.topics()
            .get(topic)
            .map(Topic::members)
            .unwrap_or_default()
    }

    pub(super) fn presence_event(
        &self,
        topic: &mut Topic,
        name: &Arc<str>,
        event: &str,
        member: &Member,
    ) {
        if let Ok(d) = envelope(name, event, None, None, member) {
            for sub in topic.subscribers.values() {
                // Presence events are small and rare: a full queue skips one.
                let _ = sub.tx.try_send(d.clone());
            }
        }
    }

    /// Applies a change to what process `node` holds in `topic`, telling
    /// local subscribers who arrived and who left.
    #[cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]
    pub(super) fn remote_presence(
        &self,
        node: &str,
        name: &str,
        change: impl FnOnce(&mut HashMap<String, Member>),
    ) {
        let mut topics = self.topics();
        let Some((key, topic)) = entry(&mut topics, name) else {
            return;
        };
        let before = topic.members();
        let entry = topic
            .remote
            .entry(node.to_owned())
            .or_insert_with(|| NodePresence {
                seen: Instant::now(),
                members: HashMap::new(),
            });
        entry.seen = Instant::now();
        change(&mut entry.members);
        if entry.members.is_empty() {
            topic.remote.remove(node);
        }
        self.presence_diff(topic, &key, &before);
    }

    pub(super) fn presence_diff(&self, topic: &mut Topic, key: &Arc<str>, before: &[Member]) {
        let after = topic.members();
        for m in &after {
            if !before.iter().any(|b| b.id == m.id) {
                self.presence_event(topic, key, "presence.join", m);
            }
        }
        for m in before {
            if !after.iter().any(|a| a.id == m.id) {
                self.presence_event(topic, key, "presence.leave", m);
            }
        }
    }
}
