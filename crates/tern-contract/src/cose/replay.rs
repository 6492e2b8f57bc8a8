//! The replay check: every message opened is remembered for the replay
//! window, in this process or in a store shared by every process.

#[cfg(feature = "redis")]
use std::time::Duration;
use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
    time::Instant,
};

use http::StatusCode;
use sha2::{Digest, Sha256};
use tern_core::extract::Rejection;

use super::{refused, Keyring, Seal};

#[derive(Default)]
pub(super) struct Seen {
    at: HashMap<[u8; 32], Instant>,
    order: VecDeque<([u8; 32], Instant)>,
}

/// The replay store a setting names: none, this process.
pub(super) fn store(url: Option<&str>) -> Result<Store, String> {
    match url.map(str::trim).filter(|u| !u.is_empty()) {
        None => Ok(Store::Local(Mutex::new(Seen::default()))),
        #[cfg(feature = "redis")]
        Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => {
            let client = redis::Client::open(url)
                .map_err(|e| format!("replay_store: not a Redis URL: {e}"))?;
            Ok(Store::Redis(RedisStore {
                client,
                connection: tokio::sync::OnceCell::new(),
            }))
        }
        #[cfg(not(feature = "redis"))]
        Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => {
            Err("replay_store: a Redis store needs tern-contract's `redis` feature".to_owned())
        }
        Some(_) => Err("replay_store: give a `redis://` URL, or none for this process".to_owned()),
    }
}

/// What identifies a message for the replay check: a hash of its seal,
/// its key and its nonce (Encrypt0), tag (Mac0) or signature (Sign1).
pub(super) fn replay_id(seal: Seal, kid: &[u8], id: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update([seal.tag()]);
    hash.update((kid.len() as u64).to_be_bytes());
    hash.update(kid);
    hash.update(id);
    hash.finalize().into()
}

/// Where seen messages are kept.
pub(super) enum Store {
    /// In this process: a replay sent to another process is not seen.
    Local(Mutex<Seen>),
    /// In Redis, shared by every process that names it.
    #[cfg(feature = "redis")]
    Redis(RedisStore),
}

#[cfg(feature = "redis")]
pub(super) struct RedisStore {
    client: redis::Client,
    connection: tokio::sync::OnceCell<redis::aio::ConnectionManager>,
}

#[cfg(feature = "redis")]
impl RedisStore {
    /// `SET key 1 NX PX window`: atomic across processes; a key that
    /// exists is a replay. An unreachable store fails closed (503).
    async fn remember(&self, id: [u8; 32], window: Duration) -> Result<(), Rejection> {
        let unreachable = |e: redis::RedisError| {
            tracing::error!(error = %e, "the COSE replay store (Redis) is unreachable");
            Rejection::invalid(
                StatusCode::SERVICE_UNAVAILABLE,
                "the replay store is unreachable; try again later",
            )
        };
        let connection = self
            .connection
            .get_or_try_init(|| {
                // Bounded: a store that is away is a 503 within a second,
                // not after the client's default minutes of retries.
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Duration::from_millis(500)))
                    .set_response_timeout(Some(Duration::from_millis(500)))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(100));
                redis::aio::ConnectionManager::new_with_config(self.client.clone(), config)
            })
            .await
            .map_err(unreachable)?;
        let mut connection = connection.clone();
        let key: String = std::iter::once("tern:cose:".to_owned())
            .chain(id.iter().map(|b| format!("{b:02x}")))
            .collect();
        let millis = u64::try_from(window.as_millis()).unwrap_or(u64::MAX).max(1);
        let set: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(millis)
            .query_async(&mut connection)
            .await
            .map_err(unreachable)?;
        match set {
            Some(_) => Ok(()),
            None => Err(refused(format!(
                "this COSE message was already received (replay window {} s, shared store)",
                window.as_secs()
            ))),
        }
    }
}

impl Keyring {
    /// Refuses a message seen within the window; remembers this one.
    pub(super) async fn remember(&self, id: [u8; 32]) -> Result<(), Rejection> {
        match &self.store {
            Store::Local(seen) => self.remember_here(seen, id),
            #[cfg(feature = "redis")]
            Store::Redis(redis) => redis.remember(id, self.window).await,
        }
    }

    fn remember_here(&self, seen: &Mutex<Seen>, id: [u8; 32]) -> Result<(), Rejection> {
        let now = Instant::now();
        let mut seen = seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while let Some((old, at)) = seen.order.front().copied() {
            if now.duration_since(at) < self.window {
                break;
            }
            seen.order.pop_front();
            if seen.at.get(&old) == Some(&at) {
                seen.at.remove(&old);
            }
        }
        if let Some(at) = seen.at.get(&id) {
            return Err(refused(format!(
                "this COSE message was already received {} s ago (replay window {} s)",
                now.duration_since(*at).as_secs(),
                self.window.as_secs()
            )));
        }
        if seen.at.len() >= self.capacity {
            // Fail closed: forgetting a message early would let it replay.
            return Err(Rejection::invalid(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many COSE messages within the replay window; try again later \
                 (COSE_REPLAY_CAPACITY)",
            ));
        }
        seen.at.insert(id, now);
        seen.order.push_back((id, now));
        Ok(())
    }
}
