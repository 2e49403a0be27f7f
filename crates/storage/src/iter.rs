//! The internal sorted order and the cursor every cell source implements.
//!
//! Sources (a memstore, a store file, a merge of them) yield *entries*:
//! an encoded key ([`ferrobase_types::key`]), the sequence id of the write
//! that made it, and a value. Order: key in HBase cell order, then sequence
//! id descending, so for identical keys the latest write comes first.
//! This module owns that order ([`compare_entries`]); it never applies
//! deletes or versions (see `scanner`).

use crate::error::Result;
use crate::storefile::{RowRunCopy, StoreFileWriter};
use ferrobase_types::key;
use std::cmp::Ordering;

/// Compares `(key, seq)` pairs in the internal order.
pub fn compare_entries(a_key: &[u8], a_seq: u64, b_key: &[u8], b_seq: u64) -> Ordering {
    key::compare(a_key, b_key).then_with(|| b_seq.cmp(&a_seq))
}

/// A seekable forward cursor over entries in internal order.
///
/// After construction a cursor is unpositioned; call [`seek`](Self::seek)
/// or [`seek_to_first`](Self::seek_to_first) first. `key`, `seq` and
/// `value` may only be called while [`valid`](Self::valid) is true.
pub trait CellIterator: Send {
    /// Positions at the first entry whose key is ≥ `key` (any sequence id).
    fn seek(&mut self, key: &[u8]) -> Result<()>;
    /// Positions at the first entry.
    fn seek_to_first(&mut self) -> Result<()>;
    /// True while positioned on an entry.
    fn valid(&self) -> bool;
    /// The current entry's encoded key.
    fn key(&self) -> &[u8];
    /// The current entry's sequence id.
    fn seq(&self) -> u64;
    /// The current entry's value.
    fn value(&self) -> &[u8];
    /// Moves to the next entry.
    fn next(&mut self) -> Result<()>;
    /// True when the current entry is known to have the row of the entry
    /// before it, the one [`next`](Self::next) moved from: a hint that lets
    /// a merge or a compaction skip comparing rows (a 53-column row repeats
    /// its row 53 times). `false`, the default, is always correct.
    fn row_kept(&self) -> bool {
        false
    }
    /// [`next`](Self::next) for a compaction that has just appended the
    /// current entry to `writer`: a source that can, first copies the
    /// following entries of the same row into `writer` verbatim, while
    /// each is a put of a new column with a timestamp ≥ `min_ts`
    /// (the store file writer's `copy_row_run`), and stops at the first entry it
    /// did not copy. The default copies nothing, which is always correct.
    fn next_copying(&mut self, writer: &mut StoreFileWriter, min_ts: u64) -> Result<RowRunCopy> {
        let _ = (writer, min_ts);
        self.next()?;
        Ok(RowRunCopy::default())
    }
}
