//! Block codecs: NONE, SNAPPY (`snap` raw format), LZ4 (`lz4_flex` block
//! format with the uncompressed size prepended as u32 LE), ZSTD (level 3,
//! HBase's default) and GZ (`flate2` gzip, default level).
//!
//! A writer stores a block uncompressed (codec NONE in its frame) when the
//! codec saves less than an eighth of it, as RocksDB does: decompressing a
//! block that did not shrink only costs CPU on every cache miss.
//!
//! Decompression never trusts a length from the input: the output buffer is
//! exactly the frame's raw length (already bounded by `MAX_BLOCK_LEN`), and a
//! codec that produces anything else is an error, never a panic.

use ferrobase_types::Compression;
use std::cell::RefCell;
use std::io::{self, Read, Write};

/// ZSTD level (HBase's `hbase.io.compress.zstd.level` default).
const ZSTD_LEVEL: i32 = 3;

/// The stored code of a codec (block frames and the file info).
pub(crate) fn code(c: Compression) -> u8 {
    match c {
        Compression::None => 0,
        Compression::Snappy => 1,
        Compression::Lz4 => 2,
        Compression::Zstd => 3,
        Compression::Gz => 4,
    }
}

/// The codec of a stored code.
pub(crate) fn from_code(c: u8) -> Option<Compression> {
    Some(match c {
        0 => Compression::None,
        1 => Compression::Snappy,
        2 => Compression::Lz4,
        3 => Compression::Zstd,
        4 => Compression::Gz,
        _ => return None,
    })
}

/// A writer's compressor: codec state and output buffer, reused per block.
pub(crate) struct Compressor {
    kind: Compression,
    snap: snap::raw::Encoder,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    out: Vec<u8>,
}

impl Compressor {
    pub fn new(kind: Compression) -> io::Result<Compressor> {
        let zstd = match kind {
            Compression::Zstd => Some(zstd::bulk::Compressor::new(ZSTD_LEVEL)?),
            _ => None,
        };
        Ok(Compressor {
            kind,
            snap: snap::raw::Encoder::new(),
            zstd,
            out: Vec::new(),
        })
    }

    /// Compresses `raw`; returns the codec code to put in the frame and the
    /// bytes to store (`raw` itself when compression does not pay).
    pub fn compress<'a>(&'a mut self, raw: &'a [u8]) -> io::Result<(u8, &'a [u8])> {
        self.out.clear();
        match self.kind {
            Compression::None => return Ok((code(Compression::None), raw)),
            Compression::Snappy => {
                self.out.resize(snap::raw::max_compress_len(raw.len()), 0);
                let n = self
                    .snap
                    .compress(raw, &mut self.out)
                    .map_err(io::Error::other)?;
                self.out.truncate(n);
            }
            Compression::Lz4 => {
                let len = u32::try_from(raw.len()).map_err(io::Error::other)?;
                self.out.extend_from_slice(&len.to_le_bytes());
                self.out
                    .resize(4 + lz4_flex::block::get_maximum_output_size(raw.len()), 0);
                let n =
                    lz4_flex::block::compress_into(raw, self.out.get_mut(4..).unwrap_or_default())
                        .map_err(io::Error::other)?;
                self.out.truncate(4 + n);
            }
            Compression::Zstd => {
                let z = match &mut self.zstd {
                    Some(z) => z,
                    None => self.zstd.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL)?),
                };
                self.out = z.compress(raw)?;
            }
            Compression::Gz => {
                let mut enc = flate2::write::GzEncoder::new(
                    std::mem::take(&mut self.out),
                    flate2::Compression::default(),
                );
                enc.write_all(raw)?;
                self.out = enc.finish()?;
            }
        }
        if self.out.len() >= raw.len() - raw.len() / 8 {
            return Ok((code(Compression::None), raw));
        }
        Ok((code(self.kind), &self.out))
    }
}

thread_local! {
    /// One ZSTD context per thread: creating one per block would allocate
    /// its window on every cache miss.
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Decompresses a stored payload with codec `codec` (not NONE) into exactly
/// `raw_len` bytes.
pub(crate) fn decompress(codec: u8, stored: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    let kind = from_code(codec).ok_or_else(|| format!("unknown compression code {codec}"))?;
    let out = match kind {
        Compression::None => stored.to_vec(),
        Compression::Snappy => {
            let n = snap::raw::decompress_len(stored).map_err(|e| format!("SNAPPY: {e}"))?;
            if n != raw_len {
                return Err(format!(
                    "SNAPPY length {n} does not match the header's {raw_len}"
                ));
            }
            let mut out = vec![0; raw_len];
            let n = snap::raw::Decoder::new()
                .decompress(stored, &mut out)
                .map_err(|e| format!("SNAPPY: {e}"))?;
            out.truncate(n);
            out
        }
        Compression::Lz4 => {
            let mut c = crate::codec::Cursor::new(stored);
            let n = c.u32_le().ok_or("LZ4 size prefix missing")? as usize;
            if n != raw_len {
                return Err(format!(
                    "LZ4 length {n} does not match the header's {raw_len}"
                ));
            }
            let rest = c.bytes(c.remaining()).unwrap_or_default();
            let mut out = vec![0; raw_len];
            let n = lz4_flex::block::decompress_into(rest, &mut out)
                .map_err(|e| format!("LZ4: {e}"))?;
            out.truncate(n);
            out
        }
        Compression::Zstd => ZSTD_DECOMPRESSOR.with(|cell| {
            let mut slot = cell.borrow_mut();
            let d = match &mut *slot {
                Some(d) => d,
                None => {
                    slot.insert(zstd::bulk::Decompressor::new().map_err(|e| format!("ZSTD: {e}"))?)
                }
            };
            let mut out = Vec::with_capacity(raw_len);
            d.decompress_to_buffer(stored, &mut out)
                .map_err(|e| format!("ZSTD: {e}"))?;
            Ok::<_, String>(out)
        })?,
        Compression::Gz => {
            let mut out = Vec::with_capacity(raw_len);
            flate2::read::GzDecoder::new(stored)
                .take(raw_len as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| format!("GZ: {e}"))?;
            out
        }
    };
    if out.len() != raw_len {
        return Err(format!(
            "{kind} produced {} bytes, the header says {raw_len}",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips_and_falls_back_when_useless() -> io::Result<()> {
        let compressible: Vec<u8> = (0..5000u32).flat_map(|i| (i % 50).to_le_bytes()).collect();
        let mut x = 0x1234_5678_9abc_def0u64;
        let random: Vec<u8> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        for kind in Compression::ALL {
            let mut c = Compressor::new(*kind)?;
            let (used, stored) = c.compress(&compressible)?;
            assert_eq!(used, code(*kind), "{kind}");
            let stored = stored.to_vec();
            if *kind != Compression::None {
                assert!(stored.len() < compressible.len() / 2);
                assert_eq!(
                    decompress(used, &stored, compressible.len()).ok(),
                    Some(compressible.clone())
                );
                assert!(decompress(used, &stored, compressible.len() - 1).is_err());
                assert!(decompress(used, &stored, compressible.len() + 1).is_err());
                for cut in [0, 1, stored.len() / 2, stored.len() - 1] {
                    let _ = decompress(
                        used,
                        stored.get(..cut).unwrap_or_default(),
                        compressible.len(),
                    );
                }
                let (used, _) = c.compress(&random)?;
                assert_eq!(used, 0, "{kind} falls back on random data");
            }
            assert_eq!(from_code(code(*kind)), Some(*kind));
        }
        assert!(decompress(9, b"", 0).is_err());
        Ok(())
    }
}
