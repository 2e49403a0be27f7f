//! The memstore's skip-list key for a row.
//!
//! A row insert searches the skip list with ~log2(rows) comparisons; with a
//! plain `Bytes` key every one of them follows a pointer out of the node
//! into the arena and calls `memcmp`, which was the largest single cost of
//! the write path. [`RowKey`] keeps the row's first 16 bytes in the node as
//! two big-endian words, so most comparisons are two integer compares on
//! memory the search already touched; only rows sharing 16 leading bytes
//! fall back to comparing the bytes.
//!
//! Order is exactly byte order of the rows: zero-padding the prefix can make
//! two different rows' words equal (`"a"` and `"a\0"`), never invert them,
//! and equal words fall through to the full comparison.

use bytes::Bytes;
use std::cmp::Ordering;

/// See the module docs.
#[derive(Clone, Debug)]
pub struct RowKey {
    words: (u64, u64),
    row: Bytes,
}

impl RowKey {
    /// The key of `row`.
    pub fn new(row: Bytes) -> RowKey {
        let mut prefix = [0u8; 16];
        let n = row.len().min(16);
        prefix[..n].copy_from_slice(&row[..n]);
        let (hi, lo) = prefix.split_at(8);
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            u64::from_be_bytes(w)
        };
        RowKey {
            words: (word(hi), word(lo)),
            row,
        }
    }

    /// The row.
    pub fn row(&self) -> &Bytes {
        &self.row
    }
}

impl PartialEq for RowKey {
    fn eq(&self, other: &Self) -> bool {
        self.words == other.words && self.row == other.row
    }
}
impl Eq for RowKey {}
impl PartialOrd for RowKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for RowKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.words
            .cmp(&other.words)
            .then_with(|| self.row.cmp(&other.row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn order_is_byte_order(
            a in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..24),
            b in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), any::<u8>()], 0..24),
        ) {
            let (ka, kb) = (RowKey::new(Bytes::from(a.clone())), RowKey::new(Bytes::from(b.clone())));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka == kb, a == b);
        }
    }

    #[test]
    fn zero_padding_does_not_confuse_rows() {
        let k = |s: &[u8]| RowKey::new(Bytes::copy_from_slice(s));
        assert!(k(b"a") < k(b"a\0"));
        assert!(k(b"") < k(b"\0"));
        assert!(k(b"0123456789abcdef") < k(b"0123456789abcdef\0"));
        assert!(k(b"0123456789abcdeg") > k(b"0123456789abcdef\xff"));
    }
}
