//! The store file writer's row paths: what a flush uses, as the memstore
//! keeps cells by their parts and no keys. A row is opened once
//! ([`begin_row`](StoreFileWriter::begin_row): its row compared with the
//! last entry's once, not per cell), then its cells come by their parts
//! ([`append_cell`](StoreFileWriter::append_cell)), or all at once
//! ([`append_row`](StoreFileWriter::append_row)).
//!
//! Every path writes the bytes [`append`](StoreFileWriter::append) writes
//! for the same cells and refuses what it refuses (the
//! `storefile_row_append` test holds them to it); they only skip work a
//! row makes redundant.

use super::stats::EntryStats;
use super::{ENTRY_SLACK, PUT, StoreFileWriter, TS_TYPE_LEN};
use crate::cell::CellView;
use crate::error::{Result, StorageError};
use crate::storefile::MAX_BLOCK_LEN;
use crate::storefile::bloom;
use crate::storefile::fileinfo::key_text;
use ferrobase_types::key;
use ferrobase_types::{BloomType, CellType};
use std::cmp::Ordering;

impl StoreFileWriter {
    /// Starts row `row` for [`append_cell`](Self::append_cell): the
    /// flush's path, which holds a row's cells by their parts. The row is
    /// compared with the last entry's once here, not once per cell (a
    /// `wide53` row's 53 cells repeat its 64-byte row).
    pub fn begin_row(&mut self, row: &[u8]) -> Result<()> {
        let last_row = self
            .last_parts
            .and_then(|p| self.last_ref(p))
            .map(|last| last.row.cmp(row));
        if last_row == Some(Ordering::Greater) {
            return Err(StorageError::InvalidRequest(format!(
                "store file {}: row {} is out of order after {}",
                self.path.display(),
                ferrobase_types::binary::to_string_binary(row),
                key_text(&self.last_key)
            )));
        }
        if row.len() > key::MAX_ROW_LEN {
            return Err(StorageError::InvalidRequest(format!(
                "store file {}: row of {} bytes is longer than {}",
                self.path.display(),
                row.len(),
                key::MAX_ROW_LEN
            )));
        }
        self.open_row = Some((row.len(), last_row == Some(Ordering::Equal)));
        self.row_key.clear();
        key::join_into(&mut self.row_key, row, &[]);
        self.row_key
            .push(self.family.len().min(key::MAX_FAMILY_LEN) as u8);
        self.row_key.extend_from_slice(self.family.as_bytes());
        Ok(())
    }

    /// Appends a cell of the row [`begin_row`](Self::begin_row) opened,
    /// given as a column key ([`key::encode_column_into`]): the same
    /// checks as [`append`](Self::append), comparing the column part only.
    pub fn append_column(&mut self, column: &[u8], seq: u64, value: &[u8]) -> Result<()> {
        let (family, qualifier, timestamp, type_code) =
            key::column_parts(column).ok_or_else(|| {
                StorageError::InvalidRequest(format!(
                    "store file {}: unparseable column key {}",
                    self.path.display(),
                    ferrobase_types::binary::to_string_binary(column)
                ))
            })?;
        if family != self.family.as_bytes() {
            return Err(StorageError::InvalidRequest(format!(
                "store file {} of family '{}' got a cell of family '{}'",
                self.path.display(),
                self.family,
                ferrobase_types::binary::to_string_binary(family)
            )));
        }
        self.append_cell(qualifier, timestamp, type_code, seq, value)
    }

    /// Appends a cell of the file's family to the row
    /// [`begin_row`](Self::begin_row) opened, given by its parts: what a
    /// flush hands over, as the memstore keeps no keys. The same checks as
    /// [`append`](Self::append), comparing the column part only; the key is
    /// built once, in `last_key`, behind the row and family `begin_row`
    /// left in `row_key`, and a row-run block encodes from the parts.
    pub fn append_cell(
        &mut self,
        qualifier: &[u8],
        timestamp: u64,
        type_code: u8,
        seq: u64,
        value: &[u8],
    ) -> Result<()> {
        let Some((row_len, continues)) = self.open_row else {
            return Err(StorageError::InvalidRequest(format!(
                "store file {}: a column appended before its row",
                self.path.display()
            )));
        };
        if type_code != PUT && CellType::from_code(type_code).is_none() {
            return Err(self.unknown_type(type_code));
        }
        // `row_key` is `rowlen row famlen family` (see `begin_row`).
        let rf_len = self.row_key.len();
        let family_len = self.family.len();
        let key_len = rf_len + qualifier.len() + TS_TYPE_LEN;
        if key_len + value.len() + ENTRY_SLACK > MAX_BLOCK_LEN {
            return Err(self.too_large(key_len + value.len()));
        }
        let mut new_col = true;
        // `last_parts` locates the previous entry's fields in `last_key`;
        // every entry is of this file's family.
        if continues && let Some((_, _, _, last_ts, last_type)) = self.last_parts {
            // Within the row `last_key` is `row_key`, the qualifier, then
            // the timestamp and type.
            let end = self.last_key.len().saturating_sub(TS_TYPE_LEN);
            let last_qualifier = self.last_key.get(rf_len..end).unwrap_or_default();
            let column_order = key::short_cmp(last_qualifier, qualifier);
            let order = column_order
                .then_with(|| timestamp.cmp(&last_ts))
                .then_with(|| type_code.cmp(&last_type))
                .then_with(|| seq.cmp(&self.last_seq));
            if order == Ordering::Greater {
                return Err(self.out_of_order(qualifier, timestamp, seq));
            }
            new_col = column_order != Ordering::Equal;
        }
        if let Some(b) = &mut self.bloom
            && !continues
        {
            b.add(
                self.row_key.get(2..2 + row_len).unwrap_or_default(),
                bloom::SEED_ROW,
            );
        }
        if !self.block.is_empty()
            && self.block.size_estimate() + key_len + value.len() + ENTRY_SLACK > MAX_BLOCK_LEN
        {
            self.flush_block()?;
        }
        // The previous entry was the block's last key until here. Within
        // a row, `last_key` starts with this row and family already.
        if continues {
            self.last_key.truncate(rf_len);
        } else {
            self.last_key.clear();
            self.last_key.extend_from_slice(&self.row_key);
        }
        self.last_key.extend_from_slice(qualifier);
        self.last_key.extend_from_slice(&timestamp.to_be_bytes());
        self.last_key.push(type_code);
        let key = &self.last_key;
        if new_col
            && self.bloom_type == BloomType::RowCol
            && let Some(b) = &mut self.bloom
        {
            b.add(
                key.get(..key.len().saturating_sub(TS_TYPE_LEN))
                    .unwrap_or_default(),
                bloom::SEED_COL,
            );
        }
        if self.block.is_empty() {
            self.block_first_key.clear();
            self.block_first_key.extend_from_slice(key);
        }
        self.block.add_parts(
            (key, rf_len),
            (qualifier, timestamp, type_code),
            seq,
            value,
            continues,
        );
        if self.stats.entries == 0 {
            self.first_key = key.clone();
        }
        self.open_row = Some((row_len, true));
        let parts = (row_len, family_len, qualifier.len(), timestamp, type_code);
        self.account(parts, seq, key_len, value.len())
    }

    /// Appends one row's cells, in internal order: what a flush hands
    /// over. The bytes and checks are those of
    /// [`begin_row`](Self::begin_row) and one
    /// [`append_cell`](Self::append_cell) per cell, but in a row-run block
    /// (NONE) the bookkeeping is per row: after the first cell the previous
    /// entry is the previous cell, so its key is built only where a block
    /// ends and where the row ends (once for a 53-column row, not 53
    /// times), and the file's statistics are summed per row.
    pub fn append_row(&mut self, row: &[u8], cells: &[CellView<'_>]) -> Result<()> {
        self.begin_row(row)?;
        let Some((first, rest)) = cells.split_first() else {
            return Ok(());
        };
        self.append_cell(
            first.qualifier,
            first.timestamp,
            first.kind,
            first.seq,
            first.value,
        )?;
        if rest.is_empty() {
            return Ok(());
        }
        if !self.block.is_row_run() || self.bloom_type == BloomType::RowCol {
            // Other layouts, and ROWCOL Blooms, work on whole keys anyway.
            return rest.iter().try_for_each(|c| {
                self.append_cell(c.qualifier, c.timestamp, c.kind, c.seq, c.value)
            });
        }
        // One pass checks the cells and sums their statistics, a second
        // writes them: the writing loop then has no error to stop for but
        // a full block.
        let mut run = EntryStats::default();
        let (good, refused) = self.check_row_cells(first, rest, &mut run);
        let mut last = *first;
        let written = self.write_row_cells(rest.get(..good).unwrap_or_default(), &mut last);
        // `last` is the last cell appended: after a refused cell the writer
        // is left as `append_cell` would have left it. (After an I/O error
        // finishing a block, the writer is not usable anyway: its file is
        // never published.)
        self.settle_row(&last, &run);
        written?;
        refused.map_or(Ok(()), Err)
    }

    /// How many cells of `rest`, the cells after `first` of a row-run
    /// row, come before the first one `append_cell` would refuse (and why
    /// it would); their statistics are summed into `run`.
    fn check_row_cells(
        &mut self,
        first: &CellView<'_>,
        rest: &[CellView<'_>],
        run: &mut EntryStats,
    ) -> (usize, Option<StorageError>) {
        let rf_len = self.row_key.len();
        let mut last = first;
        for (i, c) in rest.iter().enumerate() {
            if c.kind != PUT && CellType::from_code(c.kind).is_none() {
                return (i, Some(self.unknown_type(c.kind)));
            }
            let key_len = rf_len + c.qualifier.len() + TS_TYPE_LEN;
            if key_len + c.value.len() + ENTRY_SLACK > MAX_BLOCK_LEN {
                return (i, Some(self.too_large(key_len + c.value.len())));
            }
            let order = key::short_cmp(last.qualifier, c.qualifier)
                .then_with(|| c.timestamp.cmp(&last.timestamp))
                .then_with(|| c.kind.cmp(&last.kind))
                .then_with(|| c.seq.cmp(&last.seq));
            if order == Ordering::Greater {
                // The message names the last good cell as the last entry.
                self.set_last_key(last);
                self.last_seq = last.seq;
                return (i, Some(self.out_of_order(c.qualifier, c.timestamp, c.seq)));
            }
            run.add((c.seq, c.timestamp, c.kind), key_len, c.value.len());
            last = c;
        }
        (rest.len(), None)
    }

    /// Writes checked cells of the open row (after its first, already
    /// written) into row-run blocks, several at a time, finishing each
    /// block where `append_cell` would; `last` is the last cell written.
    fn write_row_cells<'a>(
        &mut self,
        cells: &[CellView<'a>],
        last: &mut CellView<'a>,
    ) -> Result<()> {
        let rf_len = self.row_key.len();
        let entry_len = |c: &CellView<'_>| {
            rf_len + c.qualifier.len() + TS_TYPE_LEN + c.value.len() + ENTRY_SLACK
        };
        let mut todo = cells;
        while let Some(next) = todo.first() {
            if self.block.is_empty() {
                self.block_first_key.clear();
                self.block_first_key.extend_from_slice(&self.row_key);
                push_column_tail(&mut self.block_first_key, next);
            }
            let was_empty = self.block.is_empty();
            let taken = self
                .block
                .add_row_cells(
                    &self.row_key,
                    todo,
                    (self.blocksize, MAX_BLOCK_LEN),
                    entry_len,
                )
                .ok_or_else(|| self.bound_exceeded())?;
            if let Some(c) = taken.checked_sub(1).and_then(|i| todo.get(i)) {
                *last = *c;
            }
            todo = todo.get(taken..).unwrap_or_default();
            if taken == 0 && was_empty {
                // An empty block takes any checked cell: not reached.
                return Err(self.bound_exceeded());
            }
            if taken == 0 || self.block.size_estimate() >= self.blocksize {
                // The block's last key is the last cell written.
                self.set_last_key(last);
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// `last_key` becomes the key of `c`, a cell of the open row: within
    /// the row it already starts with the row and family.
    #[inline]
    fn set_last_key(&mut self, c: &CellView<'_>) {
        self.last_key.truncate(self.row_key.len());
        push_column_tail(&mut self.last_key, c);
    }

    /// After [`append_row`](Self::append_row)'s loop, or a verbatim copy:
    /// `last` is the last entry, `run` what was appended besides the row's
    /// first cell.
    pub(super) fn settle_row(&mut self, last: &CellView<'_>, run: &EntryStats) {
        self.set_last_key(last);
        let row_len = self.open_row.map_or(0, |(len, _)| len);
        self.last_parts = Some((
            row_len,
            self.family.len(),
            last.qualifier.len(),
            last.timestamp,
            last.kind,
        ));
        self.last_seq = last.seq;
        self.stats.merge(run);
    }

    #[cold]
    fn unknown_type(&self, code: u8) -> StorageError {
        StorageError::InvalidRequest(format!(
            "store file {}: unknown cell type code {code}",
            self.path.display()
        ))
    }

    /// A row-run block's size bound proved wrong: a bug, reported as an
    /// error rather than written as a short entry.
    #[cold]
    fn bound_exceeded(&self) -> StorageError {
        StorageError::io(
            &self.path,
            std::io::Error::other("a row-run entry outgrew its size bound (a bug in the encoder)"),
        )
    }

    #[cold]
    fn too_large(&self, len: usize) -> StorageError {
        StorageError::InvalidRequest(format!(
            "cell of {len} bytes in store file {} is too large for a block",
            self.path.display()
        ))
    }

    /// A cell that sorts before the last entry (`last_key`, `last_seq`).
    #[cold]
    fn out_of_order(&self, qualifier: &[u8], timestamp: u64, seq: u64) -> StorageError {
        StorageError::InvalidRequest(format!(
            "store file {}: cell {}/{} (seq {seq}) is out of order after {} (seq {})",
            self.path.display(),
            ferrobase_types::binary::to_string_binary(qualifier),
            timestamp,
            key_text(&self.last_key),
            self.last_seq
        ))
    }
}

/// A key's part after the row and family: qualifier, timestamp, type.
#[inline]
fn push_column_tail(out: &mut Vec<u8>, c: &CellView<'_>) {
    out.extend_from_slice(c.qualifier);
    out.extend_from_slice(&c.timestamp.to_be_bytes());
    out.push(c.kind);
}
