//! The cells of one row of one family in a memstore, sorted.
//!
//! A write hands the row one *arena*: a single buffer holding the row once,
//! then the family's cell run exactly as the client sent it (see
//! [`ferrobase_types::CellRun`]), copied whole: one copy per row and
//! family, not two per cell. A cell is a [`Slot`] of 8 bytes: its arena and
//! where it starts there; its qualifier, timestamp, type and value are read
//! from the run when needed (a few varints). The arena keeps what all its
//! cells share: the mutation's sequence id and the time that "latest"
//! timestamps mean. Nothing of a key is encoded on insert: the row is the
//! arena's head, the family is the memstore's (docs/architecture.md,
//! design rule 6: a cell never stores its row again; a 53-column row of
//! 64-byte keys would otherwise hold 3.4 KB of copies of its key). Keys
//! are built only when cells leave the memstore for a scan
//! ([`collect`](RowCells::collect)); a flush hands the store file writer
//! the parts ([`CellView`]). Small slots matter
//! beyond memory: the memstore's size decides when it flushes, and a wide
//! row charged 40 bytes a cell flushed (and compacted) twice as often.
//!
//! Most rows hold a handful of cells (a 9-column log line, a 60-point GPS
//! minute), so they keep a sorted `Vec` of slots: one binary search and a
//! short shift per cell, one allocation per mutation, no per-cell
//! allocation or reference count. A new row whose cells arrive in
//! internal order (the write path sorts them) takes them as they are. A row
//! that grows past [`SMALL_MAX`] cells (a hot counter, a very wide row)
//! moves to a `BTreeMap` so inserts stay O(log n).
//!
//! ```text
//! arenas: [ row | q0 ts t v0 | q1 ts t v1 | … ] seq 7, now T  [ row | … ] seq 9
//!                 ^c0          ^c1
//! slots:  (a0, @c0) (a0, @c1) (a1, …) …   (sorted: qualifier, newest
//!                                          timestamp, highest type, newest seq)
//! ```
//!
//! This module never panics on a slot: slots are built by the inserts from
//! their own arena, and one that did not point at a cell would read as an
//! empty one.

use super::MemKey;
pub use crate::cell::CellView;
use bytes::Bytes;
use ferrobase_types::cell_run::cell_at;
use ferrobase_types::{LATEST_TIMESTAMP, key};
use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

/// Cells a row keeps in its sorted vector before switching to a B-tree.
pub const SMALL_MAX: usize = 64;

/// Bytes a cell of a B-tree row holds: its key and value handles (both
/// slices of its arena) and its share of the B-tree nodes' unused room
/// (nodes run about two-thirds full).
pub const LARGE_ENTRY_SIZE: u64 =
    ((std::mem::size_of::<CellKey>() + std::mem::size_of::<Bytes>()) * 3 / 2) as u64;

/// A stored cell: its arena and the offset there of its encoded form.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    arena: u32,
    start: u32,
}

/// One mutation's buffer and what all its cells share.
#[derive(Clone, Debug)]
pub struct Arena {
    bytes: Bytes,
    seq: u64,
    /// What `LATEST_TIMESTAMP` in the run means (the write's clock).
    now: u64,
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

/// The cell a slot locates, borrowed from its arena.
#[inline]
fn view<'a>(arenas: &'a [Arena], s: &Slot) -> CellView<'a> {
    let empty = CellView {
        qualifier: &[],
        timestamp: 0,
        kind: 0,
        seq: 0,
        value: &[],
    };
    let Some(a) = arenas.get(s.arena as usize) else {
        return empty;
    };
    match cell_at(&a.bytes, s.start as usize) {
        Some((c, _)) => CellView {
            qualifier: c.qualifier,
            timestamp: if c.timestamp == LATEST_TIMESTAMP {
                a.now
            } else {
                c.timestamp
            },
            kind: c.kind.code(),
            seq: a.seq,
            value: c.value,
        },
        None => CellView {
            seq: a.seq,
            ..empty
        },
    }
}

/// `part` (a slice of `bytes`) as a `Bytes` sharing it; empty if it is not
/// inside `bytes`.
fn shared(bytes: &Bytes, part: &[u8]) -> Bytes {
    let offset = (part.as_ptr() as usize).wrapping_sub(bytes.as_ptr() as usize);
    match offset.checked_add(part.len()) {
        Some(end) if offset <= bytes.len() && end <= bytes.len() => bytes.slice(offset..end),
        _ => Bytes::new(),
    }
}

impl RowCells {
    /// Adds the cells of one mutation, all with sequence id `seq`, that
    /// start at `starts` in `arena` (a row, then cell-run bytes; "latest"
    /// timestamps there mean `now`). Returns how many keys were new (an
    /// identical key and sequence id replaces the older cell).
    pub fn insert(&mut self, arena: Bytes, now: u64, starts: &[u32], seq: u64) -> usize {
        self.insert_general(
            Arena {
                bytes: arena,
                seq,
                now,
            },
            starts,
        )
    }

    /// [`insert`](Self::insert) for cells the caller already put in
    /// internal order with no two identical keys (the write path sorts a
    /// run's cells before it inserts): a new row takes the slots as they
    /// are, with no comparison here.
    pub fn insert_sorted(&mut self, arena: Bytes, now: u64, starts: &[u32], seq: u64) -> usize {
        if let RowCells::Small { arenas, slots } = self
            && slots.is_empty()
            && starts.len() <= SMALL_MAX
        {
            let idx = arenas.len() as u32;
            slots.extend(starts.iter().map(|&start| Slot { arena: idx, start }));
            // Most rows are written once: room for one arena handle, not
            // the four a first push would make.
            arenas.reserve_exact(1);
            arenas.push(Arena {
                bytes: arena,
                seq,
                now,
            });
            debug_assert!(
                slots
                    .windows(2)
                    .all(|w| view(arenas, &w[0]).order(&view(arenas, &w[1])).is_lt())
            );
            return slots.len();
        }
        self.insert(arena, now, starts, seq)
    }

    /// Heap bytes the row's own structures hold, beyond the arenas'
    /// bytes: slots and arena handles by capacity, or a B-tree's entries
    /// (see [`LARGE_ENTRY_SIZE`]). The memstore charges its growth.
    pub fn overhead(&self) -> u64 {
        match self {
            RowCells::Small { arenas, slots } => {
                (arenas.capacity() * std::mem::size_of::<Arena>()) as u64
                    + slots.capacity() as u64 * SLOT_SIZE
            }
            RowCells::Large(map) => map.len() as u64 * LARGE_ENTRY_SIZE,
        }
    }

    /// One cell at a time: a binary search (the end first) per cell.
    fn insert_general(&mut self, arena: Arena, starts: &[u32]) -> usize {
        let mut added = 0;
        if let RowCells::Small { arenas, slots } = self {
            if slots.len() + starts.len() <= SMALL_MAX {
                let idx = arenas.len() as u32;
                arenas.push(arena);
                slots.reserve(starts.len());
                for &start in starts {
                    let slot = Slot { arena: idx, start };
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
            for &start in starts {
                let (k, v) = large_entry(one, &Slot { arena: 0, start });
                if map.insert(k, v).is_none() {
                    added += 1;
                }
            }
        }
        added
    }

    /// Calls `f` for every cell in order, newest first among identical
    /// keys, with slices of the arenas.
    pub fn for_each<'a, E>(
        &'a self,
        mut f: impl FnMut(&CellView<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
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
    pub fn for_each_newest<'a, E>(
        &'a self,
        mut f: impl FnMut(&CellView<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        // One mutation's cells were deduplicated when inserted.
        if matches!(self, RowCells::Small { arenas, .. } if arenas.len() == 1) {
            return self.for_each(f);
        }
        // The previous cell's key, in one reused buffer.
        let mut prev_qualifier: Vec<u8> = Vec::new();
        let mut prev: Option<(u64, u8)> = None;
        self.for_each(|c| {
            if prev == Some((c.timestamp, c.kind))
                && key::short_cmp(&prev_qualifier, c.qualifier).is_eq()
            {
                return Ok(());
            }
            prev = Some((c.timestamp, c.kind));
            prev_qualifier.clear();
            prev_qualifier.extend_from_slice(c.qualifier);
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
        // `from` as a family and a cell, when it is a key of this row; a
        // column part that does not parse (an empty one: the first key of
        // the row) sorts before every cell, like no `from` at all.
        let from = from.and_then(|f| {
            if key::row_of(&f.key) != Some(row) {
                return None;
            }
            let (ff, qualifier, timestamp, kind) =
                key::column_of(&f.key).and_then(key::column_parts)?;
            let cell = CellView {
                qualifier,
                timestamp,
                kind,
                seq: f.seq,
                value: &[],
            };
            Some((ff, cell))
        });
        // Cells before `from`: compared with its family first.
        let before_from = |c: &CellView<'_>| -> bool {
            from.as_ref().is_some_and(|(ff, fc)| {
                key::short_cmp(family, ff).then_with(|| c.order(fc)).is_lt()
            })
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
    let c = view(arenas, s);
    let bytes = arenas
        .get(s.arena as usize)
        .map(|a| a.bytes.clone())
        .unwrap_or_default();
    (
        CellKey {
            qualifier: shared(&bytes, c.qualifier),
            timestamp: c.timestamp,
            kind: c.kind,
            seq: c.seq,
        },
        shared(&bytes, c.value),
    )
}

/// Bytes a slot takes, for memstore accounting.
pub const SLOT_SIZE: u64 = std::mem::size_of::<Slot>() as u64;

#[cfg(test)]
mod tests;
