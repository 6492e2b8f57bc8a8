//! The Redis backend: `PUBLISH` and `SUBSCRIBE` on one channel, with a
//! reconnect loop that says what was lost.

use std::{sync::Weak, time::Duration};

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::{sync::mpsc, time::Instant};

use crate::hub::Inner;

const MAX_BACKOFF: Duration = Duration::from_secs(5);

pub(super) async fn run(
    url: String,
    channel: String,
    mut outgoing: mpsc::Receiver<Bytes>,
    weak: Weak<Inner>,
) {
    let client = match ::redis::Client::open(url) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "realtime: REALTIME_URL is not a usable Redis URL");
            return;
        }
    };
    let mut down_since: Option<Instant> = None;
    let mut unsent: u64 = 0;
    let mut backoff = Duration::from_millis(100);
    loop {
        if down_since.is_some() {
            // Away: wait before trying again. Messages meanwhile are not
            // kept (realtime news goes stale): counted, and the others
            // see the gap in this process's numbering.
            tokio::time::sleep(backoff).await;
            while outgoing.try_recv().is_ok() {
                unsent += 1;
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
            if weak.strong_count() == 0 {
                return;
            }
        }
        let connect = async {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(&channel).await?;
            // redis-rs gives up on an answer after 500 ms by default; a
            // Redis that stalls that long (a large key freed, a starved
            // core) is slow, not gone, and a reconnect would throw away
            // what is queued. A connection that is really gone ends the
            // subscriber's stream.
            let config =
                ::redis::AsyncConnectionConfig::new().set_response_timeout(Some(MAX_BACKOFF));
            let publisher = client
                .get_multiplexed_async_connection_with_config(&config)
                .await?;
            Ok::<_, ::redis::RedisError>((pubsub, publisher))
        };
        let (pubsub, mut publisher) = match tokio::time::timeout(MAX_BACKOFF, connect).await {
            Ok(Ok(connected)) => connected,
            failed => {
                super::set_up(&weak, false);
                if down_since.is_none() {
                    let reason = match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "timed out".to_owned(),
                    };
                    tracing::warn!(error = %reason, "realtime: cannot reach Redis; messages are not shared with other processes until it is back");
                    down_since = Some(Instant::now());
                }
                continue;
            }
        };
        backoff = Duration::from_millis(100);
        let Some(hub) = super::hub(&weak) else {
            return;
        };
        hub.set_bus_up(true);
        match down_since.take() {
            Some(since) => {
                hub.count_unsent(unsent);
                tracing::warn!(
                    away_ms = since.elapsed().as_millis() as u64,
                    unsent,
                    "realtime: connected to Redis again; `unsent` messages of this process did not reach the others (their losses are logged by each process as it notices them)"
                );
                unsent = 0;
            }
            None => tracing::info!("realtime: connected to Redis"),
        }
        // Presence may have changed while away: say who is here, ask the
        // others.
        hub.after_reconnect();
        drop(hub);
        let mut messages = pubsub.into_on_message();
        loop {
            tokio::select! {
                message = messages.next() => match message {
                    Some(message) => {
                        let Some(hub) = super::hub(&weak) else { return };
                        hub.on_wire(&Bytes::copy_from_slice(message.get_payload_bytes()));
                    }
                    None => {
                        tracing::warn!("realtime: lost the connection to Redis; reconnecting");
                        super::set_up(&weak, false);
                        down_since = Some(Instant::now());
                        break;
                    }
                },
                bytes = outgoing.recv() => match bytes {
                    Some(bytes) => {
                        let sent: Result<(), _> = ::redis::cmd("PUBLISH")
                            .arg(&channel)
                            .arg(bytes.as_ref())
                            .query_async(&mut publisher)
                            .await;
                        if let Err(e) = sent {
                            tracing::warn!(error = %e, "realtime: publishing to Redis failed; reconnecting");
                            unsent += 1;
                            super::set_up(&weak, false);
                            down_since = Some(Instant::now());
                            break;
                        }
                    }
                    None => return,
                },
            }
        }
    }
}
