//! The bus between processes: what the hubs tell each other, and the
//! backends that carry it (Redis pub/sub, NATS).
//!
//! Every process publishes to one channel (`REALTIME_CHANNEL`) and reads
//! all of it. A message is a few header lines and a body:
//! `kind \n process \n number \n topic \n body`. Each process numbers its
//! messages, so a receiver that sees a gap knows how many it lost (while
//! its connection was down) and says so in the log.

// Without a backend feature only the in-memory hub is built; the wire
// format stays compiled (and tested) all the same.
#![cfg_attr(not(any(feature = "redis", feature = "nats")), allow(dead_code))]

use std::sync::Weak;

use bytes::{BufMut, Bytes, BytesMut};
use tokio::sync::mpsc;

use crate::{
    hub::{Inner, Member},
    settings::Backend,
};

#[cfg(feature = "nats")]
mod nats;
#[cfg(feature = "redis")]
mod redis;

/// Messages waiting for the backend at most; more are counted unsent.
const QUEUE: usize = 4096;

/// What one hub tells the others.
pub(crate) enum Wire<'a> {
    /// A message for a topic's subscribers.
    Deliver {
        topic: &'a str,
        event: &'a str,
        id: &'a str,
        json: &'a str,
    },
    /// A member arrived in a topic in this process.
    Join { topic: &'a str, member: &'a Member },
    /// A member's last connection in this process left a topic.
    Leave { topic: &'a str, id: &'a str },
    /// Everyone this process holds in a topic (periodically, and when
    /// asked).
    State {
        topic: &'a str,
        members: &'a [Member],
    },
    /// "Who do you hold in this topic?"
    Sync { topic: &'a str },
}

/// A decoded [`Wire`].
pub(crate) enum Incoming<'a> {
    Deliver {
        topic: &'a str,
        event: &'a str,
        id: &'a str,
        json: &'a str,
    },
    Join {
        topic: &'a str,
        member: Member,
    },
    Leave {
        topic: &'a str,
        id: &'a str,
    },
    State {
        topic: &'a str,
        members: Vec<Member>,
    },
    Sync {
        topic: &'a str,
    },
}

impl Wire<'_> {
    pub(crate) fn encode(&self, node: &str, seq: u64) -> Bytes {
        let (kind, topic) = match self {
            Wire::Deliver { topic, .. } => (b'd', topic),
            Wire::Join { topic, .. } => (b'j', topic),
            Wire::Leave { topic, .. } => (b'l', topic),
            Wire::State { topic, .. } => (b's', topic),
            Wire::Sync { topic } => (b'q', topic),
        };
        let mut out = BytesMut::with_capacity(64 + topic.len());
        out.put_u8(kind);
        out.put_u8(b'\n');
        out.put_slice(node.as_bytes());
        out.put_u8(b'\n');
        out.put_slice(seq.to_string().as_bytes());
        out.put_u8(b'\n');
        out.put_slice(topic.as_bytes());
        out.put_u8(b'\n');
        match self {
            Wire::Deliver {
                event, id, json, ..
            } => {
                out.put_slice(event.as_bytes());
                out.put_u8(b'\n');
                out.put_slice(id.as_bytes());
                out.put_u8(b'\n');
                out.put_slice(json.as_bytes());
            }
            Wire::Join { member, .. } => {
                out.put_slice(serde_json::to_string(member).unwrap_or_default().as_bytes());
            }
            Wire::Leave { id, .. } => out.put_slice(id.as_bytes()),
            Wire::State { members, .. } => {
                out.put_slice(
                    serde_json::to_string(members)
                        .unwrap_or_default()
                        .as_bytes(),
                );
            }
            Wire::Sync { .. } => {}
        }
        out.freeze()
    }
}

impl<'a> Incoming<'a> {
    /// The sending process, its number for the message, the message.
    pub(crate) fn decode(bytes: &'a [u8]) -> Option<(&'a str, u64, Incoming<'a>)> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut parts = text.splitn(5, '\n');
        let kind = parts.next()?;
        let node = parts.next()?;
        let seq: u64 = parts.next()?.parse().ok()?;
        let topic = parts.next()?;
        let body = parts.next().unwrap_or("");
        let message = match kind {
            "d" => {
                let mut rest = body.splitn(3, '\n');
                Incoming::Deliver {
                    topic,
                    event: rest.next()?,
                    id: rest.next()?,
                    json: rest.next()?,
                }
            }
            "j" => Incoming::Join {
                topic,
                member: serde_json::from_str(body).ok()?,
            },
            "l" => Incoming::Leave { topic, id: body },
            "s" => Incoming::State {
                topic,
                members: serde_json::from_str(body).ok()?,
            },
            "q" => Incoming::Sync { topic },
            _ => return None,
        };
        Some((node, seq, message))
    }
}

/// The hub's side of its backend: a bounded queue to the task that
/// publishes, and this process's message numbers.
pub(crate) struct BusHandle {
    tx: mpsc::Sender<Bytes>,
    /// The last number given. Numbered and queued under this one lock:
    /// numbers taken by two threads and queued in the other order would
    /// reach the others out of order, and a receiver drops a number it
    /// has passed (as seen) after counting it lost.
    seq: std::sync::Mutex<u64>,
}

impl BusHandle {
    fn new(tx: mpsc::Sender<Bytes>) -> BusHandle {
        BusHandle {
            tx,
            seq: std::sync::Mutex::new(0),
        }
    }

    /// Numbers `wire` and queues it for the other processes; false when
    /// the queue is full (the backend is away or slow: the number is
    /// spent, so the others count the message lost).
    pub(crate) fn send(&self, wire: &Wire<'_>, node: &str) -> bool {
        let mut seq = self.seq.lock().unwrap_or_else(|e| e.into_inner());
        *seq += 1;
        self.tx.try_send(wire.encode(node, *seq)).is_ok()
    }
}

/// The hub's queue to its backend, if it has one: the handle the hub
/// keeps, and the other end, for [`spawn`] once the hub exists.
pub(crate) fn queue(backend: &Backend) -> Option<(BusHandle, mpsc::Receiver<Bytes>)> {
    match backend {
        Backend::Memory => None,
        #[cfg(any(feature = "redis", feature = "nats"))]
        _ => {
            let (tx, rx) = mpsc::channel(QUEUE);
            Some((BusHandle::new(tx), rx))
        }
    }
}

/// Starts the backend's task for the hub behind `hub`, which must be
/// fully built (upgradable) by now: the task treats a hub it cannot
/// reach as one that was dropped, and stops. (Started from inside the
/// hub's construction, a task that connected before the constructor
/// returned found no hub and stopped for good, silently: that process
/// then never shared a message or its presence again.)
pub(crate) fn spawn(
    backend: &Backend,
    channel: &str,
    outgoing: mpsc::Receiver<Bytes>,
    hub: Weak<Inner>,
) {
    debug_assert!(hub.strong_count() > 0, "the bus starts after its hub");
    let _ = (channel, &outgoing, &hub);
    match backend {
        Backend::Memory => {}
        #[cfg(feature = "redis")]
        Backend::Redis(url) => {
            tokio::spawn(redis::run(url.clone(), channel.to_owned(), outgoing, hub));
        }
        #[cfg(feature = "nats")]
        Backend::Nats(url) => {
            tokio::spawn(nats::run(url.clone(), channel.to_owned(), outgoing, hub));
        }
    }
}

/// The hub behind `weak`, while it exists.
#[cfg(any(feature = "redis", feature = "nats"))]
fn hub(weak: &Weak<Inner>) -> Option<crate::Hub> {
    weak.upgrade().map(|inner| crate::Hub { inner })
}

/// Tells the hub (for `tern_realtime_bus_up`) whether the backend is
/// connected now.
#[cfg(any(feature = "redis", feature = "nats"))]
fn set_up(weak: &Weak<Inner>, up: bool) {
    if let Some(hub) = hub(weak) {
        hub.set_bus_up(up);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numbers_reach_the_queue_in_order_from_many_threads() {
        let (tx, mut rx) = mpsc::channel(40_000);
        let bus = BusHandle::new(tx);
        let member = Member::new("7", "ada");
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        let wire = Wire::Join {
                            topic: "room",
                            member: &member,
                        };
                        assert!(bus.send(&wire, "node"));
                    }
                });
            }
        });
        let mut last = 0;
        while let Ok(bytes) = rx.try_recv() {
            let (_, seq, _) = Incoming::decode(&bytes).unwrap();
            assert_eq!(seq, last + 1, "out of order");
            last = seq;
        }
        assert_eq!(last, 40_000);
    }

    /// Two hubs on one backend, the second one slow to build (its
    /// constructor preempted on a loaded machine, while its bus task
    /// already ran on the other core): presence and messages must still
    /// cross both ways. The bus used to start inside the constructor and
    /// stop for good when it connected (or heard the first message)
    /// before the constructor returned: `b` never learnt of `ada`, the
    /// flaky failure of `tests/backends.rs` under a loaded `cargo test
    /// --workspace` (one "connected to Redis" line in its log, not two).
    async fn a_slow_hub_still_shares(backend: Backend, name: &str) {
        use std::time::Duration;

        use crate::{hub::test_hooks, settings::Realtime, Hub};

        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let settings = || Realtime {
            backend: backend.clone(),
            channel: format!("tern-test-slow-{name}-{}-{nanos}", std::process::id()),
            presence_interval: Duration::from_millis(100),
            ..Realtime::default()
        };
        let a = Hub::new(&settings());
        let mut ada = a.connect(Some(Member::new("1", "ada")));
        ada.join("room").unwrap();
        // Long enough for `b`'s bus to connect, and hear `a`'s periodic
        // presence, before `b` is built.
        test_hooks::set_slow_build(Duration::from_millis(800));
        let b = Hub::new(&settings());
        test_hooks::set_slow_build(Duration::ZERO);
        let mut bob = b.connect(Some(Member::new("2", "bob")));
        bob.join("room").unwrap();

        let names = |hub: &Hub| -> Vec<String> {
            hub.presence("room").into_iter().map(|m| m.name).collect()
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while names(&a) != ["ada", "bob"] || names(&b) != ["ada", "bob"] {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name}: presence never crossed: a {:?}, b {:?}",
                names(&a),
                names(&b)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Messages cross too, both ways.
        for (from, to) in [(&a, &mut bob), (&b, &mut ada)] {
            from.publish("room", "message", "hi").unwrap();
            loop {
                let d = tokio::time::timeout_at(deadline, to.recv())
                    .await
                    .unwrap_or_else(|_| panic!("{name}: a message never crossed"))
                    .unwrap();
                if d.event() == "message" {
                    break;
                }
            }
        }
    }

    #[cfg(feature = "redis")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hub_slow_to_build_shares_through_redis() {
        let Some(url) = tern::test::service_url("REDIS_URL") else {
            return;
        };
        a_slow_hub_still_shares(Backend::Redis(url), "redis").await;
    }

    #[cfg(feature = "nats")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_hub_slow_to_build_shares_through_nats() {
        let Some(url) = tern::test::service_url("NATS_URL") else {
            return;
        };
        a_slow_hub_still_shares(Backend::Nats(url), "nats").await;
    }

    #[test]
    fn messages_round_trip() {
        let member = Member::new("7", "ada");
        let members = [member.clone(), Member::new("8", "bob\nnewline")];
        for wire in [
            Wire::Deliver {
                topic: "room:1",
                event: "message",
                id: "abc.1",
                json: "{\"a\":\"x\\ny\"}",
            },
            Wire::Join {
                topic: "room:1",
                member: &member,
            },
            Wire::Leave {
                topic: "room:1",
                id: "7",
            },
            Wire::State {
                topic: "room:1",
                members: &members,
            },
            Wire::Sync { topic: "room:1" },
        ] {
            let bytes = wire.encode("node", 42);
            let (node, seq, back) = Incoming::decode(&bytes).unwrap();
            assert_eq!((node, seq), ("node", 42));
            match (wire, back) {
                (Wire::Deliver { json, id, .. }, Incoming::Deliver { json: j, id: i, .. }) => {
                    assert_eq!((json, id), (j, i))
                }
                (Wire::Join { .. }, Incoming::Join { member: m, .. }) => assert_eq!(m, member),
                (Wire::Leave { .. }, Incoming::Leave { id, .. }) => assert_eq!(id, "7"),
                (Wire::State { .. }, Incoming::State { members: m, .. }) => {
                    assert_eq!(m, members)
                }
                (Wire::Sync { .. }, Incoming::Sync { topic }) => assert_eq!(topic, "room:1"),
                _ => panic!("a different message came back"),
            }
        }
        assert!(Incoming::decode(b"x\nnode\n1\nt\n").is_none());
        assert!(Incoming::decode(b"d\nnode\nnot a number\nt\n").is_none());
        assert!(Incoming::decode(b"\xff").is_none());
    }
}
