//! The writer's verbatim path: a compaction copies the cells of a row that
//! comes from one input file as that file's bytes, without decoding them
//! into parts and encoding them again.
//!
//! Why it is sound: in a row-run block (NONE, format version 3 on) an entry
//! that continues its row depends on nothing but the previous entry's
//! sequence id, timestamp and type (`encoding`). Once the writer has
//! appended the input's current entry (same key, same sequence id), the
//! input's next entries of that row are, byte for byte, what
//! [`append_cell`](StoreFileWriter::append_cell) would write for them, as
//! long as the writer would put no restart point and no block end among
//! them. [`copy_row_run`](StoreFileWriter::copy_row_run) stops before
//! either, so the file is the same as the one the cell path writes (the
//! compactor's tests compare the bytes).
//!
//! ```text
//! input block:  … [E0: row R, full] [E1 cont.] [E2 cont.] [E3 cont.] | restart …
//! output block: … [E0: appended by parts] [E1 E2 E3: one copy]
//! ```
//!
//! What it never does: copy an entry the compaction might drop. It takes
//! only puts that start a new column and are not older than the caller's
//! `min_ts`; anything else stops it, and the caller handles that entry.
//! Nor does it copy an entry out of order: each copied qualifier must sort
//! after the one before it, the order check `append_cell` would make. The
//! entries come from one row of a file whose writer checked that order and
//! whose block passed its checksum, but a block damaged in a way the
//! checksum misses would otherwise be copied into a new file whose index
//! no longer opens, losing the compaction's every input; stopped here, the
//! entry goes to `append_cell`, which refuses it and fails the compaction
//! with the inputs intact. The comparison replaces an inequality test the
//! copy made anyway, so it costs nothing.

use super::stats::EntryStats;
use super::{ENTRY_SLACK, PUT, StoreFileWriter, TS_TYPE_LEN};
use crate::cell::CellView;
use crate::error::{Result, StorageError};
use crate::storefile::MAX_BLOCK_LEN;
use crate::storefile::block::iterator::BlockIter;
use crate::storefile::encoding::ROW_RUN_RESTART_MAX;
use ferrobase_types::BloomType;

/// What a verbatim copy (`StoreFileWriter::copy_row_run`) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowRunCopy {
    /// Entries copied.
    pub entries: u64,
    /// Their key and value bytes (what a compaction's pace counts).
    pub bytes: u64,
    /// The iterator's current entry is one this writer has (copied, or the
    /// one the caller appended): the caller moves past it.
    pub current_written: bool,
}

impl StoreFileWriter {
    /// True when this writer can take entries verbatim (row-run blocks,
    /// and no ROWCOL Bloom filter, which needs every column's key).
    pub fn copies_row_runs(&self) -> bool {
        self.block.is_row_run() && self.bloom_type != BloomType::RowCol
    }

    /// The key of the last entry appended.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Copies the entries after `it`'s current one that continue its row,
    /// while each is a put of a new column with a timestamp ≥ `min_ts` and
    /// the writer would put it in the same block with no restart before
    /// it (module docs). Copies nothing unless the last entry appended is
    /// `it`'s current entry (key and sequence id), appended after
    /// [`begin_row`](Self::begin_row). Block errors are given to `corrupt`
    /// to name.
    pub(crate) fn copy_row_run(
        &mut self,
        it: &mut BlockIter,
        min_ts: u64,
        corrupt: impl Fn(String) -> StorageError,
    ) -> Result<RowRunCopy> {
        let mut done = RowRunCopy {
            current_written: true,
            ..RowRunCopy::default()
        };
        let Some((_, true)) = self.open_row else {
            return Ok(done);
        };
        // Cheapest first: rows of one cell (`single53`) stop at the second.
        if !self.copies_row_runs()
            || !it.continues_row_ahead()
            || self.block.is_empty()
            || it.seq() != self.last_seq
            || it.key() != self.last_key.as_slice()
        {
            return Ok(done);
        }
        let rf_len = self.row_key.len();
        let base = self.block.size_estimate();
        let since = self.block.since_restart();
        let start = it.next_pos();
        let mut end = start;
        let mut n = 0usize;
        let mut run = EntryStats::default();
        let mut prev_qualifier = it.row_run_qualifier();
        // The last entry taken: sequence id, timestamp, type, value length.
        let mut last = None;
        while since + n < ROW_RUN_RESTART_MAX && it.continues_row_ahead() {
            // Keys are not rebuilt while copying: only the last one is
            // needed, and `last_key` is made from its parts below.
            let qualifier = it.step_in_row().map_err(&corrupt)?;
            done.current_written = false;
            let (ts, typ, vlen) = it.ts_type_vlen();
            let key_len = rf_len + qualifier.len() + TS_TYPE_LEN;
            // A new column, and after the previous one (module docs).
            let next_column =
                it.entry_bytes(qualifier.clone()) > it.entry_bytes(prev_qualifier.clone());
            if typ != PUT
                || ts < min_ts
                || !next_column
                || base + (end - start) + key_len + vlen + ENTRY_SLACK > MAX_BLOCK_LEN
            {
                // The caller takes this entry by its key.
                it.rebuild_key(qualifier);
                break;
            }
            end = it.next_pos();
            n += 1;
            run.add((it.seq(), ts, typ), key_len, vlen);
            done.bytes += (key_len + vlen) as u64;
            done.current_written = true;
            last = Some((it.seq(), ts, typ, vlen));
            prev_qualifier = qualifier;
            if base + (end - start) >= self.blocksize {
                break;
            }
        }
        let Some((seq, ts, typ, vlen)) = last else {
            return Ok(done);
        };
        self.block
            .add_verbatim(it.entry_bytes(start..end), n, (seq, ts, typ, vlen));
        done.entries = n as u64;
        let last = CellView {
            qualifier: it.entry_bytes(prev_qualifier),
            timestamp: ts,
            kind: typ,
            seq,
            value: &[],
        };
        self.settle_row(&last, &run);
        if self.block.size_estimate() >= self.blocksize {
            self.flush_block()?;
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use crate::error::StorageError;
    use crate::iter::CellIterator;
    use crate::storefile::{StoreFileReader, StoreFileWriter};
    use ferrobase_types::key::{self, KeyRef};
    use ferrobase_types::{CellType, FamilyDescriptor};

    /// Found by fuzzing (`storefile_block_none`): a NONE block whose row
    /// ends in a qualifier sorting before the row's first, under a
    /// checksum that matches, reads fine; a compaction copied that entry
    /// verbatim, and its output's index refused to open ("first key after
    /// last key"). Now the copy stops there and `append_cell` refuses it.
    #[test]
    fn a_copy_stops_at_an_entry_out_of_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in");
        let family = FamilyDescriptor::new("f").unwrap();
        let mut w = StoreFileWriter::create(&path, &family, 3).unwrap();
        for q in ["a", "b", "c"] {
            let k = key::encode(b"r", b"f", q.as_bytes(), 7, CellType::Put);
            w.append(&k, 1, format!("v{q}").as_bytes()).unwrap();
        }
        w.finish().unwrap();

        // Rename column c to 0 (before a) and mend the block's checksum.
        let frame_len = StoreFileReader::open(&path, None)
            .unwrap()
            .index()
            .handle(0)
            .unwrap()
            .len as usize;
        let mut file = std::fs::read(&path).unwrap();
        let at = file.windows(3).position(|w| w == b"cvc").unwrap();
        file[at] = b'0';
        let crc = crc32c::crc32c(&file[..frame_len - 4]);
        file[frame_len - 4..frame_len].copy_from_slice(&crc.to_le_bytes());
        std::fs::write(&path, &file).unwrap();

        // A compaction's copy: the row's first cell by its parts, the rest
        // verbatim where it can.
        let reader = StoreFileReader::open(&path, None).unwrap();
        let mut s = reader.scanner(false);
        s.seek_to_first().unwrap();
        let mut w = StoreFileWriter::create(&dir.path().join("out"), &family, 3).unwrap();
        w.begin_row(b"r").unwrap();
        let mut copied = 0;
        let err = loop {
            assert!(s.valid(), "the entry out of order was copied");
            let k = KeyRef::parse(s.key()).unwrap();
            if let Err(e) = w.append_cell(k.qualifier, k.timestamp, k.type_code, s.seq(), s.value())
            {
                break e;
            }
            copied += s.next_copying(&mut w, 0).unwrap().entries;
        };
        assert_eq!(copied, 1, "b is copied, 0 is not");
        assert!(
            matches!(&err, StorageError::InvalidRequest(m) if m.contains("out of order")),
            "{err}"
        );
    }
}
