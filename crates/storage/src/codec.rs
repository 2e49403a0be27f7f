//! Byte-level helpers shared by every on-disk format: LEB128 varints, a
//! bounds-checked [`Cursor`] and its writing twin, [`SliceWriter`].
//! Decoders use the cursor so that no slice index can panic on a corrupt or
//! truncated input; every getter returns `None` past the end.

pub use ferrobase_types::varint::{encoded_len as varint_len, put as put_varint};

/// A forward reader over a byte slice; every read is checked.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Cursor<'a> {
        Cursor { buf, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// True when nothing is left.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next byte.
    pub fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// A little-endian u32.
    pub fn u32_le(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    /// A little-endian u64.
    pub fn u64_le(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }

    /// A LEB128 varint; `None` if truncated or longer than 10 bytes.
    pub fn varint(&mut self) -> Option<u64> {
        ferrobase_types::varint::get(self.buf, &mut self.pos)
    }

    /// A varint that must fit in `usize` and be at most `max`.
    pub fn len(&mut self, max: usize) -> Option<usize> {
        let v = usize::try_from(self.varint()?).ok()?;
        (v <= max).then_some(v)
    }

    /// A varint-length-prefixed byte string.
    pub fn len_prefixed(&mut self) -> Option<&'a [u8]> {
        let n = self.len(self.remaining())?;
        self.bytes(n)
    }
}

/// A forward writer into a slice its caller sized beforehand by a bound on
/// what it writes: what a hot encoder uses instead of pushing onto a `Vec`
/// byte by byte (each push checks capacity and stores the length again).
/// Every write is checked: one that would pass the end writes nothing and
/// marks the writer [`overflowed`](Self::overflowed), so a wrong bound
/// shows up as an error the caller reports, never as a panic or as bytes
/// silently missing from the middle of an entry.
#[derive(Debug)]
pub struct SliceWriter<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflowed: bool,
}

impl<'a> SliceWriter<'a> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> SliceWriter<'a> {
        SliceWriter {
            buf,
            pos: 0,
            overflowed: false,
        }
    }

    /// Bytes written so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// True when some write did not fit (and was dropped).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Writes one byte.
    #[inline]
    pub fn u8(&mut self, b: u8) {
        match self.buf.get_mut(self.pos) {
            Some(d) => {
                *d = b;
                self.pos += 1;
            }
            None => self.overflowed = true,
        }
    }

    /// Writes `s`.
    #[inline]
    pub fn bytes(&mut self, s: &[u8]) {
        // `pos` is at most `buf.len()` and `s` is a slice: no overflow.
        match self.buf.get_mut(self.pos..self.pos + s.len()) {
            Some(d) => {
                d.copy_from_slice(s);
                self.pos += s.len();
            }
            None => self.overflowed = true,
        }
    }

    /// Writes `v` as [`put_varint`] does.
    #[inline]
    pub fn varint(&mut self, v: u64) {
        if v < 0x80 {
            self.u8(v as u8);
            return;
        }
        let mut buf = [0u8; ferrobase_types::varint::MAX_LEN];
        let n = ferrobase_types::varint::encode(v, &mut buf);
        self.bytes(buf.get(..n).unwrap_or(&buf));
    }
}

/// A bounds-checked reader like [`Cursor`], with a one-byte fast path for
/// varints: nearly every length and flag in a data block fits in one byte,
/// and entry decoding is the hot loop of every scan. Its methods are
/// `inline(always)`: with plain `inline`, `varint` stayed a call in the
/// block decoder (row-run decoding took ~20 % longer).
#[derive(Debug, Clone)]
pub(crate) struct InlineCursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> InlineCursor<'a> {
    /// A reader at the start of `buf`.
    #[inline(always)]
    pub(crate) fn new(buf: &'a [u8]) -> InlineCursor<'a> {
        InlineCursor { buf, pos: 0 }
    }

    /// Bytes read so far.
    #[inline(always)]
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Length of the whole input, read or not.
    #[inline(always)]
    pub(crate) fn input_len(&self) -> usize {
        self.buf.len()
    }

    /// One byte.
    #[inline(always)]
    pub(crate) fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// A LEB128 varint; `None` if truncated or longer than 10 bytes.
    #[inline(always)]
    pub(crate) fn varint(&mut self) -> Option<u64> {
        ferrobase_types::varint::get(self.buf, &mut self.pos)
    }

    /// A varint that must be at most `max`.
    #[inline(always)]
    pub(crate) fn bounded_len(&mut self, max: usize) -> Option<usize> {
        let v = usize::try_from(self.varint()?).ok()?;
        (v <= max).then_some(v)
    }

    /// The next `n` bytes.
    #[inline(always)]
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
}

/// Where an encoder writes: a growing `Vec`, or a [`SliceWriter`] over room
/// sized beforehand. One encoder, generic over this, serves both.
pub trait ByteSink {
    /// Writes one byte.
    fn put_u8(&mut self, b: u8);
    /// Writes `s`.
    fn put_bytes(&mut self, s: &[u8]);
    /// Writes `v` as a LEB128 varint.
    fn put_varint(&mut self, v: u64);
}

impl ByteSink for Vec<u8> {
    #[inline]
    fn put_u8(&mut self, b: u8) {
        self.push(b);
    }
    #[inline]
    fn put_bytes(&mut self, s: &[u8]) {
        self.extend_from_slice(s);
    }
    #[inline]
    fn put_varint(&mut self, v: u64) {
        put_varint(self, v);
    }
}

impl ByteSink for SliceWriter<'_> {
    #[inline]
    fn put_u8(&mut self, b: u8) {
        self.u8(b);
    }
    #[inline]
    fn put_bytes(&mut self, s: &[u8]) {
        self.bytes(s);
    }
    #[inline]
    fn put_varint(&mut self, v: u64) {
        self.varint(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn slice_writer_writes_what_vec_pushes_do(
            v in any::<u64>(),
            s in proptest::collection::vec(any::<u8>(), 0..20),
            room in 0usize..40,
        ) {
            let mut want = Vec::new();
            want.push(7);
            put_varint(&mut want, v);
            want.extend_from_slice(&s);
            let mut buf = vec![0u8; room];
            let mut w = SliceWriter::new(&mut buf);
            w.u8(7);
            w.varint(v);
            w.bytes(&s);
            let (end, overflowed) = (w.position(), w.overflowed());
            // Whatever fits is exact; what does not is flagged, not cut.
            prop_assert_eq!(overflowed, want.len() > room);
            if !overflowed {
                prop_assert_eq!(&buf[..end], &want[..]);
            }
            prop_assert!(end <= room);
        }
    }

    proptest! {
        #[test]
        fn varints_round_trip(v in any::<u64>()) {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            prop_assert_eq!(out.len(), varint_len(v));
            let mut c = Cursor::new(&out);
            prop_assert_eq!(c.varint(), Some(v));
            prop_assert!(c.is_empty());
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
            let mut c = Cursor::new(&bytes);
            while c.varint().is_some() {}
            let mut c = Cursor::new(&bytes);
            let _ = c.len_prefixed();
            let _ = c.u64_le();
        }
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let mut c = Cursor::new(&[0xff; 11]);
        assert_eq!(c.varint(), None);
    }
}
