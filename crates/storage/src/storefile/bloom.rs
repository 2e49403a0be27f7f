//! The Bloom filter of a store file: a bit array probed by k = 7 positions
//! from one 64-bit hash (Kirsch–Mitzenmacher double hashing), ~9.6 bits per
//! key, ≈ 1 % false positives.
//!
//! Keys: ROW adds every distinct row once. ROWCOL adds every distinct column
//! (`rowlen u16 BE ‖ row ‖ famlen u8 ‖ family ‖ qualifier`, i.e. the column
//! part of the encoded key, with its own hash seed) *and* every distinct row,
//! so that unlike HBase's ROWCOL a row-only get can also skip the file.
//!
//! Sizing: the writer buffers key hashes while that is smaller than an array
//! sized for the caller's expected entry count (twice that for ROWCOL), so
//! small files get an array sized for the keys actually added. Past that
//! point the array is allocated, rounded to `c · 2^s` words with 32 ≤ c < 64,
//! and at finish *folded* (upper half ORed into the lower, as HBase's
//! `ByteBloomFilter` folding does) while the halved array still has ≥ 9.6 bits
//! per key actually added. A bit index is `h mod m`, and `(h mod m) mod m/2 =
//! h mod m/2`, so folding keeps every answer correct.
//!
//! ```text
//!  section payload:
//!  +------+---------+---+-----------+-----------+--------------------------+
//!  | type | hashver | k | keys      | words w   | w × u64 LE bit array     |
//!  | u8   | u8 (=1) | u8| varint    | varint    | bit i = word i/64, bit i%64
//!  +------+---------+---+-----------+-----------+--------------------------+
//!  type: 1 ROW, 2 ROWCOL
//! ```
//!
//! The hash ([`hash64`]) is part of the on-disk format: it must never change
//! for hash version 1 (a unit test pins its values).

use crate::codec::{Cursor, put_varint};
use ferrobase_types::BloomType;
use ferrobase_types::key::{MAX_FAMILY_LEN, MAX_ROW_LEN};

/// Probes per key.
const K: u8 = 7;
/// Bits per key, in tenths (9.6 bits ≈ 1 % with k = 7).
const BITS_PER_KEY_X10: u64 = 96;
/// Largest array we build or accept: 2^25 words = 256 MiB, 2^31 bits.
const MAX_WORDS: u64 = 1 << 25;
const HASH_VERSION: u8 = 1;

/// Seed for row keys.
pub(crate) const SEED_ROW: u64 = 0x524f_5721; // "ROW!"
/// Seed for column keys (ROWCOL).
pub(crate) const SEED_COL: u64 = 0x524f_5743_4f4c; // "ROWCOL"

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;

/// The stored code of a Bloom type (file info and section header).
pub(crate) fn code(b: BloomType) -> u8 {
    match b {
        BloomType::None => 0,
        BloomType::Row => 1,
        BloomType::RowCol => 2,
    }
}

/// The Bloom type of a stored code.
pub(crate) fn from_code(c: u8) -> Option<BloomType> {
    Some(match c {
        0 => BloomType::None,
        1 => BloomType::Row,
        2 => BloomType::RowCol,
        _ => return None,
    })
}

#[inline]
fn mum(a: u64, b: u64) -> u64 {
    let r = u128::from(a) * u128::from(b);
    (r as u64) ^ ((r >> 64) as u64)
}

/// A small wyhash-style 64-bit hash: 8-byte little-endian words folded with
/// 64×64→128-bit multiplies. Fast on short keys, and stable across
/// platforms (it is part of the file format).
pub(crate) fn hash64(data: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ P0 ^ (data.len() as u64).wrapping_mul(P1);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = mum(h ^ u64::from_le_bytes(w), P1);
    }
    let mut tail = [0u8; 8];
    for (d, s) in tail.iter_mut().zip(chunks.remainder()) {
        *d = *s;
    }
    h = mum(h ^ u64::from_le_bytes(tail) ^ P2, P1 ^ data.len() as u64);
    mum(h ^ (h >> 32), P0)
}

/// The ROWCOL key of a column, built on the stack when it fits.
pub(crate) fn with_column_key<R>(
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    f: impl FnOnce(&[u8]) -> R,
) -> R {
    let len = 3 + row.len() + family.len() + qualifier.len();
    let mut stack = [0u8; 256];
    let mut heap = Vec::new();
    let buf: &mut [u8] = match stack.get_mut(..len) {
        Some(s) => s,
        None => {
            heap.resize(len, 0);
            &mut heap
        }
    };
    let rl = (row.len().min(MAX_ROW_LEN) as u16).to_be_bytes();
    let fl = family.len().min(MAX_FAMILY_LEN) as u8;
    let parts: [&[u8]; 5] = [&rl, row, &[fl], family, qualifier];
    let mut at = 0;
    for p in parts {
        if let Some(dst) = buf.get_mut(at..at + p.len()) {
            dst.copy_from_slice(p);
        }
        at += p.len();
    }
    f(buf)
}

fn words_for(keys: u64) -> u64 {
    (keys.saturating_mul(BITS_PER_KEY_X10) / 10)
        .div_ceil(64)
        .max(1)
}

#[inline]
fn probes(h: u64, nbits: u64, k: u8) -> impl Iterator<Item = u64> {
    let h2 = (h.wrapping_mul(P2) ^ (h >> 29)) | 1;
    (0..u64::from(k)).map(move |i| h.wrapping_add(i.wrapping_mul(h2)) % nbits)
}

/// Collects keys while a file is written.
///
/// Hashes are buffered (8 bytes per key) until that would outgrow the bit
/// array sized for the expected count; then the array is allocated and the
/// buffer replayed into it. A ROW filter over a file with many cells per row
/// thus never allocates an array sized for every cell, and small files get
/// an array sized for the keys actually added.
pub(crate) struct BloomBuilder {
    kind: BloomType,
    expected_words: u64,
    hashes: Vec<u64>,
    words: Option<Vec<u64>>,
    keys: u64,
}

/// An array of at least `need` words, rounded up to `c·2^s` with c < 64
/// so that it can be folded `s` times.
fn foldable_words(need: u64) -> u64 {
    let need = need.clamp(1, MAX_WORDS);
    let s = (64 - need.leading_zeros()).saturating_sub(6);
    need.div_ceil(1 << s) << s
}

fn set_bits(words: &mut [u64], h: u64) {
    let nbits = words.len() as u64 * 64;
    for bit in probes(h, nbits, K) {
        if let Some(w) = words.get_mut((bit / 64) as usize) {
            *w |= 1 << (bit % 64);
        }
    }
}

impl BloomBuilder {
    /// A filter expecting about `expected_keys` keys.
    pub fn new(kind: BloomType, expected_keys: u64) -> BloomBuilder {
        BloomBuilder {
            kind,
            expected_words: foldable_words(words_for(expected_keys)),
            hashes: Vec::new(),
            words: None,
            keys: 0,
        }
    }

    pub fn add(&mut self, key: &[u8], seed: u64) {
        let h = hash64(key, seed);
        self.keys += 1;
        match &mut self.words {
            Some(words) => set_bits(words, h),
            None => {
                self.hashes.push(h);
                if self.hashes.len() as u64 >= self.expected_words {
                    let mut words = vec![0; self.expected_words as usize];
                    for h in self.hashes.drain(..) {
                        set_bits(&mut words, h);
                    }
                    self.hashes = Vec::new();
                    self.words = Some(words);
                }
            }
        }
    }

    /// Keys added so far.
    pub fn keys(&self) -> u64 {
        self.keys
    }

    /// Builds (or folds) the array for the keys actually added and
    /// serializes it.
    pub fn finish(self) -> Vec<u8> {
        let need = words_for(self.keys);
        let mut words = match self.words {
            Some(w) => w,
            None => {
                let mut w = vec![0; foldable_words(need) as usize];
                for h in &self.hashes {
                    set_bits(&mut w, *h);
                }
                w
            }
        };
        while words.len().is_multiple_of(2) && (words.len() / 2) as u64 >= need {
            let half = words.len() / 2;
            let (lo, hi) = words.split_at_mut(half);
            for (a, b) in lo.iter_mut().zip(hi.iter()) {
                *a |= *b;
            }
            words.truncate(half);
        }
        let mut out = Vec::with_capacity(16 + words.len() * 8);
        out.push(code(self.kind));
        out.push(HASH_VERSION);
        out.push(K);
        put_varint(&mut out, self.keys);
        put_varint(&mut out, words.len() as u64);
        for w in &words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }
}

/// A loaded filter.
pub(crate) struct BloomFilter {
    kind: BloomType,
    k: u8,
    words: Vec<u64>,
    keys: u64,
}

impl std::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BloomFilter")
            .field("kind", &self.kind)
            .field("k", &self.k)
            .field("keys", &self.keys)
            .field("bytes", &self.size_bytes())
            .finish()
    }
}

impl BloomFilter {
    /// Parses a section payload.
    pub fn parse(payload: &[u8]) -> Result<BloomFilter, String> {
        let mut c = Cursor::new(payload);
        let kind = c.u8().and_then(from_code).ok_or("bad Bloom type")?;
        if kind == BloomType::None {
            return Err("Bloom section of type NONE".into());
        }
        let version = c.u8().ok_or("truncated Bloom header")?;
        if version != HASH_VERSION {
            return Err(format!("unknown Bloom hash version {version}"));
        }
        let k = c.u8().ok_or("truncated Bloom header")?;
        if !(1..=30).contains(&k) {
            return Err(format!("Bloom filter with {k} hash functions"));
        }
        let keys = c.varint().ok_or("bad Bloom key count")?;
        let n = c.varint().ok_or("bad Bloom size")?;
        if n == 0 || n > MAX_WORDS || n.saturating_mul(8) != c.remaining() as u64 {
            return Err(format!(
                "Bloom filter of {n} words in {} bytes",
                c.remaining()
            ));
        }
        let words = (0..n)
            .map(|_| c.u64_le())
            .collect::<Option<Vec<u64>>>()
            .ok_or("truncated Bloom bits")?;
        Ok(BloomFilter {
            kind,
            k,
            words,
            keys,
        })
    }

    pub fn kind(&self) -> BloomType {
        self.kind
    }

    /// Keys the writer added.
    pub fn keys(&self) -> u64 {
        self.keys
    }

    /// Bytes of the bit array.
    pub fn size_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// False only if `key` was certainly never added with `seed`.
    pub fn may_contain(&self, key: &[u8], seed: u64) -> bool {
        let nbits = self.words.len() as u64 * 64;
        probes(hash64(key, seed), nbits, self.k).all(|bit| {
            self.words
                .get((bit / 64) as usize)
                .is_some_and(|w| w & (1 << (bit % 64)) != 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(
        kind: BloomType,
        expected: u64,
        keys: impl Iterator<Item = Vec<u8>>,
    ) -> Result<BloomFilter, String> {
        let mut b = BloomBuilder::new(kind, expected);
        for k in keys {
            b.add(&k, SEED_ROW);
        }
        BloomFilter::parse(&b.finish())
    }

    #[test]
    fn hash_is_pinned() {
        // Part of the file format: these values must never change.
        assert_eq!(
            hash64(b"", 0),
            0xce00_9101_0e43_b9db,
            "{:#x}",
            hash64(b"", 0)
        );
        assert_eq!(
            hash64(b"row-1", SEED_ROW),
            0x4440_fe02_4ee7_69c4,
            "{:#x}",
            hash64(b"row-1", SEED_ROW)
        );
    }

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() -> Result<(), String> {
        let keys = (0..10_000u32).map(|i| format!("user{i:08}").into_bytes());
        let f = build(BloomType::Row, 10_000, keys.clone())?;
        for k in keys {
            assert!(f.may_contain(&k, SEED_ROW));
        }
        let fp = (0..100_000u32)
            .filter(|i| f.may_contain(format!("other{i:08}").as_bytes(), SEED_ROW))
            .count();
        assert!(fp < 2_000, "false positive rate {}%", fp as f64 / 1000.0);
        // Row and column seeds are independent.
        let fp = (0..10_000u32)
            .filter(|i| f.may_contain(format!("user{i:08}").as_bytes(), SEED_COL))
            .count();
        assert!(fp < 200, "{fp}");
        Ok(())
    }

    #[test]
    fn overestimates_fold_down_and_stay_correct() -> Result<(), String> {
        let keys = (0..1000u32).map(|i| i.to_be_bytes().to_vec());
        let big = build(BloomType::Row, 1_000_000, keys.clone())?;
        let exact = build(BloomType::Row, 1000, keys.clone())?;
        assert!(
            big.size_bytes() <= 2 * exact.size_bytes(),
            "{} vs {}",
            big.size_bytes(),
            exact.size_bytes()
        );
        for k in keys {
            assert!(big.may_contain(&k, SEED_ROW));
        }
        let fp = (1000..101_000u32)
            .filter(|i| big.may_contain(&i.to_be_bytes(), SEED_ROW))
            .count();
        assert!(fp < 2_000, "{fp}");
        Ok(())
    }

    #[test]
    fn allocated_arrays_fold_down_and_stay_correct() -> Result<(), String> {
        // 3000 keys against 10 000 expected: past the hash buffer, folded once.
        let keys = (0..3000u32).map(|i| i.to_le_bytes().to_vec());
        let folded = build(BloomType::Row, 10_000, keys.clone())?;
        let exact = build(BloomType::Row, 3000, keys.clone())?;
        assert!(folded.size_bytes() < words_for(10_000) as usize * 8);
        assert!(folded.size_bytes() <= 2 * exact.size_bytes());
        for k in keys {
            assert!(folded.may_contain(&k, SEED_ROW));
        }
        let fp = (3000..103_000u32)
            .filter(|i| folded.may_contain(&i.to_le_bytes(), SEED_ROW))
            .count();
        assert!(fp < 2_000, "{fp}");
        Ok(())
    }

    #[test]
    fn empty_filter_and_garbage() -> Result<(), String> {
        let f = build(BloomType::RowCol, 0, std::iter::empty())?;
        assert!(!f.may_contain(b"x", SEED_ROW));
        for bad in [
            &b""[..],
            b"\x01\x01\x07\x00\x00",
            b"\x01\x02\x07\x00\x01",
            b"\x03",
            b"\x01\x01\x07\x00\xff\xff\xff\xff\x0f",
        ] {
            assert!(BloomFilter::parse(bad).is_err());
        }
        Ok(())
    }

    #[test]
    fn column_key_matches_the_key_column_part() {
        let k = ferrobase_types::key::encode(b"r1", b"f", b"q", 5, ferrobase_types::CellType::Put);
        with_column_key(b"r1", b"f", b"q", |c| {
            assert_eq!(Some(c), k.get(..k.len() - 9))
        });
        let long = vec![b'x'; 400];
        with_column_key(&long, b"f", b"q", |c| assert_eq!(c.len(), 405));
    }
}
