//! Publishing: a message is numbered, sent to the other processes, kept
//! for replay and handed to every local subscriber's bounded queue.

use std::{
    fmt,
    sync::{atomic::Ordering, Arc},
};

use serde::Serialize;
use tokio::{sync::mpsc, time::Instant};

use super::{check_name, delivery::envelope, Delivery, Hub, Member, NameError};
use crate::{bus::Wire, settings::SlowConsumer};

impl Hub {
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
            if topic.subscribers.remove(&id).is_some() {
                self.inner
                    .counters
                    .subscribers
                    .fetch_sub(1, Ordering::Relaxed);
            }
        }
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
