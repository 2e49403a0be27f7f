//! Per-entry byte layouts of each DATA_BLOCK_ENCODING.
//!
//! Every entry stores its key, its sequence id and its value. Encodings that
//! share bytes with the previous entry (PREFIX, DIFF, FAST_DIFF) carry a
//! [`Prev`] state, which a block resets at every *restart point* (the block
//! footer lists them, see `block`): an entry at a restart point is decoded
//! from the reset state, so a seek can start at any restart point.
//!
//! ```text
//! NONE (row run, block code 6; format version 3 on):
//!   [flags u8][rflen v]? [rf]? [qlen v][vlen v][seq v]? [ts delta zz-v]? [type u8]? [qualifier][value]
//!   rf = `rowlen row famlen family`, the key's row-and-family part
//!   flags: 0x01 SAME_ROW_FAMILY (no rflen, no rf)
//!          0x04 SAME_SEQ   0x08 SAME_TS   0x10 SAME_TYPE
//!   a row's cells written by one mutation share row, family, sequence id,
//!   timestamp and type, so each costs flags, two lengths, its qualifier
//!   and its value
//! NONE (row-shared, block code 5; format version 2):
//!   [shared v][unshared v][vlen v][seq v][key suffix][value]
//!   shared = 0, or the length of `rowlen row famlen family` when the
//!   previous entry (since the restart point) has the same row and family
//! PLAIN (block code 0: NONE in version-1 files), ROW_INDEX_V1 (code 4):
//!   [klen v][vlen v][seq v][key: klen B][value: vlen B]
//! PREFIX (key shares `shared` leading bytes with the previous key):
//!   [shared v][unshared v][vlen v][seq v][key suffix: unshared B][value]
//! DIFF (prefix over the row/family/qualifier part only; timestamp as a
//!       zigzag varint delta against the previous cell's; type byte apart):
//!   [shared v][unshared v][vlen v][seq v][ts delta zz-v][type u8][col suffix][value]
//! FAST_DIFF (DIFF plus a flag byte; every field equal to the previous
//!            cell's is omitted, so a run of versions costs a few bytes):
//!   [flags u8][shared v]? [unshared v]? [vlen v]? [seq v]? [ts delta zz-v]? [type u8]? [col suffix][value]
//!   flags: 0x01 SAME_COLUMN (no shared/unshared, suffix empty)
//!          0x02 SAME_VLEN   0x04 SAME_SEQ   0x08 SAME_TS   0x10 SAME_TYPE
//! v = LEB128 varint; zz-v = zigzag of the wrapping i64 difference, as varint.
//! ```
//!
//! The key of a cell is `column part ‖ ts (u64 BE) ‖ type (u8)`, where the
//! column part is `rowlen ‖ row ‖ famlen ‖ family ‖ qualifier`
//! (`ferrobase_types::key`); DIFF and FAST_DIFF rely on the last nine bytes
//! being timestamp and type, which the writer guarantees by parsing every key.
//!
//! Why NONE shares the row: HBase's NONE repeats the whole key in every
//! cell because its block *is* its in-memory KeyValue layout; ours is not.
//! Repeating the row costs a 53-column row of 64-byte keys 53 copies of it
//! (a file ~3.5× larger: more flush and compaction I/O, fewer cells per
//! cached block) and buys nothing: a reader rebuilds keys into a buffer
//! either way. Version 3 goes on to store the row's shared sequence id,
//! timestamp and type once (a `wide53` cell: ~20 bytes instead of ~31),
//! because the bytes a flush writes are most of its cost; it still compares
//! nothing byte by byte but the row. DATA_BLOCK_ENCODING still chooses what
//! is shared *beyond* that (qualifier prefixes, value lengths).
//!
//! This module never allocates per entry (keys are rebuilt in the caller's
//! reused buffer) and never indexes into its input: decoding goes through
//! [`Cursor`], and every failure is an `Err` with a short reason.

use crate::codec::{ByteSink, Cursor, put_varint};
use ferrobase_types::DataBlockEncoding;
use ferrobase_types::varint::{unzigzag, zigzag};

/// Entries between restart points (NONE, PREFIX, DIFF, FAST_DIFF; ROW_INDEX_V1
/// restarts at every row and at least this often).
pub(crate) const RESTART_INTERVAL: usize = 16;

/// Row runs (NONE) restart only where a row starts, once at least
/// [`RESTART_INTERVAL`] entries went by, and inside a row only after this
/// many: a restart repeats the row, family, sequence id and timestamp in
/// full, which every 16 cells cost a 53-column row ~15 % of its bytes. A
/// seek then walks at most this many entries.
pub(crate) const ROW_RUN_RESTART_MAX: usize = 64;

/// Bytes at the end of a key that are timestamp and type.
pub(crate) const TS_TYPE_LEN: usize = 9;

const SAME_COLUMN: u8 = 0x01;
const SAME_VLEN: u8 = 0x02;
const SAME_SEQ: u8 = 0x04;
const SAME_TS: u8 = 0x08;
const SAME_TYPE: u8 = 0x10;
const ALL_FLAGS: u8 = SAME_COLUMN | SAME_VLEN | SAME_SEQ | SAME_TS | SAME_TYPE;
/// Row-run flag: row and family as in the previous entry.
pub(crate) const SAME_ROW_FAMILY: u8 = 0x01;
const ROW_RUN_FLAGS: u8 = SAME_ROW_FAMILY | SAME_SEQ | SAME_TS | SAME_TYPE;

/// How the entries of one block are laid out: what a block footer's code
/// says. Each DATA_BLOCK_ENCODING writes one layout; NONE was written
/// [`Layout::Plain`] by format version 1 and is read that way still.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Whole keys (version-1 NONE, and ROW_INDEX_V1).
    Plain,
    /// Version-2 NONE: the row and family once per run of entries.
    RowShared,
    /// NONE from version 3 on: row, family, sequence id, timestamp and type
    /// once per run of entries that share them.
    RowRun,
    Prefix,
    Diff,
    FastDiff,
}

/// Block footer code of [`Layout::RowShared`].
const ROW_SHARED_CODE: u8 = 5;
/// Block footer code of [`Layout::RowRun`].
const ROW_RUN_CODE: u8 = 6;

impl Layout {
    /// The layout this version writes for `e`.
    pub(crate) fn for_writing(e: DataBlockEncoding) -> Layout {
        match e {
            DataBlockEncoding::None => Layout::RowRun,
            DataBlockEncoding::RowIndexV1 => Layout::Plain,
            DataBlockEncoding::Prefix => Layout::Prefix,
            DataBlockEncoding::Diff => Layout::Diff,
            DataBlockEncoding::FastDiff => Layout::FastDiff,
        }
    }

    /// The block footer code of what [`for_writing`](Self::for_writing)
    /// gives for `e`.
    pub(crate) fn block_code(e: DataBlockEncoding) -> u8 {
        match Layout::for_writing(e) {
            Layout::RowRun => ROW_RUN_CODE,
            Layout::RowShared => ROW_SHARED_CODE,
            _ => code(e),
        }
    }

    /// The layout of a block whose footer says `code`, in a file of format
    /// `version` whose encoding is `e`; `None` when the code is not what
    /// that version writes for `e` (a NONE block's layout changed with
    /// versions 2 and 3; the version itself is outside the trailer's
    /// checksum, so this also catches a damaged version).
    pub(crate) fn of_block(code: u8, e: DataBlockEncoding, version: u32) -> Option<Layout> {
        if e == DataBlockEncoding::None {
            return match (code, version) {
                (0, 1) => Some(Layout::Plain),
                (ROW_SHARED_CODE, 2) => Some(Layout::RowShared),
                (ROW_RUN_CODE, 3..) => Some(Layout::RowRun),
                _ => None,
            };
        }
        (from_code(code)? == e).then_some(Layout::for_writing(e))
    }
}

/// Length of `rowlen row famlen family` at the start of `key`, if it has
/// that much.
fn row_family_len(key: &[u8]) -> Option<usize> {
    let rowlen = u16::from_be_bytes(key.get(..2)?.try_into().ok()?) as usize;
    let famlen = *key.get(2 + rowlen)? as usize;
    let n = 2 + rowlen + 1 + famlen;
    (n <= key.len()).then_some(n)
}

/// The stored code of an encoding (the file info; block footers, except
/// NONE's, see [`Layout::block_code`]).
pub(crate) fn code(e: DataBlockEncoding) -> u8 {
    match e {
        DataBlockEncoding::None => 0,
        DataBlockEncoding::Prefix => 1,
        DataBlockEncoding::Diff => 2,
        DataBlockEncoding::FastDiff => 3,
        DataBlockEncoding::RowIndexV1 => 4,
    }
}

/// The encoding of a stored code.
pub(crate) fn from_code(c: u8) -> Option<DataBlockEncoding> {
    Some(match c {
        0 => DataBlockEncoding::None,
        1 => DataBlockEncoding::Prefix,
        2 => DataBlockEncoding::Diff,
        3 => DataBlockEncoding::FastDiff,
        4 => DataBlockEncoding::RowIndexV1,
        _ => return None,
    })
}

/// The previous entry as both sides of an encoding see it; also the decoded
/// current entry on the read side.
#[derive(Debug, Default, Clone)]
pub(crate) struct Prev {
    /// The full key; for a row run, its row and family part only.
    pub key: Vec<u8>,
    /// Length of the column part of `key` (DIFF, FAST_DIFF), or of its row
    /// and family part (row run).
    pub col_len: usize,
    pub ts: u64,
    pub typ: u8,
    pub vlen: usize,
    pub seq: u64,
}

impl Prev {
    /// The state at a restart point. Keeps the key buffer's allocation.
    pub fn reset(&mut self) {
        self.key.clear();
        self.col_len = 0;
        self.ts = 0;
        self.typ = 0;
        self.vlen = 0;
        self.seq = 0;
    }
}

fn shared_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Splits a key into column part, timestamp and type. The writer only hands
/// over keys that parse, so the short-key fallback never runs in practice.
fn split_key(key: &[u8]) -> (&[u8], u64, u8) {
    let Some(col_len) = key.len().checked_sub(TS_TYPE_LEN) else {
        return (key, 0, 0);
    };
    let (col, tail) = key.split_at(col_len);
    let mut c = Cursor::new(tail);
    let ts = c
        .bytes(8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
        .unwrap_or(0);
    (col, ts, c.u8().unwrap_or(0))
}

/// The SAME_SEQ, SAME_TS and SAME_TYPE flags (FAST_DIFF and row runs) of an
/// entry after `prev`.
fn repeated_fields(prev: &Prev, seq: u64, ts: u64, typ: u8) -> u8 {
    let mut flags = 0;
    if seq == prev.seq {
        flags |= SAME_SEQ;
    }
    if ts == prev.ts {
        flags |= SAME_TS;
    }
    if typ == prev.typ {
        flags |= SAME_TYPE;
    }
    flags
}

/// Writes `[seq v]? [ts delta zz-v]? [type u8]?`: the fields `flags` does not
/// say repeat `prev`'s.
fn put_changed_fields(out: &mut Vec<u8>, flags: u8, prev: &Prev, seq: u64, ts: u64, typ: u8) {
    if flags & SAME_SEQ == 0 {
        put_varint(out, seq);
    }
    if flags & SAME_TS == 0 {
        put_varint(out, zigzag(ts.wrapping_sub(prev.ts) as i64));
    }
    if flags & SAME_TYPE == 0 {
        out.push(typ);
    }
}

/// A row-run entry from its parts: `rf` is the key's row-and-family
/// prefix (`rowlen row famlen family`), `same_row` says it is the previous
/// entry's (so no bytes are compared). [`encode_entry`] splits a full key
/// into these; the store file writer's row path calls this directly.
#[inline]
pub(crate) fn encode_row_run(
    prev: &mut Prev,
    out: &mut Vec<u8>,
    (rf, same_row): (&[u8], bool),
    cell: (&[u8], u64, u8),
    seq: u64,
    value: &[u8],
) {
    out.reserve(rf.len() + cell.0.len() + value.len() + 40);
    // A row run compares only the row and family with the previous entry
    // (`prev.key` keeps just those): another row starts afresh.
    if !(same_row || prev.key.get(..prev.col_len) == Some(rf)) {
        prev.key.clear();
    }
    encode_row_run_into(prev, out, rf, cell, seq, value);
}

/// Most bytes [`encode_row_run_into`] writes for a cell besides its
/// qualifier and value, when the row and family are not repeated: flags,
/// then five varints of at most ten bytes (lengths, sequence id,
/// timestamp) or a type byte.
pub(crate) const ROW_RUN_MAX_OVERHEAD: usize = 1 + 4 * 10 + 1;

/// Most bytes a restart inside a row adds to [`ROW_RUN_MAX_OVERHEAD`]: the
/// row-and-family part `rf` and its length, written again.
pub(crate) fn row_run_restart_bytes(rf: &[u8]) -> usize {
    rf.len() + 10
}

/// A row-run entry of a cell of the row `prev.key` holds; when it is
/// empty (after a restart, or another row: see [`encode_row_run`]) the row
/// and family are written again. Into a `Vec`, or a [`SliceWriter`](crate::codec::SliceWriter) its
/// caller sized by [`ROW_RUN_MAX_OVERHEAD`] and [`row_run_restart_bytes`]
/// (the flush's row path: no capacity check and length store per field).
#[inline]
pub(crate) fn encode_row_run_into(
    prev: &mut Prev,
    out: &mut impl ByteSink,
    rf: &[u8],
    (qualifier, ts, typ): (&[u8], u64, u8),
    seq: u64,
    value: &[u8],
) {
    let same_rf = !prev.key.is_empty();
    let mut flags = repeated_fields(prev, seq, ts, typ);
    if same_rf {
        flags |= SAME_ROW_FAMILY;
    }
    out.put_u8(flags);
    if !same_rf {
        out.put_varint(rf.len() as u64);
        out.put_bytes(rf);
        prev.key.clear();
        prev.key.extend_from_slice(rf);
    }
    out.put_varint(qualifier.len() as u64);
    out.put_varint(value.len() as u64);
    if flags & SAME_SEQ == 0 {
        out.put_varint(seq);
    }
    if flags & SAME_TS == 0 {
        out.put_varint(zigzag(ts.wrapping_sub(prev.ts) as i64));
    }
    if flags & SAME_TYPE == 0 {
        out.put_u8(typ);
    }
    out.put_bytes(qualifier);
    out.put_bytes(value);
    prev.col_len = rf.len();
    prev.ts = ts;
    prev.typ = typ;
    prev.vlen = value.len();
    prev.seq = seq;
}

/// Appends one entry to `out` and makes it the new `prev`.
pub(crate) fn encode_entry(
    layout: Layout,
    prev: &mut Prev,
    out: &mut Vec<u8>,
    (key, same_row): (&[u8], bool),
    seq: u64,
    value: &[u8],
) {
    // `prev` is the previous entry unless a restart just cleared it; a row
    // and family known to repeat need no byte comparison.
    let same_row_family = same_row && !prev.key.is_empty();
    // Room for the whole entry (varints and flags take at most 40 bytes):
    // the small copies below then never grow the buffer.
    out.reserve(key.len() + value.len() + 40);
    match layout {
        Layout::Plain => {
            put_varint(out, key.len() as u64);
            put_varint(out, value.len() as u64);
            put_varint(out, seq);
            out.extend_from_slice(key);
        }
        Layout::RowShared | Layout::Prefix => {
            let row_family = row_family_len(key);
            let known = match row_family {
                Some(n) if same_row_family || prev.key.get(..n) == key.get(..n) => n,
                _ => 0,
            };
            let shared = if layout == Layout::Prefix {
                known
                    + shared_len(
                        prev.key.get(known..).unwrap_or_default(),
                        key.get(known..).unwrap_or_default(),
                    )
            } else {
                known
            };
            let suffix = key.get(shared..).unwrap_or_default();
            put_varint(out, shared as u64);
            put_varint(out, suffix.len() as u64);
            put_varint(out, value.len() as u64);
            put_varint(out, seq);
            out.extend_from_slice(suffix);
            // `prev.key` already holds the shared part: copy only the rest
            // (a row-sharing entry's key is mostly its row).
            prev.key.truncate(shared);
            prev.key.extend_from_slice(suffix);
        }
        Layout::RowRun => {
            let (col, ts, typ) = split_key(key);
            let rf_len = row_family_len(key).unwrap_or(0).min(col.len());
            let (rf, qualifier) = col.split_at(rf_len);
            return encode_row_run(prev, out, (rf, same_row), (qualifier, ts, typ), seq, value);
        }
        Layout::Diff => {
            let (col, ts, typ) = split_key(key);
            let shared = shared_len(prev.key.get(..prev.col_len).unwrap_or_default(), col);
            let suffix = col.get(shared..).unwrap_or_default();
            put_varint(out, shared as u64);
            put_varint(out, suffix.len() as u64);
            put_varint(out, value.len() as u64);
            put_varint(out, seq);
            put_varint(out, zigzag(ts.wrapping_sub(prev.ts) as i64));
            out.push(typ);
            out.extend_from_slice(suffix);
            prev.col_len = col.len();
            prev.ts = ts;
            prev.typ = typ;
        }
        Layout::FastDiff => {
            let (col, ts, typ) = split_key(key);
            let prev_col = prev.key.get(..prev.col_len).unwrap_or_default();
            // Empty columns never occur (the row length alone is 2 bytes),
            // but "same column" after a reset would then be ambiguous.
            let same_col = !col.is_empty() && prev_col == col;
            let mut flags = repeated_fields(prev, seq, ts, typ);
            if same_col {
                flags |= SAME_COLUMN;
            }
            if value.len() == prev.vlen {
                flags |= SAME_VLEN;
            }
            out.push(flags);
            let mut suffix: &[u8] = &[];
            if !same_col {
                let shared = shared_len(prev_col, col);
                suffix = col.get(shared..).unwrap_or_default();
                put_varint(out, shared as u64);
                put_varint(out, suffix.len() as u64);
            }
            if flags & SAME_VLEN == 0 {
                put_varint(out, value.len() as u64);
            }
            put_changed_fields(out, flags, prev, seq, ts, typ);
            out.extend_from_slice(suffix);
            prev.col_len = col.len();
            prev.ts = ts;
            prev.typ = typ;
        }
    }
    out.extend_from_slice(value);
    if !matches!(layout, Layout::RowShared | Layout::Prefix | Layout::RowRun) {
        prev.key.clear();
        prev.key.extend_from_slice(key);
    }
    prev.vlen = value.len();
    prev.seq = seq;
}

/// Where a decoded entry's value sits and where the next entry starts,
/// both as offsets into the slice given to [`decode_entry`]; and whether
/// the entry said it has the previous entry's row and family (a row run's
/// SAME_ROW_FAMILY; other layouts do not say, and give `false`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decoded {
    pub value_start: usize,
    pub next: usize,
    pub same_row: bool,
}

/// A bounds-checked reader like [`crate::codec::Cursor`], with a one-byte
/// fast path for varints: nearly every length and flag in a block fits in
/// one byte, and entry decoding is the hot loop of every scan. Its methods
/// are `inline(always)`: with plain `inline`, `varint` stayed a call in
/// `decode_entry` (row-run decoding took ~20 % longer).
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        let b = *self.buf.get(self.pos)?;
        if b < 0x80 {
            self.pos += 1;
            return Some(u64::from(b));
        }
        let mut c = Cursor::new(self.buf.get(self.pos..)?);
        let v = c.varint()?;
        self.pos += c.position();
        Some(v)
    }

    /// A varint that must be at most `max`.
    #[inline(always)]
    fn len(&mut self, max: usize) -> Option<usize> {
        let v = usize::try_from(self.varint()?).ok()?;
        (v <= max).then_some(v)
    }

    #[inline(always)]
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
}

/// Decodes the entry at `pos` of `entries` into `cur` (which holds the
/// previous entry, or the reset state at a restart point).
pub(crate) fn decode_entry(
    layout: Layout,
    cur: &mut Prev,
    entries: &[u8],
    pos: usize,
) -> Result<Decoded, &'static str> {
    let input = entries.get(pos..).ok_or("entry offset past the entries")?;
    let mut c = Reader { buf: input, pos: 0 };
    let max = input.len();
    let mut same_row = false;
    match layout {
        Layout::Plain => {
            let klen = c.len(max).ok_or("bad key length")?;
            let vlen = c.len(max).ok_or("bad value length")?;
            let seq = c.varint().ok_or("bad sequence id")?;
            let key = c.bytes(klen).ok_or("key overruns the block")?;
            cur.key.clear();
            cur.key.extend_from_slice(key);
            cur.vlen = vlen;
            cur.seq = seq;
        }
        Layout::RowShared | Layout::Prefix => {
            let shared = c.len(cur.key.len()).ok_or("bad shared key length")?;
            let unshared = c.len(max).ok_or("bad key suffix length")?;
            let vlen = c.len(max).ok_or("bad value length")?;
            let seq = c.varint().ok_or("bad sequence id")?;
            let suffix = c.bytes(unshared).ok_or("key overruns the block")?;
            cur.key.truncate(shared);
            cur.key.extend_from_slice(suffix);
            cur.vlen = vlen;
            cur.seq = seq;
        }
        Layout::RowRun => {
            let flags = c.u8().ok_or("missing flags")?;
            if flags & !ROW_RUN_FLAGS != 0 {
                return Err("unknown row-run flags");
            }
            // The key is rebuilt in place as fields are read: on an error
            // the block is abandoned, and `cur` is reset before any reuse.
            if flags & SAME_ROW_FAMILY == 0 {
                let n = c.len(max).ok_or("bad row length")?;
                let rf = c.bytes(n).ok_or("row overruns the block")?;
                cur.key.clear();
                cur.key.extend_from_slice(rf);
                cur.col_len = n;
            } else if cur.key.is_empty() {
                return Err("row run continues past a restart point");
            } else {
                // `col_len <= key.len()`: both are set together above.
                cur.key.truncate(cur.col_len);
                same_row = true;
            }
            let qualifier = read_row_run_cell(&mut c, flags, cur)?;
            cur.key.extend_from_slice(qualifier);
            push_ts_type(cur);
        }
        Layout::Diff => {
            let shared = c.len(cur.col_len).ok_or("bad shared key length")?;
            let unshared = c.len(max).ok_or("bad key suffix length")?;
            let vlen = c.len(max).ok_or("bad value length")?;
            let seq = c.varint().ok_or("bad sequence id")?;
            let ts_delta = c.varint().ok_or("bad timestamp delta")?;
            let typ = c.u8().ok_or("missing type")?;
            let suffix = c.bytes(unshared).ok_or("key overruns the block")?;
            cur.ts = cur.ts.wrapping_add(unzigzag(ts_delta) as u64);
            cur.typ = typ;
            cur.vlen = vlen;
            cur.seq = seq;
            rebuild_key(cur, shared, suffix);
        }
        Layout::FastDiff => {
            let flags = c.u8().ok_or("missing flags")?;
            if flags & !ALL_FLAGS != 0 {
                return Err("unknown FAST_DIFF flags");
            }
            let (shared, unshared) = if flags & SAME_COLUMN != 0 {
                (cur.col_len, 0)
            } else {
                let shared = c.len(cur.col_len).ok_or("bad shared key length")?;
                (shared, c.len(max).ok_or("bad key suffix length")?)
            };
            if flags & SAME_VLEN == 0 {
                cur.vlen = c.len(max).ok_or("bad value length")?;
            }
            read_changed_fields(&mut c, flags, cur)?;
            let suffix = c.bytes(unshared).ok_or("key overruns the block")?;
            rebuild_key(cur, shared, suffix);
        }
    }
    let value_start = pos + c.pos;
    c.bytes(cur.vlen).ok_or("value overruns the block")?;
    Ok(Decoded {
        value_start,
        next: pos + c.pos,
        same_row,
    })
}

/// Reads the row-run entry at `pos`, which must continue the row of the
/// entry `cur` holds (SAME_ROW_FAMILY), without rebuilding its key: only
/// `cur`'s sequence id, timestamp, type and value length change, and
/// `cur.key` keeps the previous entry's key until the caller rebuilds it
/// with [`rebuild_row_run_key`]. For a verbatim copy, which needs no key
/// but the last. Returns where the qualifier starts, and what
/// [`decode_entry`] returns.
pub(crate) fn step_row_run(
    cur: &mut Prev,
    entries: &[u8],
    pos: usize,
) -> Result<(usize, Decoded), &'static str> {
    let input = entries.get(pos..).ok_or("entry offset past the entries")?;
    let mut c = Reader { buf: input, pos: 0 };
    let flags = c.u8().ok_or("missing flags")?;
    if flags & !ROW_RUN_FLAGS != 0 {
        return Err("unknown row-run flags");
    }
    if flags & SAME_ROW_FAMILY == 0 || cur.key.is_empty() {
        return Err("entry does not continue its row");
    }
    let qualifier = read_row_run_cell(&mut c, flags, cur)?;
    let value_start = pos + c.pos;
    let qualifier_start = value_start.saturating_sub(qualifier.len());
    c.bytes(cur.vlen).ok_or("value overruns the block")?;
    Ok((
        qualifier_start,
        Decoded {
            value_start,
            next: pos + c.pos,
            same_row: true,
        },
    ))
}

/// Makes `cur.key` the key of the row-run entry [`step_row_run`] stepped
/// onto, whose qualifier is `qualifier`.
pub(crate) fn rebuild_row_run_key(cur: &mut Prev, qualifier: &[u8]) {
    // `col_len <= key.len()`: a row run sets both together.
    cur.key.truncate(cur.col_len);
    cur.key.extend_from_slice(qualifier);
    push_ts_type(cur);
}

/// Reads a row-run entry's fields after its row and family part (lengths,
/// changed fields) into `cur`, up to its value; returns its qualifier.
#[inline(always)]
fn read_row_run_cell<'a>(
    c: &mut Reader<'a>,
    flags: u8,
    cur: &mut Prev,
) -> Result<&'a [u8], &'static str> {
    let max = c.buf.len();
    let qlen = c.len(max).ok_or("bad qualifier length")?;
    cur.vlen = c.len(max).ok_or("bad value length")?;
    read_changed_fields(c, flags, cur)?;
    c.bytes(qlen).ok_or("qualifier overruns the block")
}

/// Reads what [`put_changed_fields`] wrote into `cur`.
#[inline(always)]
fn read_changed_fields(c: &mut Reader<'_>, flags: u8, cur: &mut Prev) -> Result<(), &'static str> {
    if flags & SAME_SEQ == 0 {
        cur.seq = c.varint().ok_or("bad sequence id")?;
    }
    if flags & SAME_TS == 0 {
        let d = c.varint().ok_or("bad timestamp delta")?;
        cur.ts = cur.ts.wrapping_add(unzigzag(d) as u64);
    }
    if flags & SAME_TYPE == 0 {
        cur.typ = c.u8().ok_or("missing type")?;
    }
    Ok(())
}

/// DIFF/FAST_DIFF: keeps `shared` bytes of the previous column part, appends
/// the suffix, then the current timestamp and type.
fn rebuild_key(cur: &mut Prev, shared: usize, suffix: &[u8]) {
    // `shared <= cur.col_len <= cur.key.len()` was checked by the caller.
    cur.key.truncate(shared);
    cur.key.extend_from_slice(suffix);
    cur.col_len = cur.key.len();
    push_ts_type(cur);
}

/// Ends `cur.key` with its timestamp and type (the last nine bytes of a key).
#[inline(always)]
fn push_ts_type(cur: &mut Prev) {
    cur.key.extend_from_slice(&cur.ts.to_be_bytes());
    cur.key.push(cur.typ);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::{CellType, key};

    const LAYOUTS: [Layout; 6] = [
        Layout::Plain,
        Layout::RowShared,
        Layout::RowRun,
        Layout::Prefix,
        Layout::Diff,
        Layout::FastDiff,
    ];

    fn round_trip(encoding: Layout, entries: &[(Vec<u8>, u64, Vec<u8>)]) -> usize {
        let mut prev = Prev::default();
        let mut out = Vec::new();
        // Also encoded with the writer's "same row as the previous entry"
        // hint, which must change no byte.
        let mut hinted_prev = Prev::default();
        let mut hinted = Vec::new();
        let mut last_row: Option<&[u8]> = None;
        for (k, s, v) in entries {
            encode_entry(encoding, &mut prev, &mut out, (k, false), *s, v);
            let row = key::row_of(k);
            let same_row = last_row.is_some() && last_row == row;
            let hint = (k.as_slice(), same_row);
            encode_entry(encoding, &mut hinted_prev, &mut hinted, hint, *s, v);
            last_row = row;
        }
        assert_eq!(hinted, out, "{encoding:?}: hinted bytes differ");
        let mut cur = Prev::default();
        let mut pos = 0;
        for (k, s, v) in entries {
            let d = decode_entry(encoding, &mut cur, &out, pos)
                .unwrap_or_else(|e| panic!("{encoding:?}: {e}"));
            assert_eq!(&cur.key, k, "{encoding:?}");
            assert_eq!(cur.seq, *s);
            assert_eq!(
                out.get(d.value_start..d.value_start + cur.vlen),
                Some(v.as_slice())
            );
            pos = d.next;
        }
        assert_eq!(pos, out.len());
        out.len()
    }

    #[test]
    fn every_encoding_round_trips() {
        let mut entries = Vec::new();
        for (i, row) in [&b"a"[..], b"a", b"ab", b"b\x00", b"b\x00\xff"]
            .iter()
            .enumerate()
        {
            for ts in [u64::MAX, 1_700_000_000_000, 5, 0] {
                let t = if i % 2 == 0 {
                    CellType::Put
                } else {
                    CellType::DeleteColumn
                };
                entries.push((
                    key::encode(row, b"f", format!("q{i}").as_bytes(), ts, t),
                    (i as u64) / 2,
                    vec![i as u8; i],
                ));
            }
        }
        for l in LAYOUTS {
            round_trip(l, &entries);
        }
    }

    /// Cells `q0`…`q4` of one 64-byte row, all with timestamp 7 and sequence
    /// id 3.
    fn five_cells_of_one_row() -> Vec<(Vec<u8>, u64, Vec<u8>)> {
        let row = [b'r'; 64];
        (0..5)
            .map(|i| {
                let k = key::encode(&row, b"f", format!("q{i}").as_bytes(), 7, CellType::Put);
                (k, 3, b"v".to_vec())
            })
            .collect()
    }

    #[test]
    fn row_shared_stores_row_and_family_once_per_run() {
        let entries = five_cells_of_one_row();
        let plain = round_trip(Layout::Plain, &entries);
        let shared = round_trip(Layout::RowShared, &entries);
        // Entries after the first skip `rowlen row famlen f` (2 + 64 + 2);
        // every entry pays one byte for its `shared` varint.
        assert_eq!(plain - shared, 4 * 68 - 5);
        let mut prev = Prev::default();
        let mut out = Vec::new();
        for (k, s, v) in &entries[..2] {
            encode_entry(Layout::RowShared, &mut prev, &mut out, (k, false), *s, v);
        }
        // Second entry: shared = 68, then the rest of its key (q1 ts type).
        let second = entries[0].0.len() + 5;
        assert_eq!(out.get(second..second + 2), Some(&[68u8, 11][..]));
        // A new row, or a family change, shares nothing.
        let other = key::encode(b"s", b"f", b"q", 7, CellType::Put);
        let mut out2 = Vec::new();
        encode_entry(
            Layout::RowShared,
            &mut prev,
            &mut out2,
            (&other, false),
            3,
            b"v",
        );
        assert_eq!(out2.first(), Some(&0));
    }

    #[test]
    fn row_run_stores_what_a_row_shares_once() {
        let entries = five_cells_of_one_row();
        let shared = round_trip(Layout::RowShared, &entries);
        let run = round_trip(Layout::RowRun, &entries);
        // After the first entry a row-shared entry is `68 11 1 3 q_ ts type v`
        // (16 bytes); a row-run entry is `flags 2 1 q_ v` (6 bytes). The
        // first entries: 84 bytes against 78 (the timestamp as a varint).
        assert_eq!(shared - run, 4 * (16 - 6) + 6);
        let mut prev = Prev::default();
        let mut out = Vec::new();
        for (k, s, v) in &entries[..2] {
            encode_entry(Layout::RowRun, &mut prev, &mut out, (k, false), *s, v);
        }
        let first = out.len() - 6;
        let want = [
            SAME_ROW_FAMILY | SAME_SEQ | SAME_TS | SAME_TYPE,
            2,
            1,
            b'q',
            b'1',
            b'v',
        ];
        assert_eq!(out.get(first..), Some(&want[..]));
        // The first entry: no flag (the reset state shares nothing but a
        // zero timestamp, sequence id or type, none of which it has), then
        // the row and family in full.
        assert_eq!(out.get(..3), Some(&[0u8, 68, 0][..]));
        // Another row, sequence id, timestamp or type clears its flag.
        for (k, s, flag) in [
            (
                key::encode(b"s", b"f", b"q", 7, CellType::Put),
                3,
                SAME_ROW_FAMILY,
            ),
            (key::encode(b"s", b"f", b"q", 7, CellType::Put), 4, SAME_SEQ),
            (key::encode(b"s", b"f", b"q", 8, CellType::Put), 4, SAME_TS),
            (
                key::encode(b"s", b"f", b"q", 8, CellType::Delete),
                4,
                SAME_TYPE,
            ),
        ] {
            let mut one = Vec::new();
            encode_entry(Layout::RowRun, &mut prev, &mut one, (&k, false), s, b"v");
            assert_eq!(one.first().map(|f| f & flag), Some(0), "{flag:#x}");
        }
    }

    #[test]
    fn a_row_run_never_continues_past_a_restart() {
        let mut cur = Prev::default();
        let entry = [
            SAME_ROW_FAMILY | SAME_SEQ | SAME_TS | SAME_TYPE,
            1,
            1,
            b'q',
            b'v',
        ];
        assert_eq!(
            decode_entry(Layout::RowRun, &mut cur, &entry, 0).err(),
            Some("row run continues past a restart point")
        );
        assert_eq!(
            decode_entry(Layout::RowRun, &mut cur, &[0x40], 0).err(),
            Some("unknown row-run flags")
        );
    }

    /// Stepping over a row's continuations leaves what decoding them does,
    /// once the last key is rebuilt; it refuses what does not continue a
    /// row, and garbage, with an error.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn stepping_in_a_row_matches_decoding() {
        let mut entries = five_cells_of_one_row();
        // A cell of another timestamp, type and sequence id, and a new row.
        let row = [b'r'; 64];
        entries.push((
            key::encode(&row, b"f", b"q9", 5, CellType::Delete),
            2,
            b"x".to_vec(),
        ));
        entries.push((
            key::encode(b"s", b"f", b"q", 5, CellType::Put),
            2,
            b"y".to_vec(),
        ));
        let mut prev = Prev::default();
        let mut out = Vec::new();
        for (k, s, v) in &entries {
            encode_entry(Layout::RowRun, &mut prev, &mut out, (k, false), *s, v);
        }
        let (mut decoded, mut stepped) = (Prev::default(), Prev::default());
        let first = decode_entry(Layout::RowRun, &mut decoded, &out, 0).unwrap();
        decode_entry(Layout::RowRun, &mut stepped, &out, 0).unwrap();
        let mut pos = first.next;
        for _ in 1..entries.len() - 1 {
            let d = decode_entry(Layout::RowRun, &mut decoded, &out, pos).unwrap();
            let (q, s) = step_row_run(&mut stepped, &out, pos).unwrap();
            assert_eq!(
                (s.value_start, s.next, s.same_row),
                (d.value_start, d.next, true)
            );
            assert_eq!(
                (stepped.seq, stepped.ts, stepped.typ, stepped.vlen),
                (decoded.seq, decoded.ts, decoded.typ, decoded.vlen)
            );
            rebuild_row_run_key(&mut stepped, out.get(q..s.value_start).unwrap());
            assert_eq!(stepped.key, decoded.key);
            pos = d.next;
        }
        // The new row's entry does not continue the row.
        assert_eq!(
            step_row_run(&mut stepped, &out, pos).err(),
            Some("entry does not continue its row")
        );
        for bytes in [&[0xffu8; 12][..], &[1, 5, 0, 0], &[0x20], &[], &[1, 0x80]] {
            assert!(step_row_run(&mut stepped, bytes, 0).is_err(), "{bytes:?}");
        }
        assert!(step_row_run(&mut stepped, &out, out.len() + 1).is_err());
        stepped.reset();
        assert!(step_row_run(&mut stepped, &out, first.next).is_err());
    }

    #[test]
    fn block_codes_name_their_layouts() {
        use crate::storefile::FORMAT_VERSION as V;
        let none = DataBlockEncoding::None;
        for e in DataBlockEncoding::ALL {
            assert_eq!(
                Layout::of_block(Layout::block_code(*e), *e, V),
                Some(Layout::for_writing(*e))
            );
        }
        assert_eq!(Layout::block_code(none), 6);
        // Older NONE blocks still read in files of their own version: code
        // 5 (row-shared) in version 2, code 0 (whole keys) in version 1.
        assert_eq!(Layout::of_block(5, none, 2), Some(Layout::RowShared));
        assert_eq!(Layout::of_block(0, none, 1), Some(Layout::Plain));
        // ... and in no other.
        for (code, version) in [(6, 2), (6, 1), (5, 3), (5, 1), (0, 2), (0, 3)] {
            assert_eq!(
                Layout::of_block(code, none, version),
                None,
                "{code} {version}"
            );
        }
        // Other encodings' layouts never changed.
        assert_eq!(
            Layout::of_block(1, DataBlockEncoding::Prefix, 1),
            Some(Layout::Prefix)
        );
        // A code of another encoding is refused.
        assert_eq!(Layout::of_block(5, DataBlockEncoding::Prefix, V), None);
        assert_eq!(Layout::of_block(6, DataBlockEncoding::Diff, V), None);
        assert_eq!(Layout::of_block(1, none, V), None);
        assert_eq!(Layout::of_block(9, none, V), None);
    }

    #[test]
    fn zigzag_round_trips_extremes() {
        for d in [0, 1, -1, i64::MAX, i64::MIN, 42, -42] {
            assert_eq!(unzigzag(zigzag(d)), d);
        }
    }

    #[test]
    fn codes_round_trip() {
        for e in DataBlockEncoding::ALL {
            assert_eq!(from_code(code(*e)), Some(*e));
        }
        assert_eq!(from_code(9), None);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut cur = Prev::default();
        for e in LAYOUTS {
            for bytes in [
                &[0xffu8; 12][..],
                &[1, 5, 0, 0],
                &[0x20],
                &[],
                &[3, 0, 0, 0, 1],
            ] {
                cur.reset();
                let _ = decode_entry(e, &mut cur, bytes, 0);
                let _ = decode_entry(e, &mut cur, bytes, 100);
            }
        }
    }
}
