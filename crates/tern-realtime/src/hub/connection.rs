//! A connection: one client's bounded queue, fed by the topics it joined.

use std::{
    fmt,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
};

use tokio::sync::{mpsc, Notify};

use super::{check_name, Delivery, Hub, Member, NameError};

/// A connection's overflow signal (the close policy).
#[derive(Default)]
pub(super) struct Overflow {
    pub(super) hit: AtomicBool,
    pub(super) notify: Notify,
}

impl Hub {
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
}

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
    pub(super) hub: Hub,
    pub(super) id: u64,
    pub(super) member: Option<Member>,
    pub(super) tx: mpsc::Sender<Delivery>,
    pub(super) rx: mpsc::Receiver<Delivery>,
    pub(super) overflow: Arc<Overflow>,
    pub(super) topics: Vec<String>,
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
