//! LEB128 varints and zigzag integers: the one implementation behind every
//! byte format ferrobase defines or speaks — cell runs, the gRPC cell block,
//! the store file codec and the Thrift compact protocol.
//!
//! ```text
//! v = 300 = 0b10_0101100
//!   byte 0: 1 0101100   (low 7 bits, continuation bit set)
//!   byte 1: 0 0000010   (next 7 bits, last byte)
//! ```
//!
//! A u64 takes 1–10 bytes. Decoders take the byte slice and a position, and
//! never index past the end: a truncated varint and one longer than the
//! caller's limit are distinct errors, so a protocol can name which. This
//! module must never allocate or panic on any input.

/// The most bytes a u64 varint takes.
pub const MAX_LEN: usize = 10;

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VarintError {
    /// The input ended inside the varint.
    #[error("truncated varint")]
    Truncated,
    /// The varint ran past the caller's byte limit.
    #[error("varint longer than {0} bytes")]
    TooLong(usize),
}

/// Encodes `v` into `buf`, returning how many of its bytes were used; the
/// caller copies `&buf[..n]` into whatever sink it writes to.
#[inline]
pub fn encode(mut v: u64, buf: &mut [u8; MAX_LEN]) -> usize {
    let mut n = 0;
    for slot in buf.iter_mut() {
        n += 1;
        if v < 0x80 {
            *slot = v as u8;
            break;
        }
        *slot = (v as u8) | 0x80;
        v >>= 7;
    }
    n
}

/// Appends `v` to `out`.
#[inline]
pub fn put(out: &mut Vec<u8>, v: u64) {
    if v < 0x80 {
        out.push(v as u8);
        return;
    }
    let mut buf = [0u8; MAX_LEN];
    let n = encode(v, &mut buf);
    out.extend_from_slice(buf.get(..n).unwrap_or(&buf));
}

/// The number of bytes [`put`] writes for `v`.
#[inline]
pub fn encoded_len(v: u64) -> usize {
    // 1 byte per started group of 7 significant bits, at least one.
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Reads a varint of at most [`MAX_LEN`] bytes at `*pos`, advancing `*pos`
/// past it; `None` when truncated or too long. One-byte varints (short
/// lengths, small codes) are the common case and are inlined into callers.
#[inline(always)]
pub fn get(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *buf.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    decode_bounded(buf, pos, MAX_LEN).ok()
}

/// Reads a varint of at most `max_bytes` bytes (clamped to [`MAX_LEN`]) at
/// `*pos`, advancing `*pos` past it. `*pos` is unchanged on error.
#[inline(never)]
pub fn decode_bounded(buf: &[u8], pos: &mut usize, max_bytes: usize) -> Result<u64, VarintError> {
    let max_bytes = max_bytes.min(MAX_LEN);
    let mut v = 0u64;
    let mut at = *pos;
    for i in 0..max_bytes {
        let b = *buf.get(at).ok_or(VarintError::Truncated)?;
        at += 1;
        // The 10th byte carries bit 63 only; higher bits are dropped as
        // every LEB128 decoder of u64 does.
        v |= u64::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if b & 0x80 == 0 {
            *pos = at;
            return Ok(v);
        }
    }
    Err(VarintError::TooLong(max_bytes))
}

/// Maps a signed integer onto an unsigned one so that small magnitudes of
/// either sign encode short: 0 → 0, -1 → 1, 1 → 2, -2 → 3, …
#[inline]
pub fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_bytes() {
        let mut out = Vec::new();
        put(&mut out, 0);
        put(&mut out, 127);
        put(&mut out, 128);
        put(&mut out, 300);
        assert_eq!(out, [0x00, 0x7f, 0x80, 0x01, 0xac, 0x02]);
        let mut max = Vec::new();
        put(&mut max, u64::MAX);
        assert_eq!(max.len(), MAX_LEN);
        assert_eq!(max.last(), Some(&0x01));
    }

    #[test]
    fn errors_name_the_problem_and_leave_pos() {
        let mut pos = 0;
        assert_eq!(
            decode_bounded(&[0x80, 0x80], &mut pos, 10),
            Err(VarintError::Truncated)
        );
        assert_eq!(pos, 0);
        assert_eq!(
            decode_bounded(&[0x80; 4], &mut pos, 3),
            Err(VarintError::TooLong(3))
        );
        assert_eq!(pos, 0);
        assert_eq!(get(&[0xff; 11], &mut pos), None);
        assert_eq!(get(&[], &mut pos), None);
    }

    #[test]
    fn zigzag_small_magnitudes() {
        assert_eq!([0, -1, 1, -2, 2].map(zigzag), [0, 1, 2, 3, 4],);
        assert_eq!(zigzag(i64::MIN), u64::MAX);
    }

    proptest! {
        #[test]
        fn round_trips(v: u64, prefix in proptest::collection::vec(any::<u8>(), 0..4)) {
            let mut out = prefix.clone();
            put(&mut out, v);
            prop_assert_eq!(out.len() - prefix.len(), encoded_len(v));
            let mut pos = prefix.len();
            prop_assert_eq!(get(&out, &mut pos), Some(v));
            prop_assert_eq!(pos, out.len());
            let mut buf = [0u8; MAX_LEN];
            let n = encode(v, &mut buf);
            prop_assert_eq!(&buf[..n], &out[prefix.len()..]);
        }

        #[test]
        fn zigzag_round_trips(n: i64) {
            prop_assert_eq!(unzigzag(zigzag(n)), n);
        }

        #[test]
        fn never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..16), start in 0usize..20, max in 0usize..12) {
            let mut pos = start;
            let _ = decode_bounded(&bytes, &mut pos, max);
            let _ = get(&bytes, &mut pos);
        }
    }
}
