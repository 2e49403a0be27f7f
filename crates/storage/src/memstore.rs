//! The memstore: one store's recent writes, sorted, in memory.
//!
//! A memstore is a lock-free skip list of *rows* (plain byte order, which
//! is the cell order of rows), each holding its cells sorted in internal
//! order (`crate::iter`) under a small lock ([`row::RowCells`]); plus O(1)
//! size accounting in atomics (DESIGN rule 2: no walk over regions or
//! entries to learn a size). Two levels instead of one skip list of cells:
//! a 9-cell row mutation costs one skip-list search instead of nine, and
//! the row comparisons are plain `memcmp`s. It is never flushed in
//! place: the region swaps a whole [`MemStoreSet`] for a fresh one and
//! writes the old one out while writers continue (DESIGN rule 1).
//!
//! This module must never do I/O and never decide visibility beyond the
//! MVCC read point: deletes and versions are the scanner's job.

pub mod row;
mod row_key;
mod scanner;

pub use row_key::RowKey;

pub use scanner::MemStoreScanner;

use crate::iter::compare_entries;
use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use ferrobase_types::key;
use parking_lot::RwLock;
use row::RowCells;
use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

/// Bytes charged per cell on top of its key and value: its slot in the
/// row's sorted vector plus growth slack. Like HBase's `heapSize()`
/// accounting, it makes many tiny cells count.
pub const ENTRY_OVERHEAD: u64 = row::SLOT_SIZE + 8;

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

/// Bytes charged per row on top of its cells: skip-list node, lock,
/// vectors, and one arena handle per mutation.
pub const ROW_OVERHEAD: u64 = 128;

/// One store's memstore.
#[derive(Default)]
pub struct MemStore {
    rows: SkipMap<RowKey, RwLock<RowCells>>,
    entries: std::sync::atomic::AtomicUsize,
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
            rows: SkipMap::new(),
            entries: std::sync::atomic::AtomicUsize::new(0),
            size: AtomicU64::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            max_seq: AtomicU64::new(0),
            min_ts: AtomicU64::new(u64::MAX),
            max_ts: AtomicU64::new(0),
        }
    }

    /// Inserts one entry (a full encoded key, whose row is `row`) and
    /// returns the bytes it added to the accounting. An entry with an
    /// identical key and sequence id replaces the old one (a batch
    /// repeating a cell: the later one wins). For tests and tools; the
    /// write path uses [`insert_row`](Self::insert_row).
    pub fn insert(&self, row: &[u8], key: &[u8], seq: u64, timestamp: u64, value: &[u8]) -> u64 {
        let column = key::column_of(key).unwrap_or_default();
        let mut arena = Vec::with_capacity(row.len() + column.len() + value.len());
        arena.extend_from_slice(row);
        arena.extend_from_slice(column);
        arena.extend_from_slice(value);
        let cell = (row.len() as u32, column.len() as u32, value.len() as u32);
        self.insert_row(
            row,
            seq,
            Bytes::from(arena),
            &[cell],
            (timestamp, timestamp),
            true,
        )
    }

    /// Inserts the cells one mutation wrote to one row. `arena` starts with
    /// the row, followed by the cells' column keys and values (see
    /// [`row`]); all have sequence id `seq`, timestamps within
    /// `time_range`. One row lookup and one lock for all of them. Returns
    /// the bytes added to the accounting. `sorted`: the cells are in internal
    /// order with no two identical keys (see [`RowCells::insert_sorted`]).
    pub fn insert_row(
        &self,
        row: &[u8],
        seq: u64,
        arena: Bytes,
        cells: &[row::ArenaCell],
        time_range: (u64, u64),
        sorted: bool,
    ) -> u64 {
        let mut delta = arena.len() as u64 + cells.len() as u64 * ENTRY_OVERHEAD;
        // The arena's leading row serves as the skip-list key without a
        // copy, and one search finds or inserts the row.
        let row_key = if arena.get(..row.len()) == Some(row) {
            arena.slice(..row.len())
        } else {
            Bytes::copy_from_slice(row)
        };
        let ptr = row_key.as_ptr();
        let entry = self
            .rows
            .get_or_insert_with(RowKey::new(row_key), RwLock::default);
        if entry.key().row().as_ptr() == ptr {
            delta += ROW_OVERHEAD;
        }
        let added = {
            let mut row_cells = entry.value().write();
            if sorted {
                row_cells.insert_sorted(arena, cells, seq)
            } else {
                row_cells.insert_arena(arena, cells, seq)
            }
        };
        self.entries.fetch_add(added, AtomicOrdering::Relaxed);
        self.size.fetch_add(delta, AtomicOrdering::Relaxed);
        self.min_seq.fetch_min(seq, AtomicOrdering::Relaxed);
        self.max_seq.fetch_max(seq, AtomicOrdering::Relaxed);
        self.min_ts.fetch_min(time_range.0, AtomicOrdering::Relaxed);
        self.max_ts.fetch_max(time_range.1, AtomicOrdering::Relaxed);
        delta
    }

    /// Accounted bytes.
    pub fn size(&self) -> u64 {
        self.size.load(AtomicOrdering::Relaxed)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.load(AtomicOrdering::Relaxed)
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows.len()
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
        MemStoreScanner::new(Arc::clone(self), read_point, None)
    }

    /// Like [`scanner`](Self::scanner), but never reads rows ≥ `stop_row`
    /// (a get reads exactly one row).
    pub fn scanner_until(self: &Arc<Self>, read_point: u64, stop_row: Bytes) -> MemStoreScanner {
        MemStoreScanner::new(Arc::clone(self), read_point, Some(stop_row))
    }

    /// Calls `f(key, seq, value)` for every entry in cell order (all
    /// sequence ids). For a memstore no one writes to any more (a flush
    /// snapshot): rows are walked in place, without copying cells out.
    pub fn for_each_entry<E>(
        &self,
        mut f: impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        for entry in self.rows.iter() {
            entry.value().read().for_each(entry.key().row(), &mut f)?;
        }
        Ok(())
    }

    /// [`for_each_entry`](Self::for_each_entry) keeping only the newest
    /// write of each identical key: what a flush writes.
    pub fn for_each_newest<E>(
        &self,
        mut f: impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        for entry in self.rows.iter() {
            entry
                .value()
                .read()
                .for_each_newest(entry.key().row(), &mut f)?;
        }
        Ok(())
    }

    /// [`for_each_newest`](Self::for_each_newest) by row, for `sink`:
    /// `row(sink, r)` opens each row, then `column(sink, column key, seq,
    /// value)` gets its cells (the store file writer's `begin_row` and
    /// `append_column`).
    pub fn for_each_newest_by_row<S, E>(
        &self,
        sink: &mut S,
        row: impl Fn(&mut S, &[u8]) -> Result<(), E>,
        column: impl Fn(&mut S, &[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        for entry in self.rows.iter() {
            row(sink, entry.key().row())?;
            entry
                .value()
                .read()
                .for_each_newest_column(|c, seq, v| column(sink, c, seq, v))?;
        }
        Ok(())
    }

    pub(crate) fn row_map(&self) -> &SkipMap<RowKey, RwLock<RowCells>> {
        &self.rows
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
        self.stores
            .iter()
            .map(|m| m.min_seq())
            .min()
            .unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::iter::CellIterator;
    use ferrobase_types::{CellType, key};

    fn k(row: &str, q: &str, ts: u64) -> (Bytes, Bytes) {
        (
            Bytes::copy_from_slice(row.as_bytes()),
            Bytes::from(key::encode(
                row.as_bytes(),
                b"f",
                q.as_bytes(),
                ts,
                CellType::Put,
            )),
        )
    }

    fn ins(m: &MemStore, k: (Bytes, Bytes), seq: u64, ts: u64, v: &'static [u8]) {
        m.insert(&k.0, &k.1, seq, ts, v);
    }

    #[test]
    fn sorted_by_key_then_seq_desc_and_read_point_hides_newer() {
        let m = Arc::new(MemStore::new());
        ins(&m, k("b", "q", 1), 1, 1, b"b1");
        ins(&m, k("a", "q", 1), 2, 1, b"a-old");
        ins(&m, k("a", "q", 1), 5, 1, b"a-new");
        ins(&m, k("a", "q", 9), 3, 9, b"a9");
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
        assert_eq!(
            seen,
            vec![
                b"a9".to_vec(),
                b"a-new".to_vec(),
                b"a-old".to_vec(),
                b"b1".to_vec()
            ]
        );

        let mut s = m.scanner(4);
        s.seek(&k("a", "q", 1).1).unwrap();
        assert_eq!(s.value(), b"a-old");
        assert_eq!(s.seq(), 2);
    }
}
