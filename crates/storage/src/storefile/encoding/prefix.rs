//! Layouts that store whole keys or share their leading bytes: PLAIN
//! (version-1 NONE and ROW_INDEX_V1), version-2 NONE (the row and family
//! shared) and PREFIX (any leading bytes shared). Layouts in the parent's
//! docs.

use super::{Layout, Prev, row_family_len, shared_len};
use crate::codec::{InlineCursor, put_varint};

/// `[klen v][vlen v][seq v][key]`; the caller appends the value.
pub(super) fn encode_plain(out: &mut Vec<u8>, key: &[u8], seq: u64, value: &[u8]) {
    put_varint(out, key.len() as u64);
    put_varint(out, value.len() as u64);
    put_varint(out, seq);
    out.extend_from_slice(key);
}

/// `[shared v][unshared v][vlen v][seq v][key suffix]`: RowShared shares
/// the row and family when they repeat, Prefix every leading byte that
/// does. `same_row_family` says the row and family repeat without a
/// comparison.
pub(super) fn encode_prefixed(
    layout: Layout,
    prev: &mut Prev,
    out: &mut Vec<u8>,
    (key, same_row_family): (&[u8], bool),
    seq: u64,
    value: &[u8],
) {
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

/// Reads what [`encode_plain`] wrote, up to the value, into `cur`.
#[inline(always)]
pub(super) fn decode_plain(c: &mut InlineCursor<'_>, cur: &mut Prev) -> Result<(), &'static str> {
    let max = c.input_len();
    let klen = c.bounded_len(max).ok_or("bad key length")?;
    let vlen = c.bounded_len(max).ok_or("bad value length")?;
    let seq = c.varint().ok_or("bad sequence id")?;
    let key = c.bytes(klen).ok_or("key overruns the block")?;
    cur.key.clear();
    cur.key.extend_from_slice(key);
    cur.vlen = vlen;
    cur.seq = seq;
    Ok(())
}

/// Reads what [`encode_prefixed`] wrote, up to the value, into `cur`.
#[inline(always)]
pub(super) fn decode_prefixed(
    c: &mut InlineCursor<'_>,
    cur: &mut Prev,
) -> Result<(), &'static str> {
    let max = c.input_len();
    let shared = c
        .bounded_len(cur.key.len())
        .ok_or("bad shared key length")?;
    let unshared = c.bounded_len(max).ok_or("bad key suffix length")?;
    let vlen = c.bounded_len(max).ok_or("bad value length")?;
    let seq = c.varint().ok_or("bad sequence id")?;
    let suffix = c.bytes(unshared).ok_or("key overruns the block")?;
    cur.key.truncate(shared);
    cur.key.extend_from_slice(suffix);
    cur.vlen = vlen;
    cur.seq = seq;
    Ok(())
}
