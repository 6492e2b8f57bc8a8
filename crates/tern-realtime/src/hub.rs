//! The hub: named topics, their subscribers, presence, and fan-out, in
//! one process and, through a backend, across processes.
//!
//! A message is serialized once, as the envelope every client receives
//! (`{"topic":..,"event":..,"id":..,"data":..}`), and that one buffer
//! is handed to every subscriber's bounded queue (clients that speak CBOR
//! share one CBOR encoding of it, made when the first of them needs it). A full queue is a slow
//! consumer: closed or skipped, as `REALTIME_SLOW_CONSUMER` says, never
//! waited for, so one client that stops reading delays no other.

use std::{
    collections::{hash_map::Entry, HashMap, VecDeque},
    fmt,
    hash::{BuildHasher, Hasher},
    sync::{
        atomic::{AtomicBool, AtomicU64, Ordering},
        Arc, Mutex, MutexGuard, Weak,
    },
    time::Duration,
};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::{
    sync::{mpsc, Notify},
    time::Instant,
};

use crate::{
    bus::{self, BusHandle, Incoming, Wire},
    settings::{Realtime, SlowConsumer},
    Text,
};

/// The longest topic name, in bytes.
pub const MAX_TOPIC_BYTES: usize = 200;

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

/// A bad topic or event name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError(String);

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NameError {}

/// Checks a topic or event name: 1 to 200 bytes, no control characters.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), NameError> {
    if name.is_empty() || name.len() > MAX_TOPIC_BYTES || name.chars().any(char::is_control) {
        return Err(NameError(format!(
            "a {what} name has 1 to {MAX_TOPIC_BYTES} bytes and no control characters"
        )));
    }
    Ok(())
}

/// One message as subscribers get it: the envelope's JSON, shared.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub(crate) topic: Arc<str>,
    pub(crate) event: Arc<str>,
    pub(crate) id: Option<Arc<str>>,
    pub(crate) text: Text,
    /// The envelope in CBOR, made once, by the first subscriber that asks.
    pub(crate) cbor: Arc<std::sync::OnceLock<Bytes>>,
    /// The message as one server-sent event, made once, by the first
    /// event stream that sends it.
    pub(crate) sse: Arc<std::sync::OnceLock<Bytes>>,
}

impl Delivery {
    /// The topic.
    pub fn topic(&self) -> &str {
        &self.topic
    }
    /// The event's name (`presence.join`, `presence.leave` for presence).
    pub fn event(&self) -> &str {
        &self.event
    }
    /// The message's id (`None` for presence events), for SSE resumes.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
    /// The envelope, as JSON text.
    pub fn text(&self) -> &Text {
        &self.text
    }
    /// The envelope in CBOR (RFC 8949), the same map as [`text`](Self::text)
    /// (JSON's numbers, strings, arrays, maps, booleans and null as CBOR's):
    /// encoded once per message, by the first subscriber that asks, and
    /// shared by every other.
    pub fn cbor(&self) -> &Bytes {
        self.cbor.get_or_init(|| {
            let value: serde_json::Value = serde_json::from_str(self.text.as_str())
                .expect("an envelope is JSON: the hub wrote it");
            let mut out = Vec::with_capacity(self.text.len());
            ciborium::into_writer(&value, &mut out).expect("JSON values encode in CBOR");
            Bytes::from(out)
        })
    }

    /// The message as one server-sent event (its `id`, `event`, and the
    /// envelope's JSON as `data`): formatted once per message, by the
    /// first stream that sends it, and shared by every other stream and
    /// every replay (a reference, never a copy).
    pub fn sse(&self) -> &Bytes {
        self.sse.get_or_init(|| crate::sse::frame(self))
    }
}

#[derive(Serialize)]
struct Envelope<'a, T: Serialize + ?Sized> {
    topic: &'a str,
    event: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'a Member>,
    data: &'a T,
}

fn envelope<T: Serialize + ?Sized>(
    topic: &Arc<str>,
    event: &str,
    id: Option<Arc<str>>,
    from: Option<&Member>,
    data: &T,
) -> Result<Delivery, serde_json::Error> {
    let json = serde_json::to_string(&Envelope {
        topic,
        event,
        id: id.as_deref(),
        from,
        data,
    })?;
    Ok(Delivery {
        topic: Arc::clone(topic),
        event: Arc::from(event),
        id,
        text: Text::from(json),
        cbor: Arc::default(),
        sse: Arc::default(),
    })
}

/// Counts a hub keeps (all since it started).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Messages published here.
    pub published: u64,
    /// Messages not given to a slow client (`REALTIME_SLOW_CONSUMER=drop`).
    pub dropped: u64,
    /// Slow clients closed (`REALTIME_SLOW_CONSUMER=close`).
    pub closed_slow: u64,
    /// Messages of other processes that never arrived (gaps in their
    /// numbering, while the backend was away).
    pub lost: u64,
    /// Messages of this process not sent to the others (the backend was
    /// away, or its queue full).
    pub unsent: u64,
}

#[derive(Default)]
struct Counters {
    published: AtomicU64,
    dropped: AtomicU64,
    closed_slow: AtomicU64,
    lost: AtomicU64,
    unsent: AtomicU64,
}

/// A connection's overflow signal (the close policy).
#[derive(Default)]
struct Overflow {
    hit: AtomicBool,
    notify: Notify,
}

struct Subscriber {
    tx: mpsc::Sender<Delivery>,
    overflow: Arc<Overflow>,
}

struct NodePresence {
    seen: Instant,
    members: HashMap<String, Member>,
}

#[derive(Default)]
struct Topic {
    subscribers: HashMap<u64, Subscriber>,
    replay: VecDeque<Delivery>,
    /// The JSON bytes of the messages in `replay`.
    replay_bytes: usize,
    local: HashMap<String, (Member, usize)>,
    remote: HashMap<String, NodePresence>,
    last_used: Option<Instant>,
}

impl Topic {
    fn present(&self, id: &str) -> bool {
        self.local.contains_key(id) || self.remote.values().any(|n| n.members.contains_key(id))
    }

    fn members(&self) -> Vec<Member> {
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

    fn idle(&self) -> bool {
        self.subscribers.is_empty() && self.local.is_empty() && self.remote.is_empty()
    }
}

#[cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]
pub(crate) struct Inner {
    node: String,
    next_connection: AtomicU64,
    topics: Mutex<HashMap<Arc<str>, Topic>>,
    /// The last number seen from each other process.
    peers: Mutex<HashMap<String, u64>>,
    bus: Option<BusHandle>,
    send_queue: usize,
    slow_consumer: SlowConsumer,
    replay: usize,
    replay_bytes: usize,
    presence_interval: Duration,
    counters: Counters,
    /// Publish budgets shared by connections (per member, per address).
    pub(crate) budgets: crate::budget::Budgets,
}

/// Topics, presence and fan-out; see the [module](self). Cheap to clone.
/// Handlers get it from [`Realtime::hub`](crate::Realtime::hub).
#[derive(Clone)]
pub struct Hub {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Hub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Hub")
            .field("node", &self.inner.node)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// A random id for this process's hub.
fn node_id() -> String {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{:016x}", h.finish())
}

impl Hub {
    /// A hub with these settings; its backend (if not `memory`) connects
    /// in the background. Needs a Tokio runtime.
    pub(crate) fn new(settings: &Realtime) -> Hub {
        let (bus, outgoing) = bus::queue(&settings.backend).unzip();
        let inner = Arc::new(Inner {
            bus,
            node: node_id(),
            next_connection: AtomicU64::new(1),
            topics: Mutex::new(HashMap::new()),
            peers: Mutex::new(HashMap::new()),
            send_queue: settings.send_queue,
            slow_consumer: settings.slow_consumer,
            replay: settings.replay,
            replay_bytes: settings.replay_bytes,
            presence_interval: settings.presence_interval,
            counters: Counters::default(),
            budgets: {
                #[cfg(test)]
                test_hooks::slow_build();
                crate::budget::Budgets::default()
            },
        });
        // The bus starts once the hub exists: its task finds the hub
        // through a weak reference, and one it cannot upgrade is a hub
        // that was dropped (the task stops).
        if let Some(outgoing) = outgoing {
            bus::spawn(
                &settings.backend,
                &settings.channel,
                outgoing,
                Arc::downgrade(&inner),
            );
        }
        tokio::spawn(upkeep(Arc::downgrade(&inner)));
        Hub { inner }
    }

    /// A hub for one process with the default settings (tests, tools).
    pub fn in_memory() -> Hub {
        Hub::new(&Realtime::default())
    }

    /// This process's id among the hub's processes.
    pub fn node(&self) -> &str {
        &self.inner.node
    }

    /// The counts so far.
    pub fn stats(&self) -> Stats {
        let c = &self.inner.counters;
        Stats {
            published: c.published.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            closed_slow: c.closed_slow.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            unsent: c.unsent.load(Ordering::Relaxed),
        }
    }

    fn topics(&self) -> MutexGuard<'_, HashMap<Arc<str>, Topic>> {
        self.inner.topics.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send_wire(&self, wire: Wire<'_>) {
        if let Some(bus) = &self.inner.bus {
            if !bus.send(&wire, &self.inner.node) {
                self.inner.counters.unsent.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Publishes `data` as `event` on `topic` to every subscriber, here
    /// and in the other processes; returns the message's id.
    ///
    /// # Errors
    /// A bad topic or event name, or `data` that does not serialize.
    pub fn publish<T: Serialize + ?Sized>(
        &self,
        topic: &str,
        event: &str,
        data: &T,
    ) -> Result<String, PublishError> {
        self.publish_from(topic, event, None, data)
    }

    /// [`publish`](Self::publish), saying who sent it (the envelope's
    /// `from`, set by the server: clients cannot forge it).
    ///
    /// # Errors
    /// A bad topic or event name, or `data` that does not serialize.
    pub fn publish_from<T: Serialize + ?Sized>(
        &self,
        topic: &str,
        event: &str,
        from: Option<&Member>,
        data: &T,
    ) -> Result<String, PublishError> {
        check_name("topic", topic).map_err(PublishError::Name)?;
        check_name("event", event).map_err(PublishError::Name)?;
        let n = self
            .inner
            .counters
            .published
            .fetch_add(1, Ordering::Relaxed)
            + 1;
        let id: Arc<str> = Arc::from(format!("{}.{n}", self.inner.node));
        let topic: Arc<str> = Arc::from(topic);
        let delivery = envelope(&topic, event, Some(Arc::clone(&id)), from, data)
            .map_err(|e| PublishError::Data(e.to_string()))?;
        self.send_wire(Wire::Deliver {
            topic: &topic,
            event,
            id: &id,
            json: delivery.text.as_str(),
        });
        self.deliver(delivery, true);
        Ok(id.to_string())
    }

    /// Hands `delivery` to the topic's subscribers here (and its replay
    /// buffer when it has an id).
    pub(crate) fn deliver(&self, delivery: Delivery, create: bool) {
        let keeps = self.inner.replay > 0 && self.inner.replay_bytes > 0;
        let mut topics = self.topics();
        let topic = match topics.get_mut(&delivery.topic) {
            Some(t) => t,
            None if create && keeps && delivery.id.is_some() => {
                topics.entry(Arc::clone(&delivery.topic)).or_default()
            }
            None => return,
        };
        if delivery.id.is_some() && keeps {
            // At most REALTIME_REPLAY messages and REALTIME_REPLAY_BYTES
            // bytes, the oldest out first (a message larger than the
            // bytes allowed is not kept at all).
            topic.replay_bytes += delivery.text.len();
            topic.replay.push_back(delivery.clone());
            while topic.replay.len() > self.inner.replay
                || topic.replay_bytes > self.inner.replay_bytes
            {
                match topic.replay.pop_front() {
                    Some(old) => topic.replay_bytes -= old.text.len(),
                    None => break,
                }
            }
            topic.last_used = Some(Instant::now());
        }
        let mut gone = Vec::new();
        for (id, sub) in &topic.subscribers {
            match sub.tx.try_send(delivery.clone()) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(_)) => match self.inner.slow_consumer {
                    SlowConsumer::Drop => {
                        self.inner.counters.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                    SlowConsumer::Close => {
                        if !sub.overflow.hit.swap(true, Ordering::AcqRel) {
                            self.inner
                                .counters
                                .closed_slow
                                .fetch_add(1, Ordering::Relaxed);
                            sub.overflow.notify.notify_one();
                        }
                    }
                },
                Err(mpsc::error::TrySendError::Closed(_)) => gone.push(*id),
            }
        }
        for id in gone {
            topic.subscribers.remove(&id);
        }
    }

    /// Who is in `topic`, in every process (sorted by name).
    pub fn presence(&self, topic: &str) -> Vec<Member> {
        self.topics()
            .get(topic)
            .map(Topic::members)
            .unwrap_or_default()
    }

    /// How many connections of this process follow `topic`.
    pub fn local_subscribers(&self, topic: &str) -> usize {
        self.topics().get(topic).map_or(0, |t| t.subscribers.len())
    }

    /// A connection: one bounded queue that the topics it joins feed.
    pub fn connect(&self, member: Option<Member>) -> Connection {
        let (tx, rx) = mpsc::channel(self.inner.send_queue);
        Connection {
            hub: self.clone(),
            id: self.inner.next_connection.fetch_add(1, Ordering::Relaxed),
            member,
            tx,
            rx,
            overflow: Arc::new(Overflow::default()),
            topics: Vec::new(),
        }
    }

    fn presence_event(&self, topic: &mut Topic, name: &Arc<str>, event: &str, member: &Member) {
        if let Ok(d) = envelope(name, event, None, None, member) {
            for sub in topic.subscribers.values() {
                // Presence events are small and rare: a full queue skips one.
                let _ = sub.tx.try_send(d.clone());
            }
        }
    }

    /// Adds `connection` to the topic `name`; with `after`, the id of the
    /// last message the client has, first queues for it the messages
    /// after that one still in the replay buffer (under the same lock as
    /// publishing: none missed, none twice). An id not in the buffer
    /// queues nothing. The replay goes through the connection's queue,
    /// so it counts toward REALTIME_SEND_QUEUE: at most what the queue
    /// has room for is replayed (the newest).
    fn join(&self, connection: &Connection, name: &str, after: Option<&str>) -> Vec<Member> {
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
        topic.subscribers.insert(
            connection.id,
            Subscriber {
                tx: connection.tx.clone(),
                overflow: Arc::clone(&connection.overflow),
            },
        );
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

    fn leave(&self, connection_id: u64, member: Option<&Member>, name: &str) {
        let mut topics = self.topics();
        let Some((key, topic)) = entry(&mut topics, name) else {
            return;
        };
        topic.subscribers.remove(&connection_id);
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

    /// Applies a change to what process `node` holds in `topic`, telling
    /// local subscribers who arrived and who left.
    #[cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]
    fn remote_presence(
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

    fn presence_diff(&self, topic: &mut Topic, key: &Arc<str>, before: &[Member]) {
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

    /// Tells the other processes who this one holds (in `only`, or in
    /// every topic).
    fn announce(&self, only: Option<&str>) {
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
    fn sweep(&self) {
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
}

/// What the crate's own tests can make [`Hub::new`] do.
#[cfg(test)]
pub(crate) mod test_hooks {
    use std::{cell::Cell, time::Duration};

    thread_local! {
        static SLOW_BUILD: Cell<Duration> = const { Cell::new(Duration::ZERO) };
    }

    /// The next hubs built on this thread take `pause` longer to build
    /// (a constructor preempted on a loaded machine), until set back to
    /// zero.
    pub(crate) fn set_slow_build(pause: Duration) {
        SLOW_BUILD.with(|p| p.set(pause));
    }

    pub(super) fn slow_build() {
        let pause = SLOW_BUILD.with(Cell::get);
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
}

/// The topic `name` and its shared name, if it exists.
fn entry<'a>(
    topics: &'a mut HashMap<Arc<str>, Topic>,
    name: &str,
) -> Option<(Arc<str>, &'a mut Topic)> {
    let key = Arc::clone(topics.get_key_value(name)?.0);
    topics.get_mut(name).map(|t| (key, t))
}

async fn upkeep(hub: Weak<Inner>) {
    let every = match hub.upgrade() {
        Some(inner) => inner.presence_interval,
        None => return,
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(inner) = hub.upgrade() else {
            return;
        };
        let hub = Hub { inner };
        hub.announce(None);
        hub.sweep();
        hub.inner.budgets.sweep();
    }
}

/// A publish that failed.
#[derive(Debug)]
pub enum PublishError {
    /// A bad topic or event name.
    Name(NameError),
    /// The data did not serialize.
    Data(String),
}

impl fmt::Display for PublishError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PublishError::Name(e) => write!(f, "{e}"),
            PublishError::Data(e) => write!(f, "the message's data: {e}"),
        }
    }
}

impl std::error::Error for PublishError {}

/// The client fell behind by `REALTIME_SEND_QUEUE` messages and the
/// policy is `close`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflowed;

impl fmt::Display for Overflowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the client fell behind by REALTIME_SEND_QUEUE messages")
    }
}

impl std::error::Error for Overflowed {}

/// One client's place in the hub: the topics it joined feed its one
/// bounded queue. Dropping it leaves them all.
pub struct Connection {
    hub: Hub,
    id: u64,
    member: Option<Member>,
    tx: mpsc::Sender<Delivery>,
    rx: mpsc::Receiver<Delivery>,
    overflow: Arc<Overflow>,
    topics: Vec<String>,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("member", &self.member)
            .field("topics", &self.topics)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Joins `topic` (again is a no-op); returns who is in it now.
    ///
    /// # Errors
    /// A bad topic name.
    pub fn join(&mut self, topic: &str) -> Result<Vec<Member>, NameError> {
        self.join_after(topic, None)
    }

    /// [`join`](Self::join), and first queues the messages of `topic`
    /// published after the one with id `last` (a client that resumes, as
    /// SSE's `Last-Event-ID`), if that one is still in the replay buffer;
    /// an unknown or too old id replays nothing: the connection starts
    /// now. The replay is queued like any message, so it counts toward
    /// `REALTIME_SEND_QUEUE` (at most the newest that fit are replayed).
    ///
    /// # Errors
    /// A bad topic name.
    pub fn join_after(
        &mut self,
        topic: &str,
        last: Option<&str>,
    ) -> Result<Vec<Member>, NameError> {
        check_name("topic", topic)?;
        if self.topics.iter().any(|t| t == topic) {
            return Ok(self.hub.presence(topic));
        }
        let members = self.hub.join(self, topic, last);
        self.topics.push(topic.to_owned());
        Ok(members)
    }

    /// Leaves `topic`.
    pub fn leave(&mut self, topic: &str) {
        if let Some(i) = self.topics.iter().position(|t| t == topic) {
            self.topics.swap_remove(i);
            self.hub.leave(self.id, self.member.as_ref(), topic);
        }
    }

    /// The topics joined.
    pub fn topics(&self) -> &[String] {
        &self.topics
    }

    /// Who holds the connection.
    pub fn member(&self) -> Option<&Member> {
        self.member.as_ref()
    }

    /// The next message of a joined topic. [`Overflowed`] when the client
    /// fell behind and the policy is `close`: stop serving it. Cancel-safe.
    pub async fn recv(&mut self) -> Result<Delivery, Overflowed> {
        if self.overflow.hit.load(Ordering::Acquire) {
            return Err(Overflowed);
        }
        tokio::select! {
            biased;
            () = self.overflow.notify.notified() => Err(Overflowed),
            d = self.rx.recv() => match d {
                Some(d) => Ok(d),
                // The connection holds a sender itself: never closed.
                None => std::future::pending().await,
            },
        }
    }

    /// The next message if one is queued, without waiting; `None` also
    /// once the client fell behind (then [`recv`](Self::recv) says so).
    pub fn try_recv(&mut self) -> Option<Delivery> {
        if self.overflow.hit.load(Ordering::Acquire) {
            return None;
        }
        self.rx.try_recv().ok()
    }

    /// A signal that completes when the client fell behind (policy
    /// `close`): select on it around a slow send.
    pub async fn overflowed(&self) {
        if self.overflow.hit.load(Ordering::Acquire) {
            return;
        }
        self.overflow.notify.notified().await;
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        for topic in std::mem::take(&mut self.topics) {
            self.hub.leave(self.id, self.member.as_ref(), &topic);
        }
    }
}
