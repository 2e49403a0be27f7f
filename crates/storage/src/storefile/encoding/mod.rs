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
//! PREFIX (key shares `shared` leading bytes with the previous key), and
//! PREFIX_TREE (code 7: the same entries, but a restart point at every row
//! start, so the block footer is a row index and a seek binary-searches to
//! its row, then shares prefixes only within the row):
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
//! One family of layouts a file: [`row_run`] (NONE from version 3 on),
//! [`prefix`] (PLAIN, version-2 NONE and PREFIX, which share the leading
//! bytes of whole keys) and [`diff`] (DIFF and FAST_DIFF, which share the
//! column part and delta-code the timestamp). This file holds what they
//! share: the block codes, the [`Prev`] state, and the dispatch.
//!
//! This module never allocates per entry (keys are rebuilt in the caller's
//! reused buffer) and never indexes into its input: decoding goes through
//! [`Cursor`], and every failure is an `Err` with a short reason.

mod diff;
mod prefix;
mod row_run;
#[cfg(test)]
mod tests;

pub(crate) use row_run::{
    ROW_RUN_MAX_OVERHEAD, encode_row_run, encode_row_run_into, rebuild_row_run_key,
    row_run_restart_bytes, step_row_run,
};

use crate::codec::{Cursor, InlineCursor, put_varint};
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
            DataBlockEncoding::PrefixTree => Layout::Prefix,
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
        // 5 and 6 are NONE's block codes (`ROW_SHARED_CODE`, `ROW_RUN_CODE`).
        DataBlockEncoding::PrefixTree => 7,
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
        7 => DataBlockEncoding::PrefixTree,
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
        Layout::Plain => prefix::encode_plain(out, key, seq, value),
        Layout::RowShared | Layout::Prefix => {
            prefix::encode_prefixed(layout, prev, out, (key, same_row_family), seq, value)
        }
        Layout::RowRun => return row_run::encode_key(prev, out, (key, same_row), seq, value),
        Layout::Diff => diff::encode_diff(prev, out, key, seq, value),
        Layout::FastDiff => diff::encode_fast_diff(prev, out, key, seq, value),
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

/// Decodes the entry at `pos` of `entries` into `cur` (which holds the
/// previous entry, or the reset state at a restart point).
pub(crate) fn decode_entry(
    layout: Layout,
    cur: &mut Prev,
    entries: &[u8],
    pos: usize,
) -> Result<Decoded, &'static str> {
    let input = entries.get(pos..).ok_or("entry offset past the entries")?;
    let mut c = InlineCursor::new(input);
    let mut same_row = false;
    match layout {
        Layout::Plain => prefix::decode_plain(&mut c, cur)?,
        Layout::RowShared | Layout::Prefix => prefix::decode_prefixed(&mut c, cur)?,
        Layout::RowRun => same_row = row_run::decode(&mut c, cur)?,
        Layout::Diff => diff::decode_diff(&mut c, cur)?,
        Layout::FastDiff => diff::decode_fast_diff(&mut c, cur)?,
    }
    let value_start = pos + c.position();
    c.bytes(cur.vlen).ok_or("value overruns the block")?;
    Ok(Decoded {
        value_start,
        next: pos + c.position(),
        same_row,
    })
}

/// Reads what [`put_changed_fields`] wrote into `cur`.
#[inline(always)]
fn read_changed_fields(
    c: &mut InlineCursor<'_>,
    flags: u8,
    cur: &mut Prev,
) -> Result<(), &'static str> {
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
