//! The static children of a tree node, found by exact text.
//!
//! A node with a few static children scans them; beyond [`LINEAR`] it also
//! keeps an open-addressing hash table of their indices, so finding a child
//! costs one hash of the segment, usually one probe and one text comparison,
//! however many siblings it has (a binary search over 400 sorted strings
//! took nine `memcmp` calls and as many pointer chases).

use crate::bytes::{eq, read4, read8};

/// Up to this many children are scanned instead of hashed.
const LINEAR: usize = 4;

/// Static children keyed by their exact text, in insertion order.
///
/// Invariant: `slots` is empty while `entries.len() <= LINEAR`; otherwise its
/// length is a power of two at least twice `entries.len()`, and every entry
/// `i` is reachable by linear probing from its hash, stored as
/// `tag << 32 | (i + 1)` where `tag` is the high half of the hash. A slot of
/// `0` is empty and ends a probe.
#[derive(Debug, Clone)]
pub(crate) struct Statics<N> {
    entries: Vec<(Box<str>, N)>,
    slots: Box<[u64]>,
}

impl<N> Default for Statics<N> {
    fn default() -> Self {
        Statics {
            entries: Vec::new(),
            slots: Box::default(),
        }
    }
}

impl<N> Statics<N> {
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The child whose text is exactly `key`.
    // Always inlined into the walk: as a call it spent a third of its
    // instructions saving and restoring registers.
    #[inline(always)]
    pub(crate) fn get(&self, key: &str) -> Option<&N> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The child whose text is exactly `key`, created by `make` if missing.
    pub(crate) fn get_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> N) -> &mut N {
        let i = match self.position(key) {
            Some(i) => i,
            None => {
                self.entries.push((key.into(), make()));
                let i = self.entries.len() - 1;
                if self.entries.len() > LINEAR {
                    if self.slots.len() < 2 * self.entries.len() {
                        self.rehash();
                    } else {
                        self.place(i);
                    }
                }
                i
            }
        };
        &mut self.entries[i].1
    }

    #[inline(always)]
    fn position(&self, key: &str) -> Option<usize> {
        if self.slots.is_empty() {
            return self
                .entries
                .iter()
                .position(|(text, _)| eq(text.as_bytes(), key.as_bytes()));
        }
        let hash = hash(key.as_bytes());
        let tag = hash >> 32;
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            if slot >> 32 == tag {
                let i = (slot as u32 - 1) as usize;
                if eq(self.entries[i].0.as_bytes(), key.as_bytes()) {
                    return Some(i);
                }
            }
            at = (at + 1) & mask;
        }
    }

    fn rehash(&mut self) {
        let len = (2 * self.entries.len()).next_power_of_two().max(16);
        self.slots = vec![0; len].into_boxed_slice();
        for i in 0..self.entries.len() {
            self.place(i);
        }
    }

    /// Puts entry `i` in the first free slot of its probe sequence.
    fn place(&mut self, i: usize) {
        let hash = hash(self.entries[i].0.as_bytes());
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        while self.slots[at] != 0 {
            at = (at + 1) & mask;
        }
        // Indices fit in 32 bits: a node with 2^32 static children would need
        // far more memory than a route table is given.
        self.slots[at] = (hash >> 32) << 32 | (i as u64 + 1);
    }
}

const K0: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;

/// Multiplies to 128 bits and folds the halves together (wyhash's mixer).
#[inline]
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    product as u64 ^ (product >> 64) as u64
}

/// A fast, non-cryptographic hash of a segment's bytes.
///
/// Reads whole words (overlapping at the end) instead of bytes, so a
/// typical segment costs a few loads and two multiplications. Collisions
/// only cost a text comparison; a client who engineers them slows its own
/// lookup down to a scan of one node's children, never further.
#[inline]
fn hash(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let (a, b) = if len > 8 {
        let mut acc = K0 ^ len as u64;
        let mut at = 0;
        while len - at > 8 {
            acc = fold(acc ^ read8(bytes, at), K1);
            at += 8;
        }
        (acc, read8(bytes, len - 8))
    } else if len >= 4 {
        (read4(bytes, 0), read4(bytes, len - 4))
    } else if len > 0 {
        let spread =
            u64::from(bytes[0]) << 16 | u64::from(bytes[len / 2]) << 8 | u64::from(bytes[len - 1]);
        (spread, 0)
    } else {
        (0, 0)
    };
    fold(a ^ K0 ^ len as u64, b ^ K1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_child_and_nothing_else() {
        let mut statics: Statics<usize> = Statics::default();
        let keys: Vec<String> = (0..300)
            .map(|i| match i % 5 {
                0 => format!("g{i}"),
                1 => format!("page{i}"),
                2 => format!("a-rather-long-segment-{i}"),
                3 => "x".repeat(i / 5),
                _ => format!("é{i}"),
            })
            .collect();
        for (i, key) in keys.iter().enumerate() {
            *statics.get_or_insert_with(key, || i) += 0;
            for (j, earlier) in keys[..=i].iter().enumerate() {
                assert_eq!(
                    statics.get(earlier),
                    Some(&j),
                    "{earlier:?} after {i} inserts"
                );
            }
            assert_eq!(statics.get("missing"), None);
            assert_eq!(statics.get(&format!("{key}/")), None);
        }
        assert_eq!(*statics.get_or_insert_with("g0", || 999), 0);
    }

    #[test]
    fn equal_text_hashes_equal_and_lengths_differ() {
        for len in 0..40 {
            let text = "ab".repeat(len);
            assert_eq!(hash(text.as_bytes()), hash(text.clone().as_bytes()));
            assert_ne!(hash(text.as_bytes()), hash(format!("{text}a").as_bytes()));
        }
        assert_ne!(hash(b""), hash(b"\0"));
    }
}
