//! The frame around every block and section of a store file, and the
//! footer of a data block.
//!
//! Frame (data blocks, Bloom filter, block index, file info):
//!
//! ```text
//!  0      1       2              6                       6+S       10+S
//!  +------+-------+--------------+-----------------------+---------+
//!  | kind | codec | raw_len      | stored payload        | crc32c  |
//!  | u8   | u8    | u32 LE       | S bytes (compressed   | u32 LE  |
//!  |      |       | uncompressed | by `codec`, or raw)   | of 0..6+S
//!  +------+-------+--------------+-----------------------+---------+
//!  kind: b'D' data block, b'B' Bloom, b'I' index, b'F' file info
//! ```
//!
//! The stored length `10 + S` is not in the frame: the block index (for data
//! blocks) or the trailer (for sections) gives it, so a reader reads a frame
//! in one positional read and checks it before trusting any byte inside.
//!
//! Data block payload, after decompression (what the block cache holds):
//!
//! ```text
//!  +-------------------------+------------------------+----------+----------+
//!  | entries (see encoding)  | restart offsets        | count n  | encoding |
//!  |                         | n × u32 LE, ascending, | u32 LE   | code u8  |
//!  |                         | first is 0             |          |          |
//!  +-------------------------+------------------------+----------+----------+
//! ```
//!
//! This module owns those two layouts; it never decodes entries (that is
//! `block::iterator` with `encoding`) and never does I/O.

pub(crate) mod builder;
pub(crate) mod iterator;

use super::MAX_BLOCK_LEN;
use super::compression;
use bytes::Bytes;
use ferrobase_types::Compression;

/// Bytes of the frame header (kind, codec, raw length).
pub(crate) const HEADER_LEN: usize = 6;
/// Bytes a frame adds to its payload (header and CRC).
pub(crate) const FRAME_OVERHEAD: usize = HEADER_LEN + 4;
/// Bytes of a data block's footer besides the restart offsets.
pub(crate) const FOOTER_LEN: usize = 5;

/// What a frame holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockKind {
    Data,
    Bloom,
    Index,
    FileInfo,
}

impl BlockKind {
    pub fn code(self) -> u8 {
        match self {
            BlockKind::Data => b'D',
            BlockKind::Bloom => b'B',
            BlockKind::Index => b'I',
            BlockKind::FileInfo => b'F',
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Data => "data block",
            BlockKind::Bloom => "Bloom filter",
            BlockKind::Index => "block index",
            BlockKind::FileInfo => "file info",
        }
    }
}

/// The frame header for a payload; the CRC is computed by the writer over
/// this header and the stored bytes.
pub(crate) fn header(kind: BlockKind, codec: u8, raw_len: usize) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    let len = (raw_len as u32).to_le_bytes();
    h[0] = kind.code();
    h[1] = codec;
    h[2..].copy_from_slice(&len);
    h
}

/// The CRC32C of a frame, computed over header and stored payload.
pub(crate) fn frame_crc(header: &[u8], stored: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(header), stored)
}

/// Checks a whole frame read from disk and returns its uncompressed payload.
///
/// `allowed` is the file's compression: a frame may use it or NONE (a writer
/// stores a block raw when compressing does not pay). An uncompressed payload
/// is returned as a slice of `frame` without copying.
pub(crate) fn decode_frame(
    frame: Vec<u8>,
    kind: BlockKind,
    allowed: Compression,
) -> Result<Bytes, String> {
    let Some(body_len) = frame.len().checked_sub(4) else {
        return Err(format!(
            "{} is {} bytes, shorter than a frame",
            kind.name(),
            frame.len()
        ));
    };
    let (body, crc) = frame.split_at(body_len);
    let stored_crc = crc.try_into().map(u32::from_le_bytes).unwrap_or(0);
    let mut c = crate::codec::Cursor::new(body);
    let (Some(k), Some(codec), Some(raw_len)) = (c.u8(), c.u8(), c.u32_le()) else {
        return Err(format!(
            "{} is {} bytes, shorter than a frame",
            kind.name(),
            frame.len()
        ));
    };
    let actual = crc32c::crc32c(body);
    if actual != stored_crc {
        return Err(format!(
            "{} checksum mismatch (stored {stored_crc:#010x}, computed {actual:#010x})",
            kind.name()
        ));
    }
    if k != kind.code() {
        return Err(format!(
            "expected a {}, found block kind byte {k:#04x}",
            kind.name()
        ));
    }
    let raw_len = raw_len as usize;
    if raw_len > MAX_BLOCK_LEN {
        return Err(format!(
            "{} claims {raw_len} uncompressed bytes, over the limit",
            kind.name()
        ));
    }
    let allowed_code = compression::code(allowed);
    if codec != compression::code(Compression::None) && codec != allowed_code {
        return Err(format!(
            "{} uses compression code {codec}, file uses {allowed}",
            kind.name()
        ));
    }
    let stored_len = body.len().saturating_sub(HEADER_LEN);
    if codec == compression::code(Compression::None) {
        if stored_len != raw_len {
            return Err(format!(
                "{} stores {stored_len} bytes but its header says {raw_len}",
                kind.name()
            ));
        }
        return Ok(Bytes::from(frame).slice(HEADER_LEN..HEADER_LEN + raw_len));
    }
    let stored = body.get(HEADER_LEN..).unwrap_or_default();
    compression::decompress(codec, stored, raw_len)
        .map(Bytes::from)
        .map_err(|e| format!("{}: {e}", kind.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: BlockKind, payload: &[u8]) -> Vec<u8> {
        let h = header(kind, 0, payload.len());
        let mut out = h.to_vec();
        out.extend_from_slice(payload);
        out.extend_from_slice(&frame_crc(&h, payload).to_le_bytes());
        out
    }

    #[test]
    fn frames_round_trip_and_check_kind() {
        let f = frame(BlockKind::Index, b"hello");
        let got = decode_frame(f.clone(), BlockKind::Index, Compression::None);
        assert_eq!(got.as_deref().ok(), Some(&b"hello"[..]));
        let e = decode_frame(f, BlockKind::Bloom, Compression::None)
            .err()
            .unwrap_or_default();
        assert!(e.contains("expected a Bloom filter"), "{e}");
    }

    #[test]
    fn every_flip_and_truncation_is_detected() {
        let f = frame(BlockKind::Data, b"some payload bytes");
        for i in 0..f.len() {
            for bit in 0..8 {
                let mut g = f.clone();
                if let Some(b) = g.get_mut(i) {
                    *b ^= 1 << bit;
                }
                assert!(
                    decode_frame(g, BlockKind::Data, Compression::None).is_err(),
                    "flip {i}/{bit}"
                );
            }
            let t = f.get(..i).unwrap_or_default().to_vec();
            assert!(
                decode_frame(t, BlockKind::Data, Compression::None).is_err(),
                "truncate {i}"
            );
        }
    }
}
