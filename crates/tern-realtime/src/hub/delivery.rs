//! The envelope: one message, serialized once, shared by every
//! subscriber (and encoded in CBOR or as a server-sent event at most once).

use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use super::Member;
use crate::Text;

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

pub(super) fn envelope<T: Serialize + ?Sized>(
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
