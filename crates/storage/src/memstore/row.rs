//! The cells of one row in a memstore, sorted.
//!
//! Most rows hold a handful of cells (a 9-column log line, a 60-point GPS
//! minute), so they live in a sorted `Vec`: one binary search and a short
//! shift per insert, one allocation per row. A row that grows past
//! [`SMALL_MAX`] cells (a hot counter, a very wide row) moves to a
//! `BTreeMap` so inserts stay O(log n).

use super::MemKey;
use bytes::Bytes;
use std::collections::{BTreeMap, VecDeque};

/// Cells a row keeps in its sorted vector before switching to a B-tree.
pub const SMALL_MAX: usize = 64;

/// See the module docs.
pub enum RowCells {
    Small(Vec<(MemKey, Bytes)>),
    Large(BTreeMap<MemKey, Bytes>),
}

impl Default for RowCells {
    fn default() -> Self {
        RowCells::Small(Vec::new())
    }
}

impl RowCells {
    /// Inserts or replaces; returns true when the key was new.
    pub fn insert(&mut self, key: MemKey, value: Bytes) -> bool {
        match self {
            RowCells::Small(v) => match v.binary_search_by(|(k, _)| k.cmp(&key)) {
                Ok(i) => {
                    if let Some(slot) = v.get_mut(i) {
                        slot.1 = value;
                    }
                    false
                }
                Err(i) if v.len() < SMALL_MAX => {
                    v.insert(i, (key, value));
                    true
                }
                Err(_) => {
                    let mut map: BTreeMap<MemKey, Bytes> = std::mem::take(v).into_iter().collect();
                    let new = map.insert(key, value).is_none();
                    *self = RowCells::Large(map);
                    new
                }
            },
            RowCells::Large(m) => m.insert(key, value).is_none(),
        }
    }

    /// Appends to `out` every cell ≥ `from` (all when `None`) whose sequence
    /// id is visible at `read_point`.
    pub fn collect(
        &self,
        from: Option<&MemKey>,
        read_point: u64,
        out: &mut VecDeque<(MemKey, Bytes)>,
    ) {
        let keep = |k: &MemKey| k.seq <= read_point;
        match self {
            RowCells::Small(v) => {
                let start = match from {
                    Some(f) => v.partition_point(|(k, _)| k < f),
                    None => 0,
                };
                for (k, val) in v.iter().skip(start) {
                    if keep(k) {
                        out.push_back((k.clone(), val.clone()));
                    }
                }
            }
            RowCells::Large(m) => {
                let iter: Box<dyn Iterator<Item = (&MemKey, &Bytes)>> = match from {
                    Some(f) => Box::new(m.range(f.clone()..)),
                    None => Box::new(m.iter()),
                };
                for (k, val) in iter {
                    if keep(k) {
                        out.push_back((k.clone(), val.clone()));
                    }
                }
            }
        }
    }

    /// Makes room for `n` more cells.
    pub fn reserve(&mut self, n: usize) {
        if let RowCells::Small(v) = self
            && v.len() + n <= SMALL_MAX
        {
            v.reserve(n);
        }
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        match self {
            RowCells::Small(v) => v.len(),
            RowCells::Large(m) => m.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::{CellType, key};

    fn mk(q: u32, seq: u64) -> MemKey {
        MemKey {
            key: Bytes::from(key::encode(
                b"r",
                b"f",
                format!("q{q:05}").as_bytes(),
                1,
                CellType::Put,
            )),
            seq,
        }
    }

    #[test]
    fn stays_sorted_across_the_switch_to_btree() {
        let mut r = RowCells::default();
        // Reverse order, past SMALL_MAX, with one replacement.
        for q in (0..(SMALL_MAX as u32 * 2)).rev() {
            assert!(r.insert(mk(q, 1), Bytes::from(q.to_string())));
        }
        assert!(!r.insert(mk(3, 1), Bytes::from_static(b"again")));
        assert!(matches!(r, RowCells::Large(_)));
        let mut out = VecDeque::new();
        r.collect(Some(&mk(2, u64::MAX)), u64::MAX, &mut out);
        assert_eq!(out.len(), SMALL_MAX * 2 - 2);
        assert!(out.iter().zip(out.iter().skip(1)).all(|(a, b)| a.0 < b.0));
        assert_eq!(
            out.get(1).map(|x| x.1.clone()),
            Some(Bytes::from_static(b"again"))
        );
        let mut hidden = VecDeque::new();
        r.collect(None, 0, &mut hidden);
        assert!(hidden.is_empty(), "seq 1 is above read point 0");
    }
}
