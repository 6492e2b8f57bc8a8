//! The request IDs Tern gives requests that bring no trusted one.

use std::sync::atomic::{AtomicU64, Ordering};

use http::HeaderValue;

use crate::context::RequestIdValue;

/// Request IDs: a random per-process prefix and a counter, rendered in
/// batches of [`ID_BATCH`] per thread into one buffer, so a request's ID is
/// a slice of it: no allocation, no call to the OS, one shared counter
/// touch per batch.
const ID_BATCH: usize = 64;
const ID_LEN: usize = 32;

struct IdBatch {
    buf: bytes::Bytes,
    next: usize,
}

thread_local! {
    /// Each thread's batch of request IDs. Safe as a thread-local: it
    /// holds IDs not yet given to any request, never a request's values;
    /// `next_request_id` borrows it for one synchronous call, and an ID,
    /// once cut, belongs to its request only (the batch's buffer is reused
    /// only when no ID cut from it is alive).
    static ID_BATCHES: std::cell::RefCell<IdBatch> = const {
        std::cell::RefCell::new(IdBatch { buf: bytes::Bytes::new(), next: ID_BATCH })
    };
}

fn id_prefix() -> u64 {
    // Process-wide and written once: the same random prefix for every
    // request is the point (IDs from one process share it); it says
    // nothing about any request.
    static PREFIX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PREFIX.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        h.finish()
    })
}

pub(super) fn next_request_id() -> RequestIdValue {
    // Within a batch only the counter's last two digits change: batches
    // start at multiples of `ID_BATCH`, which divides 256.
    const _: () = assert!(256 % ID_BATCH == 0);
    // Process-wide so that IDs are unique across threads and apps; an
    // atomic add hands each batch's range to one thread only.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    ID_BATCHES.with(|batch| {
        let mut batch = batch.borrow_mut();
        if batch.next == ID_BATCH {
            let first = COUNTER.fetch_add(ID_BATCH as u64, Ordering::Relaxed);
            // The last batch's buffer is reused once every ID cut from it
            // is gone (the usual case): a 2 KiB allocation per batch cost
            // more than the batch saved, through malloc's consolidation.
            let mut buf = match std::mem::take(&mut batch.buf).try_into_mut() {
                Ok(buf) if buf.len() == ID_BATCH * ID_LEN => buf,
                _ => bytes::BytesMut::zeroed(ID_BATCH * ID_LEN),
            };
            let mut head = [0u8; ID_LEN];
            hex(id_prefix(), &mut head[..16]);
            hex(first, &mut head[16..]);
            for (i, id) in buf.chunks_exact_mut(ID_LEN).enumerate() {
                id[..ID_LEN - 2].copy_from_slice(&head[..ID_LEN - 2]);
                hex((first + i as u64) & 0xff, &mut id[ID_LEN - 2..]);
            }
            *batch = IdBatch {
                buf: buf.freeze(),
                next: 0,
            };
        }
        let at = batch.next * ID_LEN;
        batch.next += 1;
        HeaderValue::from_maybe_shared(batch.buf.slice(at..at + ID_LEN))
            .unwrap_or_else(|_| HeaderValue::from_static("0"))
    })
}

fn hex(mut n: u64, out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for slot in out.iter_mut().rev() {
        *slot = DIGITS[(n & 0xf) as usize];
        n >>= 4;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IDs across several batches, some held past their batch (so that its
    /// buffer cannot be reused) and some dropped at once (so that it is):
    /// all distinct, 32 lowercase hex digits, one process prefix.
    #[test]
    fn request_ids_are_distinct_across_reused_and_fresh_batches() {
        let mut seen = std::collections::HashSet::new();
        let mut held = Vec::new();
        for i in 0..ID_BATCH * 6 + 5 {
            let id = next_request_id();
            let text = id.to_str().unwrap_or_default().to_owned();
            assert_eq!(text.len(), ID_LEN, "{text}");
            assert!(
                text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "{text}"
            );
            assert!(seen.insert(text), "a repeated ID");
            if (i / ID_BATCH).is_multiple_of(2) && i % 7 == 0 {
                held.push(id);
            }
        }
        let prefixes: std::collections::HashSet<_> = seen.iter().map(|t| &t[..16]).collect();
        assert_eq!(prefixes.len(), 1);
        // The held IDs still read as they did.
        for id in &held {
            assert!(seen.contains(id.to_str().unwrap_or_default()));
        }
    }
}
