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
//! costs its compression every time, plus an insert that evicts.

use std::{
    collections::{BTreeMap, HashMap},
    fmt,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc, Mutex, PoisonError,
    },
};

use bytes::Bytes;

use super::{coding::Coding, encode::encode};

/// The default bound of a process's cache: 8 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 8 << 20;

/// Bodies larger than this (256 KiB) are compressed by the layer as they
/// stream, never kept: a few of them would fill the cache.
pub const MAX_CACHED_BODY: usize = 256 << 10;

/// A cache of compressed answers, for
/// [`compression_with`](super::compression_with).
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
    /// Answers compressed and then kept.
    pub misses: u64,
    /// Answers compressed by the layer as they streamed, not kept: a
    /// stream, or a body over [`MAX_CACHED_BODY`].
    pub bypasses: u64,
    /// Bytes kept now, uncompressed and compressed.
    pub bytes: usize,
    /// Entries kept now (one per body and coding).
    pub entries: usize,
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
    /// `tern_site_compression_cache_total{result="hit"|"miss"|"bypass"}`,
    /// `tern_site_compression_cache_bytes` and
    /// `tern_site_compression_cache_entries`. Call it once per app.
    pub fn metrics(self, metrics: &tern::metrics::Metrics) -> CompressionCache {
        let cache = Arc::clone(&self.inner);
        metrics.source(move |sample| {
            let stats = cache.stats();
            for (result, n) in [
                ("hit", stats.hits),
                ("miss", stats.misses),
                ("bypass", stats.bypasses),
            ] {
                sample.counter(
                    "tern_site_compression_cache",
                    "Compressed answers by the cache's part in them: sent from it (hit), compressed and kept (miss), compressed as they streamed (bypass).",
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

/// The shared state behind a [`CompressionCache`].
pub(crate) struct Cache {
    capacity: AtomicUsize,
    hash: fn(&[u8]) -> u64,
    state: Mutex<State>,
    hits: AtomicU64,
    misses: AtomicU64,
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
    /// them, else compressed now and kept. An encoder's error (none is
    /// expected: they write to memory) is returned, and nothing is kept.
    pub(crate) fn compressed(&self, coding: Coding, body: &Bytes) -> std::io::Result<Bytes> {
        let key = ((self.hash)(body), coding);
        let found = self
            .lock()
            .touch(key)
            .map(|e| (e.identity.clone(), e.encoded.clone()));
        if let Some((identity, encoded)) = found {
            if identity == body {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(encoded);
            }
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
        let (bytes, entries) = {
            let state = self.lock();
            (state.bytes, state.entries.len())
        };
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bypasses: self.bypasses.load(Ordering::Relaxed),
            bytes,
            entries,
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
    }

    #[test]
    fn a_hit_is_the_first_answers_bytes_without_a_copy() {
        let cache = Cache::new(1 << 20, xxh3);
        let page = body(0, 4000);
        let first = cache.compressed(Coding::Brotli, &page).unwrap();
        let again = cache.compressed(Coding::Brotli, &page).unwrap();
        assert_eq!(first, again);
        assert_eq!(first.as_ptr(), again.as_ptr());
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (1, 1, 1));
        // Another coding of the same body is another entry.
        let gzip = cache.compressed(Coding::Gzip, &page).unwrap();
        assert_ne!(gzip, first);
        assert_eq!(cache.stats().entries, 2);
        check_invariants(&cache);
    }

    #[test]
    fn a_hash_collision_never_gives_another_bodys_bytes() {
        // Every body hashes alike: only the comparison tells them apart.
        let cache = Cache::new(1 << 20, |_| 7);
        let a = body(0, 3000);
        let mut b = a.to_vec();
        b[1500] = b'z';
        let b = Bytes::from(b);
        let for_a = cache.compressed(Coding::Zstd, &a).unwrap();
        let for_b = cache.compressed(Coding::Zstd, &b).unwrap();
        assert_ne!(for_a, for_b);
        assert_eq!(zstd::decode_all(&for_b[..]).unwrap(), b);
        // b replaced a under the shared key: a is compressed again, and
        // still gets its own bytes.
        let again = cache.compressed(Coding::Zstd, &a).unwrap();
        assert_eq!(zstd::decode_all(&again[..]).unwrap(), a);
        assert_eq!(cache.stats().hits, 0);
        assert_eq!(cache.stats().misses, 3);
        check_invariants(&cache);
    }

    #[test]
    fn the_least_recently_used_go_first_and_the_bound_holds() {
        let cache = Cache::new(0, xxh3);
        let pages: Vec<Bytes> = (0..6).map(|i| body(i, 2000 + i as usize)).collect();
        let size = |p: &Bytes| p.len() + encode(Coding::Gzip, p).unwrap().len();
        // Room for three of them exactly.
        let bound: usize = pages[..3].iter().map(size).sum::<usize>() + 10;
        cache.capacity.store(bound, Ordering::Relaxed);
        for p in &pages[..3] {
            cache.compressed(Coding::Gzip, p).unwrap();
        }
        assert_eq!(cache.stats().entries, 3);
        // Page 0 used again: page 1 is now the oldest.
        cache.compressed(Coding::Gzip, &pages[0]).unwrap();
        cache.compressed(Coding::Gzip, &pages[3]).unwrap();
        check_invariants(&cache);
        let kept = |p: &Bytes| {
            let state = cache.lock();
            state.entries.contains_key(&(xxh3(p), Coding::Gzip))
        };
        assert!(!kept(&pages[1]), "the least recently used went first");
        assert!(kept(&pages[0]) && kept(&pages[2]) && kept(&pages[3]));
        for p in &pages[4..] {
            cache.compressed(Coding::Gzip, p).unwrap();
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
        assert_eq!(cache.stats().misses, 2);
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
