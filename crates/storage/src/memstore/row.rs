//! The cells of one row of one family in a memstore, sorted.
//!
//! A write hands the row one *arena*: a single buffer holding the row once,
//! then the bytes its cells' qualifiers and values sit in. On the write
//! path that is the family's cell run exactly as the client sent it (see
//! [`ferrobase_types::CellRun`]), copied whole: one copy per row and
//! family, not two per cell. A cell is a [`Slot`]: where its qualifier and
//! value sit in an arena, its timestamp and type; the arena keeps the
//! sequence id of its mutation. Nothing of the key is encoded on insert:
//! the row is the arena's head, the family is the memstore's (DESIGN rule
//! 6: a cell never stores its row again; a 53-column row of 64-byte keys
//! would otherwise hold 3.4 KB of copies of its key). Keys are built only
//! when cells leave the memstore (a scan's [`collect`](RowCells::collect)),
//! and a flush does not build them at all: it hands the store file writer
//! the parts ([`CellView`]).
//!
//! Most rows hold a handful of cells (a 9-column log line, a 60-point GPS
//! minute), so they keep a sorted `Vec` of 32-byte [`Slot`]s: one binary
//! search and a short shift per cell, one allocation per mutation, no
//! per-cell allocation or reference count. A new row whose cells arrive in
//! internal order (the write path sorts them) takes them as they are. A row
//! that grows past [`SMALL_MAX`] cells (a hot counter, a very wide row)
//! moves to a `BTreeMap` so inserts stay O(log n).
//!
//! ```text
//! arenas: [ row | run: q0 ts t v0  q1 ts t v1 … ] seq 7   [ row | run … ] seq 9
//!                     ^q0   ^v0
//! slots:  (a0, @q0 |q0|, @v0 |v0|, ts, type) (a1, …) …  (sorted: qualifier,
//!          newest timestamp, highest type, newest seq)
//! ```
//!
//! This module never panics on a slot: slots are built by the inserts from
//! their own arena, and one that did not fit would read as an empty cell.

use super::MemKey;
use bytes::Bytes;
use ferrobase_types::key;
use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

/// Cells a row keeps in its sorted vector before switching to a B-tree.
pub const SMALL_MAX: usize = 64;

/// One cell of an arena, as an insert gives it: where its qualifier and
/// value sit (start, length), its timestamp and type code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaCell {
    pub qualifier: (u32, u32),
    pub value: (u32, u32),
    pub timestamp: u64,
    pub kind: u8,
}

/// A stored cell: an [`ArenaCell`] and the index of its arena.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    arena: u32,
    q_start: u32,
    q_len: u32,
    v_start: u32,
    v_len: u32,
    kind: u8,
    timestamp: u64,
}

/// One mutation's buffer and the sequence id all its cells share.
#[derive(Clone, Debug)]
pub struct Arena {
    bytes: Bytes,
    seq: u64,
}

/// A cell of a row, borrowed: what walks over a row see. The family is
/// the memstore's, the row the caller's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellView<'a> {
    pub qualifier: &'a [u8],
    pub timestamp: u64,
    pub kind: u8,
    pub seq: u64,
    pub value: &'a [u8],
}

impl CellView<'_> {
    /// Internal order within a family: qualifier, then newest timestamp,
    /// highest type and newest write first (as `key::compare_column` and
    /// `iter::compare_entries` order full keys).
    #[inline]
    fn order(&self, other: &CellView<'_>) -> Ordering {
        key::short_cmp(self.qualifier, other.qualifier)
            .then_with(|| other.timestamp.cmp(&self.timestamp))
            .then_with(|| other.kind.cmp(&self.kind))
            .then_with(|| other.seq.cmp(&self.seq))
    }

    /// Same qualifier, timestamp and type: versions of one key.
    #[inline]
    fn same_key(&self, other: &CellView<'_>) -> bool {
        self.timestamp == other.timestamp
            && self.kind == other.kind
            && key::short_cmp(self.qualifier, other.qualifier) == Ordering::Equal
    }
}

/// The B-tree key of a large row's cell; values are slices of arenas.
#[derive(Clone, Debug)]
pub struct CellKey {
    qualifier: Bytes,
    timestamp: u64,
    kind: u8,
    seq: u64,
}

impl CellKey {
    fn view<'a>(&'a self, value: &'a [u8]) -> CellView<'a> {
        CellView {
            qualifier: &self.qualifier,
            timestamp: self.timestamp,
            kind: self.kind,
            seq: self.seq,
            value,
        }
    }
}

impl PartialEq for CellKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for CellKey {}
impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.view(&[]).order(&other.view(&[]))
    }
}

/// See the module docs.
pub enum RowCells {
    Small {
        arenas: Vec<Arena>,
        slots: Vec<Slot>,
    },
    Large(BTreeMap<CellKey, Bytes>),
}

impl Default for RowCells {
    fn default() -> Self {
        RowCells::Small {
            arenas: Vec::new(),
            slots: Vec::new(),
        }
    }
}

fn slot_of(arena: u32, c: &ArenaCell) -> Slot {
    Slot {
        arena,
        q_start: c.qualifier.0,
        q_len: c.qualifier.1,
        v_start: c.value.0,
        v_len: c.value.1,
        kind: c.kind,
        timestamp: c.timestamp,
    }
}

fn range(start: u32, len: u32) -> std::ops::Range<usize> {
    let start = start as usize;
    start..start.saturating_add(len as usize)
}

/// The cell a slot locates, borrowed from its arena.
#[inline]
fn view<'a>(arenas: &'a [Arena], s: &Slot) -> CellView<'a> {
    let arena = arenas.get(s.arena as usize);
    let bytes = arena.map(|a| &a.bytes[..]).unwrap_or_default();
    CellView {
        qualifier: bytes.get(range(s.q_start, s.q_len)).unwrap_or_default(),
        timestamp: s.timestamp,
        kind: s.kind,
        seq: arena.map_or(0, |a| a.seq),
        value: bytes.get(range(s.v_start, s.v_len)).unwrap_or_default(),
    }
}

/// The qualifier and value of a slot as slices sharing its arena.
fn owned_parts(arenas: &[Arena], s: &Slot) -> (Bytes, Bytes) {
    let Some(a) = arenas.get(s.arena as usize) else {
        return (Bytes::new(), Bytes::new());
    };
    let part = |r: std::ops::Range<usize>| {
        if r.end <= a.bytes.len() {
            a.bytes.slice(r)
        } else {
            Bytes::new()
        }
    };
    (
        part(range(s.q_start, s.q_len)),
        part(range(s.v_start, s.v_len)),
    )
}

impl RowCells {
    /// Adds the cells of one mutation, all with sequence id `seq`, whose
    /// qualifiers and values live in `arena`. Returns how many keys were
    /// new (an identical key and sequence id replaces the older cell).
    pub fn insert(&mut self, arena: Bytes, cells: &[ArenaCell], seq: u64) -> usize {
        self.insert_general(Arena { bytes: arena, seq }, cells)
    }

    /// [`insert`](Self::insert) for cells the caller already put in
    /// internal order with no two identical keys (the write path sorts a
    /// run's cells before it inserts): a new row takes the slots as they
    /// are, with no comparison here.
    pub fn insert_sorted(&mut self, arena: Bytes, cells: &[ArenaCell], seq: u64) -> usize {
        if let RowCells::Small { arenas, slots } = self
            && slots.is_empty()
            && cells.len() <= SMALL_MAX
        {
            let idx = arenas.len() as u32;
            slots.extend(cells.iter().map(|c| slot_of(idx, c)));
            arenas.push(Arena { bytes: arena, seq });
            debug_assert!(
                slots
                    .windows(2)
                    .all(|w| view(arenas, &w[0]).order(&view(arenas, &w[1])).is_lt())
            );
            return slots.len();
        }
        self.insert(arena, cells, seq)
    }

    /// One cell at a time: a binary search (the end first) per cell.
    fn insert_general(&mut self, arena: Arena, cells: &[ArenaCell]) -> usize {
        let mut added = 0;
        if let RowCells::Small { arenas, slots } = self {
            if slots.len() + cells.len() <= SMALL_MAX {
                let idx = arenas.len() as u32;
                arenas.push(arena);
                slots.reserve(cells.len());
                for c in cells {
                    let slot = slot_of(idx, c);
                    let new = view(arenas, &slot);
                    let cmp = |s: &Slot| view(arenas, s).order(&new);
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
            let map: BTreeMap<CellKey, Bytes> =
                slots.iter().map(|s| large_entry(arenas, s)).collect();
            *self = RowCells::Large(map);
        }
        if let RowCells::Large(map) = self {
            let one = std::slice::from_ref(&arena);
            for c in cells {
                let (k, v) = large_entry(one, &slot_of(0, c));
                if map.insert(k, v).is_none() {
                    added += 1;
                }
            }
        }
        added
    }

    /// Calls `f` for every cell in order, newest first among identical
    /// keys, with slices of the arenas.
    pub fn for_each<E>(&self, mut f: impl FnMut(&CellView<'_>) -> Result<(), E>) -> Result<(), E> {
        match self {
            RowCells::Small { arenas, slots } => {
                for s in slots {
                    f(&view(arenas, s))?;
                }
            }
            RowCells::Large(m) => {
                for (k, v) in m {
                    f(&k.view(v))?;
                }
            }
        }
        Ok(())
    }

    /// [`for_each`](Self::for_each) with only the newest write of each
    /// identical key: what a flush keeps. Identical keys are adjacent,
    /// newest first.
    pub fn for_each_newest<E>(
        &self,
        mut f: impl FnMut(&CellView<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        // One mutation's cells were deduplicated when inserted.
        if matches!(self, RowCells::Small { arenas, .. } if arenas.len() == 1) {
            return self.for_each(f);
        }
        let mut prev: Option<CellKey> = None;
        self.for_each(|c| {
            if prev.as_ref().is_some_and(|p| p.view(&[]).same_key(c)) {
                return Ok(());
            }
            prev = Some(CellKey {
                qualifier: Bytes::copy_from_slice(c.qualifier),
                timestamp: c.timestamp,
                kind: c.kind,
                seq: c.seq,
            });
            f(c)
        })
    }

    /// Appends to `out` every cell of `row` (of family `family`) ≥ `from`
    /// (all when `None`, or when `from` is in an earlier row) whose
    /// sequence id is visible at `read_point`, with full keys (one
    /// allocation for the row's keys).
    pub fn collect(
        &self,
        row: &[u8],
        family: &[u8],
        from: Option<&MemKey>,
        read_point: u64,
        out: &mut VecDeque<(MemKey, Bytes)>,
    ) {
        // Cells before `from` in this row: compared with its family first.
        let before_from = |c: &CellView<'_>| -> bool {
            let Some(f) = from else { return false };
            if key::row_of(&f.key) != Some(row) {
                return false;
            }
            let Some((ff, fq, fts, ft)) = key::column_of(&f.key).and_then(key::column_parts) else {
                // A column part that does not parse (an empty one: the
                // first key of the row) sorts before every cell.
                return false;
            };
            key::short_cmp(family, ff)
                .then_with(|| {
                    c.order(&CellView {
                        qualifier: fq,
                        timestamp: fts,
                        kind: ft,
                        seq: f.seq,
                        value: &[],
                    })
                })
                .is_lt()
        };
        let mut picked: Vec<(CellKey, Bytes)> = Vec::new();
        let mut keep = |k: CellKey, v: Bytes| {
            if k.seq <= read_point {
                picked.push((k, v));
            }
        };
        match self {
            RowCells::Small { arenas, slots } => {
                let start = slots.partition_point(|s| before_from(&view(arenas, s)));
                for s in slots.iter().skip(start) {
                    let (k, v) = large_entry(arenas, s);
                    keep(k, v);
                }
            }
            RowCells::Large(m) => {
                for (k, v) in m.iter().skip_while(|(k, v)| before_from(&k.view(v))) {
                    keep(k.clone(), v.clone());
                }
            }
        }
        let total: usize = picked
            .iter()
            .map(|(k, _)| key::KEY_OVERHEAD + row.len() + family.len() + k.qualifier.len())
            .sum();
        let mut keys = Vec::with_capacity(total);
        let mut ends = Vec::with_capacity(picked.len());
        for (k, _) in &picked {
            key::join_into(&mut keys, row, &[]);
            keys.push(family.len().min(key::MAX_FAMILY_LEN) as u8);
            keys.extend_from_slice(family);
            keys.extend_from_slice(&k.qualifier);
            keys.extend_from_slice(&k.timestamp.to_be_bytes());
            keys.push(k.kind);
            ends.push(keys.len());
        }
        let keys = Bytes::from(keys);
        let mut at = 0;
        for ((k, v), end) in picked.into_iter().zip(ends) {
            out.push_back((
                MemKey {
                    key: keys.slice(at..end),
                    seq: k.seq,
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

/// A slot as a B-tree entry (qualifier and value share the arena).
fn large_entry(arenas: &[Arena], s: &Slot) -> (CellKey, Bytes) {
    let (qualifier, value) = owned_parts(arenas, s);
    let seq = arenas.get(s.arena as usize).map_or(0, |a| a.seq);
    (
        CellKey {
            qualifier,
            timestamp: s.timestamp,
            kind: s.kind,
            seq,
        },
        value,
    )
}

/// Bytes a slot takes, for memstore accounting.
pub const SLOT_SIZE: u64 = std::mem::size_of::<Slot>() as u64;

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::CellType;
    use std::collections::BTreeSet;

    const PUT: u8 = 4;

    /// A cell as a test writes it: qualifier, timestamp, type code, value.
    type TestCell<'a> = (&'a [u8], u64, u8, &'a [u8]);
    /// A cell as a walk sees it: qualifier, timestamp, type, seq, value.
    type Walked = (Vec<u8>, u64, u8, u64, Vec<u8>);

    /// An arena holding `row` then each cell's qualifier and value, the
    /// way a run holds them (other bytes in between).
    fn arena_with(cells: &[TestCell<'_>]) -> (Bytes, Vec<ArenaCell>) {
        let mut buf = b"r".to_vec();
        let mut out = Vec::new();
        for (q, ts, kind, v) in cells {
            buf.push(0xee);
            let q_start = buf.len() as u32;
            buf.extend_from_slice(q);
            buf.extend_from_slice(&[0xdd, 0xcc]);
            let v_start = buf.len() as u32;
            buf.extend_from_slice(v);
            out.push(ArenaCell {
                qualifier: (q_start, q.len() as u32),
                value: (v_start, v.len() as u32),
                timestamp: *ts,
                kind: *kind,
            });
        }
        (Bytes::from(buf), out)
    }

    fn numbered(qs: &[u32]) -> (Bytes, Vec<ArenaCell>) {
        let names: Vec<(Vec<u8>, Vec<u8>)> = qs
            .iter()
            .map(|q| (format!("q{q:05}").into_bytes(), q.to_string().into_bytes()))
            .collect();
        let cells: Vec<TestCell<'_>> = names
            .iter()
            .map(|(q, v)| (q.as_slice(), 1, PUT, v.as_slice()))
            .collect();
        arena_with(&cells)
    }

    fn walk(r: &RowCells, newest: bool) -> Vec<Walked> {
        let mut seen = Vec::new();
        let f = |c: &CellView<'_>| {
            seen.push((
                c.qualifier.to_vec(),
                c.timestamp,
                c.kind,
                c.seq,
                c.value.to_vec(),
            ));
            Ok::<(), ()>(())
        };
        let walked = if newest {
            r.for_each_newest(f)
        } else {
            r.for_each(f)
        };
        assert_eq!(walked, Ok(()));
        seen
    }

    #[test]
    fn stays_sorted_across_the_switch_to_btree() {
        let mut r = RowCells::default();
        // Reverse order, past SMALL_MAX, in several mutations.
        let all: Vec<u32> = (0..(SMALL_MAX as u32 * 2)).rev().collect();
        for chunk in all.chunks(10) {
            let (a, cells) = numbered(chunk);
            assert_eq!(r.insert(a, &cells, 1), chunk.len());
        }
        // Same key, same seq: replaced, not added.
        let (a, cells) = numbered(&[3]);
        assert_eq!(r.insert(a, &cells, 1), 0);
        assert!(matches!(r, RowCells::Large(_)));
        assert_eq!(r.len(), SMALL_MAX * 2);
        let mut out = VecDeque::new();
        let from = MemKey {
            key: Bytes::from(key::encode(b"r", b"f", b"q00002", 1, CellType::Put)),
            seq: u64::MAX,
        };
        r.collect(b"r", b"f", Some(&from), u64::MAX, &mut out);
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
        r.collect(b"r", b"f", None, 0, &mut hidden);
        assert!(hidden.is_empty(), "seq 1 is above read point 0");
    }

    #[test]
    fn newest_only_keeps_the_first_of_identical_keys_small_and_large() {
        for extra in [0u32, SMALL_MAX as u32] {
            let mut r = RowCells::default();
            let (a, cells) = numbered(&[1, 2]);
            r.insert(a, &cells, 5);
            let (a, cells) = numbered(&[1]);
            r.insert(a, &cells, 9);
            let wide: Vec<u32> = (100..100 + extra).collect();
            let (a, cells) = numbered(&wide);
            r.insert(a, &cells, 3);
            let (all, newest) = (walk(&r, false), walk(&r, true));
            assert_eq!(all.len(), 3 + extra as usize);
            assert_eq!(newest.len(), 2 + extra as usize);
            let q1 = (b"q00001".to_vec(), 1, PUT);
            assert_eq!(
                newest.first().map(|c| (c.0.clone(), c.1, c.2, c.3)),
                Some((q1.0.clone(), q1.1, q1.2, 9))
            );
            assert_eq!(all.get(1).map(|c| (c.0.clone(), c.3)), Some((q1.0, 5)));
        }
    }

    #[test]
    fn a_slot_outside_its_arena_reads_as_an_empty_cell() {
        let mut r = RowCells::default();
        let (a, _) = numbered(&[1]);
        let wild = ArenaCell {
            qualifier: (u32::MAX - 1, 5),
            value: (40, u32::MAX),
            timestamp: 1,
            kind: PUT,
        };
        assert_eq!(r.insert(a, &[wild], 1), 1);
        assert_eq!(walk(&r, false), vec![(vec![], 1, PUT, 1, vec![])]);
        let mut out = VecDeque::new();
        r.collect(b"r", b"f", None, 1, &mut out);
        assert_eq!(out.len(), 1);
    }

    type Model = BTreeSet<(
        Vec<u8>,
        std::cmp::Reverse<u64>,
        std::cmp::Reverse<u8>,
        std::cmp::Reverse<u64>,
        Vec<u8>,
    )>;

    proptest::proptest! {
        /// Against a `BTreeSet` in internal order: mutations of random
        /// cells (repeated keys, versions, deletes, rows growing past
        /// SMALL_MAX), inserted sorted as the write path does or one by
        /// one; every walk, `collect` from every key, and the full keys.
        #[test]
        fn rows_match_a_sorted_model(
            muts in proptest::collection::vec(
                (proptest::collection::vec(("[a-d]{0,2}", 0u64..3, proptest::bool::weighted(0.2), "[xyz]{0,2}"), 1..30),
                 proptest::bool::ANY),
                1..6),
        ) {
            let mut r = RowCells::default();
            let mut model: Model = BTreeSet::new();
            for (seq, (cells, presort)) in muts.iter().enumerate() {
                let seq = seq as u64 + 1;
                let mut cells: Vec<TestCell<'_>> = cells
                    .iter()
                    .map(|(q, ts, del, v)| (q.as_bytes(), *ts, if *del { 8 } else { PUT }, v.as_bytes()))
                    .collect();
                if *presort {
                    // As insert_edit: internal order, the last of identical keys kept.
                    let mut keyed: Vec<(usize, TestCell<'_>)> = cells.iter().copied().enumerate().collect();
                    keyed.sort_by(|(i, a), (j, b)| a.0.cmp(b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)).then(i.cmp(j)));
                    let mut kept: Vec<TestCell<'_>> = Vec::new();
                    for (_, c) in keyed {
                        match kept.last_mut() {
                            Some(l) if (l.0, l.1, l.2) == (c.0, c.1, c.2) => *l = c,
                            _ => kept.push(c),
                        }
                    }
                    cells = kept;
                }
                for c in &cells {
                    let k = (c.0.to_vec(), std::cmp::Reverse(c.1), std::cmp::Reverse(c.2), std::cmp::Reverse(seq));
                    model.retain(|m| (&m.0, m.1, m.2, m.3) != (&k.0, k.1, k.2, k.3));
                    model.insert((k.0, k.1, k.2, k.3, c.3.to_vec()));
                }
                let (arena, offsets) = arena_with(&cells);
                if *presort {
                    r.insert_sorted(arena, &offsets, seq);
                } else {
                    r.insert(arena, &offsets, seq);
                }
            }
            let want: Vec<_> = model.iter().map(|m| (m.0.clone(), m.1.0, m.2.0, m.3.0, m.4.clone())).collect();
            proptest::prop_assert_eq!(r.len(), want.len());
            proptest::prop_assert_eq!(walk(&r, false), want.clone());
            let mut newest = want.clone();
            newest.dedup_by(|b, a| (&a.0, a.1, a.2) == (&b.0, b.1, b.2));
            proptest::prop_assert_eq!(walk(&r, true), newest);
            for (i, w) in want.iter().enumerate() {
                let kind = CellType::from_code(w.2).unwrap_or(CellType::Put);
                let full = key::encode(b"r", b"f", &w.0, w.1, kind);
                let mut out = VecDeque::new();
                r.collect(b"r", b"f", Some(&MemKey { key: Bytes::from(full.clone()), seq: w.3 }), u64::MAX, &mut out);
                proptest::prop_assert_eq!(out.len(), want.len() - i);
                let first = out.front().map(|(k, v)| (k.key.to_vec(), k.seq, v.to_vec()));
                proptest::prop_assert_eq!(first, Some((full, w.3, w.4.clone())));
            }
            // Another family sorts wholly before or after this one's cells.
            let mut out = VecDeque::new();
            let before = MemKey { key: Bytes::from(key::encode(b"r", b"e", b"zz", 0, CellType::Put)), seq: 0 };
            r.collect(b"r", b"f", Some(&before), u64::MAX, &mut out);
            proptest::prop_assert_eq!(out.len(), want.len());
            let mut out = VecDeque::new();
            let after = MemKey { key: Bytes::from(key::encode(b"r", b"g", b"", 9, CellType::Put)), seq: 0 };
            r.collect(b"r", b"f", Some(&after), u64::MAX, &mut out);
            proptest::prop_assert_eq!(out.len(), 0);
        }
    }
}
