//! The memstore: one store's recent writes, sorted, in memory.
//!
//! A memstore is a lock-free skip list of entries in internal order
//! (`crate::iter`), plus O(1) size accounting in atomics (DESIGN rule 2: no
//! walk over regions or entries to learn a size). It is never flushed in
//! place: the region swaps a whole [`MemStoreSet`] for a fresh one and
//! writes the old one out while writers continue (DESIGN rule 1).
//!
//! This module must never do I/O and never decide visibility beyond the
//! MVCC read point: deletes and versions are the scanner's job.

mod scanner;

pub use scanner::MemStoreScanner;

use crate::iter::compare_entries;
use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// Bytes charged per entry on top of key and value: skip-list node, two
/// `Bytes` handles and the sequence id. An estimate, like HBase's
/// `KeyValue.heapSize()` accounting; it makes many tiny cells count.
pub const ENTRY_OVERHEAD: u64 = 96;

/// A skip-list key: encoded cell key plus the sequence id of its write.
#[derive(Clone, Debug)]
pub struct MemKey {
    pub key: Bytes,
    pub seq: u64,
}

impl PartialEq for MemKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for MemKey {}
impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_entries(&self.key, self.seq, &other.key, other.seq)
    }
}

/// One store's memstore.
#[derive(Default)]
pub struct MemStore {
    map: SkipMap<MemKey, Bytes>,
    size: AtomicU64,
    min_seq: AtomicU64,
    max_seq: AtomicU64,
    min_ts: AtomicU64,
    max_ts: AtomicU64,
}

impl MemStore {
    /// An empty memstore.
    pub fn new() -> MemStore {
        MemStore {
            map: SkipMap::new(),
            size: AtomicU64::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            max_seq: AtomicU64::new(0),
            min_ts: AtomicU64::new(u64::MAX),
            max_ts: AtomicU64::new(0),
        }
    }

    /// Inserts one entry and returns the bytes it added to the accounting.
    /// An entry with an identical key and sequence id replaces the old one
    /// (a batch repeating a cell: the later one wins).
    pub fn insert(&self, key: Bytes, seq: u64, timestamp: u64, value: Bytes) -> u64 {
        let delta = key.len() as u64 + value.len() as u64 + ENTRY_OVERHEAD;
        self.map.insert(MemKey { key, seq }, value);
        self.size.fetch_add(delta, AtomicOrdering::Relaxed);
        self.min_seq.fetch_min(seq, AtomicOrdering::Relaxed);
        self.max_seq.fetch_max(seq, AtomicOrdering::Relaxed);
        self.min_ts.fetch_min(timestamp, AtomicOrdering::Relaxed);
        self.max_ts.fetch_max(timestamp, AtomicOrdering::Relaxed);
        delta
    }

    /// Accounted bytes.
    pub fn size(&self) -> u64 {
        self.size.load(AtomicOrdering::Relaxed)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Largest sequence id inserted (0 when empty).
    pub fn max_seq(&self) -> u64 {
        self.max_seq.load(AtomicOrdering::Relaxed)
    }

    /// Smallest sequence id inserted (`u64::MAX` when empty).
    pub fn min_seq(&self) -> u64 {
        self.min_seq.load(AtomicOrdering::Relaxed)
    }

    /// `(min, max)` cell timestamps, `None` when empty.
    pub fn time_range(&self) -> Option<(u64, u64)> {
        let (lo, hi) = (
            self.min_ts.load(AtomicOrdering::Relaxed),
            self.max_ts.load(AtomicOrdering::Relaxed),
        );
        (lo <= hi).then_some((lo, hi))
    }

    /// A cursor that sees entries with `seq <= read_point`.
    pub fn scanner(self: &Arc<Self>, read_point: u64) -> MemStoreScanner {
        MemStoreScanner::new(Arc::clone(self), read_point)
    }

    pub(crate) fn map(&self) -> &SkipMap<MemKey, Bytes> {
        &self.map
    }
}

/// The memstores of every store of a region, swapped as one at flush.
pub struct MemStoreSet {
    /// One per family, in the table descriptor's family order.
    pub stores: Vec<Arc<MemStore>>,
}

impl MemStoreSet {
    /// Empty memstores for `families` stores.
    pub fn new(families: usize) -> MemStoreSet {
        MemStoreSet {
            stores: (0..families).map(|_| Arc::new(MemStore::new())).collect(),
        }
    }

    /// Accounted bytes of all stores.
    pub fn size(&self) -> u64 {
        self.stores.iter().map(|m| m.size()).sum()
    }

    /// True when every store is empty.
    pub fn is_empty(&self) -> bool {
        self.stores.iter().all(|m| m.is_empty())
    }

    /// Smallest sequence id in any store (`u64::MAX` when empty).
    pub fn min_seq(&self) -> u64 {
        self.stores.iter().map(|m| m.min_seq()).min().unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::iter::CellIterator;
    use ferrobase_types::{CellType, key};

    fn k(row: &str, q: &str, ts: u64) -> Bytes {
        Bytes::from(key::encode(row.as_bytes(), b"f", q.as_bytes(), ts, CellType::Put))
    }

    #[test]
    fn sorted_by_key_then_seq_desc_and_read_point_hides_newer() {
        let m = Arc::new(MemStore::new());
        m.insert(k("b", "q", 1), 1, 1, Bytes::from_static(b"b1"));
        m.insert(k("a", "q", 1), 2, 1, Bytes::from_static(b"a-old"));
        m.insert(k("a", "q", 1), 5, 1, Bytes::from_static(b"a-new"));
        m.insert(k("a", "q", 9), 3, 9, Bytes::from_static(b"a9"));
        assert_eq!(m.len(), 4);
        assert!(m.size() > 4 * ENTRY_OVERHEAD);
        assert_eq!((m.min_seq(), m.max_seq()), (1, 5));
        assert_eq!(m.time_range(), Some((1, 9)));

        let mut s = m.scanner(u64::MAX);
        s.seek_to_first().unwrap();
        let mut seen = Vec::new();
        while s.valid() {
            seen.push(s.value().to_vec());
            s.next().unwrap();
        }
        assert_eq!(seen, vec![b"a9".to_vec(), b"a-new".to_vec(), b"a-old".to_vec(), b"b1".to_vec()]);

        let mut s = m.scanner(4);
        s.seek(&k("a", "q", 1)).unwrap();
        assert_eq!(s.value(), b"a-old");
        assert_eq!(s.seq(), 2);
    }
}
