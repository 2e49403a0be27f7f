//! [`StoreFileScanner`]: a [`CellIterator`] over one store file.
//!
//! A seek binary-searches the in-memory block index for the one block that
//! can hold the key (first block whose last key is ≥ it), then seeks inside
//! that block (restart points, then a short walk); `next` crosses into the
//! following blocks. The current block stays loaded, so consecutive seeks
//! into it (a get after a get, a scanner re-seek) cost no cache lookup.
//!
//! A bulk-loaded file's cells are reported with the load's sequence id
//! (`super::bulk_name`), whatever the file holds.
//!
//! A reference's scanner (`super::half`) serves only its rows: seeks
//! below the first row start at it, and the cursor turns invalid at the
//! first entry of the end row, so every consumer (gets, scans, compactions)
//! sees the half as if it were a file of its own.
//!
//! The scanner never applies deletes or versions and never swallows an
//! error: a bad block ends the scan with `Corrupt` (file path, block offset).

use super::block::iterator::BlockIter;
use super::reader::StoreFileReader;
use super::writer::{RowRunCopy, StoreFileWriter};
use crate::error::{Result, StorageError};
use crate::iter::CellIterator;
use bytes::Bytes;
use ferrobase_types::key;
use std::sync::Arc;

/// See the module docs.
pub struct StoreFileScanner {
    reader: Arc<StoreFileReader>,
    cache_blocks: bool,
    /// Index of the block in `iter`, if any.
    block: Option<usize>,
    iter: BlockIter,
    /// A reference's first key (the first key of its first row), if it
    /// has a lower bound.
    start_key: Option<Vec<u8>>,
    /// A reference's end row (exclusive), if it has an upper bound.
    end_row: Option<Vec<u8>>,
}

impl StoreFileScanner {
    pub(super) fn new(reader: Arc<StoreFileReader>, cache_blocks: bool) -> StoreFileScanner {
        let bounds = reader.bounds();
        let start_key = bounds
            .filter(|b| !b.start.is_empty())
            .map(|b| key::first_on_row(&b.start));
        let end_row = bounds.filter(|b| !b.end.is_empty()).map(|b| b.end.clone());
        StoreFileScanner {
            reader,
            cache_blocks,
            block: None,
            iter: BlockIter::empty(),
            start_key,
            end_row,
        }
    }

    /// Ends a reference's cursor at its end row.
    fn check_end(&mut self) {
        if let Some(end) = &self.end_row
            && self.iter.valid()
            && key::row_of(self.iter.key()).is_none_or(|r| r >= end.as_slice())
        {
            self.invalidate();
        }
    }

    /// The file this scanner reads.
    pub fn reader(&self) -> &Arc<StoreFileReader> {
        &self.reader
    }

    /// The current value as a handle on the cached block (no copy). Only
    /// while [`valid`](CellIterator::valid).
    pub fn value_bytes(&self) -> Bytes {
        self.iter.value_bytes()
    }

    fn corrupt(&self, i: usize, what: String) -> StorageError {
        corrupt_block(&self.reader, i, what)
    }

    /// Makes block `i` the current one (a no-op if it already is).
    fn load(&mut self, i: usize) -> Result<()> {
        if self.block == Some(i) {
            return Ok(());
        }
        self.block = None;
        let data = self.reader.read_block(i, self.cache_blocks)?;
        let encoding = self.reader.info().encoding;
        self.iter
            .reset(data, encoding, self.reader.format_version())
            .map_err(|w| self.corrupt(i, w))?;
        self.block = Some(i);
        Ok(())
    }

    /// Positions at the first entry of block `i` or a later one.
    fn first_from(&mut self, mut i: usize) -> Result<()> {
        while i < self.reader.index().len() {
            self.load(i)?;
            self.iter.seek_to_first().map_err(|w| self.corrupt(i, w))?;
            if self.iter.valid() {
                return Ok(());
            }
            i += 1;
        }
        self.invalidate();
        Ok(())
    }

    fn invalidate(&mut self) {
        // An empty block iterator is invalid; keeping the loaded block would
        // be fine too, but an exhausted scanner should not pin cache memory.
        self.iter = BlockIter::empty();
        self.block = None;
    }

    /// Runs `f`, leaving the scanner invalid if it fails.
    fn guarded(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) -> Result<()> {
        let r = f(self);
        if r.is_err() {
            self.invalidate();
        }
        r
    }
}

impl CellIterator for StoreFileScanner {
    fn seek(&mut self, key: &[u8]) -> Result<()> {
        let start = self.start_key.take();
        let key = match &start {
            Some(first) if key::compare(key, first) == std::cmp::Ordering::Less => first.as_slice(),
            _ => key,
        };
        let r = self.seek_in_file(key);
        self.start_key = start;
        r
    }

    fn seek_to_first(&mut self) -> Result<()> {
        match self.start_key.clone() {
            Some(first) => self.seek(&first),
            None => {
                self.guarded(|s| s.first_from(0))?;
                self.check_end();
                Ok(())
            }
        }
    }

    fn valid(&self) -> bool {
        self.iter.valid()
    }

    fn key(&self) -> &[u8] {
        self.iter.key()
    }

    fn seq(&self) -> u64 {
        match self.reader.bulk_seq_id() {
            Some(seq) => seq,
            None => self.iter.seq(),
        }
    }

    fn value(&self) -> &[u8] {
        self.iter.value()
    }

    fn row_kept(&self) -> bool {
        // A new block starts with a restart point, which repeats its row:
        // `false` there, as it should be.
        self.iter.row_kept()
    }

    fn next_copying(&mut self, writer: &mut StoreFileWriter, min_ts: u64) -> Result<RowRunCopy> {
        let copied = self.next_copying_in_file(writer, min_ts)?;
        self.check_end();
        Ok(copied)
    }

    fn next(&mut self) -> Result<()> {
        self.next_in_file()?;
        self.check_end();
        Ok(())
    }
}

impl StoreFileScanner {
    /// A seek over the whole file, then the end bound.
    fn seek_in_file(&mut self, key: &[u8]) -> Result<()> {
        self.guarded(|s| {
            let Some(i) = s.reader.index().find(key) else {
                s.invalidate();
                return Ok(());
            };
            s.load(i)?;
            s.iter.seek(key).map_err(|w| s.corrupt(i, w))?;
            if s.iter.valid() {
                return Ok(());
            }
            // The index promised a key ≥ target in block i; a following
            // block still gives the right answer if it lied.
            s.first_from(i + 1)
        })?;
        self.check_end();
        Ok(())
    }

    fn next_copying_in_file(
        &mut self,
        writer: &mut StoreFileWriter,
        min_ts: u64,
    ) -> Result<RowRunCopy> {
        let Some(i) = self.block else {
            return Ok(RowRunCopy::default());
        };
        if self.reader.bulk_seq_id().is_some() {
            // A verbatim copy would carry the file's own sequence ids,
            // not the load's.
            self.next_in_file()?;
            return Ok(RowRunCopy::default());
        }
        let mut copied = RowRunCopy::default();
        self.guarded(|s| {
            // The iterator is borrowed mutably: name the block by the reader.
            let reader = &s.reader;
            copied = writer.copy_row_run(&mut s.iter, min_ts, |w| corrupt_block(reader, i, w))?;
            Ok(())
        })?;
        if copied.current_written {
            self.next_in_file()?;
        }
        Ok(copied)
    }

    fn next_in_file(&mut self) -> Result<()> {
        self.guarded(|s| {
            let Some(i) = s.block else { return Ok(()) };
            if !s.iter.valid() {
                return Ok(());
            }
            s.iter.next().map_err(|w| s.corrupt(i, w))?;
            if s.iter.valid() {
                return Ok(());
            }
            s.first_from(i + 1)
        })
    }
}

/// The error for data block `i` of `reader`'s file: `what` was wrong.
fn corrupt_block(reader: &StoreFileReader, i: usize, what: String) -> StorageError {
    let offset = reader.index().handle(i).map_or(0, |h| h.offset);
    StorageError::corrupt(reader.path(), offset, format!("data block {i}: {what}"))
}
