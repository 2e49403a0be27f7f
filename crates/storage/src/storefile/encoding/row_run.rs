//! Row runs, the NONE layout from store file format 3 on: a run of entries
//! that share a row and family stores them once, and the sequence id,
//! timestamp and type only when they change (layout in the parent's docs).
//! Reads never index into the block: everything goes through
//! [`InlineCursor`].

use super::{
    Decoded, Prev, ROW_RUN_FLAGS, SAME_ROW_FAMILY, SAME_SEQ, SAME_TS, SAME_TYPE, push_ts_type,
    read_changed_fields, repeated_fields, row_family_len, split_key,
};
use crate::codec::{ByteSink, InlineCursor};
use ferrobase_types::varint::zigzag;

/// A row-run entry from its parts: `rf` is the key's row-and-family
/// prefix (`rowlen row famlen family`), `same_row` says it is the previous
/// entry's (so no bytes are compared). [`encode_entry`](super::encode_entry) splits a full key
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

/// [`encode_entry`](super::encode_entry) for a row run: splits a full key
/// into its row-and-family part, qualifier, timestamp and type.
pub(super) fn encode_key(
    prev: &mut Prev,
    out: &mut Vec<u8>,
    (key, same_row): (&[u8], bool),
    seq: u64,
    value: &[u8],
) {
    let (col, ts, typ) = split_key(key);
    let rf_len = row_family_len(key).unwrap_or(0).min(col.len());
    let (rf, qualifier) = col.split_at(rf_len);
    encode_row_run(prev, out, (rf, same_row), (qualifier, ts, typ), seq, value);
}

/// Decodes a row-run entry up to its value into `cur`; returns whether it
/// continues the previous entry's row and family.
#[inline(always)]
pub(super) fn decode(c: &mut InlineCursor<'_>, cur: &mut Prev) -> Result<bool, &'static str> {
    let max = c.input_len();
    let flags = c.u8().ok_or("missing flags")?;
    if flags & !ROW_RUN_FLAGS != 0 {
        return Err("unknown row-run flags");
    }
    let mut same_row = false;
    // The key is rebuilt in place as fields are read: on an error
    // the block is abandoned, and `cur` is reset before any reuse.
    if flags & SAME_ROW_FAMILY == 0 {
        let n = c.bounded_len(max).ok_or("bad row length")?;
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
    let qualifier = read_row_run_cell(c, flags, cur)?;
    cur.key.extend_from_slice(qualifier);
    push_ts_type(cur);
    Ok(same_row)
}

/// Reads the row-run entry at `pos`, which must continue the row of the
/// entry `cur` holds (SAME_ROW_FAMILY), without rebuilding its key: only
/// `cur`'s sequence id, timestamp, type and value length change, and
/// `cur.key` keeps the previous entry's key until the caller rebuilds it
/// with [`rebuild_row_run_key`]. For a verbatim copy, which needs no key
/// but the last. Returns where the qualifier starts, and what
/// [`decode_entry`](super::decode_entry) returns.
pub(crate) fn step_row_run(
    cur: &mut Prev,
    entries: &[u8],
    pos: usize,
) -> Result<(usize, Decoded), &'static str> {
    let input = entries.get(pos..).ok_or("entry offset past the entries")?;
    let mut c = InlineCursor::new(input);
    let flags = c.u8().ok_or("missing flags")?;
    if flags & !ROW_RUN_FLAGS != 0 {
        return Err("unknown row-run flags");
    }
    if flags & SAME_ROW_FAMILY == 0 || cur.key.is_empty() {
        return Err("entry does not continue its row");
    }
    let qualifier = read_row_run_cell(&mut c, flags, cur)?;
    let value_start = pos + c.position();
    let qualifier_start = value_start.saturating_sub(qualifier.len());
    c.bytes(cur.vlen).ok_or("value overruns the block")?;
    Ok((
        qualifier_start,
        Decoded {
            value_start,
            next: pos + c.position(),
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
    c: &mut InlineCursor<'a>,
    flags: u8,
    cur: &mut Prev,
) -> Result<&'a [u8], &'static str> {
    let max = c.input_len();
    let qlen = c.bounded_len(max).ok_or("bad qualifier length")?;
    cur.vlen = c.bounded_len(max).ok_or("bad value length")?;
    read_changed_fields(c, flags, cur)?;
    c.bytes(qlen).ok_or("qualifier overruns the block")
}
