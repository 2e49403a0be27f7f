//! DIFF and FAST_DIFF: the column part (row, family, qualifier) shares its
//! leading bytes with the previous entry's, the timestamp is a zigzag
//! delta against the previous one; FAST_DIFF adds a flag byte and omits
//! every field equal to the previous entry's. Layouts in the parent's docs.

use super::{
    ALL_FLAGS, Prev, SAME_COLUMN, SAME_VLEN, put_changed_fields, read_changed_fields, rebuild_key,
    repeated_fields, shared_len, split_key,
};
use crate::codec::{InlineCursor, put_varint};
use ferrobase_types::varint::{unzigzag, zigzag};

/// `[shared v][unshared v][vlen v][seq v][ts delta zz-v][type u8][col suffix]`;
/// the caller appends the value.
pub(super) fn encode_diff(prev: &mut Prev, out: &mut Vec<u8>, key: &[u8], seq: u64, value: &[u8]) {
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

/// `[flags u8][shared v]? [unshared v]? [vlen v]? [seq v]? [ts delta zz-v]?
/// [type u8]? [col suffix]`; the caller appends the value.
pub(super) fn encode_fast_diff(
    prev: &mut Prev,
    out: &mut Vec<u8>,
    key: &[u8],
    seq: u64,
    value: &[u8],
) {
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

/// Reads what [`encode_diff`] wrote, up to the value, into `cur`.
#[inline(always)]
pub(super) fn decode_diff(c: &mut InlineCursor<'_>, cur: &mut Prev) -> Result<(), &'static str> {
    let max = c.input_len();
    let shared = c.bounded_len(cur.col_len).ok_or("bad shared key length")?;
    let unshared = c.bounded_len(max).ok_or("bad key suffix length")?;
    let vlen = c.bounded_len(max).ok_or("bad value length")?;
    let seq = c.varint().ok_or("bad sequence id")?;
    let ts_delta = c.varint().ok_or("bad timestamp delta")?;
    let typ = c.u8().ok_or("missing type")?;
    let suffix = c.bytes(unshared).ok_or("key overruns the block")?;
    cur.ts = cur.ts.wrapping_add(unzigzag(ts_delta) as u64);
    cur.typ = typ;
    cur.vlen = vlen;
    cur.seq = seq;
    rebuild_key(cur, shared, suffix);
    Ok(())
}

/// Reads what [`encode_fast_diff`] wrote, up to the value, into `cur`.
#[inline(always)]
pub(super) fn decode_fast_diff(
    c: &mut InlineCursor<'_>,
    cur: &mut Prev,
) -> Result<(), &'static str> {
    let max = c.input_len();
    let flags = c.u8().ok_or("missing flags")?;
    if flags & !ALL_FLAGS != 0 {
        return Err("unknown FAST_DIFF flags");
    }
    let (shared, unshared) = if flags & SAME_COLUMN != 0 {
        (cur.col_len, 0)
    } else {
        let shared = c.bounded_len(cur.col_len).ok_or("bad shared key length")?;
        (shared, c.bounded_len(max).ok_or("bad key suffix length")?)
    };
    if flags & SAME_VLEN == 0 {
        cur.vlen = c.bounded_len(max).ok_or("bad value length")?;
    }
    read_changed_fields(c, flags, cur)?;
    let suffix = c.bytes(unshared).ok_or("key overruns the block")?;
    rebuild_key(cur, shared, suffix);
    Ok(())
}
