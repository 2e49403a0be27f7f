//! [`CellView`]: one cell of a row of one family, by its parts and
//! borrowed, as a flush walks the memstore and hands rows to the store file
//! writer. No key is built: the row is the caller's, the family the
//! store's.
//!
//! This module owns the internal order of a row's cells; it never owns
//! bytes and never allocates.

use ferrobase_types::key;
use std::cmp::Ordering;

/// A cell of a row, borrowed: what walks over a row see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellView<'a> {
    pub qualifier: &'a [u8],
    pub timestamp: u64,
    /// The cell type code (`ferrobase_types::CellType`).
    pub kind: u8,
    pub seq: u64,
    pub value: &'a [u8],
}

impl CellView<'_> {
    /// Internal order within a family: qualifier, then newest timestamp,
    /// highest type and newest write first (as `key::compare_column` and
    /// `iter::compare_entries` order full keys).
    #[inline]
    pub(crate) fn order(&self, other: &CellView<'_>) -> Ordering {
        key::short_cmp(self.qualifier, other.qualifier)
            .then_with(|| other.timestamp.cmp(&self.timestamp))
            .then_with(|| other.kind.cmp(&self.kind))
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// `v`'s allocation, emptied, for views of another lifetime: the standard
/// library collects in place when the element layout is the same (it is:
/// only the lifetime differs), so a walk that gathers each row's views
/// allocates once, not once per row.
// `filter` would keep the lifetime; changing it is the point.
#[allow(clippy::unnecessary_filter_map)]
pub(crate) fn reuse<'b>(v: Vec<CellView<'_>>) -> Vec<CellView<'b>> {
    v.into_iter().filter_map(|_| None).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::CellType;

    #[test]
    fn reuse_keeps_the_allocation_and_empties_it() {
        let q = b"q".to_vec();
        let mut v: Vec<CellView<'_>> = Vec::with_capacity(64);
        v.push(CellView {
            qualifier: &q,
            timestamp: 1,
            kind: CellType::Put.code(),
            seq: 1,
            value: &q,
        });
        let ptr = v.as_ptr() as usize;
        let w: Vec<CellView<'static>> = reuse(v);
        assert!(w.is_empty());
        assert_eq!(w.capacity(), 64);
        assert_eq!(w.as_ptr() as usize, ptr);
    }
}
