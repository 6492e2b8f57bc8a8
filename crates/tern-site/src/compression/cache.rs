//! The cache of compressed answers: for a body whole in memory, its
//! compressed bytes per coding, kept by the process and found again by
//! the body's own bytes.
//!
//! - The key is a 64-bit hash of the uncompressed bytes (xxh3) and the
//!   coding. A hash can collide, so a found entry counts only if its
//!   stored uncompressed bytes equal the body's (a `memcmp`): two bodies
//!   never get each other's bytes, whatever their hashes.
//! - What a hit returns is the stored `Bytes`, a reference count: no copy
//!   and no compression.
//! - Admission on the second sighting: a body not kept whose hash (and
//!   length) the cache has not seen in that coding is a *first*: it is
//!   compressed at the layer's [`LEVEL`](super::LEVEL), sent, and not
//!   kept; only its hash is remembered, in a set of
//!   [`SEEN_ONCE_SLOTS`] slots. The next sighting of that hash is a
//!   *miss*: compressed at the cache's levels and kept (and the hash
//!   leaves the set). Later sightings hit. So a body that differs on
//!   every request costs what it cost before the cache (level 1, plus a
//!   hash and a lookup), and a body that repeats is kept from its second
//!   request. A body evicted later must be seen twice again.
//! - The set is direct-mapped (a slot per hash, chosen by the hash): a
//!   first sighting takes its slot from whatever held it, so its memory
//!   is fixed (16 bytes a slot, 64 KiB per cache, allocated at the
//!   first sighting and not counted in the byte bound) whatever the
//!   stream of distinct bodies. Two bodies sharing a slot, seen in turn,
//!   push each other out and are compressed fast until one is seen twice
//!   in a row: a cost, never a wrong answer. A body larger than the whole
//!   bound is never admitted: compressed fast every time, counted as a
//!   first.
//! - A miss compresses outside the lock and then inserts. Two requests
//!   missing the same body at once both compress it, and the second
//!   insert replaces the first (the same bytes): wasted work once, never
//!   a wrong answer, and no request waits for another's compression.
//! - The bound is in bytes, uncompressed and compressed counted
//!   together; past it the least recently used entries go first. An entry
//!   larger than the whole bound is not kept.
//! - One `Mutex` around the map, held for a lookup or an insert, never
//!   while compressing, comparing or awaiting.
//!
//! The page is still rendered for every request (issue 14's rule): only
//! the compression of bytes already seen is skipped. A page whose bytes
//! differ per request (a CSRF token, a nonce, the time) never hits and
//! costs a fast compression every time; it is never kept, so it evicts
//! nothing.

use std::{
    collections::{BTreeMap, HashMap},
    fmt,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc, Mutex, PoisonError,
    },
};

use bytes::Bytes;

use super::{
    coding::Coding,
    encode::{encode, encode_fast},
};

/// The default bound of a process's cache: 8 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 8 << 20;

/// Bodies larger than this (256 KiB) are compressed by the layer as they
/// stream, never kept: a few of them would fill the cache.
pub const MAX_CACHED_BODY: usize = 256 << 10;

/// How many first sightings a cache remembers: 4,096 hashes (64 KiB,
/// apart from the byte bound). A body whose hash is in this set when it
/// is seen again is kept (see [`CompressionCache`]).
pub const SEEN_ONCE_SLOTS: usize = 4096;

/// A cache of compressed answers, for
/// [`compression_with`](super::compression_with).
///
/// A body is kept the second time it is seen in a coding: the first
/// time, it is compressed at the layer's [`LEVEL`](super::LEVEL) and
/// only its hash is remembered (at most [`SEEN_ONCE_SLOTS`] of them), so
/// that a page that differs on every request costs what it did without
/// the cache.
///
/// Cloning it gives another handle to the same cache (its bound, its
/// entries, its counts): keep one to read [`stats`](Self::stats).
///
/// ```
/// use tern::App;
/// use tern_site::compression::CompressionCache;
///
/// let app = App::new();
/// let cache = CompressionCache::bytes(16 << 20).metrics(app.metrics());
/// let app = app.layer(tern_site::compression::compression_with(cache.clone()));
/// assert_eq!(cache.stats().hits, 0);
/// ```
#[derive(Clone)]
pub struct CompressionCache {
    inner: Arc<Cache>,
}

/// What a [`CompressionCache`] has done since it was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheStats {
    /// Answers sent from the cache, compressed bytes reused.
    pub hits: u64,
    /// Answers compressed at the cache's levels and then kept: a body's
    /// second sighting (or its second after an eviction).
    pub misses: u64,
    /// Answers compressed at the layer's [`LEVEL`](super::LEVEL) and not
    /// kept: a body's first sighting, whose hash is remembered (or a
    /// body larger than the whole bound, every time).
    pub firsts: u64,
    /// Answers compressed by the layer as they streamed, not kept: a
    /// stream, or a body over [`MAX_CACHED_BODY`].
    pub bypasses: u64,
    /// Bytes kept now, uncompressed and compressed.
    pub bytes: usize,
    /// Entries kept now (one per body and coding).
    pub entries: usize,
    /// First sightings remembered now, at most [`SEEN_ONCE_SLOTS`].
    pub seen: usize,
}

impl CompressionCache {
    /// A cache of at most `bytes` bytes (uncompressed and compressed
    /// counted together); 0 keeps nothing (see [`off`](Self::off)).
    pub fn bytes(bytes: usize) -> CompressionCache {
        CompressionCache {
            inner: Arc::new(Cache::new(bytes, xxh3)),
        }
    }

    /// No cache: every answer is compressed by the layer, as it streams.
    pub fn off() -> CompressionCache {
        CompressionCache::bytes(0)
    }

    /// Reports the cache's counts at the app's `/metrics`:
    /// `tern_site_compression_cache_total{result="hit"|"miss"|"first"|"bypass"}`
    /// (see [`CacheStats`]),
    /// `tern_site_compression_cache_bytes` and
    /// `tern_site_compression_cache_entries`. Call it once per app.
    pub fn metrics(self, metrics: &tern::metrics::Metrics) -> CompressionCache {
        let cache = Arc::clone(&self.inner);
        metrics.source(move |sample| {
            let stats = cache.stats();
            for (result, n) in [
                ("hit", stats.hits),
                ("miss", stats.misses),
                ("first", stats.firsts),
                ("bypass", stats.bypasses),
            ] {
                sample.counter(
                    "tern_site_compression_cache",
                    "Compressed answers by the cache's part in them: sent from it (hit), compressed and kept on a second sighting (miss), compressed fast and not kept on a first sighting (first), compressed as they streamed (bypass).",
                    &[("result", result)],
                    n,
                );
            }
            sample.gauge(
                "tern_site_compression_cache_bytes",
                "Bytes kept by the cache of compressed answers, uncompressed and compressed.",
                &[],
                stats.bytes as f64,
            );
            sample.gauge(
                "tern_site_compression_cache_entries",
                "Entries of the cache of compressed answers (one per body and coding).",
                &[],
                stats.entries as f64,
            );
        });
        self
    }

    /// The counts so far and what is kept now.
    pub fn stats(&self) -> CacheStats {
        self.inner.stats()
    }

    /// The bound, in bytes.
    pub fn capacity(&self) -> usize {
        self.inner.capacity.load(Ordering::Relaxed)
    }

    /// Sets the bound, evicting down to it.
    pub(crate) fn resize(&self, bytes: usize) {
        self.inner.capacity.store(bytes, Ordering::Relaxed);
        self.inner.lock().evict_to(bytes);
    }

    pub(crate) fn cache(&self) -> &Cache {
        &self.inner
    }
}

impl Default for CompressionCache {
    /// A cache of [`DEFAULT_CACHE_BYTES`].
    fn default() -> Self {
        CompressionCache::bytes(DEFAULT_CACHE_BYTES)
    }
}

impl fmt::Debug for CompressionCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompressionCache")
            .field("capacity", &self.capacity())
            .field("stats", &self.stats())
            .finish()
    }
}

fn xxh3(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

type Key = (u64, Coding);

/// A first sighting: its key folded into one word, and its length.
#[derive(Clone, Copy, Default)]
struct Seen {
    tag: u64,
    len: u32,
    occupied: bool,
}

impl Seen {
    fn tag((hash, coding): Key) -> u64 {
        // Each coding moves the hash by its own odd multiple: one body's
        // codings take different slots and tags.
        hash ^ (coding as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// The shared state behind a [`CompressionCache`].
pub(crate) struct Cache {
    capacity: AtomicUsize,
    hash: fn(&[u8]) -> u64,
    state: Mutex<State>,
    hits: AtomicU64,
    misses: AtomicU64,
    firsts: AtomicU64,
    bypasses: AtomicU64,
}

#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    /// Last use → key: the first is the least recently used.
    order: BTreeMap<u64, Key>,
    /// The next use's number.
    clock: u64,
    bytes: usize,
    /// First sightings, [`SEEN_ONCE_SLOTS`] of them once one is seen
    /// (empty before).
    seen: Vec<Seen>,
    /// Occupied slots of `seen`.
    seen_count: usize,
}

struct Entry {
    identity: Bytes,
    encoded: Bytes,
    used: u64,
}

impl Entry {
    fn size(&self) -> usize {
        self.identity.len() + self.encoded.len()
    }
}

impl State {
    fn touch(&mut self, key: Key) -> Option<&Entry> {
        let now = self.clock;
        let entry = self.entries.get_mut(&key)?;
        self.order.remove(&entry.used);
        entry.used = now;
        self.order.insert(now, key);
        self.clock += 1;
        Some(entry)
    }

    fn remove(&mut self, key: Key) {
        if let Some(old) = self.entries.remove(&key) {
            self.order.remove(&old.used);
            self.bytes -= old.size();
        }
    }

    /// Whether the body of `key` and `len` bytes, not kept, is to be
    /// kept now: yes if it was seen once before (and it leaves the set),
    /// no if not (and it takes its slot in the set). A body that cannot
    /// fit in `bound` is never kept, nor remembered.
    fn admits(&mut self, key: Key, len: usize, bound: usize) -> bool {
        if len >= bound {
            return false;
        }
        if self.seen.is_empty() {
            self.seen = vec![Seen::default(); SEEN_ONCE_SLOTS];
        }
        let tag = Seen::tag(key);
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        let slot = &mut self.seen[(tag % SEEN_ONCE_SLOTS as u64) as usize];
        if slot.occupied && slot.tag == tag && slot.len == len {
            *slot = Seen::default();
            self.seen_count -= 1;
            return true;
        }
        if !slot.occupied {
            self.seen_count += 1;
        }
        *slot = Seen {
            tag,
            len,
            occupied: true,
        };
        false
    }

    fn evict_to(&mut self, bound: usize) {
        while self.bytes > bound {
            let Some((_, key)) = self.order.pop_first() else {
                break;
            };
            if let Some(old) = self.entries.remove(&key) {
                self.bytes -= old.size();
            }
        }
    }
}

impl Cache {
    pub(crate) fn new(capacity: usize, hash: fn(&[u8]) -> u64) -> Cache {
        Cache {
            capacity: AtomicUsize::new(capacity),
            hash,
            state: Mutex::new(State::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            firsts: AtomicU64::new(0),
            bypasses: AtomicU64::new(0),
        }
    }

    /// Whether the cache keeps anything (a bound above 0).
    pub(crate) fn is_on(&self) -> bool {
        self.capacity.load(Ordering::Relaxed) > 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is consistent between statements that do not panic;
        // a panic elsewhere while the lock was held leaves it usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `body` compressed with `coding`: the kept bytes if the cache has
    /// them; else, on a first sighting, compressed fast and not kept; else
    /// compressed now and kept. An encoder's error (none is expected: they
    /// write to memory) is returned, and nothing is kept.
    pub(crate) fn compressed(&self, coding: Coding, body: &Bytes) -> std::io::Result<Bytes> {
        let key = ((self.hash)(body), coding);
        let bound = self.capacity.load(Ordering::Relaxed);
        // One lock for the lookup and, if nothing is kept, the set.
        let found = {
            let mut state = self.lock();
            match state.touch(key) {
                Some(e) => Ok((e.identity.clone(), e.encoded.clone())),
                None => Err(state.admits(key, body.len(), bound)),
            }
        };
        let admitted = match found {
            Ok((identity, encoded)) if identity == body => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(encoded);
            }
            // Another body under the same key (a collision): this one is
            // sighted like any other.
            Ok(_) => self.lock().admits(key, body.len(), bound),
            Err(admitted) => admitted,
        };
        if !admitted {
            self.firsts.fetch_add(1, Ordering::Relaxed);
            return Ok(Bytes::from(encode_fast(coding, body)?.into_boxed_slice()));
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let encoded = Bytes::from(encode(coding, body)?.into_boxed_slice());
        // A copy of the body, so that the entry holds exactly its bytes
        // and not a larger buffer the body may be a view of.
        let entry = Entry {
            identity: Bytes::copy_from_slice(body),
            encoded: encoded.clone(),
            used: 0,
        };
        self.insert(key, entry);
        Ok(encoded)
    }

    fn insert(&self, key: Key, mut entry: Entry) {
        let bound = self.capacity.load(Ordering::Relaxed);
        let mut state = self.lock();
        // A colliding or older entry under the same key gives way.
        state.remove(key);
        if entry.size() > bound {
            return;
        }
        entry.used = state.clock;
        state.clock += 1;
        state.order.insert(entry.used, key);
        state.bytes += entry.size();
        state.entries.insert(key, entry);
        state.evict_to(bound);
    }

    /// Counts an answer compressed by the layer instead.
    pub(crate) fn bypassed(&self) {
        self.bypasses.fetch_add(1, Ordering::Relaxed);
    }

    fn stats(&self) -> CacheStats {
        let (bytes, entries, seen) = {
            let state = self.lock();
            (state.bytes, state.entries.len(), state.seen_count)
        };
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            firsts: self.firsts.load(Ordering::Relaxed),
            bypasses: self.bypasses.load(Ordering::Relaxed),
            bytes,
            entries,
            seen,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn body(seed: u8, len: usize) -> Bytes {
        (0..len)
            .map(|i| b"abcdefgh"[(i + seed as usize) % 8])
            .collect::<Vec<u8>>()
            .into()
    }

    /// What the cache must hold at any time, checked against its state.
    fn check_invariants(cache: &Cache) {
        let state = cache.lock();
        let sum: usize = state.entries.values().map(Entry::size).sum();
        assert_eq!(state.bytes, sum);
        assert!(state.bytes <= cache.capacity.load(Ordering::Relaxed));
        assert_eq!(state.order.len(), state.entries.len());
        for (used, key) in &state.order {
            assert_eq!(state.entries[key].used, *used);
        }
        assert!(state.seen.is_empty() || state.seen.len() == SEEN_ONCE_SLOTS);
        assert_eq!(
            state.seen_count,
            state.seen.iter().filter(|s| s.occupied).count()
        );
        assert_eq!(std::mem::size_of::<Seen>(), 16);
    }

    fn decode(coding: Coding, bytes: &[u8]) -> Vec<u8> {
        use std::io::Read;
        let mut out = Vec::new();
        match coding {
            Coding::Gzip => {
                flate2::read::GzDecoder::new(bytes)
                    .read_to_end(&mut out)
                    .unwrap();
            }
            Coding::Brotli => {
                brotli::Decompressor::new(bytes, 4096)
                    .read_to_end(&mut out)
                    .unwrap();
            }
            Coding::Zstd => out = zstd::decode_all(bytes).unwrap(),
            Coding::Identity => out = bytes.to_vec(),
        }
        out
    }

    #[test]
    fn a_body_is_kept_on_its_second_sighting_and_hits_on_its_third() {
        for coding in [Coding::Brotli, Coding::Gzip, Coding::Zstd] {
            let cache = Cache::new(1 << 20, xxh3);
            let page = body(0, 4000);
            // First: the layer's level, nothing kept, the hash remembered.
            let first = cache.compressed(coding, &page).unwrap();
            assert_eq!(decode(coding, &first), page, "{coding:?}");
            assert_eq!(first, encode_fast(coding, &page).unwrap(), "{coding:?}");
            let stats = cache.stats();
            assert_eq!(
                (
                    stats.firsts,
                    stats.misses,
                    stats.hits,
                    stats.entries,
                    stats.bytes,
                    stats.seen
                ),
                (1, 0, 0, 0, 0, 1),
                "{coding:?}"
            );
            // Second: the cache's level, kept, the hash forgotten.
            let second = cache.compressed(coding, &page).unwrap();
            assert_eq!(decode(coding, &second), page, "{coding:?}");
            assert_eq!(second, encode(coding, &page).unwrap(), "{coding:?}");
            let stats = cache.stats();
            assert_eq!(
                (
                    stats.firsts,
                    stats.misses,
                    stats.hits,
                    stats.entries,
                    stats.seen
                ),
                (1, 1, 0, 1, 0),
                "{coding:?}"
            );
            // Third: the kept bytes themselves, without a copy.
            let third = cache.compressed(coding, &page).unwrap();
            assert_eq!(third, second, "{coding:?}");
            assert_eq!(third.as_ptr(), second.as_ptr(), "{coding:?}");
            assert_eq!(cache.stats().hits, 1, "{coding:?}");
            check_invariants(&cache);
        }
    }

    #[test]
    fn sightings_are_counted_per_coding() {
        let cache = Cache::new(1 << 20, xxh3);
        let page = body(0, 4000);
        cache.compressed(Coding::Brotli, &page).unwrap();
        let gzip = cache.compressed(Coding::Gzip, &page).unwrap();
        assert_eq!(decode(Coding::Gzip, &gzip), page);
        let stats = cache.stats();
        assert_eq!((stats.firsts, stats.entries, stats.seen), (2, 0, 2));
        cache.compressed(Coding::Gzip, &page).unwrap();
        cache.compressed(Coding::Brotli, &page).unwrap();
        let stats = cache.stats();
        assert_eq!((stats.misses, stats.entries, stats.seen), (2, 2, 0));
        check_invariants(&cache);
    }

    #[test]
    fn distinct_bodies_are_never_kept_and_the_set_stays_bounded() {
        let cache = Cache::new(1 << 20, xxh3);
        for n in 0..100u32 {
            let mut page = body(0, 2000).to_vec();
            page[..4].copy_from_slice(&n.to_be_bytes());
            let page = Bytes::from(page);
            let answer = cache.compressed(Coding::Brotli, &page).unwrap();
            assert_eq!(decode(Coding::Brotli, &answer), page, "body {n}");
        }
        let stats = cache.stats();
        assert_eq!((stats.firsts, stats.misses, stats.hits), (100, 0, 0));
        assert_eq!((stats.entries, stats.bytes), (0, 0));
        // Two of them may share a slot: the later one holds it.
        assert!(stats.seen > 90 && stats.seen <= 100, "{stats:?}");
        check_invariants(&cache);
        // Many more than the set holds: it stays at its size.
        for n in 0..3 * SEEN_ONCE_SLOTS as u32 {
            let page = Bytes::from(format!("{n:08} a small distinct body"));
            cache.compressed(Coding::Zstd, &page).unwrap();
        }
        let stats = cache.stats();
        assert_eq!((stats.entries, stats.misses), (0, 0));
        assert!(
            stats.seen > SEEN_ONCE_SLOTS / 2 && stats.seen <= SEEN_ONCE_SLOTS,
            "{stats:?}"
        );
        assert_eq!(cache.lock().seen.len(), SEEN_ONCE_SLOTS);
        check_invariants(&cache);
    }

    #[test]
    fn a_hash_collision_never_gives_another_bodys_bytes() {
        // Every body hashes alike: only the comparison tells them apart,
        // and the set of first sightings mixes them up (a cost only).
        let cache = Cache::new(1 << 20, |_| 7);
        let a = body(0, 3000);
        let mut b = a.to_vec();
        b[1500] = b'z';
        let b = Bytes::from(b);
        for (n, page) in [&a, &b, &a, &b, &a, &a, &a, &b, &b].into_iter().enumerate() {
            let answer = cache.compressed(Coding::Zstd, page).unwrap();
            assert_eq!(decode(Coding::Zstd, &answer), *page, "call {n}");
            check_invariants(&cache);
        }
        let stats = cache.stats();
        assert!(stats.hits > 0 && stats.entries == 1, "{stats:?}");
        assert_eq!(stats.hits + stats.misses + stats.firsts, 9);
    }

    #[test]
    fn the_least_recently_used_go_first_and_the_bound_holds() {
        let cache = Cache::new(0, xxh3);
        let pages: Vec<Bytes> = (0..6).map(|i| body(i, 2000 + i as usize)).collect();
        let size = |p: &Bytes| p.len() + encode(Coding::Gzip, p).unwrap().len();
        // Room for three of them exactly.
        let bound: usize = pages[..3].iter().map(size).sum::<usize>() + 10;
        cache.capacity.store(bound, Ordering::Relaxed);
        // Seen twice: kept.
        let keep = |p: &Bytes| {
            cache.compressed(Coding::Gzip, p).unwrap();
            cache.compressed(Coding::Gzip, p).unwrap();
        };
        for p in &pages[..3] {
            keep(p);
        }
        assert_eq!(cache.stats().entries, 3);
        // Page 0 used again: page 1 is now the oldest.
        cache.compressed(Coding::Gzip, &pages[0]).unwrap();
        // A first sighting evicts nothing.
        cache.compressed(Coding::Gzip, &pages[3]).unwrap();
        assert_eq!(cache.stats().entries, 3);
        cache.compressed(Coding::Gzip, &pages[3]).unwrap();
        check_invariants(&cache);
        let kept = |p: &Bytes| {
            let state = cache.lock();
            state.entries.contains_key(&(xxh3(p), Coding::Gzip))
        };
        assert!(!kept(&pages[1]), "the least recently used went first");
        assert!(kept(&pages[0]) && kept(&pages[2]) && kept(&pages[3]));
        for p in &pages[4..] {
            keep(p);
            check_invariants(&cache);
        }
        assert!(cache.stats().bytes <= bound);
        // A smaller bound evicts at once.
        let handle = CompressionCache {
            inner: Arc::new(cache),
        };
        handle.resize(size(&pages[5]));
        assert_eq!(handle.stats().entries, 1);
        check_invariants(handle.cache());
    }

    #[test]
    fn an_entry_larger_than_the_bound_is_not_kept() {
        let cache = Cache::new(100, xxh3);
        let page = body(0, 5000);
        let first = cache.compressed(Coding::Brotli, &page).unwrap();
        assert_eq!(cache.stats().entries, 0);
        let again = cache.compressed(Coding::Brotli, &page).unwrap();
        assert_eq!(first, again);
        assert_eq!(decode(Coding::Brotli, &again), page);
        // Never admitted, so never compressed at the cache's level.
        let stats = cache.stats();
        assert_eq!((stats.firsts, stats.misses, stats.seen), (2, 0, 0));
    }

    #[test]
    fn each_coding_decodes_to_the_body() {
        use std::io::Read;
        let page = body(3, 10_000);
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&encode(Coding::Gzip, &page).unwrap()[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, page);
        let mut out = Vec::new();
        brotli::Decompressor::new(&encode(Coding::Brotli, &page).unwrap()[..], 4096)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, page);
        assert_eq!(
            zstd::decode_all(&encode(Coding::Zstd, &page).unwrap()[..]).unwrap(),
            page
        );
    }
}
