//! The cells of one row in a memstore, sorted.
//!
//! A write hands the row one *arena*: a single buffer holding the row once,
//! then the *column keys* (`famlen family qualifier ts type`, see
//! [`key::encode_column_into`]) and values of that mutation's cells for
//! this row. A cell never stores its row again (DESIGN rule 6): a 53-column
//! row of 64-byte keys would otherwise hold 3.4 KB of copies of its key,
//! memstores would fill 5× sooner, and every comparison would first
//! `memcmp` 64 equal bytes. Full keys are rebuilt only when cells leave
//! the memstore (flush, scans).
//!
//! Most rows hold a handful of cells (a 9-column log line, a 60-point GPS
//! minute), so they keep a sorted `Vec` of 24-byte [`Slot`]s pointing into
//! their arenas: one binary search and a short shift per cell, one
//! allocation per mutation, no per-cell allocation or reference count. A
//! row that grows past [`SMALL_MAX`] cells (a hot counter, a very wide row)
//! moves to a `BTreeMap` so inserts stay O(log n).
//!
//! ```text
//! arenas: [ row | c0 v0 c1 v1 c2 v2 ] [ row | c3 v3 ]   (one per mutation)
//! slots:  (a0,@R,|c0|,|v0|,seq) (a1,@R,…) …   (sorted by column key, seq desc)
//! ```

use super::MemKey;
use bytes::Bytes;
use ferrobase_types::key;
use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

/// Cells a row keeps in its sorted vector before switching to a B-tree.
pub const SMALL_MAX: usize = 64;

/// One cell: where its column key and value sit in one of the row's arenas.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    arena: u32,
    start: u32,
    key_len: u32,
    value_len: u32,
    seq: u64,
}

/// A cell of an arena: `(start, column key length, value length)`; the
/// value follows the column key.
pub type ArenaCell = (u32, u32, u32);

/// A column key and the sequence id of its write, in the internal order.
#[derive(Clone, Debug)]
pub struct ColumnKey {
    pub column: Bytes,
    pub seq: u64,
}

fn compare_cells(a: &[u8], a_seq: u64, b: &[u8], b_seq: u64) -> Ordering {
    key::compare_column(a, b).then_with(|| b_seq.cmp(&a_seq))
}

impl PartialEq for ColumnKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for ColumnKey {}
impl PartialOrd for ColumnKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for ColumnKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_cells(&self.column, self.seq, &other.column, other.seq)
    }
}

/// See the module docs.
pub enum RowCells {
    Small {
        arenas: Vec<Bytes>,
        slots: Vec<Slot>,
    },
    Large(BTreeMap<ColumnKey, Bytes>),
}

impl Default for RowCells {
    fn default() -> Self {
        RowCells::Small {
            arenas: Vec::new(),
            slots: Vec::new(),
        }
    }
}

fn column_of<'a>(arenas: &'a [Bytes], s: &Slot) -> &'a [u8] {
    let start = s.start as usize;
    arenas
        .get(s.arena as usize)
        .and_then(|a| a.get(start..start + s.key_len as usize))
        .unwrap_or_default()
}

/// The column key and value of a slot, sharing the arena. Slots are built
/// from their arena by `insert_arena`, so the ranges always fit; a slot
/// that did not would yield an empty cell, never a panic.
fn parts(arenas: &[Bytes], s: &Slot) -> (Bytes, Bytes) {
    let (start, klen, vlen) = (s.start as usize, s.key_len as usize, s.value_len as usize);
    match arenas.get(s.arena as usize) {
        Some(a) if start + klen + vlen <= a.len() => (
            a.slice(start..start + klen),
            a.slice(start + klen..start + klen + vlen),
        ),
        _ => (Bytes::new(), Bytes::new()),
    }
}

/// `(family, qualifier, timestamp, type code)`, see [`key::column_parts`].
type ColumnParts<'a> = (&'a [u8], &'a [u8], u64, u8);

/// The first mutation of a row (the common case of a load: every row is
/// new): parse each column key once, sort, and keep the last of identical
/// keys, instead of one binary search and shift per cell (a 53-column row
/// arrives in qualifier order `q0 q1 … q9 q10`, which is not byte order).
/// Returns the sorted slots, or `None` if a key does not parse (the
/// general path then applies its byte-order fallback).
fn sorted_new_row(arena: &Bytes, idx: u32, cells: &[ArenaCell], seq: u64) -> Option<Vec<Slot>> {
    let mut keyed: Vec<(ColumnParts<'_>, Slot)> = Vec::with_capacity(cells.len());
    for &(start, key_len, value_len) in cells {
        let key = arena.get(start as usize..start as usize + key_len as usize)?;
        let slot = Slot {
            arena: idx,
            start,
            key_len,
            value_len,
            seq,
        };
        keyed.push((key::column_parts(key)?, slot));
    }
    // Stable: among identical keys the later cell of the mutation comes
    // last, and wins below.
    keyed.sort_by(|(a, _), (b, _)| {
        key::short_cmp(a.0, b.0)
            .then_with(|| key::short_cmp(a.1, b.1))
            .then_with(|| b.2.cmp(&a.2))
            .then_with(|| b.3.cmp(&a.3))
    });
    let mut slots = Vec::with_capacity(keyed.len());
    let mut iter = keyed.iter().peekable();
    while let Some((k, slot)) = iter.next() {
        if iter.peek().is_none_or(|(next, _)| next != k) {
            slots.push(*slot);
        }
    }
    Some(slots)
}

impl RowCells {
    /// Adds the cells of one mutation, all with sequence id `seq`, whose
    /// column keys and values live in `arena`. Returns how many keys were
    /// new (an identical key and sequence id replaces the older cell).
    pub fn insert_arena(&mut self, arena: Bytes, cells: &[ArenaCell], seq: u64) -> usize {
        if let RowCells::Small { arenas, slots } = self
            && slots.is_empty()
            && cells.len() > 1
            && cells.len() <= SMALL_MAX
            && let Some(sorted) = sorted_new_row(&arena, arenas.len() as u32, cells, seq)
        {
            *slots = sorted;
            arenas.push(arena);
            return slots.len();
        }
        self.insert_general(arena, cells, seq)
    }

    /// [`insert_arena`](Self::insert_arena) for cells the caller already
    /// put in internal order with no two identical keys (the write path
    /// sorts a run's cells before building the arena): a new row takes the
    /// slots as they are, with no key parsing or sorting here.
    pub fn insert_sorted(&mut self, arena: Bytes, cells: &[ArenaCell], seq: u64) -> usize {
        if let RowCells::Small { arenas, slots } = self
            && slots.is_empty()
            && cells.len() <= SMALL_MAX
        {
            let idx = arenas.len() as u32;
            slots.extend(cells.iter().map(|&(start, key_len, value_len)| Slot {
                arena: idx,
                start,
                key_len,
                value_len,
                seq,
            }));
            arenas.push(arena);
            debug_assert!(slots.windows(2).all(|w| {
                compare_cells(column_of(arenas, &w[0]), seq, column_of(arenas, &w[1]), seq).is_lt()
            }));
            return slots.len();
        }
        self.insert_general(arena, cells, seq)
    }

    /// [`insert_arena`](Self::insert_arena) one cell at a time.
    fn insert_general(&mut self, arena: Bytes, cells: &[ArenaCell], seq: u64) -> usize {
        let mut added = 0;
        if let RowCells::Small { arenas, slots } = self {
            if slots.len() + cells.len() <= SMALL_MAX {
                let idx = arenas.len() as u32;
                arenas.push(arena);
                slots.reserve(cells.len());
                for &(start, key_len, value_len) in cells {
                    let slot = Slot {
                        arena: idx,
                        start,
                        key_len,
                        value_len,
                        seq,
                    };
                    let col = column_of(arenas, &slot);
                    let cmp = |s: &Slot| compare_cells(column_of(arenas, s), s.seq, col, seq);
                    // Cells usually arrive in order: try the end first.
                    let pos = match slots.last() {
                        Some(last) if cmp(last) == Ordering::Less => Err(slots.len()),
                        None => Err(0),
                        _ => slots.binary_search_by(cmp),
                    };
                    match pos {
                        Ok(i) => {
                            if let Some(s) = slots.get_mut(i) {
                                *s = slot;
                            }
                        }
                        Err(i) => {
                            slots.insert(i, slot);
                            added += 1;
                        }
                    }
                }
                return added;
            }
            let map: BTreeMap<ColumnKey, Bytes> = slots
                .iter()
                .map(|s| {
                    let (column, value) = parts(arenas, s);
                    (ColumnKey { column, seq: s.seq }, value)
                })
                .collect();
            *self = RowCells::Large(map);
        }
        if let RowCells::Large(map) = self {
            let one = std::slice::from_ref(&arena);
            for &(start, key_len, value_len) in cells {
                let slot = Slot {
                    arena: 0,
                    start,
                    key_len,
                    value_len,
                    seq,
                };
                let (column, value) = parts(one, &slot);
                if map.insert(ColumnKey { column, seq }, value).is_none() {
                    added += 1;
                }
            }
        }
        added
    }

    /// Calls `f(column key, seq, value)` for every cell in order, newest
    /// first among identical keys, with slices of the arenas.
    fn for_each_column<E>(
        &self,
        mut f: impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            RowCells::Small { arenas, slots } => {
                for s in slots {
                    let (start, klen, vlen) =
                        (s.start as usize, s.key_len as usize, s.value_len as usize);
                    if let Some(a) = arenas.get(s.arena as usize)
                        && let (Some(k), Some(v)) = (
                            a.get(start..start + klen),
                            a.get(start + klen..start + klen + vlen),
                        )
                    {
                        f(k, s.seq, v)?;
                    }
                }
            }
            RowCells::Large(m) => {
                for (k, v) in m {
                    f(&k.column, k.seq, v)?;
                }
            }
        }
        Ok(())
    }

    /// Calls `f(full key, seq, value)` for every cell of `row` in order,
    /// newest first among identical keys: the flush's walk. Each full key
    /// is rebuilt in one reused buffer; values are slices of the arenas.
    pub fn for_each<E>(
        &self,
        row: &[u8],
        f: &mut impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.for_each_keyed(row, false, f)
    }

    /// [`for_each`](Self::for_each) with only the newest write of each
    /// identical key (what a flush keeps). Identical keys are adjacent and
    /// newest first, and differ only in their column part, so the check
    /// compares a few bytes instead of whole keys.
    pub fn for_each_newest<E>(
        &self,
        row: &[u8],
        f: &mut impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.for_each_keyed(row, true, f)
    }

    /// Calls `f(column key, seq, value)` for the newest write of each
    /// identical key of this row, in order: the flush's walk, which hands
    /// the store file writer column keys (it holds the row already).
    pub fn for_each_newest_column<E>(
        &self,
        mut f: impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        // One mutation's cells were deduplicated when inserted.
        let one_arena = matches!(self, RowCells::Small { arenas, .. } if arenas.len() == 1);
        if one_arena {
            return self.for_each_column(f);
        }
        let mut prev: Option<Vec<u8>> = None;
        self.for_each_column(|col, seq, value| {
            match &mut prev {
                Some(p) if key::short_cmp(p, col) == Ordering::Equal => return Ok(()),
                Some(p) => {
                    p.clear();
                    p.extend_from_slice(col);
                }
                None => prev = Some(col.to_vec()),
            }
            f(col, seq, value)
        })
    }

    fn for_each_keyed<E>(
        &self,
        row: &[u8],
        newest_only: bool,
        f: &mut impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut full = Vec::with_capacity(2 + row.len() + 64);
        key::join_into(&mut full, row, &[]);
        let prefix = full.len();
        let mut with_row = |col: &[u8], seq, value: &[u8]| {
            full.truncate(prefix);
            full.extend_from_slice(col);
            f(&full, seq, value)
        };
        if newest_only {
            self.for_each_newest_column(with_row)
        } else {
            self.for_each_column(&mut with_row)
        }
    }

    /// Appends to `out` every cell of `row` ≥ `from` (all when `None`, or
    /// when `from` is in an earlier row) whose sequence id is visible at
    /// `read_point`, with full keys (one allocation for the row's keys).
    pub fn collect(
        &self,
        row: &[u8],
        from: Option<&MemKey>,
        read_point: u64,
        out: &mut VecDeque<(MemKey, Bytes)>,
    ) {
        let from = from.and_then(|f| {
            (key::row_of(&f.key) == Some(row))
                .then(|| key::column_of(&f.key).map(|c| (c, f.seq)))
                .flatten()
        });
        let mut picked: Vec<(Bytes, u64, Bytes)> = Vec::new();
        match self {
            RowCells::Small { arenas, slots } => {
                let start = match from {
                    Some((col, seq)) => slots.partition_point(|s| {
                        compare_cells(column_of(arenas, s), s.seq, col, seq).is_lt()
                    }),
                    None => 0,
                };
                for s in slots.iter().skip(start) {
                    if s.seq <= read_point {
                        let (c, v) = parts(arenas, s);
                        picked.push((c, s.seq, v));
                    }
                }
            }
            RowCells::Large(m) => {
                let iter: Box<dyn Iterator<Item = (&ColumnKey, &Bytes)>> = match from {
                    Some((col, seq)) => Box::new(m.range(
                        ColumnKey {
                            column: Bytes::copy_from_slice(col),
                            seq,
                        }..,
                    )),
                    None => Box::new(m.iter()),
                };
                for (k, v) in iter {
                    if k.seq <= read_point {
                        picked.push((k.column.clone(), k.seq, v.clone()));
                    }
                }
            }
        }
        let prefix = 2 + row.len();
        let total: usize = picked.iter().map(|(c, _, _)| prefix + c.len()).sum();
        let mut keys = Vec::with_capacity(total);
        for (c, _, _) in &picked {
            key::join_into(&mut keys, row, c);
        }
        let keys = Bytes::from(keys);
        let mut at = 0;
        for (c, seq, v) in picked {
            let end = at + prefix + c.len();
            out.push_back((
                MemKey {
                    key: keys.slice(at..end),
                    seq,
                },
                v,
            ));
            at = end;
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        match self {
            RowCells::Small { slots, .. } => slots.len(),
            RowCells::Large(m) => m.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes a slot takes, for memstore accounting.
pub const SLOT_SIZE: u64 = std::mem::size_of::<Slot>() as u64;

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::CellType;

    fn arena_of(qs: &[u32]) -> (Bytes, Vec<ArenaCell>) {
        let mut buf = b"r".to_vec();
        let mut cells = Vec::new();
        for q in qs {
            let start = buf.len();
            key::encode_column_into(
                &mut buf,
                b"f",
                format!("q{q:05}").as_bytes(),
                1,
                CellType::Put,
            );
            let klen = buf.len() - start;
            let v = q.to_string();
            buf.extend_from_slice(v.as_bytes());
            cells.push((start as u32, klen as u32, v.len() as u32));
        }
        (Bytes::from(buf), cells)
    }

    #[test]
    fn stays_sorted_across_the_switch_to_btree() {
        let mut r = RowCells::default();
        // Reverse order, past SMALL_MAX, in several mutations.
        let all: Vec<u32> = (0..(SMALL_MAX as u32 * 2)).rev().collect();
        for chunk in all.chunks(10) {
            let (a, cells) = arena_of(chunk);
            assert_eq!(r.insert_arena(a, &cells, 1), chunk.len());
        }
        // Same key, same seq: replaced, not added.
        let (a, cells) = arena_of(&[3]);
        assert_eq!(r.insert_arena(a, &cells, 1), 0);
        assert!(matches!(r, RowCells::Large(_)));
        assert_eq!(r.len(), SMALL_MAX * 2);
        let mut out = VecDeque::new();
        let from = MemKey {
            key: Bytes::from(key::encode(b"r", b"f", b"q00002", 1, CellType::Put)),
            seq: u64::MAX,
        };
        r.collect(b"r", Some(&from), u64::MAX, &mut out);
        assert_eq!(out.len(), SMALL_MAX * 2 - 2);
        assert!(out.iter().zip(out.iter().skip(1)).all(|(a, b)| a.0 < b.0));
        assert_eq!(
            out.get(1).map(|x| x.1.clone()),
            Some(Bytes::from_static(b"3"))
        );
        assert_eq!(
            out.front().map(|x| x.0.key.clone()),
            Some(Bytes::from(key::encode(
                b"r",
                b"f",
                b"q00002",
                1,
                CellType::Put
            )))
        );
        let mut hidden = VecDeque::new();
        r.collect(b"r", None, 0, &mut hidden);
        assert!(hidden.is_empty(), "seq 1 is above read point 0");
    }

    #[test]
    fn newest_only_keeps_the_first_of_identical_keys_small_and_large() {
        for extra in [0u32, SMALL_MAX as u32] {
            let mut r = RowCells::default();
            let (a, cells) = arena_of(&[1, 2]);
            r.insert_arena(a, &cells, 5);
            let (a, cells) = arena_of(&[1]);
            r.insert_arena(a, &cells, 9);
            let wide: Vec<u32> = (100..100 + extra).collect();
            let (a, cells) = arena_of(&wide);
            r.insert_arena(a, &cells, 3);
            let collect = |newest: bool| {
                let mut seen = Vec::new();
                let mut f = |k: &[u8], seq: u64, _: &[u8]| {
                    seen.push((k.to_vec(), seq));
                    Ok::<(), ()>(())
                };
                let walked = if newest {
                    r.for_each_newest(b"r", &mut f)
                } else {
                    r.for_each(b"r", &mut f)
                };
                assert_eq!(walked, Ok(()));
                seen
            };
            let (all, newest) = (collect(false), collect(true));
            assert_eq!(all.len(), 3 + extra as usize);
            assert_eq!(newest.len(), 2 + extra as usize);
            let q1 = key::encode(b"r", b"f", b"q00001", 1, CellType::Put);
            assert_eq!(newest.first(), Some(&(q1.clone(), 9)));
            assert_eq!(all.get(1), Some(&(q1, 5)));
            assert!(newest.windows(2).all(|w| w[0].0 < w[1].0));
        }
    }

    #[test]
    fn small_rows_keep_versions_newest_first_with_full_keys() {
        let mut r = RowCells::default();
        let (a, cells) = arena_of(&[1, 2]);
        r.insert_arena(a, &cells, 5);
        let (a, cells) = arena_of(&[1]);
        r.insert_arena(a, &cells, 9);
        let mut out = VecDeque::new();
        r.collect(b"r", None, u64::MAX, &mut out);
        let seqs: Vec<u64> = out.iter().map(|(k, _)| k.seq).collect();
        assert_eq!(seqs, vec![9, 5, 5]);
        assert!(matches!(r, RowCells::Small { .. }));
        let want = key::encode(b"r", b"f", b"q00002", 1, CellType::Put);
        assert_eq!(out.get(2).map(|x| &x.0.key[..]), Some(&want[..]));
        // A `from` in an earlier row does not skip anything.
        let earlier = MemKey {
            key: Bytes::from(key::encode(b"q", b"f", b"zzz", 1, CellType::Put)),
            seq: 0,
        };
        let mut all = VecDeque::new();
        r.collect(b"r", Some(&earlier), u64::MAX, &mut all);
        assert_eq!(all.len(), 3);
        // The flush walk gives the same full keys.
        let mut walked = Vec::new();
        r.for_each::<()>(b"r", &mut |k, s, _| {
            walked.push((k.to_vec(), s));
            Ok(())
        })
        .ok();
        let collected: Vec<_> = out.iter().map(|(k, _)| (k.key.to_vec(), k.seq)).collect();
        assert_eq!(walked, collected);
    }

    fn arena_with(cells: &[(&str, u64, &str)]) -> (Bytes, Vec<ArenaCell>) {
        let mut buf = b"r".to_vec();
        let mut out = Vec::new();
        for (q, ts, v) in cells {
            let start = buf.len();
            key::encode_column_into(&mut buf, b"f", q.as_bytes(), *ts, CellType::Put);
            let klen = buf.len() - start;
            buf.extend_from_slice(v.as_bytes());
            out.push((start as u32, klen as u32, v.len() as u32));
        }
        (Bytes::from(buf), out)
    }

    fn dump(r: &RowCells) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
        let mut out = VecDeque::new();
        r.collect(b"r", None, u64::MAX, &mut out);
        out.into_iter()
            .map(|(k, v)| (k.key.to_vec(), k.seq, v.to_vec()))
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn a_new_row_sorts_like_one_insert_at_a_time(
            cells in proptest::collection::vec(("[a-c]{0,3}", 0u64..3, "[xyz]"), 2..40)
        ) {
            let cells: Vec<(&str, u64, &str)> =
                cells.iter().map(|(q, t, v)| (q.as_str(), *t, v.as_str())).collect();
            let (arena, offsets) = arena_with(&cells);
            let mut fast = RowCells::default();
            let added = fast.insert_arena(arena.clone(), &offsets, 7);
            let mut slow = RowCells::default();
            let slow_added = slow.insert_general(arena, &offsets, 7);
            proptest::prop_assert_eq!(added, slow_added);
            proptest::prop_assert_eq!(dump(&fast), dump(&slow));
        }
    }
}
