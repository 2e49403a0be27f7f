//! Builds one data block payload: encoded entries, then the restart-point
//! footer (layout in `block`).
//!
//! Restart points: every [`RESTART_INTERVAL`] entries, where the encoding's
//! "previous entry" state resets so a reader can start decoding there. For
//! ROW_INDEX_V1 every row start is a restart point (that footer *is* HBase's
//! row index), plus one every [`RESTART_INTERVAL`] entries inside long rows so
//! a seek never walks more than that many entries; PREFIX_TREE restarts the
//! same way (a row index over prefix-shared entries). Row runs (NONE) restart
//! at the first row start after [`RESTART_INTERVAL`] entries, and inside a
//! row only every [`ROW_RUN_RESTART_MAX`] entries: a restart inside a row
//! repeats what the row's cells share.
//!
//! The builder owns no I/O and no ordering checks (the writer validates keys
//! and order before calling [`BlockBuilder::add`]). Its buffers are reused
//! from block to block.

use super::FOOTER_LEN;
use crate::cell::CellView;
use crate::codec::SliceWriter;
use crate::storefile::encoding::{
    self, Layout, Prev, RESTART_INTERVAL, ROW_RUN_MAX_OVERHEAD, ROW_RUN_RESTART_MAX,
};
use ferrobase_types::{DataBlockEncoding, key};

/// See the module docs.
pub(crate) struct BlockBuilder {
    encoding: DataBlockEncoding,
    layout: Layout,
    buf: Vec<u8>,
    restarts: Vec<u32>,
    since_restart: usize,
    prev: Prev,
    entries: usize,
    /// Where [`add_row_cells`](Self::add_row_cells) encodes before one
    /// copy into `buf`: zeroed once as it grows, never per call.
    scratch: Vec<u8>,
}

impl BlockBuilder {
    pub fn new(encoding: DataBlockEncoding, capacity: usize) -> BlockBuilder {
        BlockBuilder {
            encoding,
            layout: Layout::for_writing(encoding),
            buf: Vec::with_capacity(capacity),
            restarts: Vec::new(),
            since_restart: 0,
            prev: Prev::default(),
            entries: 0,
            scratch: Vec::new(),
        }
    }

    /// True when no entry was added since the last [`reset`](Self::reset).
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The payload size if the block were finished now.
    pub fn size_estimate(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + FOOTER_LEN
    }

    fn restart_due(&self, key: &[u8], same_row: bool) -> bool {
        if self.entries == 0 {
            return true;
        }
        if self.layout == Layout::RowRun {
            return if same_row {
                self.since_restart >= ROW_RUN_RESTART_MAX
            } else {
                self.since_restart >= RESTART_INTERVAL
            };
        }
        if self.since_restart >= RESTART_INTERVAL {
            return true;
        }
        matches!(
            self.encoding,
            DataBlockEncoding::RowIndexV1 | DataBlockEncoding::PrefixTree
        ) && key::row_of(key) != key::row_of(&self.prev.key)
    }

    /// Appends an entry. The caller keeps the block under 4 GiB (restart
    /// offsets are u32), which `MAX_BLOCK_LEN` guarantees. `same_row`: the
    /// previous `add` had the same row and family (a store file holds one
    /// family), so the encoder need not compare them again.
    pub fn add(&mut self, key: &[u8], seq: u64, value: &[u8], same_row: bool) {
        if self.restart_due(key, same_row) {
            self.restarts.push(self.buf.len() as u32);
            self.prev.reset();
            self.since_restart = 0;
        }
        encoding::encode_entry(
            self.layout,
            &mut self.prev,
            &mut self.buf,
            (key, same_row),
            seq,
            value,
        );
        self.since_restart += 1;
        self.entries += 1;
    }

    /// [`add`](Self::add) of an entry whose key's parts the caller has at
    /// hand: `rf_len` bytes of `key` are its row and family, then come
    /// `qualifier`, `ts` and `typ`. A row-run block encodes from the parts
    /// instead of parsing the key again.
    #[inline]
    pub fn add_parts(
        &mut self,
        (key, rf_len): (&[u8], usize),
        (qualifier, ts, typ): (&[u8], u64, u8),
        seq: u64,
        value: &[u8],
        same_row: bool,
    ) {
        if self.layout != Layout::RowRun {
            return self.add(key, seq, value, same_row);
        }
        self.add_row_run(
            key.get(..rf_len).unwrap_or_default(),
            (qualifier, ts, typ),
            seq,
            value,
            same_row,
        );
    }

    /// True when entries are row runs (NONE): what
    /// [`add_row_run`](Self::add_row_run) may be called for.
    pub fn is_row_run(&self) -> bool {
        self.layout == Layout::RowRun
    }

    /// Appends a row-run entry from its parts, `rf` being the key's
    /// `rowlen row famlen family` part: no key needed. Only for a row-run
    /// block ([`is_row_run`](Self::is_row_run)).
    #[inline]
    pub fn add_row_run(
        &mut self,
        rf: &[u8],
        (qualifier, ts, typ): (&[u8], u64, u8),
        seq: u64,
        value: &[u8],
        same_row: bool,
    ) {
        // Row runs restart by count alone (see `restart_due`).
        if self.restart_due(&[], same_row) {
            self.restarts.push(self.buf.len() as u32);
            self.prev.reset();
            self.since_restart = 0;
        }
        encoding::encode_row_run(
            &mut self.prev,
            &mut self.buf,
            (rf, same_row),
            (qualifier, ts, typ),
            seq,
            value,
        );
        self.since_restart += 1;
        self.entries += 1;
    }

    /// [`add_row_run`](Self::add_row_run) of the next cells of the row
    /// the last entry was of (`same_row`), in one pass over a buffer sized
    /// once: what a flush's row path uses. Takes cells from `cells` until
    /// one brings the block to `blocksize` (it is taken), or until the
    /// next one's `entry_len` (its key and value plus the writer's slack)
    /// would take a non-empty block past `max_len`, or to the end. Returns
    /// how many it took: at least one when the block was empty. `None`
    /// when the size bound proved wrong, which would be a bug: the block
    /// is then unusable, and its writer fails rather than write it.
    pub fn add_row_cells(
        &mut self,
        rf: &[u8],
        cells: &[CellView<'_>],
        (blocksize, max_len): (usize, usize),
        entry_len: impl Fn(&CellView<'_>) -> usize,
    ) -> Option<usize> {
        // Enough cells to fill the block, by their largest encodings, and
        // room for them, including row-and-family parts that restarts
        // inside the row repeat.
        let space = blocksize.saturating_sub(self.size_estimate());
        let (mut n, mut room) = (0, 0);
        for c in cells {
            room += ROW_RUN_MAX_OVERHEAD + c.qualifier.len() + c.value.len();
            n += 1;
            if room >= space {
                break;
            }
        }
        room += (n / ROW_RUN_RESTART_MAX + 1) * encoding::row_run_restart_bytes(rf);
        let base = self.buf.len();
        if self.scratch.len() < room {
            self.scratch.resize(room, 0);
        }
        let mut out = SliceWriter::new(&mut self.scratch);
        let mut taken = 0;
        for c in cells.iter().take(n) {
            let size = base + out.position() + 4 * self.restarts.len() + FOOTER_LEN;
            if self.entries > 0 && size + entry_len(c) > max_len {
                break;
            }
            if self.entries == 0 || self.since_restart >= ROW_RUN_RESTART_MAX {
                self.restarts.push((base + out.position()) as u32);
                self.prev.reset();
                self.since_restart = 0;
            }
            encoding::encode_row_run_into(
                &mut self.prev,
                &mut out,
                rf,
                (c.qualifier, c.timestamp, c.kind),
                c.seq,
                c.value,
            );
            self.since_restart += 1;
            self.entries += 1;
            taken += 1;
            if base + out.position() + 4 * self.restarts.len() + FOOTER_LEN >= blocksize {
                break;
            }
        }
        let (end, overflowed) = (out.position(), out.overflowed());
        self.buf
            .extend_from_slice(self.scratch.get(..end).unwrap_or_default());
        (!overflowed).then_some(taken)
    }

    /// Entries since the last restart point.
    pub fn since_restart(&self) -> usize {
        self.since_restart
    }

    /// Appends `n` row-run entries verbatim: entries of another block that
    /// continue the row of this block's last entry, encoded there behind
    /// an entry with this one's sequence id, timestamp and type (so their
    /// bytes are what [`add_row_run`](Self::add_row_run) would write), with
    /// no restart point among them. `last`: the last one's sequence id,
    /// timestamp, type and value length, which the next entry is encoded
    /// against. The caller keeps the rules [`add_row_run`](Self::add_row_run)
    /// follows: a non-empty row-run block, and fewer than
    /// [`ROW_RUN_RESTART_MAX`] entries since the restart point.
    pub fn add_verbatim(&mut self, bytes: &[u8], n: usize, last: (u64, u64, u8, usize)) {
        let (seq, ts, typ, vlen) = last;
        self.buf.extend_from_slice(bytes);
        self.since_restart += n;
        self.entries += n;
        self.prev.seq = seq;
        self.prev.ts = ts;
        self.prev.typ = typ;
        self.prev.vlen = vlen;
    }

    /// Appends the footer and returns the finished payload; call
    /// [`reset`](Self::reset) before adding again.
    pub fn finish(&mut self) -> &[u8] {
        for r in &self.restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.buf.push(Layout::block_code(self.encoding));
        &self.buf
    }

    /// Starts a new block, keeping allocations.
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.since_restart = 0;
        self.prev.reset();
        self.entries = 0;
    }
}
