//! Buffers that exist only while there is something to read or write
//! (step 3 of `docs/plans/http1.md`, §1.8), and the socket the connection
//! reads through ([`Socket`]), which lets it wait for bytes holding none.
//!
//! An idle keep-alive connection holds no buffer: it waits for readiness,
//! then takes a read buffer from this thread's pool ([`take_read`]); when
//! its batch is answered and nothing is left in the buffers, they go back
//! ([`give_read`], [`give_write`]). A worker thread so keeps a few buffers
//! for all its connections (at most [`POOLED`] of each kind), instead of
//! every connection keeping two.
//!
//! A read buffer goes back only if no `Bytes` cut from it is still alive
//! (a request's head or body a handler kept): `BytesMut::try_reclaim`
//! succeeds only when the allocation is this buffer's alone, and then
//! makes all of it writable again. Otherwise it is dropped, and the
//! allocation lives as long as the last `Bytes` of it; the pool never
//! hands out memory something else still reads. Buffers that grew (a
//! large head, a large batch of answers) are dropped rather than kept, so
//! the pool's memory per thread is bounded: 16 × 8 KiB of read buffers and
//! 16 × at most 16 KiB of write buffers.
//!
//! The pool also keeps one header map: an answer's, once written
//! ([`give_map`]), emptied, becomes the next request's ([`take_map`]), so
//! that a request and its answer allocate one map's room between them, not
//! two. Only a map of at most [`MAP_KEEP`] fields' room is kept, and never
//! its fields: `HeaderMap::clear` drops every name and value (and the
//! map's hashing goes back to the fast one).

// Used by the connection (step 4); the tests use every item meanwhile.
#![cfg_attr(not(test), allow(dead_code))]

pub(crate) mod socket;

use std::cell::RefCell;

use bytes::BytesMut;

pub(crate) use socket::Socket;

/// The capacity of a read buffer.
pub(crate) const READ_SIZE: usize = 8 * 1024;
/// The capacity of a write buffer when taken.
pub(crate) const WRITE_SIZE: usize = 8 * 1024;
/// The largest write buffer kept by the pool.
pub(crate) const WRITE_KEEP: usize = 16 * 1024;
/// Buffers of each kind kept per thread, at most.
pub(crate) const POOLED: usize = 16;
/// The largest header map kept by the pool, in fields of room.
pub(crate) const MAP_KEEP: usize = 64;

/// This thread's spare buffers.
struct Pool {
    read: Vec<BytesMut>,
    write: Vec<Vec<u8>>,
    /// An empty header map with room (see the module's docs).
    map: Option<http::HeaderMap>,
}

thread_local! {
    static POOL: RefCell<Pool> = const {
        RefCell::new(Pool { read: Vec::new(), write: Vec::new(), map: None })
    };
}

/// An empty read buffer of at least [`READ_SIZE`] bytes: a kept one, or
/// a new one.
pub(crate) fn take_read() -> BytesMut {
    POOL.try_with(|p| p.borrow_mut().read.pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| BytesMut::with_capacity(READ_SIZE))
}

/// Gives back a read buffer: kept if it is empty, all its memory is its
/// own again (no `Bytes` of it alive) and it did not grow past
/// [`READ_SIZE`], and the pool is not full; dropped otherwise.
pub(crate) fn give_read(mut buf: BytesMut) {
    if !buf.is_empty() || !buf.try_reclaim(READ_SIZE) || buf.capacity() > READ_SIZE {
        return;
    }
    // A thread being torn down has no pool: the buffer is dropped.
    let _ = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.read.len() < POOLED {
            p.read.push(buf);
        }
    });
}

/// An empty write buffer of at least [`WRITE_SIZE`] bytes.
/// A header map with room for `fields` (a request's): the pool's, or a
/// new one.
pub(crate) fn take_map(fields: usize) -> Result<http::HeaderMap, http::header::MaxSizeReached> {
    match POOL.try_with(|p| p.borrow_mut().map.take()).ok().flatten() {
        Some(mut map) => map.try_reserve(fields).map(|()| map),
        None => http::HeaderMap::try_with_capacity(fields),
    }
}

/// Keeps `map`'s room, emptied, for the next [`take_map`], if it has
/// some and at most [`MAP_KEEP`] fields' worth, and the pool holds none.
pub(crate) fn give_map(mut map: http::HeaderMap) {
    if map.capacity() == 0 || map.capacity() > MAP_KEEP {
        return;
    }
    let _ = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.map.is_none() {
            map.clear();
            p.map = Some(map);
        }
    });
}

pub(crate) fn take_write() -> Vec<u8> {
    POOL.try_with(|p| p.borrow_mut().write.pop())
        .ok()
        .flatten()
        .unwrap_or_else(|| Vec::with_capacity(WRITE_SIZE))
}

/// Gives back a write buffer (its bytes are dropped): kept if its
/// capacity is between [`WRITE_SIZE`] and [`WRITE_KEEP`] and the pool is
/// not full; dropped otherwise.
pub(crate) fn give_write(mut buf: Vec<u8>) {
    if !(WRITE_SIZE..=WRITE_KEEP).contains(&buf.capacity()) {
        return;
    }
    buf.clear();
    let _ = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.write.len() < POOLED {
            p.write.push(buf);
        }
    });
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Buffers in this thread's pool: (read, write).
    fn pooled() -> (usize, usize) {
        POOL.with(|p| {
            let p = p.borrow();
            (p.read.len(), p.write.len())
        })
    }

    /// An answer's map given back keeps its room and drops its fields
    /// (the values' bytes are free again at once); the next request's
    /// map is that map, empty, with room for its fields; a map with more
    /// room than `MAP_KEEP` or none is not kept, nor a second one.
    #[test]
    fn the_pool_keeps_an_answers_map_room_never_its_fields() {
        use http::{HeaderMap, HeaderValue};
        let _ = take_map(0);
        let secret = bytes::Bytes::from(b"a session cookie".to_vec());
        let mut answer = HeaderMap::new();
        answer.insert(
            "set-cookie",
            HeaderValue::from_maybe_shared(secret.clone()).unwrap(),
        );
        answer.insert("x-other", HeaderValue::from_static("1"));
        let room = answer.capacity();
        give_map(answer);
        assert!(secret.is_unique(), "a value outlived its answer");
        let mut other = HeaderMap::new();
        other.insert("x-second", HeaderValue::from_static("2"));
        give_map(other);
        let request = take_map(3).unwrap();
        assert!(request.is_empty());
        assert_eq!(request.capacity(), room);
        assert!(
            POOL.with(|p| p.borrow().map.is_none()),
            "only one map is kept"
        );
        // Room for more fields than it had: it grows.
        give_map(request);
        let grown = take_map(40).unwrap();
        assert!(grown.is_empty() && grown.capacity() >= 40);
        let big = take_map(MAP_KEEP + 1).unwrap();
        give_map(big);
        give_map(HeaderMap::new());
        assert!(POOL.with(|p| p.borrow().map.is_none()));
        give_map(grown);
        assert!(POOL.with(|p| p.borrow().map.is_some()));
    }

    #[test]
    fn a_read_buffer_given_back_is_taken_again() {
        let buf = take_read();
        assert!(buf.is_empty());
        assert!(buf.capacity() >= READ_SIZE);
        let at = buf.as_ptr();
        give_read(buf);
        assert_eq!(pooled().0, 1);
        let again = take_read();
        assert_eq!(again.as_ptr(), at);
        assert_eq!(pooled().0, 0);
    }

    #[test]
    fn a_read_buffer_whose_bytes_were_all_dropped_is_reclaimed_whole() {
        let mut buf = take_read();
        let at = buf.as_ptr();
        buf.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        let head = buf.split_to(18).freeze();
        drop(head);
        give_read(buf);
        let again = take_read();
        assert_eq!(again.as_ptr(), at, "the same allocation, from its start");
        assert_eq!(again.capacity(), READ_SIZE);
    }

    #[test]
    fn a_read_buffer_with_a_live_slice_is_not_reused_and_the_slice_is_intact() {
        let mut buf = take_read();
        buf.extend_from_slice(b"hello, world");
        let kept = buf.split_to(5).freeze();
        buf.clear();
        give_read(buf);
        assert_eq!(pooled().0, 0, "a buffer still shared must not be pooled");
        let mut other = take_read();
        other.extend_from_slice(&[b'x'; READ_SIZE]);
        assert_eq!(&kept[..], b"hello");
    }

    #[test]
    fn a_grown_or_non_empty_read_buffer_is_dropped() {
        let mut grown = take_read();
        grown.reserve(READ_SIZE * 2);
        give_read(grown);
        let mut full = take_read();
        full.extend_from_slice(b"unread");
        give_read(full);
        give_read(BytesMut::with_capacity(100));
        assert_eq!(pooled().0, 0);
    }

    #[test]
    fn at_most_pooled_buffers_are_kept() {
        let bufs: Vec<_> = (0..=POOLED).map(|_| take_read()).collect();
        for buf in bufs {
            give_read(buf);
        }
        assert_eq!(pooled().0, POOLED);
        let bufs: Vec<_> = (0..=POOLED).map(|_| take_write()).collect();
        for buf in bufs {
            give_write(buf);
        }
        assert_eq!(pooled().1, POOLED);
    }

    #[test]
    fn write_buffers_come_back_cleared_and_within_bounds() {
        let mut buf = take_write();
        assert!(buf.capacity() >= WRITE_SIZE && buf.is_empty());
        buf.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
        let at = buf.as_ptr();
        give_write(buf);
        let again = take_write();
        assert_eq!((again.as_ptr(), again.len()), (at, 0));

        let mut grown = again;
        grown.extend_from_slice(&[0; WRITE_KEEP + 1]);
        give_write(grown);
        give_write(Vec::with_capacity(10));
        assert_eq!(pooled().1, 0);
        let mut up_to_keep = Vec::with_capacity(WRITE_KEEP);
        up_to_keep.push(1);
        give_write(up_to_keep);
        assert_eq!(pooled().1, 1);
        assert!(take_write().is_empty());
    }
}
