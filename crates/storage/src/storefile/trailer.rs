//! The fixed-size trailer at the end of every store file: where the
//! sections are, the format version and the magic.
//!
//! ```text
//!  offset  size  field (all little-endian)
//!   0      8     data_len      data blocks occupy [0, data_len)
//!   8      8     bloom_offset
//!  16      8     bloom_len     0 = no Bloom filter
//!  24      8     index_offset
//!  32      8     index_len
//!  40      8     info_offset
//!  48      8     info_len
//!  56      4     crc32c of bytes 0..56
//!  60      4     format version (3; 1 and 2 still read)
//!  64      8     magic "FBSTORE1"
//!  72            (end of file)
//! ```
//!
//! Version and magic sit at fixed offsets from the end so that any future
//! layout is recognised before anything else is interpreted. The sections
//! must follow each other exactly (data, Bloom, index, file info, trailer),
//! which catches truncation and most bad offsets before any read.
//! This module does no I/O.

use super::{FORMAT_VERSION, MAGIC, MIN_READ_VERSION};
use crate::codec::Cursor;

/// Bytes of the trailer.
pub(crate) const TRAILER_LEN: usize = 72;

/// A section's place in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Section {
    pub offset: u64,
    pub len: u64,
}

/// See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Trailer {
    pub data_len: u64,
    pub bloom: Section,
    pub index: Section,
    pub info: Section,
    /// The format version: what a writer writes ([`FORMAT_VERSION`]), what
    /// a reader found (which says how its NONE blocks are laid out).
    pub version: u32,
}

impl Trailer {
    pub fn encode(&self) -> [u8; TRAILER_LEN] {
        let mut out = [0u8; TRAILER_LEN];
        let fields = [
            self.data_len,
            self.bloom.offset,
            self.bloom.len,
            self.index.offset,
            self.index.len,
            self.info.offset,
            self.info.len,
        ];
        let mut body = Vec::with_capacity(TRAILER_LEN);
        for f in fields {
            body.extend_from_slice(&f.to_le_bytes());
        }
        let crc = crc32c::crc32c(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        body.extend_from_slice(&self.version.to_le_bytes());
        body.extend_from_slice(MAGIC);
        for (d, s) in out.iter_mut().zip(&body) {
            *d = *s;
        }
        out
    }

    /// Parses the last [`TRAILER_LEN`] bytes of a file of `file_len` bytes.
    /// Errors carry the file offset of the bad field.
    pub fn decode(buf: &[u8], file_len: u64) -> Result<Trailer, (u64, String)> {
        let start = file_len.saturating_sub(TRAILER_LEN as u64);
        let mut c = Cursor::new(buf);
        let mut fields = [0u64; 7];
        for f in &mut fields {
            *f = c.u64_le().ok_or((start, "truncated trailer".to_string()))?;
        }
        let stored_crc = c.u32_le().ok_or((start, "truncated trailer".to_string()))?;
        let version = c.u32_le().ok_or((start, "truncated trailer".to_string()))?;
        let magic = c.bytes(8).ok_or((start, "truncated trailer".to_string()))?;
        if magic != MAGIC {
            return Err((
                start + 64,
                format!(
                    "not a ferrobase store file (magic {} instead of FBSTORE1)",
                    ferrobase_types::binary::to_string_binary(magic)
                ),
            ));
        }
        if !(MIN_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err((
                start + 60,
                format!(
                    "unsupported store file format version {version} (this build reads versions {MIN_READ_VERSION} to {FORMAT_VERSION})"
                ),
            ));
        }
        let body = buf.get(..56).unwrap_or_default();
        let crc = crc32c::crc32c(body);
        if crc != stored_crc {
            return Err((
                start + 56,
                format!(
                    "trailer checksum mismatch (stored {stored_crc:#010x}, computed {crc:#010x})"
                ),
            ));
        }
        let [data_len, bo, bl, io, il, fo, fl] = fields;
        let t = Trailer {
            data_len,
            bloom: Section {
                offset: bo,
                len: bl,
            },
            index: Section {
                offset: io,
                len: il,
            },
            info: Section {
                offset: fo,
                len: fl,
            },
            version,
        };
        // Sections follow each other exactly, ending at the trailer.
        let chain = [
            ("Bloom filter", t.bloom, data_len),
            ("block index", t.index, bo.saturating_add(bl)),
            ("file info", t.info, io.saturating_add(il)),
        ];
        for (name, s, expected) in chain {
            if s.offset != expected {
                return Err((
                    start,
                    format!("{name} at offset {}, expected {expected}", s.offset),
                ));
            }
        }
        if fo.saturating_add(fl) != start {
            return Err((
                start,
                format!(
                    "file info ends at {}, but the trailer starts at {start} (truncated or extended file?)",
                    fo.saturating_add(fl)
                ),
            ));
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trailer {
        Trailer {
            data_len: 100,
            bloom: Section {
                offset: 100,
                len: 20,
            },
            index: Section {
                offset: 120,
                len: 30,
            },
            info: Section {
                offset: 150,
                len: 50,
            },
            version: FORMAT_VERSION,
        }
    }

    #[test]
    fn round_trips() {
        let t = sample();
        assert_eq!(Trailer::decode(&t.encode(), 272), Ok(t));
        assert!(Trailer::decode(&t.encode(), 273).is_err());
    }

    #[test]
    fn every_flip_is_detected_and_versions_are_named() {
        let bytes = sample().encode();
        for i in 0..TRAILER_LEN {
            let mut b = bytes;
            if let Some(x) = b.get_mut(i) {
                *x ^= 0x10;
            }
            assert!(Trailer::decode(&b, 272).is_err(), "{i}");
        }
        let mut b = bytes;
        if let Some(x) = b.get_mut(60) {
            *x = 4;
        }
        let e = Trailer::decode(&b, 272)
            .err()
            .map(|e| e.1)
            .unwrap_or_default();
        assert!(e.contains("unsupported store file format version 4"), "{e}");
    }
}
