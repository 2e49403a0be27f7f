//! The cells of one row in a memstore, sorted.
//!
//! A write hands the row one *arena*: a single buffer holding the keys and
//! values of that mutation's cells for this row (`key₀ value₀ key₁ value₁
//! …`). Most rows hold a handful of cells (a 9-column log line, a 60-point
//! GPS minute), so they keep a sorted `Vec` of 24-byte [`Slot`]s pointing
//! into their arenas: one binary search and a short shift per cell, one
//! allocation per mutation, no per-cell allocation or reference count. A
//! row that grows past [`SMALL_MAX`] cells (a hot counter, a very wide row)
//! moves to a `BTreeMap` so inserts stay O(log n).
//!
//! ```text
//! arenas: [ k0 v0 k1 v1 k2 v2 ] [ k3 v3 ]     (one per mutation)
//! slots:  (a0,@0,|k0|,|v0|,seq) (a1,@0,…) …   (sorted by key, seq desc)
//! ```

use super::MemKey;
use crate::iter::compare_entries;
use bytes::Bytes;
use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

/// Cells a row keeps in its sorted vector before switching to a B-tree.
pub const SMALL_MAX: usize = 64;

/// One cell: where its key and value sit in one of the row's arenas.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    arena: u32,
    start: u32,
    key_len: u32,
    value_len: u32,
    seq: u64,
}

/// A cell of an arena: `(start, key length, value length)`; the value
/// follows the key.
pub type ArenaCell = (u32, u32, u32);

/// See the module docs.
pub enum RowCells {
    Small {
        arenas: Vec<Bytes>,
        slots: Vec<Slot>,
    },
    Large(BTreeMap<MemKey, Bytes>),
}

impl Default for RowCells {
    fn default() -> Self {
        RowCells::Small {
            arenas: Vec::new(),
            slots: Vec::new(),
        }
    }
}

fn key_of<'a>(arenas: &'a [Bytes], s: &Slot) -> &'a [u8] {
    let start = s.start as usize;
    arenas
        .get(s.arena as usize)
        .and_then(|a| a.get(start..start + s.key_len as usize))
        .unwrap_or_default()
}

fn materialize(arenas: &[Bytes], s: &Slot) -> (MemKey, Bytes) {
    let (start, klen, vlen) = (s.start as usize, s.key_len as usize, s.value_len as usize);
    match arenas.get(s.arena as usize) {
        Some(a) if start + klen + vlen <= a.len() => (
            MemKey {
                key: a.slice(start..start + klen),
                seq: s.seq,
            },
            a.slice(start + klen..start + klen + vlen),
        ),
        // Slots are built from their arena by `insert_arena`; this arm is
        // unreachable in practice and yields an empty cell, never a panic.
        _ => (
            MemKey {
                key: Bytes::new(),
                seq: s.seq,
            },
            Bytes::new(),
        ),
    }
}

impl RowCells {
    /// Adds the cells of one mutation, all with sequence id `seq`, whose
    /// keys and values live in `arena`. Returns how many keys were new (an
    /// identical key and sequence id replaces the older cell).
    pub fn insert_arena(&mut self, arena: Bytes, cells: &[ArenaCell], seq: u64) -> usize {
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
                    let key = key_of(arenas, &slot);
                    let cmp = |s: &Slot| compare_entries(key_of(arenas, s), s.seq, key, seq);
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
            let map: BTreeMap<MemKey, Bytes> =
                slots.iter().map(|s| materialize(arenas, s)).collect();
            *self = RowCells::Large(map);
        }
        if let RowCells::Large(map) = self {
            for &(start, key_len, value_len) in cells {
                let slot = Slot {
                    arena: 0,
                    start,
                    key_len,
                    value_len,
                    seq,
                };
                let (k, v) = materialize(std::slice::from_ref(&arena), &slot);
                if map.insert(k, v).is_none() {
                    added += 1;
                }
            }
        }
        added
    }

    /// Calls `f(key, seq, value)` for every cell in order, newest first among
    /// identical keys, with slices of the arenas: the flush's walk, which
    /// needs no copy and no reference count per cell.
    pub fn for_each<E>(
        &self,
        f: &mut impl FnMut(&[u8], u64, &[u8]) -> Result<(), E>,
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
                    f(&k.key, k.seq, v)?;
                }
            }
        }
        Ok(())
    }

    /// Appends to `out` every cell ≥ `from` (all when `None`) whose sequence
    /// id is visible at `read_point`.
    pub fn collect(
        &self,
        from: Option<&MemKey>,
        read_point: u64,
        out: &mut VecDeque<(MemKey, Bytes)>,
    ) {
        match self {
            RowCells::Small { arenas, slots } => {
                let start = match from {
                    Some(f) => slots.partition_point(|s| {
                        compare_entries(key_of(arenas, s), s.seq, &f.key, f.seq).is_lt()
                    }),
                    None => 0,
                };
                for s in slots.iter().skip(start) {
                    if s.seq <= read_point {
                        out.push_back(materialize(arenas, s));
                    }
                }
            }
            RowCells::Large(m) => {
                let iter: Box<dyn Iterator<Item = (&MemKey, &Bytes)>> = match from {
                    Some(f) => Box::new(m.range(f.clone()..)),
                    None => Box::new(m.iter()),
                };
                for (k, val) in iter {
                    if k.seq <= read_point {
                        out.push_back((k.clone(), val.clone()));
                    }
                }
            }
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
    use ferrobase_types::{CellType, key};

    fn arena_of(qs: &[u32]) -> (Bytes, Vec<ArenaCell>) {
        let mut buf = Vec::new();
        let mut cells = Vec::new();
        for q in qs {
            let start = buf.len() as u32;
            let k = key::encode(b"r", b"f", format!("q{q:05}").as_bytes(), 1, CellType::Put);
            buf.extend_from_slice(&k);
            let v = q.to_string();
            buf.extend_from_slice(v.as_bytes());
            cells.push((start, k.len() as u32, v.len() as u32));
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
        r.collect(Some(&from), u64::MAX, &mut out);
        assert_eq!(out.len(), SMALL_MAX * 2 - 2);
        assert!(out.iter().zip(out.iter().skip(1)).all(|(a, b)| a.0 < b.0));
        assert_eq!(
            out.get(1).map(|x| x.1.clone()),
            Some(Bytes::from_static(b"3"))
        );
        let mut hidden = VecDeque::new();
        r.collect(None, 0, &mut hidden);
        assert!(hidden.is_empty(), "seq 1 is above read point 0");
    }

    #[test]
    fn small_rows_keep_versions_newest_first() {
        let mut r = RowCells::default();
        let (a, cells) = arena_of(&[1, 2]);
        r.insert_arena(a, &cells, 5);
        let (a, cells) = arena_of(&[1]);
        r.insert_arena(a, &cells, 9);
        let mut out = VecDeque::new();
        r.collect(None, u64::MAX, &mut out);
        let seqs: Vec<u64> = out.iter().map(|(k, _)| k.seq).collect();
        assert_eq!(seqs, vec![9, 5, 5]);
        assert!(matches!(r, RowCells::Small { .. }));
    }
}
