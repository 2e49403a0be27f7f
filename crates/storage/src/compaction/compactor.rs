//! The merge itself: reads a merged stream of store-file entries and
//! writes the survivors to a new store file.
//!
//! What is dropped:
//! - always: older writes of an identical key (same cell written twice);
//! - minor: puts older than TTL when MIN_VERSIONS is 0 (invisible to every
//!   reader already);
//! - major (every file of the store is an input): puts masked by delete
//!   markers, the markers themselves, versions beyond VERSIONS, and puts
//!   older than TTL beyond MIN_VERSIONS — unless KEEP_DELETED_CELLS keeps
//!   deleted cells and markers.
//!
//! A minor compaction must never drop a delete marker: a put it masks may
//! live in a file that is not an input.
//!
//! Each key is parsed once; survivors go to the writer a whole row at a
//! time, by their parts (`RowBatch`, `append_row`: the flush's path), so
//! the writer compares a row once instead of every full key against the
//! last, and keeps its books per row.
//!
//! A row that only one input holds (the merge knows: its row is below every
//! other input's) is cheaper still: after each cell the compaction appends,
//! that input copies the row's next cells into the output as its block's
//! bytes, while each is a put of a new column that no rule drops
//! ([`CellIterator::next_copying`]; the writer's `verbatim` module says
//! why the bytes are the same). A load of distinct rows, where every flush
//! holds rows no other file has, is compacted mostly that way: no merge
//! step, no key parsed, nothing encoded per cell.

use super::row_batch::RowBatch;
use crate::error::Result;
use crate::iter::CellIterator;
use crate::scanner::MergingIterator;
use crate::storefile::StoreFileWriter;
use ferrobase_types::key::{self, KeyRef};
use ferrobase_types::{CellType, FamilyDescriptor, KeepDeletedCells};

/// Minor or major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactionKind {
    Minor,
    Major,
}

/// Counts of what a compaction read and kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionOutcome {
    pub read: u64,
    pub written: u64,
    /// Of `written`, entries copied verbatim from an input's block.
    pub verbatim: u64,
}

/// Streams `input` (positioned by this function) into `writer`, applying
/// the rules of `kind` for `family` at wall-clock `now_ms`. `pace` is told
/// the bytes of every entry written (the [`throttle`](super::throttle));
/// an error from it stops the compaction.
pub fn compact_into(
    input: &mut MergingIterator,
    writer: &mut StoreFileWriter,
    family: &FamilyDescriptor,
    (kind, now_ms): (CompactionKind, u64),
    pace: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<CompactionOutcome> {
    let ttl_cutoff = family
        .ttl_millis()
        .map(|t| now_ms.saturating_sub(t))
        .unwrap_or(0);
    let keep_deleted = family.keep_deleted_cells != KeepDeletedCells::False;
    let rules_apply = kind == CompactionKind::Major || (family.min_versions == 0 && ttl_cutoff > 0);
    let mut outcome = CompactionOutcome::default();
    // The row being read (`begun`: the writer has it open), and the
    // previous entry's column within it, for the duplicate check.
    let mut row: Vec<u8> = Vec::new();
    let mut begun = false;
    let mut batch = RowBatch::default();
    let mut prev: Option<(u64, u8)> = None;
    let mut prev_qualifier: Vec<u8> = Vec::new();
    let mut state = RowState::default();
    // `direct`: the current row goes to the writer cell by cell, so that
    // its source can copy its entries verbatim behind each (module docs).
    let mut direct = false;
    let copying = writer.copies_row_runs();
    input.seek_to_first()?;
    while input.valid() {
        outcome.read += 1;
        let raw = input.key();
        let Some(k) = KeyRef::parse(raw).filter(|k| k.family == family.name.as_bytes()) else {
            // A key that does not parse, or of another family, was
            // rejected by the file reader already; hand it over verbatim,
            // and the writer refuses it with its name.
            batch.write_to(writer)?;
            writer.append(raw, input.seq(), input.value())?;
            input.next()?;
            continue;
        };
        // The merge often knows the row did not change (a row-run block
        // says so in every entry): then no 64-byte row comparison.
        let same_row = input.row_kept() || same_bytes(k.row, &row);
        if same_row {
            // Inputs hold each key once; a key in two of them (the same
            // cell written twice) comes newest first: keep that one.
            if prev == Some((k.timestamp, k.type_code))
                && key::short_cmp(k.qualifier, &prev_qualifier).is_eq()
            {
                input.next()?;
                continue;
            }
        } else {
            row.clear();
            row.extend_from_slice(k.row);
            begun = false;
            direct = false;
        }
        prev = Some((k.timestamp, k.type_code));
        prev_qualifier.clear();
        prev_qualifier.extend_from_slice(k.qualifier);
        let keep = match kind {
            // A minor compaction without TTL keeps every distinct key.
            _ if !rules_apply => true,
            CompactionKind::Minor => {
                !(k.cell_type() == Some(CellType::Put)
                    && family.min_versions == 0
                    && ttl_cutoff > 0
                    && k.timestamp < ttl_cutoff)
            }
            CompactionKind::Major => {
                state.keep_major(&k, !same_row, family, ttl_cutoff, keep_deleted)
            }
        };
        if !keep {
            input.next()?;
            continue;
        }
        if !begun {
            // A row no other input holds goes cell by cell, copied where
            // it can be; other rows go whole, by their cells' parts, so
            // the writer compares each row once and keeps its books per
            // row (the flush's path).
            direct = copying && input.row_alone();
            if direct {
                batch.write_to(writer)?;
                writer.begin_row(k.row)?;
            } else {
                batch.start_row(k.row, writer)?;
            }
            begun = true;
        }
        let value = input.value();
        let parts = (k.qualifier, k.timestamp, k.type_code);
        outcome.written += 1;
        pace((raw.len() + value.len()) as u64)?;
        if !direct {
            batch.push(parts, input.seq(), value, writer)?;
            input.next()?;
            continue;
        }
        writer.append_cell(k.qualifier, k.timestamp, k.type_code, input.seq(), value)?;
        if !state.masks_nothing() {
            // After a family delete marker a put may be masked: no copying.
            input.next()?;
            continue;
        }
        let copied = input.next_copying(writer, ttl_cutoff)?;
        if copied.entries > 0 {
            // What the copied cells leave behind, as if read one by one:
            // each was a put of a new column, kept.
            outcome.read += copied.entries;
            outcome.written += copied.entries;
            outcome.verbatim += copied.entries;
            pace(copied.bytes)?;
            if let Some(last) = KeyRef::parse(writer.last_key()) {
                prev = Some((last.timestamp, last.type_code));
                prev_qualifier.clear();
                prev_qualifier.extend_from_slice(last.qualifier);
                state.copied_column(last.qualifier);
            }
        }
    }
    batch.write_to(writer)?;
    Ok(outcome)
}

/// `a == b`, looking at the last eight bytes first: consecutive keys of a
/// row share its (often 64-byte) start and differ at the end, in the
/// qualifier or the timestamp, so most comparisons stop there.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.last_chunk::<8>() == b.last_chunk::<8>() && a == b
}

/// What a major compaction remembers of the row and column it is in.
/// Buffers are kept from row to row: no allocation per row or column.
#[derive(Default)]
struct RowState {
    family_delete_ts: Option<u64>,
    family_version_deletes: Vec<u64>,
    qualifier: Vec<u8>,
    column_started: bool,
    delete_column_ts: Option<u64>,
    version_deletes: Vec<u64>,
    puts_kept: u32,
}

impl RowState {
    /// No family delete marker of this row was seen: a put of a new column
    /// is masked by nothing.
    fn masks_nothing(&self) -> bool {
        self.family_delete_ts.is_none() && self.family_version_deletes.is_empty()
    }

    /// The state [`keep_major`](Self::keep_major) would be in after keeping
    /// a put that starts column `qualifier` (what a verbatim copy appends).
    fn copied_column(&mut self, qualifier: &[u8]) {
        self.start_column(qualifier);
        self.puts_kept = 1;
    }

    /// Starts column `qualifier`: nothing deleted or kept in it yet.
    fn start_column(&mut self, qualifier: &[u8]) {
        self.qualifier.clear();
        self.qualifier.extend_from_slice(qualifier);
        self.column_started = true;
        self.delete_column_ts = None;
        self.version_deletes.clear();
        self.puts_kept = 0;
    }

    /// Whether the entry `k` survives a major compaction; `new_row`: it is
    /// the first entry of its row that got here.
    fn keep_major(
        &mut self,
        k: &KeyRef<'_>,
        new_row: bool,
        family: &FamilyDescriptor,
        ttl_cutoff: u64,
        keep_deleted: bool,
    ) -> bool {
        if new_row {
            self.family_delete_ts = None;
            self.family_version_deletes.clear();
            self.column_started = false;
        }
        let Some(t) = k.cell_type() else { return true };
        if t == CellType::DeleteFamily {
            self.family_delete_ts = Some(
                self.family_delete_ts
                    .map_or(k.timestamp, |d| d.max(k.timestamp)),
            );
            return keep_deleted;
        }
        if t == CellType::DeleteFamilyVersion {
            self.family_version_deletes.push(k.timestamp);
            return keep_deleted;
        }
        if !self.column_started || self.qualifier != k.qualifier {
            self.start_column(k.qualifier);
        }
        match t {
            CellType::DeleteColumn => {
                self.delete_column_ts = Some(
                    self.delete_column_ts
                        .map_or(k.timestamp, |d| d.max(k.timestamp)),
                );
                keep_deleted
            }
            CellType::Delete => {
                self.version_deletes.push(k.timestamp);
                keep_deleted
            }
            _ => {
                let masked = self.family_delete_ts.is_some_and(|d| k.timestamp <= d)
                    || self.family_version_deletes.contains(&k.timestamp)
                    || self.delete_column_ts.is_some_and(|d| k.timestamp <= d)
                    || self.version_deletes.contains(&k.timestamp);
                if masked && !keep_deleted {
                    return false;
                }
                let expired = ttl_cutoff > 0 && k.timestamp < ttl_cutoff;
                if expired && self.puts_kept >= family.min_versions {
                    return false;
                }
                if !masked {
                    if self.puts_kept >= family.versions {
                        return false;
                    }
                    self.puts_kept += 1;
                }
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    #[test]
    fn same_bytes_is_equality() {
        let cases: [(&[u8], &[u8]); 7] = [
            (b"", b""),
            (b"abc", b"abc"),
            (b"abc", b"abd"),
            (b"abc", b"abcd"),
            (b"0123456789abcdef", b"0123456789abcdef"),
            (b"X123456789abcdef", b"0123456789abcdef"),
            (b"0123456789abcdeX", b"0123456789abcdef"),
        ];
        for (a, b) in cases {
            assert_eq!(same_bytes(a, b), a == b, "{a:?} {b:?}");
        }
    }
}
