//! The NATS backend: one subject; the client reconnects and resubscribes
//! by itself, and says so through its events.

use std::sync::Weak;

use bytes::Bytes;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::hub::Inner;

pub(super) async fn run(
    url: String,
    subject: String,
    mut outgoing: mpsc::Receiver<Bytes>,
    weak: Weak<Inner>,
) {
    let events = weak.clone();
    let connected_before = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let options = async_nats::ConnectOptions::new()
        .retry_on_initial_connect()
        .event_callback(move |event| {
            let weak = events.clone();
            let connected_before = std::sync::Arc::clone(&connected_before);
            async move {
                match event {
                    async_nats::Event::Connected => {
                        if connected_before.swap(true, std::sync::atomic::Ordering::Relaxed) {
                            tracing::warn!("realtime: connected to NATS again; messages other processes sent while this one was away are lost, and logged as each gap is noticed");
                        } else {
                            tracing::info!("realtime: connected to NATS");
                        }
                        if let Some(hub) = super::hub(&weak) {
                            hub.set_bus_up(true);
                            hub.after_reconnect();
                        }
                    }
                    async_nats::Event::Disconnected => {
                        super::set_up(&weak, false);
                        tracing::warn!("realtime: lost the connection to NATS; reconnecting");
                    }
                    other => tracing::debug!(event = %other, "realtime: NATS"),
                }
            }
        });
    let client = match options.connect(url.as_str()).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "realtime: REALTIME_URL is not a usable NATS URL");
            return;
        }
    };
    let mut subscriber = loop {
        match client.subscribe(subject.clone()).await {
            Ok(s) => break s,
            Err(e) => {
                tracing::warn!(error = %e, "realtime: cannot subscribe on NATS yet");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                if weak.strong_count() == 0 {
                    return;
                }
            }
        }
    };
    loop {
        tokio::select! {
            message = subscriber.next() => match message {
                Some(message) => {
                    let Some(hub) = super::hub(&weak) else { return };
                    hub.on_wire(&message.payload);
                }
                None => {
                    tracing::error!("realtime: the NATS subscription ended");
                    return;
                }
            },
            bytes = outgoing.recv() => match bytes {
                Some(bytes) => {
                    if let Err(e) = client.publish(subject.clone(), bytes).await {
                        tracing::warn!(error = %e, "realtime: publishing to NATS failed");
                        if let Some(hub) = super::hub(&weak) {
                            hub.count_unsent(1);
                        }
                    }
                }
                None => return,
            },
        }
    }
}
