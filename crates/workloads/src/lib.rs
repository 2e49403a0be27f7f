//! Deterministic benchmark data: the shapes of docs/workloads.md and YCSB's
//! key-choice distributions.
//!
//! Every benchmark of the project (the `ferrobase bench` tool, the RocksDB
//! comparison in `crates/compare`, anyone else's loader) generates its data
//! here, so that figures from different tools describe the same bytes. A row
//! is a pure function of its row number `i` (0-based): no input file, no
//! global state, the same bytes on every machine and in every thread.
//!
//! - [`fnv`], [`ycsb_key`] and [`text`] are the helpers of
//!   docs/workloads.md, bit for bit.
//! - [`Shape`] names a data shape (`log9`, `gps60`, `vehicle15`, `kv`,
//!   `wide53`, `single53`, `ycsb`) and generates row `i` as a
//!   [`GeneratedRow`]: a row key and its `(qualifier, value)` cells, all in
//!   family [`Shape::family`] (`f`). [`Shape::fill_row`] reuses the buffers
//!   of a previous row, for loaders that must not allocate per row.
//! - [`generators`] holds YCSB's request distributions (uniform, Zipfian,
//!   scrambled Zipfian, latest, hotspot) over item numbers, seeded and
//!   reproducible ([`rand_chacha`]).
//!
//! # Details the shapes' origins leave open
//!
//! The choices this crate makes, which docs/workloads.md states as rules:
//!
//! - **`vehicle15`**. The HBase 0.94 write-tuning study's sample line
//!   (docs/experiments.md)
//!   `京EA31276 1640751143 CAM14357485 2 2 5 0 1 0 2016-01-2309:25:01 20160123092501023 JGJ59034 0 0`
//!   has 14 tokens for 15 fields; the 15th (`f14`) is `0` like `f12` and
//!   `f13`. With `h = fnv(i)`, row `i` has:
//!
//!   | field | value |
//!   |---|---|
//!   | `plate` | `京` + letter(h % 26) + letter((h>>8) % 26) + 5 digits of (h>>16) % 100000 (the `gps60` rule, hashed from `i`) |
//!   | `id` | 10 digits: 1000000000 + (h>>3) % 9000000000 |
//!   | `camera` | `CAM` + 8 digits of (h>>7) % 10^8 |
//!   | `lane` | 1 + (h>>11) % 4 |
//!   | `dir` | 1 + (h>>13) % 4 |
//!   | `type` | (h>>15) % 10 |
//!   | `color` | (h>>19) % 10 |
//!   | `speed_flag` | (h>>23) % 2 |
//!   | `status` | (h>>24) % 3 |
//!   | `time` | event time to the second, `YYYY-MM-DDhh:mm:ss` (no space, as in the sample) |
//!   | `event` | event time to the millisecond, 17 digits `YYYYMMDDhhmmssSSS` |
//!   | `officer` | `JGJ` + 5 digits of (h>>26) % 100000 |
//!   | `f12`, `f13`, `f14` | `0` |
//!
//!   The event time is 2016-01-23 00:00:00.000 plus `i * 10 + (h>>56) % 10`
//!   milliseconds (strictly increasing in `i`, so row keys never collide;
//!   2 million rows span about 5½ hours). The row key is
//!   `plate + ' ' + event` (28 bytes).
//! - **`ycsb`** with a `fieldcount` other than 10: field `j` of row `i` is
//!   `text(fnv(i * fieldcount + j), fieldlength)`, which is the table's
//!   `fnv(i*10+j)` at the default of 10 fields and, like `log9` and `gps60`,
//!   never gives two cells the same seed.
//! - **`gps60`** coordinates are printed with integer arithmetic
//!   (`116.` + 7 zero-padded digits): the same text as C's `"%.7f"` of
//!   `116 + k / 10^7` (checked by a test), without floating point.
//! - **`kv`**: `fnv(i) < 2^64 < 10^20`, so the row key is `fnv(i)` as 20
//!   zero-padded digits.

pub mod generators;
mod row;
mod shapes;

pub use generators::{Hotspot, KeyGenerator, Latest, ScrambledZipfian, Uniform, Zipfian};
pub use row::{Cells, GeneratedRow};
pub use shapes::Shape;

/// FNV-1a 64 over the 8 little-endian bytes of `x` (YCSB's `fnvhash64`
/// without its final `abs`).
#[inline]
pub fn fnv(x: u64) -> u64 {
    const OFFSET_BASIS: u64 = 0xCBF2_9CE4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01B3;
    let mut h = OFFSET_BASIS;
    for b in x.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// YCSB's hashed key name of item `i`: `"user"` + decimal of
/// `fnv(i) & 0x7FFF_FFFF_FFFF_FFFF`, no zero padding.
pub fn ycsb_key(i: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(24);
    ycsb_key_into(i, &mut out);
    out
}

/// Appends [`ycsb_key`]`(i)` to `out`.
pub fn ycsb_key_into(i: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(b"user");
    push_decimal(out, fnv(i) & 0x7FFF_FFFF_FFFF_FFFF);
}

/// The alphabet of [`text`].
pub const TEXT_ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// `n` pseudo-random bytes of [`TEXT_ALPHABET`] from `seed` (xorshift64*),
/// compressible roughly like logs.
pub fn text(seed: u64, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n);
    text_into(seed, n, &mut out);
    out
}

/// Appends [`text`]`(seed, n)` to `out`.
#[inline]
pub fn text_into(seed: u64, n: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + n, 0);
    let mut x = seed | 1;
    for b in out.iter_mut().skip(start) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        *b = TEXT_ALPHABET[(r % 36) as usize];
    }
}

/// Appends the decimal digits of `v` to `out`.
pub(crate) fn push_decimal(out: &mut Vec<u8>, v: u64) {
    // Column numbers (`q0`..`q52`, `c0`..`c8`) are one or two digits:
    // written directly, without the digit loop's divisions.
    if v < 10 {
        out.push(b'0' + v as u8);
        return;
    }
    if v < 100 {
        out.extend_from_slice(&[b'0' + (v / 10) as u8, b'0' + (v % 10) as u8]);
        return;
    }
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    let mut v = v;
    loop {
        pos -= 1;
        buf[pos] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[pos..]);
}

/// Appends `v` as exactly `width` decimal digits (zero-padded; only the low
/// `width` digits if `v` has more).
pub(crate) fn push_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let start = out.len();
    out.resize(start + width, b'0');
    let mut v = v;
    for k in (start..start + width).rev() {
        out[k] = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a written out from its definition, byte by byte.
    fn reference_fnv(x: u64) -> u64 {
        let bytes = [
            (x & 0xff) as u8,
            ((x >> 8) & 0xff) as u8,
            ((x >> 16) & 0xff) as u8,
            ((x >> 24) & 0xff) as u8,
            ((x >> 32) & 0xff) as u8,
            ((x >> 40) & 0xff) as u8,
            ((x >> 48) & 0xff) as u8,
            ((x >> 56) & 0xff) as u8,
        ];
        let mut h: u128 = 14_695_981_039_346_656_037;
        for b in bytes {
            h ^= u128::from(b);
            h = (h * 1_099_511_628_211) % (1u128 << 64);
        }
        h as u64
    }

    #[test]
    fn fnv_matches_reference_and_known_values() {
        // Computed independently (Python) from the definition.
        assert_eq!(fnv(0), 0xa8c7_f832_281a_39c5);
        assert_eq!(fnv(1), 0x89cd_3129_1d2a_efa4);
        assert_eq!(fnv(42), 0xff3a_dd6b_3789_daef);
        for x in (0..10_000u64).chain([u64::MAX, u64::MAX / 3, 1 << 63]) {
            assert_eq!(fnv(x), reference_fnv(x), "x = {x}");
        }
    }

    #[test]
    fn ycsb_key_shape() {
        assert_eq!(ycsb_key(0), b"user2938590176187398597".to_vec());
        assert_eq!(ycsb_key(1), b"user706274769219809188".to_vec());
        assert_eq!(ycsb_key(1_000_000), b"user1011632231655643464".to_vec());
        for i in 0..1000 {
            let k = ycsb_key(i);
            let digits = &k[4..];
            assert!(k.starts_with(b"user"));
            assert!(!digits.is_empty() && digits.iter().all(u8::is_ascii_digit));
            assert!(digits.len() == 1 || digits[0] != b'0', "no zero padding");
            let n: u64 = std::str::from_utf8(digits)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(u64::MAX);
            assert_eq!(n, fnv(i) & 0x7FFF_FFFF_FFFF_FFFF);
        }
    }

    #[test]
    fn text_alphabet_length_determinism() {
        assert_eq!(text(fnv(0), 20), b"wzmjcy6qga55hq3vfq0u".to_vec());
        assert_eq!(text(1, 16), b"brt76n7bufsqq9z7".to_vec());
        for seed in [0u64, 1, 2, 3, 12345, u64::MAX] {
            for n in [0usize, 1, 10, 751, 10_000] {
                let a = text(seed, n);
                assert_eq!(a.len(), n);
                assert!(a.iter().all(|b| TEXT_ALPHABET.contains(b)));
                assert_eq!(a, text(seed, n));
                // A prefix of a longer text is the shorter text.
                assert_eq!(text(seed, n + 5)[..n], a[..]);
            }
        }
        // seed | 1: seeds 2k and 2k+1 give the same text.
        assert_eq!(text(4, 30), text(5, 30));
        assert_ne!(text(4, 30), text(6, 30));
        // Every letter of the alphabet turns up.
        let long = text(99, 10_000);
        assert!(TEXT_ALPHABET.iter().all(|c| long.contains(c)));
    }

    #[test]
    fn decimal_helpers() {
        let mut v = Vec::new();
        push_decimal(&mut v, 0);
        v.push(b',');
        push_decimal(&mut v, u64::MAX);
        v.push(b',');
        push_padded(&mut v, 42, 5);
        v.push(b',');
        push_padded(&mut v, 123_456, 3);
        assert_eq!(v, b"0,18446744073709551615,00042,456".to_vec());
        // The one- and two-digit shortcuts agree with formatting.
        for n in [1u64, 9, 10, 52, 99, 100, 101, 999, 1000, 123_456_789] {
            let mut d = Vec::new();
            push_decimal(&mut d, n);
            assert_eq!(d, n.to_string().into_bytes(), "{n}");
        }
    }
}
