//! Decodes and seeks inside one data block payload (layout in `block`).
//!
//! A seek binary-searches the restart points (each decodes from the reset
//! state, so its key is found without touching earlier entries), then walks
//! forward at most [`RESTART_INTERVAL`](crate::storefile::encoding::RESTART_INTERVAL)
//! entries ([`ROW_RUN_RESTART_MAX`](crate::storefile::encoding::ROW_RUN_RESTART_MAX)
//! inside a long row of a NONE block). HBase walks every cell of a block from its start (or, with
//! ROW_INDEX_V1, of the row); this bounded walk is where we beat it.
//!
//! The iterator holds the block as [`Bytes`] (shared with the block cache),
//! rebuilds the current key in a buffer it reuses, and hands out the value as
//! a slice of the block: no allocation per entry. It never panics on a bad
//! block: every failure is an `Err` with the byte position inside the block,
//! which the scanner turns into a `Corrupt` error naming file and block.

use super::FOOTER_LEN;
use crate::codec::Cursor;
use crate::storefile::SeekTarget;
use crate::storefile::encoding::{self, Layout, Prev};
use bytes::Bytes;
use ferrobase_types::DataBlockEncoding;

/// See the module docs.
pub(crate) struct BlockIter {
    data: Bytes,
    layout: Layout,
    /// Entries occupy `data[..entries_end]`; the restart array follows.
    entries_end: usize,
    num_restarts: usize,
    cur: Prev,
    /// Offset of the next restart point after the current entry (where the
    /// decoder must reset its state, as the encoder did), or `usize::MAX`.
    next_restart_at: usize,
    /// Index of that restart point.
    next_restart: usize,
    value_start: usize,
    next_pos: usize,
    valid: bool,
    /// The current entry has the row of the one `next` moved from (see
    /// [`row_kept`](Self::row_kept)).
    row_kept: bool,
}

impl BlockIter {
    /// An iterator over no block; [`reset`](Self::reset) gives it one.
    pub fn empty() -> BlockIter {
        BlockIter {
            data: Bytes::new(),
            layout: Layout::Plain,
            entries_end: 0,
            num_restarts: 0,
            cur: Prev::default(),
            next_restart_at: usize::MAX,
            next_restart: 0,
            value_start: 0,
            next_pos: 0,
            valid: false,
            row_kept: false,
        }
    }

    /// Switches to a new block payload, checking its footer. Unpositioned
    /// afterwards.
    /// `version`: the file's format version, which says how its NONE blocks
    /// are laid out.
    pub fn reset(
        &mut self,
        data: Bytes,
        encoding: DataBlockEncoding,
        version: u32,
    ) -> Result<(), String> {
        self.valid = false;
        self.data = Bytes::new();
        self.num_restarts = 0;
        let len = data.len();
        let footer_at = len
            .checked_sub(FOOTER_LEN)
            .ok_or_else(|| format!("block of {len} bytes has no footer"))?;
        let mut c = Cursor::new(data.get(footer_at..).unwrap_or_default());
        let n = c.u32_le().ok_or("short footer")? as usize;
        let code = c.u8().ok_or("short footer")?;
        let layout = Layout::of_block(code, encoding, version).ok_or_else(|| {
            format!(
                "block encoding code {code} at byte {} does not match the file's {encoding} (format version {version})",
                footer_at + 4
            )
        })?;
        let entries_end = n
            .checked_mul(4)
            .and_then(|b| footer_at.checked_sub(b))
            .ok_or_else(|| format!("{n} restart points do not fit a block of {len} bytes"))?;
        if n == 0 || entries_end == 0 {
            return Err("block has no entries".into());
        }
        self.data = data;
        self.layout = layout;
        self.entries_end = entries_end;
        self.num_restarts = n;
        if self.restart_offset(0)? != 0 {
            return Err("first restart point is not at byte 0".into());
        }
        Ok(())
    }

    fn restart_offset(&self, i: usize) -> Result<usize, String> {
        let at = self.entries_end + 4 * i;
        let off = self
            .data
            .get(at..at + 4)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| format!("restart point {i} missing at byte {at}"))?
            as usize;
        if off >= self.entries_end {
            return Err(format!(
                "restart point {i} at byte {at} points to {off}, past the entries ({})",
                self.entries_end
            ));
        }
        Ok(off)
    }

    /// Positions at restart point `i`.
    fn seek_to_restart(&mut self, i: usize) -> Result<(), String> {
        self.next_pos = self.restart_offset(i)?;
        self.next_restart = i;
        self.next_restart_at = self.next_pos;
        self.valid = true;
        self.advance()
    }

    /// Decodes the entry at `next_pos`, or becomes invalid at the end.
    fn advance(&mut self) -> Result<(), String> {
        if self.next_pos >= self.entries_end {
            self.valid = false;
            return Ok(());
        }
        if self.next_pos >= self.next_restart_at {
            if self.next_pos > self.next_restart_at {
                self.valid = false;
                return Err(format!(
                    "entry ending at byte {} crosses restart point {} at byte {}",
                    self.next_pos, self.next_restart, self.next_restart_at
                ));
            }
            // The encoder reset its state here; so must we.
            self.cur.reset();
            self.next_restart += 1;
            self.next_restart_at = if self.next_restart < self.num_restarts {
                let off = self.restart_offset(self.next_restart)?;
                if off <= self.next_pos {
                    self.valid = false;
                    return Err(format!(
                        "restart point {} at byte {off} is out of order",
                        self.next_restart
                    ));
                }
                off
            } else {
                usize::MAX
            };
        }
        let entries = self.data.get(..self.entries_end).unwrap_or_default();
        match encoding::decode_entry(self.layout, &mut self.cur, entries, self.next_pos) {
            Ok(d) => {
                self.value_start = d.value_start;
                self.next_pos = d.next;
                self.row_kept = d.same_row;
                Ok(())
            }
            Err(what) => {
                self.valid = false;
                Err(format!(
                    "{what} (entry at byte {} of the block)",
                    self.next_pos
                ))
            }
        }
    }

    pub fn seek_to_first(&mut self) -> Result<(), String> {
        self.seek_to_restart(0)
    }

    /// Positions at the first entry with key ≥ `target`; invalid if every
    /// entry of the block is smaller.
    pub fn seek(&mut self, target: &[u8]) -> Result<(), String> {
        let target = SeekTarget::new(target);
        // First restart point whose key is ≥ target.
        let (mut lo, mut hi) = (0, self.num_restarts);
        let mut positioned_at = None;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            self.seek_to_restart(mid)?;
            if !self.valid {
                return Err(format!("restart point {mid} has no entry"));
            }
            if target.is_after(&self.cur.key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
            positioned_at = Some(mid);
        }
        // Walk from the restart point before it; the walk ends at or before
        // restart point `lo`, so it decodes at most one restart interval.
        let start = lo.saturating_sub(1);
        if positioned_at != Some(start) {
            self.seek_to_restart(start)?;
        }
        while self.valid && target.is_after(&self.cur.key) {
            self.advance()?;
        }
        // The entry before this one was walked over, not handed out.
        self.row_kept = false;
        Ok(())
    }

    /// Moves to the next entry (invalid past the last one).
    pub fn next(&mut self) -> Result<(), String> {
        if self.valid { self.advance() } else { Ok(()) }
    }

    pub fn valid(&self) -> bool {
        self.valid
    }

    /// True when the current entry is known to have the row (and family)
    /// of the entry [`next`](Self::next) moved from: a row run says so in
    /// every entry. `false` when unknown (other layouts, the first entry
    /// after a seek), which is always a correct answer.
    pub fn row_kept(&self) -> bool {
        self.valid && self.row_kept
    }

    pub fn key(&self) -> &[u8] {
        &self.cur.key
    }

    /// Where the next entry starts: the end of the current one.
    pub fn next_pos(&self) -> usize {
        self.next_pos
    }

    /// True when the next entry is in this block, is no restart point and
    /// continues the current entry's row (its row-run flags say so): its
    /// bytes depend only on the current entry's sequence id, timestamp
    /// and type, so they can be copied verbatim behind an entry with the
    /// same ones. Only for a row-run block.
    pub fn continues_row_ahead(&self) -> bool {
        self.valid
            && self.layout == Layout::RowRun
            && self.next_pos < self.entries_end
            && self.next_pos < self.next_restart_at
            && self
                .data
                .get(self.next_pos)
                .is_some_and(|f| f & encoding::SAME_ROW_FAMILY != 0)
    }

    /// Moves onto the next entry, which [`continues_row_ahead`](Self::continues_row_ahead)
    /// said continues the row, without rebuilding its key: until
    /// [`rebuild_key`](Self::rebuild_key), [`key`](Self::key) is the key
    /// of an earlier entry of the row (a following [`next`](Self::next)
    /// needs no more than that). Returns where the entry's qualifier lies.
    pub fn step_in_row(&mut self) -> Result<std::ops::Range<usize>, String> {
        let entries = self.data.get(..self.entries_end).unwrap_or_default();
        match encoding::step_row_run(&mut self.cur, entries, self.next_pos) {
            Ok((qualifier_start, d)) => {
                self.value_start = d.value_start;
                self.next_pos = d.next;
                self.row_kept = true;
                Ok(qualifier_start..d.value_start)
            }
            Err(what) => {
                self.valid = false;
                Err(format!(
                    "{what} (entry at byte {} of the block)",
                    self.next_pos
                ))
            }
        }
    }

    /// Gives the entry [`step_in_row`](Self::step_in_row) moved onto its
    /// key; `qualifier` is what that returned.
    pub fn rebuild_key(&mut self, qualifier: std::ops::Range<usize>) {
        let q = self
            .data
            .get(..self.entries_end)
            .and_then(|d| d.get(qualifier))
            .unwrap_or_default();
        encoding::rebuild_row_run_key(&mut self.cur, q);
    }

    /// Where the current row-run entry's qualifier lies in the block: just
    /// before its value (see `encoding`).
    pub fn row_run_qualifier(&self) -> std::ops::Range<usize> {
        let qlen = self
            .cur
            .key
            .len()
            .saturating_sub(self.cur.col_len + encoding::TS_TYPE_LEN);
        self.value_start.saturating_sub(qlen)..self.value_start
    }

    /// Bytes `range` of the block's entries (empty if out of bounds).
    pub fn entry_bytes(&self, range: std::ops::Range<usize>) -> &[u8] {
        self.data
            .get(..self.entries_end)
            .and_then(|d| d.get(range))
            .unwrap_or_default()
    }

    /// The current entry's timestamp, type code and value length, as the
    /// decoder keeps them.
    pub fn ts_type_vlen(&self) -> (u64, u8, usize) {
        (self.cur.ts, self.cur.typ, self.cur.vlen)
    }

    pub fn seq(&self) -> u64 {
        self.cur.seq
    }

    pub fn value(&self) -> &[u8] {
        self.data
            .get(self.value_start..self.value_start + self.cur.vlen)
            .unwrap_or_default()
    }

    /// The value as a handle on the block (no copy).
    pub fn value_bytes(&self) -> Bytes {
        let end = self.value_start + self.cur.vlen;
        if end <= self.data.len() {
            self.data.slice(self.value_start..end)
        } else {
            Bytes::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::builder::BlockBuilder;
    use super::*;
    use crate::storefile::FORMAT_VERSION;
    use ferrobase_types::{CellType, key};
    use rand::{Rng, SeedableRng};

    /// Sorted entries: rows with several qualifiers and versions.
    fn entries(rows: usize, seed: u64) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::new();
        for r in 0..rows {
            let row = format!("row{r:05}");
            for q in 0..rng.random_range(1..5) {
                for v in 0..rng.random_range(1..4u64) {
                    let t = if rng.random_bool(0.1) {
                        CellType::Delete
                    } else {
                        CellType::Put
                    };
                    let k = key::encode(
                        row.as_bytes(),
                        b"f",
                        format!("q{q}").as_bytes(),
                        1000 - v,
                        t,
                    );
                    let val: Vec<u8> = (0..rng.random_range(0..20)).map(|_| rng.random()).collect();
                    out.push((k, rng.random_range(1..1000), val));
                }
            }
        }
        out
    }

    fn build(encoding: DataBlockEncoding, es: &[(Vec<u8>, u64, Vec<u8>)]) -> Bytes {
        let mut b = BlockBuilder::new(encoding, 1024);
        let mut last_row = None;
        for (k, s, v) in es {
            // The writer's hint, across restarts too.
            let row = key::row_of(k);
            b.add(k, *s, v, last_row.is_some() && last_row == row);
            last_row = row;
        }
        Bytes::copy_from_slice(b.finish())
    }

    #[test]
    fn scan_and_seek_every_encoding() -> Result<(), String> {
        let es = entries(60, 7);
        for enc in DataBlockEncoding::ALL {
            let mut it = BlockIter::empty();
            it.reset(build(*enc, &es), *enc, FORMAT_VERSION)?;
            it.seek_to_first()?;
            for (k, s, v) in &es {
                assert!(it.valid(), "{enc}");
                assert_eq!(
                    (it.key(), it.seq(), it.value()),
                    (k.as_slice(), *s, v.as_slice()),
                    "{enc}"
                );
                assert_eq!(it.value_bytes().as_ref(), v.as_slice());
                it.next()?;
            }
            assert!(!it.valid());
            // Seek to every key, and to keys between them.
            for (i, (k, _, _)) in es.iter().enumerate() {
                it.seek(k)?;
                let first = es.iter().position(|e| e.0 == *k).unwrap_or(i);
                assert_eq!(
                    it.key(),
                    es.get(first).map(|e| e.0.as_slice()).unwrap_or_default(),
                    "{enc}"
                );
                let row = key::row_of(k).unwrap_or_default();
                it.seek(&key::first_on_row(row))?;
                let first_of_row = es
                    .iter()
                    .position(|e| key::row_of(&e.0) == Some(row))
                    .unwrap_or(0);
                assert_eq!(
                    it.key(),
                    es.get(first_of_row)
                        .map(|e| e.0.as_slice())
                        .unwrap_or_default()
                );
            }
            it.seek(&key::first_on_row(b"zzz"))?;
            assert!(!it.valid());
            it.seek(&key::first_on_row(b""))?;
            assert_eq!(
                it.key(),
                es.first().map(|e| e.0.as_slice()).unwrap_or_default()
            );
        }
        Ok(())
    }

    #[test]
    fn restart_points_follow_the_rules() -> Result<(), String> {
        let es = entries(40, 3);
        for enc in DataBlockEncoding::ALL {
            let data = build(*enc, &es);
            let mut it = BlockIter::empty();
            it.reset(data, *enc, FORMAT_VERSION)?;
            let rows = {
                let mut r: Vec<&[u8]> = es.iter().filter_map(|e| key::row_of(&e.0)).collect();
                r.dedup();
                r.len()
            };
            if matches!(
                *enc,
                DataBlockEncoding::RowIndexV1 | DataBlockEncoding::PrefixTree
            ) {
                assert!(it.num_restarts >= rows, "a restart per row");
            } else if *enc == DataBlockEncoding::None {
                // Row runs: at the first row start after 16 entries.
                let mut expected = 0;
                let mut since = usize::MAX;
                let mut last_row = None;
                for e in &es {
                    let row = key::row_of(&e.0);
                    if since == usize::MAX || (row != last_row && since >= 16) {
                        expected += 1;
                        since = 0;
                    }
                    since += 1;
                    last_row = row;
                }
                assert_eq!(it.num_restarts, expected);
                assert!(it.num_restarts < es.len().div_ceil(16));
            } else {
                assert_eq!(it.num_restarts, es.len().div_ceil(16));
            }
        }
        Ok(())
    }

    /// Where a NONE block restarts, on rows of 53, 3 and 150 cells: at row
    /// starts 16 or more entries apart, and every 64 entries inside a row.
    #[test]
    fn row_runs_restart_at_row_starts() -> Result<(), String> {
        let mut es = Vec::new();
        for (r, cells) in [53, 53, 3, 3, 3, 3, 3, 3, 150, 2].iter().enumerate() {
            for q in 0..*cells {
                let k = key::encode(
                    format!("row{r:02}").as_bytes(),
                    b"f",
                    format!("q{q:03}").as_bytes(),
                    7,
                    CellType::Put,
                );
                es.push((k, 9, b"v".to_vec()));
            }
        }
        let data = build(DataBlockEncoding::None, &es);
        let mut it = BlockIter::empty();
        it.reset(data, DataBlockEncoding::None, FORMAT_VERSION)?;
        let expected = [0, 53, 106, 124, 188, 252, 274];
        assert_eq!(it.num_restarts, expected.len());
        for (i, e) in expected.iter().enumerate() {
            it.seek_to_restart(i)?;
            assert_eq!(it.key(), es[*e].0.as_slice(), "restart {i}");
        }
        for (k, s, v) in &es {
            it.seek(k)?;
            assert_eq!(
                (it.key(), it.seq(), it.value()),
                (k.as_slice(), *s, v.as_slice())
            );
        }
        Ok(())
    }

    #[test]
    fn bad_footers_are_errors() {
        let data = build(DataBlockEncoding::Prefix, &entries(5, 1));
        let mut it = BlockIter::empty();
        assert!(
            it.reset(data.clone(), DataBlockEncoding::Diff, FORMAT_VERSION)
                .is_err()
        );
        for cut in 0..data.len() {
            let mut it = BlockIter::empty();
            if it
                .reset(data.slice(..cut), DataBlockEncoding::Prefix, FORMAT_VERSION)
                .is_ok()
            {
                let _ = it.seek_to_first();
                while it.valid() {
                    if it.next().is_err() {
                        break;
                    }
                }
            }
        }
        for i in 0..data.len() {
            let mut bad = data.to_vec();
            if let Some(b) = bad.get_mut(i) {
                *b = b.wrapping_add(0x55);
            }
            let mut it = BlockIter::empty();
            if it
                .reset(Bytes::from(bad), DataBlockEncoding::Prefix, FORMAT_VERSION)
                .is_ok()
            {
                let _ = it.seek(&key::first_on_row(b"row00002"));
                let _ = it.seek_to_first();
                while it.valid() {
                    if it.next().is_err() {
                        break;
                    }
                }
            }
        }
    }
}
