//! The memstore: one store's recent writes, sorted, in memory.
//!
//! A memstore is a lock-free skip list of *rows* (plain byte order, which
//! is the cell order of rows), each holding its cells sorted in internal
//! order (`crate::iter`) under a small lock ([`row::RowCells`]); plus O(1)
//! size accounting in atomics (docs/architecture.md, design rule 2: no walk
//! over regions or entries to learn a size). Two levels instead of one skip
//! list of cells: a 9-cell row mutation costs one skip-list search instead
//! of nine, and the row comparisons are plain `memcmp`s. It is never flushed in
//! place: the region swaps a whole [`MemStoreSet`] for a fresh one and
//! writes the old one out while writers continue (docs/architecture.md,
//! design rule 1).
//!
//! This module must never do I/O and never decide visibility beyond the
//! MVCC read point: deletes and versions are the scanner's job.

pub mod row;
mod row_key;
mod scanner;

pub use row_key::RowKey;

pub use scanner::MemStoreScanner;

use crate::cell::reuse;
use crate::iter::compare_entries;
use bytes::Bytes;
use crossbeam_skiplist::SkipMap;
use ferrobase_types::key;
use parking_lot::RwLock;
use row::{CellView, RowCells};
use std::cmp::Ordering;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};

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

/// Bytes charged once per row on top of what its cells' structures hold
/// ([`RowCells::overhead`]): its skip-list node (key, locked cells,
/// reference count and a tower pointer) and the shared header the arena's
/// `Bytes` gets when the row key is sliced out of it. Like HBase's
/// `heapSize()`, the charge is what the memory holds, so a memstore
/// flushes at its configured size of real memory, whether its rows are
/// narrow (where fixed costs dominate) or wide (where slots do).
pub const ROW_OVERHEAD: u64 = (std::mem::size_of::<RowKey>()
    + std::mem::size_of::<RwLock<RowCells>>()
    + SKIP_NODE_HEADER
    + BYTES_SHARED_HEADER) as u64;

/// A crossbeam skip-list node's reference count and height word plus one
/// tower pointer (the average tower is 1.33 pointers).
const SKIP_NODE_HEADER: usize = 16;

/// `bytes::Bytes`' shared header (buffer, capacity, reference count) as
/// the allocator rounds it.
const BYTES_SHARED_HEADER: usize = 32;

/// One store's memstore.
pub struct MemStore {
    /// The store's family: every cell here is of it, so cells do not
    /// repeat it (see [`row`]).
    family: Bytes,
    rows: SkipMap<RowKey, RwLock<RowCells>>,
    entries: std::sync::atomic::AtomicUsize,
    size: AtomicU64,
    min_seq: AtomicU64,
    max_seq: AtomicU64,
    min_ts: AtomicU64,
    max_ts: AtomicU64,
}

impl MemStore {
    /// An empty memstore of `family`.
    pub fn new(family: Bytes) -> MemStore {
        MemStore {
            family,
            rows: SkipMap::new(),
            entries: std::sync::atomic::AtomicUsize::new(0),
            size: AtomicU64::new(0),
            min_seq: AtomicU64::new(u64::MAX),
            max_seq: AtomicU64::new(0),
            min_ts: AtomicU64::new(u64::MAX),
            max_ts: AtomicU64::new(0),
        }
    }

    /// The family of every cell here.
    pub fn family(&self) -> &Bytes {
        &self.family
    }

    /// Inserts one entry (a full encoded key, whose row is `row`) and
    /// returns the bytes it added to the accounting; `None`, inserting
    /// nothing, when the key does not parse or names another family. An
    /// entry with an identical key and sequence id replaces the old one.
    /// For tests and tools; the write path uses [`insert_row`](Self::insert_row).
    pub fn insert(&self, row: &[u8], key: &[u8], seq: u64, value: &[u8]) -> Option<u64> {
        let (family, qualifier, timestamp, kind) =
            key::column_of(key).and_then(key::column_parts)?;
        if family != &self.family[..] || key::row_of(key) != Some(row) {
            return None;
        }
        let kind = ferrobase_types::CellType::from_code(kind)?;
        let run = ferrobase_types::CellRun::single(qualifier, timestamp, kind, value);
        let mut arena = Vec::with_capacity(row.len() + run.as_bytes().len());
        arena.extend_from_slice(row);
        arena.extend_from_slice(run.as_bytes());
        Some(self.insert_row(
            row,
            seq,
            (Bytes::from(arena), timestamp),
            &[row.len() as u32],
            (timestamp, timestamp),
            false,
        ))
    }

    /// Inserts the cells one mutation wrote to one row. `arena` starts with
    /// the row, followed by cell-run bytes holding the cells, which start
    /// at `starts` (see [`row`]); "latest" timestamps there mean `now`. All
    /// have sequence id `seq`, timestamps within `time_range`. One row
    /// lookup and one lock for all of them. Returns the bytes added to the
    /// accounting. `sorted`: the cells are in internal order with no two
    /// identical keys (see [`RowCells::insert_sorted`]).
    pub fn insert_row(
        &self,
        row: &[u8],
        seq: u64,
        (arena, now): (Bytes, u64),
        starts: &[u32],
        time_range: (u64, u64),
        sorted: bool,
    ) -> u64 {
        let mut delta = arena.len() as u64;
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
            let before = row_cells.overhead();
            let added = if sorted {
                row_cells.insert_sorted(arena, now, starts, seq)
            } else {
                row_cells.insert(arena, now, starts, seq)
            };
            // What the row's slots, arena handles or B-tree grew by (a
            // switch to the B-tree may free more than it takes: never
            // credited, the memstore's size only grows until its flush).
            delta += row_cells.overhead().saturating_sub(before);
            added
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

    /// Walks a memstore no one writes to any more (a flush snapshot) row
    /// by row, in place, keeping only the newest write of each identical
    /// key: `f(row, cells)` gets each row with its cells in internal order
    /// (the store file writer's `append_row`). No key is built; the cells
    /// are gathered in one buffer reused from row to row.
    pub fn for_each_newest_row<E>(
        &self,
        mut f: impl FnMut(&[u8], &[CellView<'_>]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut spare: Vec<CellView<'static>> = Vec::new();
        for entry in self.rows.iter() {
            let cells = entry.value().read();
            let mut views = reuse(std::mem::take(&mut spare));
            cells.for_each_newest(|c| {
                views.push(*c);
                Ok::<(), E>(())
            })?;
            f(entry.key().row(), &views)?;
            spare = reuse(views);
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
    /// Empty memstores for stores of `families`, in order.
    pub fn new(families: impl IntoIterator<Item = Bytes>) -> MemStoreSet {
        MemStoreSet {
            stores: families
                .into_iter()
                .map(|f| Arc::new(MemStore::new(f)))
                .collect(),
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
    use super::*;
    use crate::iter::CellIterator;
    use ferrobase_types::{CellType, key};

    #[test]
    fn newest_rows_come_in_order_with_one_cell_per_key() {
        let m = MemStore::new(Bytes::from_static(b"cf"));
        let put = |row: &[u8], q: &[u8], ts: u64, seq: u64, v: &[u8]| {
            let k = key::encode(row, b"cf", q, ts, CellType::Put);
            m.insert(row, &k, seq, v).unwrap();
        };
        put(b"r2", b"b", 5, 1, b"old");
        put(b"r1", b"a", 5, 2, b"x");
        put(b"r2", b"a", 5, 3, b"y");
        // Same key as the first, newer write: only it is kept.
        put(b"r2", b"b", 5, 4, b"new");
        put(b"r2", b"b", 7, 5, b"newer version");
        type Walked = (Vec<u8>, Vec<(Vec<u8>, u64, Vec<u8>)>);
        let mut seen: Vec<Walked> = Vec::new();
        m.for_each_newest_row(|row, cells| {
            let cells = cells
                .iter()
                .map(|c| (c.qualifier.to_vec(), c.timestamp, c.value.to_vec()))
                .collect();
            seen.push((row.to_vec(), cells));
            Ok::<(), ()>(())
        })
        .unwrap();
        let cell = |q: &[u8], ts: u64, v: &[u8]| (q.to_vec(), ts, v.to_vec());
        assert_eq!(
            seen,
            vec![
                (b"r1".to_vec(), vec![cell(b"a", 5, b"x")]),
                (
                    b"r2".to_vec(),
                    vec![
                        cell(b"a", 5, b"y"),
                        cell(b"b", 7, b"newer version"),
                        cell(b"b", 5, b"new"),
                    ]
                ),
            ]
        );
        // An error from the callback stops the walk and is returned.
        let mut calls = 0;
        let r = m.for_each_newest_row(|_, _| {
            calls += 1;
            Err("stop")
        });
        assert_eq!((r, calls), (Err("stop"), 1));
    }

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

    fn ins(m: &MemStore, k: (Bytes, Bytes), seq: u64, v: &'static [u8]) {
        assert!(m.insert(&k.0, &k.1, seq, v).is_some());
    }

    /// A row's arena, and the slots of its `n` cells (one per byte).
    fn run_row(row: &[u8], n: usize) -> (Bytes, Vec<u32>) {
        let mut arena = row.to_vec();
        let mut starts = Vec::new();
        for i in 0..n {
            starts.push(arena.len() as u32);
            let q = format!("q{i:03}");
            let run = ferrobase_types::CellRun::single(q.as_bytes(), 7, CellType::Put, b"v");
            arena.extend_from_slice(run.as_bytes());
        }
        (Bytes::from(arena), starts)
    }

    #[test]
    fn accounting_charges_what_the_row_structures_hold() {
        let m = MemStore::new(Bytes::from_static(b"f"));
        // A new 53-cell row written once: its arena, the row's fixed
        // costs, one arena handle and 53 slots of 8 bytes, nothing more.
        let (arena, starts) = run_row(b"wide", 53);
        let len = arena.len() as u64;
        let charged = m.insert_row(b"wide", 1, (arena, 0), &starts, (7, 7), true);
        let handle = std::mem::size_of::<row::Arena>() as u64;
        assert_eq!(charged, len + ROW_OVERHEAD + handle + 53 * row::SLOT_SIZE);
        // A second write to the row adds its arena and what the vectors
        // grew by, but no second row charge.
        let overhead = |m: &MemStore| {
            let e = m.row_map().front().unwrap();
            e.value().read().overhead()
        };
        let before = overhead(&m);
        let (arena, starts) = run_row(b"wide", 1);
        let len = arena.len() as u64;
        let again = m.insert_row(b"wide", 2, (arena, 0), &starts, (7, 7), true);
        assert!(overhead(&m) > before);
        assert_eq!(again, len + overhead(&m) - before);
        // Past SMALL_MAX the row moves to a B-tree: every cell is then
        // charged a B-tree entry.
        let (arena, starts) = run_row(b"wide", row::SMALL_MAX);
        let len = arena.len() as u64;
        let big = m.insert_row(b"wide", 3, (arena, 0), &starts, (7, 7), false);
        assert!(
            big >= len + row::SMALL_MAX as u64 * row::LARGE_ENTRY_SIZE / 2,
            "{big}"
        );
        assert_eq!(m.size(), charged + again + big);
    }

    #[test]
    fn sorted_by_key_then_seq_desc_and_read_point_hides_newer() {
        let m = Arc::new(MemStore::new(Bytes::from_static(b"f")));
        ins(&m, k("b", "q", 1), 1, b"b1");
        ins(&m, k("a", "q", 1), 2, b"a-old");
        ins(&m, k("a", "q", 1), 5, b"a-new");
        ins(&m, k("a", "q", 9), 3, b"a9");
        assert_eq!(m.len(), 4);
        // Two rows, four one-cell arenas (row + 1-byte qualifier, type,
        // timestamp code and value length, then the value).
        assert!(m.size() > 2 * ROW_OVERHEAD + 4 * 6);
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
