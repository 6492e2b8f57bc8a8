//! A topic: its local subscribers, its replay buffer and who is in it,
//! and how a connection joins and leaves one.

use std::{
    collections::{hash_map::Entry, HashMap, VecDeque},
    sync::{atomic::Ordering, Arc},
};

use tokio::{sync::mpsc, time::Instant};

use super::{connection::Overflow, presence::NodePresence, Connection, Delivery, Hub, Member};
use crate::bus::Wire;

pub(super) struct Subscriber {
    pub(super) tx: mpsc::Sender<Delivery>,
    pub(super) overflow: Arc<Overflow>,
}

#[derive(Default)]
pub(super) struct Topic {
    pub(super) subscribers: HashMap<u64, Subscriber>,
    pub(super) replay: VecDeque<Delivery>,
    /// The JSON bytes of the messages in `replay`.
    pub(super) replay_bytes: usize,
    pub(super) local: HashMap<String, (Member, usize)>,
    pub(super) remote: HashMap<String, NodePresence>,
    pub(super) last_used: Option<Instant>,
}

impl Topic {
    pub(super) fn idle(&self) -> bool {
        self.subscribers.is_empty() && self.local.is_empty() && self.remote.is_empty()
    }
}

/// The topic `name` and its shared name, if it exists.
pub(super) fn entry<'a>(
    topics: &'a mut HashMap<Arc<str>, Topic>,
    name: &str,
) -> Option<(Arc<str>, &'a mut Topic)> {
    let key = Arc::clone(topics.get_key_value(name)?.0);
    topics.get_mut(name).map(|t| (key, t))
}

impl Hub {
    /// How many connections of this process follow `topic`.
    pub fn local_subscribers(&self, topic: &str) -> usize {
        self.topics().get(topic).map_or(0, |t| t.subscribers.len())
    }

    /// Adds `connection` to the topic `name`; with `after`, the id of the
    /// last message the client has, first queues for it the messages
    /// after that one still in the replay buffer (under the same lock as
    /// publishing: none missed, none twice). An id not in the buffer
    /// queues nothing. The replay goes through the connection's queue,
    /// so it counts toward REALTIME_SEND_QUEUE: at most what the queue
    /// has room for is replayed (the newest).
    pub(super) fn join(
        &self,
        connection: &Connection,
        name: &str,
        after: Option<&str>,
    ) -> Vec<Member> {
        let mut topics = self.topics();
        let key: Arc<str> = match topics.get_key_value(name) {
            Some((k, _)) => Arc::clone(k),
            None => Arc::from(name),
        };
        let topic = topics.entry(Arc::clone(&key)).or_default();
        let first_here = topic.subscribers.is_empty();
        topic.last_used = Some(Instant::now());
        if let Some(member) = &connection.member {
            let was = topic.present(&member.id);
            match topic.local.entry(member.id.clone()) {
                Entry::Occupied(mut e) => e.get_mut().1 += 1,
                Entry::Vacant(e) => {
                    e.insert((member.clone(), 1));
                    self.send_wire(Wire::Join {
                        topic: name,
                        member,
                    });
                }
            }
            // The others learn of the arrival; the joiner gets the list.
            if !was {
                self.presence_event(topic, &key, "presence.join", member);
            }
        }
        let new = topic
            .subscribers
            .insert(
                connection.id,
                Subscriber {
                    tx: connection.tx.clone(),
                    overflow: Arc::clone(&connection.overflow),
                },
            )
            .is_none();
        if new {
            self.inner
                .counters
                .subscribers
                .fetch_add(1, Ordering::Relaxed);
        }
        if let Some(last) = after {
            if let Some(i) = topic
                .replay
                .iter()
                .position(|d| d.id.as_deref() == Some(last))
            {
                let missed = topic.replay.len() - i - 1;
                let skip = missed.saturating_sub(connection.tx.capacity());
                for d in topic.replay.iter().skip(i + 1 + skip) {
                    let _ = connection.tx.try_send(d.clone());
                }
            }
        }
        let members = topic.members();
        drop(topics);
        if first_here {
            // Ask the other processes who they hold in this topic.
            self.send_wire(Wire::Sync { topic: name });
        }
        members
    }

    pub(super) fn leave(&self, connection_id: u64, member: Option<&Member>, name: &str) {
        let mut topics = self.topics();
        let Some((key, topic)) = entry(&mut topics, name) else {
            return;
        };
        if topic.subscribers.remove(&connection_id).is_some() {
            self.inner
                .counters
                .subscribers
                .fetch_sub(1, Ordering::Relaxed);
        }
        topic.last_used = Some(Instant::now());
        if let Some(member) = member {
            if let Entry::Occupied(mut e) = topic.local.entry(member.id.clone()) {
                e.get_mut().1 -= 1;
                if e.get().1 == 0 {
                    e.remove();
                    self.send_wire(Wire::Leave {
                        topic: name,
                        id: &member.id,
                    });
                    if !topic.present(&member.id) {
                        self.presence_event(topic, &key, "presence.leave", member);
                    }
                }
            }
        }
    }
}
