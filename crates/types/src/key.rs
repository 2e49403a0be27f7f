//! The encoded cell key and HBase's cell order.
//!
//! A key is laid out exactly like the key part of HBase's `KeyValue`, so
//! that one byte string carries row, column, timestamp and type:
//!
//! ```text
//!  0        2            2+R      3+R          3+R+F          n-9        n-1   n
//!  +--------+------------+--------+------------+--------------+----------+-----+
//!  | rowlen | row        | famlen | family     | qualifier    | ts       | type|
//!  | u16 BE | rowlen B   | u8     | famlen B   | rest         | u64 BE   | u8  |
//!  +--------+------------+--------+------------+--------------+----------+-----+
//! ```
//!
//! Order ([`compare`]): row ascending, family ascending, qualifier
//! ascending, timestamp descending, type code descending. Plain byte order
//! of the encoding is *not* that order (the row length comes first), so
//! every sorted structure uses [`compare`].
//!
//! This module never allocates on the compare path and never panics on
//! malformed input: [`KeyRef::parse`] returns `None` and [`compare`] falls
//! back to byte order for keys that do not parse (decoders validate keys
//! before they reach a sorted structure).

use crate::cell::CellType;
use std::cmp::Ordering;

/// Longest row key (HBase: `Short.MAX_VALUE`).
pub const MAX_ROW_LEN: usize = i16::MAX as usize;
/// Longest family name that fits the one-byte length.
pub const MAX_FAMILY_LEN: usize = u8::MAX as usize;
/// Bytes of a key that are not row, family or qualifier.
pub const KEY_OVERHEAD: usize = 2 + 1 + 8 + 1;

/// A borrowed, parsed view of an encoded key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRef<'a> {
    pub row: &'a [u8],
    pub family: &'a [u8],
    pub qualifier: &'a [u8],
    pub timestamp: u64,
    pub type_code: u8,
}

impl<'a> KeyRef<'a> {
    /// Parses an encoded key; `None` if the lengths do not add up.
    #[inline]
    pub fn parse(key: &'a [u8]) -> Option<KeyRef<'a>> {
        let row_len = u16::from_be_bytes(key.get(0..2)?.try_into().ok()?) as usize;
        let row = key.get(2..2 + row_len)?;
        let fam_len = *key.get(2 + row_len)? as usize;
        let fam_start = 3 + row_len;
        let family = key.get(fam_start..fam_start + fam_len)?;
        let tail = key.len().checked_sub(9)?;
        let qualifier = key.get(fam_start + fam_len..tail)?;
        let timestamp = u64::from_be_bytes(key.get(tail..tail + 8)?.try_into().ok()?);
        let type_code = *key.get(tail + 8)?;
        Some(KeyRef {
            row,
            family,
            qualifier,
            timestamp,
            type_code,
        })
    }

    /// The cell type, if the code is a known one.
    pub fn cell_type(&self) -> Option<CellType> {
        CellType::from_code(self.type_code)
    }

    /// Compares two parsed keys in HBase cell order.
    pub fn cmp_hbase(&self, other: &KeyRef<'_>) -> Ordering {
        self.row
            .cmp(other.row)
            .then_with(|| self.family.cmp(other.family))
            .then_with(|| self.qualifier.cmp(other.qualifier))
            .then_with(|| other.timestamp.cmp(&self.timestamp))
            .then_with(|| other.type_code.cmp(&self.type_code))
    }

    /// True when both keys name the same row, family and qualifier.
    pub fn same_column(&self, other: &KeyRef<'_>) -> bool {
        self.row == other.row && self.family == other.family && self.qualifier == other.qualifier
    }
}

/// Appends the encoding of a key to `out`.
///
/// The caller guarantees `row.len() <= MAX_ROW_LEN` and
/// `family.len() <= MAX_FAMILY_LEN` (mutations are validated first); longer
/// inputs are truncated in the length field, so this never panics, and
/// [`crate::mutation::RowMutation::validate`] rejects them upstream.
pub fn encode_into(
    out: &mut Vec<u8>,
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    timestamp: u64,
    cell_type: CellType,
) {
    out.reserve(KEY_OVERHEAD + row.len() + family.len() + qualifier.len());
    out.extend_from_slice(&(row.len().min(MAX_ROW_LEN) as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(family.len().min(MAX_FAMILY_LEN) as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.push(cell_type.code());
}

/// Encodes a key into a new vector.
pub fn encode(
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    timestamp: u64,
    cell_type: CellType,
) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(&mut out, row, family, qualifier, timestamp, cell_type);
    out
}

/// The smallest key of `row`: sorts before every cell of that row
/// (empty family and qualifier, newest timestamp, highest type).
pub fn first_on_row(row: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(row.len().min(MAX_ROW_LEN) as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(0);
    out.extend_from_slice(&u64::MAX.to_be_bytes());
    out.push(u8::MAX);
    out
}

/// The smallest key of a column: sorts before every version of it.
pub fn first_on_column(row: &[u8], family: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(row.len().min(MAX_ROW_LEN) as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(family.len().min(MAX_FAMILY_LEN) as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&u64::MAX.to_be_bytes());
    out.push(u8::MAX);
    out
}

/// Appends a *column key*: an encoded key without its row part
/// (`famlen family qualifier ts type`, the bytes after `2 + rowlen`). A
/// memstore row keeps its cells' column keys only, so a 53-column row does
/// not hold its row 53 times (docs/architecture.md, design rule 6);
/// `rowlen row ‖ column key` is the full key.
#[inline]
pub fn encode_column_into(
    out: &mut Vec<u8>,
    family: &[u8],
    qualifier: &[u8],
    timestamp: u64,
    cell_type: CellType,
) {
    out.push(family.len().min(MAX_FAMILY_LEN) as u8);
    out.extend_from_slice(family);
    out.extend_from_slice(qualifier);
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.push(cell_type.code());
}

/// The column key of a full key (see [`encode_column_into`]), or `None`
/// if the row length does not fit.
#[inline]
pub fn column_of(key: &[u8]) -> Option<&[u8]> {
    let row_len = u16::from_be_bytes(key.get(0..2)?.try_into().ok()?) as usize;
    key.get(2 + row_len..)
}

/// Appends the full key of `row` and a column key.
pub fn join_into(out: &mut Vec<u8>, row: &[u8], column: &[u8]) {
    out.extend_from_slice(&(row.len().min(MAX_ROW_LEN) as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.extend_from_slice(column);
}

/// `(family, qualifier, timestamp, type code)` of a column key; `None` if
/// the lengths do not add up.
#[inline]
pub fn column_parts(k: &[u8]) -> Option<(&[u8], &[u8], u64, u8)> {
    let fam_len = *k.first()? as usize;
    let family = k.get(1..1 + fam_len)?;
    let tail = k.len().checked_sub(9)?;
    let qualifier = k.get(1 + fam_len..tail)?;
    let ts = u64::from_be_bytes(k.get(tail..tail + 8)?.try_into().ok()?);
    Some((family, qualifier, ts, *k.get(tail + 8)?))
}

/// Compares two column keys of the same row in HBase cell order (family,
/// qualifier, timestamp descending, type descending); byte order for
/// column keys that do not parse.
pub fn compare_column(a: &[u8], b: &[u8]) -> Ordering {
    match (column_parts(a), column_parts(b)) {
        (Some(x), Some(y)) => short_cmp(x.0, y.0)
            .then_with(|| short_cmp(x.1, y.1))
            .then_with(|| y.2.cmp(&x.2))
            .then_with(|| y.3.cmp(&x.3)),
        _ => a.cmp(b),
    }
}

/// Byte order of two slices. Families and qualifiers are mostly a few
/// bytes, where a loop beats a call into `memcmp` (the memstore insert of
/// a 53-column row makes ~300 of these comparisons).
#[inline]
pub fn short_cmp(a: &[u8], b: &[u8]) -> Ordering {
    if a.len().min(b.len()) > 16 {
        return a.cmp(b);
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Compares two encoded keys in HBase cell order.
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    match (KeyRef::parse(a), KeyRef::parse(b)) {
        (Some(x), Some(y)) => x.cmp_hbase(&y),
        // Unparseable keys never come from our writers; order them by bytes
        // so that sorted structures stay total orders instead of panicking.
        _ => a.cmp(b),
    }
}

/// The row of an encoded key, or `None` if it does not parse.
pub fn row_of(key: &[u8]) -> Option<&[u8]> {
    let row_len = u16::from_be_bytes(key.get(0..2)?.try_into().ok()?) as usize;
    key.get(2..2 + row_len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn k(row: &str, fam: &str, q: &str, ts: u64, t: CellType) -> Vec<u8> {
        encode(row.as_bytes(), fam.as_bytes(), q.as_bytes(), ts, t)
    }

    #[test]
    fn layout_matches_hbase_keyvalue_key() {
        let key = k("r", "f", "q", 1, CellType::Put);
        assert_eq!(key, b"\x00\x01r\x01fq\x00\x00\x00\x00\x00\x00\x00\x01\x04");
        let parsed = KeyRef::parse(&key);
        assert_eq!(
            parsed,
            Some(KeyRef {
                row: b"r",
                family: b"f",
                qualifier: b"q",
                timestamp: 1,
                type_code: 4
            })
        );
    }

    proptest! {
        #[test]
        fn short_cmp_is_byte_order(a in proptest::collection::vec(any::<u8>(), 0..24), b in proptest::collection::vec(any::<u8>(), 0..24)) {
            prop_assert_eq!(short_cmp(&a, &b), a.cmp(&b));
        }

        #[test]
        fn column_keys_order_like_full_keys(
            fa in "[ab]{0,2}", qa in "[ab]{0,3}", ta in 0u64..3, ya in prop_oneof![Just(CellType::Put), Just(CellType::Delete)],
            fb in "[ab]{0,2}", qb in "[ab]{0,3}", tb in 0u64..3, yb in prop_oneof![Just(CellType::Put), Just(CellType::Delete)],
        ) {
            let a = encode(b"row", fa.as_bytes(), qa.as_bytes(), ta, ya);
            let b = encode(b"row", fb.as_bytes(), qb.as_bytes(), tb, yb);
            let (ca, cb) = (column_of(&a).unwrap_or_default(), column_of(&b).unwrap_or_default());
            prop_assert_eq!(compare_column(ca, cb), compare(&a, &b));
            let mut col = Vec::new();
            encode_column_into(&mut col, fa.as_bytes(), qa.as_bytes(), ta, ya);
            prop_assert_eq!(&col[..], ca);
            let mut full = Vec::new();
            join_into(&mut full, b"row", &col);
            prop_assert_eq!(full, a);
        }
    }

    #[test]
    fn hbase_order() {
        let sorted = [
            first_on_row(b"a"),
            k("a", "f", "", 9, CellType::DeleteFamily),
            k("a", "f", "q", 9, CellType::Put),
            k("a", "f", "q", 5, CellType::DeleteColumn),
            k("a", "f", "q", 5, CellType::Delete),
            k("a", "f", "q", 5, CellType::Put),
            k("a", "f", "q2", 100, CellType::Put),
            k("a", "g", "a", 100, CellType::Put),
            k("aa", "f", "q", 1, CellType::Put),
            k("b", "f", "q", 1, CellType::Put),
        ];
        for w in sorted.windows(2) {
            assert_eq!(compare(&w[0], &w[1]), Ordering::Less, "{w:?}");
        }
    }

    #[test]
    fn garbage_never_panics() {
        for bad in [
            &b""[..],
            b"\x00",
            b"\xff\xff",
            b"\x00\x05abc",
            b"\x00\x00\x05",
        ] {
            assert_eq!(KeyRef::parse(bad), None);
            let _ = compare(bad, b"\x00\x01r\x01fq\x00\x00\x00\x00\x00\x00\x00\x01\x04");
        }
    }

    proptest! {
        #[test]
        fn compare_agrees_with_tuple_order(
            a in (proptest::collection::vec(any::<u8>(), 0..4), 0u8..2, proptest::collection::vec(any::<u8>(), 0..3), any::<u64>()),
            b in (proptest::collection::vec(any::<u8>(), 0..4), 0u8..2, proptest::collection::vec(any::<u8>(), 0..3), any::<u64>()),
        ) {
            let fams: [&[u8]; 2] = [b"f", b"g"];
            let ka = encode(&a.0, fams[a.1 as usize], &a.2, a.3, CellType::Put);
            let kb = encode(&b.0, fams[b.1 as usize], &b.2, b.3, CellType::Put);
            let expected = (&a.0, a.1, &a.2, std::cmp::Reverse(a.3)).cmp(&(&b.0, b.1, &b.2, std::cmp::Reverse(b.3)));
            prop_assert_eq!(compare(&ka, &kb), expected);
        }
    }
}
