//! Store files for the fuzz targets: a builder that wraps fuzzed section
//! payloads in valid frames (CRC32C) and a valid trailer, following
//! docs/storefile-format.md, so that the fuzzer's bytes reach the decoder
//! behind the checksums instead of dying at the first one; a splitter that
//! takes a real file apart (for seeds); and [`exercise`], which reads a
//! file through the public reader, scanner and writer.

use crate::mem::MemStorage;
use ferrobase_storage::cache::BlockCache;
use ferrobase_storage::codec::{Cursor, put_varint};
use ferrobase_storage::iter::CellIterator;
use ferrobase_storage::storefile::{StoreFileReader, StoreFileWriter};
use ferrobase_types::key::{self, KeyRef};
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding, FamilyDescriptor};
use std::path::Path;
use std::sync::{Arc, OnceLock};

pub const KIND_DATA: u8 = b'D';
pub const KIND_BLOOM: u8 = b'B';
pub const KIND_INDEX: u8 = b'I';
pub const KIND_INFO: u8 = b'F';
/// Frame header (kind, codec, raw length) plus CRC.
pub const FRAME_OVERHEAD: usize = 10;
pub const TRAILER_LEN: usize = 72;
pub const MAGIC: &[u8; 8] = b"FBSTORE1";

/// Stored codes of the file info (`storefile/encoding.rs`,
/// `storefile/compression.rs`, `storefile/bloom.rs`).
pub const ENC_NONE: u8 = 0;
pub const ENC_PREFIX: u8 = 1;
pub const ENC_DIFF: u8 = 2;
pub const ENC_FAST_DIFF: u8 = 3;
pub const ENC_ROW_INDEX_V1: u8 = 4;

/// Splits fuzz input into parts at this marker (several data blocks, or a
/// section and its probes), so one flat byte string describes a file and
/// libFuzzer's mutations stay simple.
pub const SEPARATOR: &[u8; 4] = b"\xF0SEP";

/// `data` cut at every [`SEPARATOR`].
pub fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(i) = rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        parts.push(&rest[..i]);
        rest = &rest[i + SEPARATOR.len()..];
    }
    parts.push(rest);
    parts
}

/// `parts` joined with [`SEPARATOR`] (what [`split`] undoes).
pub fn join(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(SEPARATOR);
        }
        out.extend_from_slice(p);
    }
    out
}

/// One frame: `kind codec raw_len stored crc32c`.
pub fn frame(kind: u8, codec: u8, raw_len: u32, stored: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(stored.len() + FRAME_OVERHEAD);
    out.push(kind);
    out.push(codec);
    out.extend_from_slice(&raw_len.to_le_bytes());
    out.extend_from_slice(stored);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// An uncompressed frame of `payload`.
pub fn plain_frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    frame(kind, 0, payload.len() as u32, payload)
}

/// The trailer for the given section places and version, with its CRC.
pub fn trailer(fields: [u64; 7], version: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(TRAILER_LEN);
    for f in fields {
        out.extend_from_slice(&f.to_le_bytes());
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(MAGIC);
    out
}

/// One block index entry.
pub struct IndexEntry {
    pub offset: u64,
    pub len: u64,
    pub first: Vec<u8>,
    pub last: Vec<u8>,
}

/// The block index payload.
pub fn index_payload(entries: &[IndexEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint(&mut out, entries.len() as u64);
    for e in entries {
        put_varint(&mut out, e.offset);
        put_varint(&mut out, e.len);
        put_varint(&mut out, e.first.len() as u64);
        out.extend_from_slice(&e.first);
        put_varint(&mut out, e.last.len() as u64);
        out.extend_from_slice(&e.last);
    }
    out
}

/// The file info fields a target chooses; [`Info::encode`] writes every
/// field a reader requires.
#[derive(Clone)]
pub struct Info {
    pub entries: u64,
    pub blocks: u64,
    pub encoding: u8,
    pub compression: u8,
    pub bloom: u8,
    pub bloom_keys: u64,
    pub family: Vec<u8>,
    pub first_key: Vec<u8>,
    pub last_key: Vec<u8>,
}

impl Info {
    /// A file of `blocks` uncompressed blocks of `encoding`, family `f`,
    /// no Bloom filter.
    pub fn plain(encoding: u8, blocks: u64) -> Info {
        Info {
            entries: blocks,
            blocks,
            encoding,
            compression: 0,
            bloom: 0,
            bloom_keys: 0,
            family: b"f".to_vec(),
            first_key: Vec::new(),
            last_key: Vec::new(),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        fn field(out: &mut Vec<u8>, tag: u8, value: &[u8]) {
            out.push(tag);
            put_varint(out, value.len() as u64);
            out.extend_from_slice(value);
        }
        fn num(out: &mut Vec<u8>, tag: u8, v: u64) {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            field(out, tag, &b);
        }
        let mut out = Vec::new();
        num(&mut out, 1, self.entries);
        num(&mut out, 2, 16);
        num(&mut out, 3, 8);
        field(&mut out, 4, &self.first_key);
        field(&mut out, 5, &self.last_key);
        num(&mut out, 6, 100);
        num(&mut out, 7, 0);
        num(&mut out, 8, u64::from(u32::MAX));
        num(&mut out, 9, self.compression.into());
        num(&mut out, 10, self.encoding.into());
        num(&mut out, 11, self.bloom.into());
        num(&mut out, 12, self.blocks);
        num(&mut out, 13, 0);
        field(&mut out, 14, &self.family);
        num(&mut out, 15, 1);
        num(&mut out, 16, self.bloom_keys);
        num(&mut out, 17, 4096);
        num(&mut out, 18, 0);
        out
    }
}

/// A whole file: `data` frames back to back, then the Bloom (if any),
/// index and file info payloads framed, then the trailer.
pub fn assemble(
    data: &[Vec<u8>],
    bloom: Option<&[u8]>,
    index: &[u8],
    info: &[u8],
    version: u32,
) -> Vec<u8> {
    let mut file: Vec<u8> = data.concat();
    let data_len = file.len() as u64;
    let mut section = |kind: u8, payload: &[u8]| {
        let at = file.len() as u64;
        let f = plain_frame(kind, payload);
        file.extend_from_slice(&f);
        (at, f.len() as u64)
    };
    let (bloom_at, bloom_len) = match bloom {
        Some(b) => section(KIND_BLOOM, b),
        None => (data_len, 0),
    };
    let (index_at, index_len) = section(KIND_INDEX, index);
    let (info_at, info_len) = section(KIND_INFO, info);
    let t = trailer(
        [
            data_len, bloom_at, bloom_len, index_at, index_len, info_at, info_len,
        ],
        version,
    );
    file.extend_from_slice(&t);
    file
}

/// A key of any type code (search keys use 0 and 0xFF, which no cell has).
pub fn raw_key(row: &[u8], family: &[u8], qualifier: &[u8], ts: u64, type_code: u8) -> Vec<u8> {
    let mut k = Vec::with_capacity(12 + row.len() + family.len() + qualifier.len());
    k.extend_from_slice(&(row.len() as u16).to_be_bytes());
    k.extend_from_slice(row);
    k.push(family.len() as u8);
    k.extend_from_slice(family);
    k.extend_from_slice(qualifier);
    k.extend_from_slice(&ts.to_be_bytes());
    k.push(type_code);
    k
}

/// A key that sorts before every key: the index's first key for blocks
/// whose content is unknown.
pub fn lowest_key() -> Vec<u8> {
    raw_key(b"", b"", b"", u64::MAX, 0xFF)
}

/// A key after every key of rows up to 16 bytes of 0xFF.
pub fn highest_key() -> Vec<u8> {
    raw_key(&[0xFF; 17], b"", b"", 0, 0)
}

/// A file of uncompressed data blocks with the given payloads, an index
/// that spans all keys, and a file info naming `encoding`.
pub fn file_of_blocks(blocks: &[&[u8]], encoding: u8, version: u32) -> Vec<u8> {
    let frames: Vec<Vec<u8>> = blocks.iter().map(|b| plain_frame(KIND_DATA, b)).collect();
    let mut offset = 0u64;
    let entries: Vec<IndexEntry> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let e = IndexEntry {
                offset,
                len: f.len() as u64,
                first: if i == 0 { lowest_key() } else { highest_key() },
                last: highest_key(),
            };
            offset += f.len() as u64;
            e
        })
        .collect();
    let info = Info::plain(encoding, frames.len() as u64);
    assemble(
        &frames,
        None,
        &index_payload(&entries),
        &info.encode(),
        version,
    )
}

/// A store file taken apart (seeds are made from real files this way).
pub struct Parts {
    /// Each data block's stored payload, codec and raw length.
    pub blocks: Vec<(u8, u32, Vec<u8>)>,
    pub bloom: Option<Vec<u8>>,
    pub index: Vec<u8>,
    pub info: Vec<u8>,
    pub version: u32,
}

/// The frame's (codec, raw length, stored payload).
fn unframe(f: &[u8]) -> Option<(u8, u32, Vec<u8>)> {
    let body = f.get(..f.len().checked_sub(4)?)?;
    let mut c = Cursor::new(body);
    let (_, codec, raw) = (c.u8()?, c.u8()?, c.u32_le()?);
    Some((codec, raw, body.get(6..)?.to_vec()))
}

/// Takes a well-formed file apart; `None` for anything else.
pub fn take_apart(file: &[u8]) -> Option<Parts> {
    let t = file.get(file.len().checked_sub(TRAILER_LEN)?..)?;
    let mut c = Cursor::new(t);
    let mut f = [0u64; 7];
    for v in &mut f {
        *v = c.u64_le()?;
    }
    c.u32_le()?;
    let version = c.u32_le()?;
    let section = |at: u64, len: u64| -> Option<Vec<u8>> {
        let s = file.get(usize::try_from(at).ok()?..usize::try_from(at + len).ok()?)?;
        Some(unframe(s)?.2)
    };
    let bloom = if f[2] > 0 {
        Some(section(f[1], f[2])?)
    } else {
        None
    };
    let index = section(f[3], f[4])?;
    let info = section(f[5], f[6])?;
    let mut ic = Cursor::new(&index);
    let n = ic.varint()?;
    let mut blocks = Vec::new();
    for _ in 0..n {
        let (off, len) = (ic.varint()?, ic.varint()?);
        ic.len_prefixed()?;
        ic.len_prefixed()?;
        let s = file.get(usize::try_from(off).ok()?..usize::try_from(off + len).ok()?)?;
        blocks.push(unframe(s)?);
    }
    Some(Parts {
        blocks,
        bloom,
        index,
        info,
        version,
    })
}

/// One process-wide cache, small: blocks of every execution pass through
/// it (reader ids are never reused, so executions never see each other's
/// blocks).
fn cache() -> Arc<BlockCache> {
    static CACHE: OnceLock<Arc<BlockCache>> = OnceLock::new();
    CACHE
        .get_or_init(|| Arc::new(BlockCache::new(1 << 20)))
        .clone()
}

/// Entries a target reads at most from one file (a block can hold many
/// tiny entries; this bounds an execution's time, not its correctness).
const MAX_ENTRIES: usize = 4096;

/// An entry as a scan yields it.
pub type Entry = (Vec<u8>, u64, Vec<u8>);

/// Every entry of the file at `path`, in scan order, and whether the scan
/// ended cleanly (`false`: it stopped at an error).
pub fn scan_all(reader: &Arc<StoreFileReader>, cache_blocks: bool) -> (Vec<Entry>, bool) {
    let mut s = reader.scanner(cache_blocks);
    let mut out = Vec::new();
    if s.seek_to_first().is_err() {
        return (out, false);
    }
    while s.valid() && out.len() < MAX_ENTRIES {
        let _ = s.row_kept();
        out.push((s.key().to_vec(), s.seq(), s.value().to_vec()));
        if s.next().is_err() {
            return (out, false);
        }
    }
    (out, true)
}

/// Reads `file` every way a server does: open (trailer, file info, index,
/// Bloom), a full scan with the block cache, seeks to every key found and
/// to `probes` (Bloom checks included), and a compaction's copy into a
/// new file, which must then read back the same entries.
pub fn exercise(file: Vec<u8>, probes: &[u8]) {
    let fs = MemStorage::new();
    fs.insert("in", file);
    let Ok(reader) = StoreFileReader::open_on(&fs, Path::new("in"), Some(cache())) else {
        return;
    };
    let _ = reader.info().describe();
    let (entries, clean) = scan_all(&reader, true);
    // Seek to what the scan found, and to keys made of the probe bytes.
    let mut targets: Vec<Vec<u8>> = entries.iter().take(64).map(|e| e.0.clone()).collect();
    for p in probes.chunks(8).take(16) {
        targets.push(raw_key(p, b"f", p, 0, 4));
        targets.push(p.to_vec());
    }
    let mut s = reader.scanner(false);
    for t in &targets {
        if s.seek(t).is_ok() && s.valid() {
            let _ = (s.key(), s.value(), s.value_bytes());
            let _ = s.next();
        }
        if let Some(k) = KeyRef::parse(t) {
            let _ = reader.might_contain_row(k.row);
            let _ = reader.might_contain_column(k.row, k.family, k.qualifier);
        }
    }
    if clean {
        compact_and_compare(&fs, &reader, &entries, probes.first().copied().unwrap_or(0));
    }
    reader.evict_from_cache();
}

/// Copies the file the way a compaction does (`begin_row`, `append_cell`,
/// then `next_copying`, which copies the rest of a row verbatim where it
/// can) and checks that the copy reads back as `expected`. Stops quietly
/// where the writer refuses an entry (garbage that decoded but is out of
/// order): refusing is the writer's job.
fn compact_and_compare(
    fs: &MemStorage,
    reader: &Arc<StoreFileReader>,
    expected: &[Entry],
    min_ts_byte: u8,
) {
    let info = reader.info();
    let Ok(mut family) = FamilyDescriptor::new("f") else {
        return;
    };
    family.name = info.family.clone();
    family.data_block_encoding = info.encoding;
    family.compression = info.compression;
    family.bloomfilter = info.bloom;
    // Small blocks: block ends and restarts fall inside rows.
    family.blocksize = 64 + u32::from(min_ts_byte) * 4;
    let min_ts = u64::from(min_ts_byte);
    let out = Path::new("out");
    let Ok(mut w) = StoreFileWriter::create_on(fs, out, &family, expected.len() as u64) else {
        return;
    };
    let mut s = reader.scanner(false);
    if s.seek_to_first().is_err() {
        return;
    }
    let mut row: Option<Vec<u8>> = None;
    let mut copied = 0usize;
    while s.valid() && copied < MAX_ENTRIES {
        // `append_cell` takes the writer's family; a key of another one
        // (which `append` refuses) ends the copy.
        let Some(k) = KeyRef::parse(s.key()).filter(|k| k.family == info.family.as_bytes()) else {
            return;
        };
        if row.as_deref() != Some(k.row) {
            if w.begin_row(k.row).is_err() {
                return;
            }
            row = Some(k.row.to_vec());
        }
        if w.append_cell(k.qualifier, k.timestamp, k.type_code, s.seq(), s.value())
            .is_err()
        {
            return;
        }
        match s.next_copying(&mut w, min_ts) {
            Ok(c) => copied += 1 + c.entries as usize,
            Err(_) => return,
        }
    }
    if s.valid() {
        // Stopped at MAX_ENTRIES: nothing to compare.
        return;
    }
    if w.finish().is_err() {
        return;
    }
    let copy = match StoreFileReader::open_on(fs, out, None) {
        Ok(r) => r,
        Err(e) => panic!("a compaction's copy of a readable file does not open: {e}"),
    };
    let (got, clean) = scan_all(&copy, false);
    assert!(
        clean,
        "a compaction's copy of a readable file does not scan"
    );
    if got != expected {
        let i = got.iter().zip(expected).take_while(|(a, b)| a == b).count();
        panic!(
            "a compaction's copy differs from its input at entry {i} of {}: {:?} instead of {:?}",
            expected.len(),
            got.get(i).map(show),
            expected.get(i).map(show),
        );
    }
}

/// An entry as a failure message shows it.
pub fn show(e: &Entry) -> String {
    format!(
        "{} seq {} value {}",
        ferrobase_types::binary::to_string_binary(&e.0),
        e.1,
        ferrobase_types::binary::to_string_binary(&e.2)
    )
}

/// The encoding named by a stored code, for targets that choose one.
pub fn encoding_of(code: u8) -> DataBlockEncoding {
    match code % 5 {
        ENC_PREFIX => DataBlockEncoding::Prefix,
        ENC_DIFF => DataBlockEncoding::Diff,
        ENC_FAST_DIFF => DataBlockEncoding::FastDiff,
        ENC_ROW_INDEX_V1 => DataBlockEncoding::RowIndexV1,
        _ => DataBlockEncoding::None,
    }
}

/// The compression named by a stored code (`storefile/compression.rs`).
pub fn compression_of(code: u8) -> Compression {
    match code % 5 {
        1 => Compression::Snappy,
        2 => Compression::Lz4,
        3 => Compression::Zstd,
        4 => Compression::Gz,
        _ => Compression::None,
    }
}

/// The Bloom type named by a stored code (`storefile/bloom.rs`).
pub fn bloom_of(code: u8) -> BloomType {
    match code % 3 {
        1 => BloomType::Row,
        2 => BloomType::RowCol,
        _ => BloomType::None,
    }
}

/// The per-encoding data block targets: `data` is a selector byte (the
/// format version, which decides NONE's layout: 1, 2 or 3), then up to
/// four block payloads cut at [`SEPARATOR`]; the last part also gives the
/// probe keys.
pub fn block_target(data: &[u8], encoding: u8) {
    let Some((&v, rest)) = data.split_first() else {
        return;
    };
    let version = 1 + u32::from(v % 3);
    let parts = split(rest);
    let blocks: Vec<&[u8]> = parts.iter().take(4).copied().collect();
    let probes = parts.last().copied().unwrap_or_default();
    exercise(file_of_blocks(&blocks, encoding, version), probes);
}

/// The file info `info` with numeric fields replaced (tag, value), each
/// added when missing.
pub fn patch_info(info: &[u8], fields: &[(u8, u64)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(info.len() + 16);
    let mut c = Cursor::new(info);
    let mut done = vec![false; fields.len()];
    while let (Some(tag), Some(value)) = (c.u8(), c.len_prefixed()) {
        out.push(tag);
        match fields.iter().position(|(t, _)| *t == tag) {
            Some(i) => {
                let mut v = Vec::new();
                put_varint(&mut v, fields[i].1);
                put_varint(&mut out, v.len() as u64);
                out.extend_from_slice(&v);
                done[i] = true;
            }
            None => {
                put_varint(&mut out, value.len() as u64);
                out.extend_from_slice(value);
            }
        }
    }
    for (i, (tag, value)) in fields.iter().enumerate() {
        if !done[i] {
            let mut v = Vec::new();
            put_varint(&mut v, *value);
            out.push(*tag);
            put_varint(&mut out, v.len() as u64);
            out.extend_from_slice(&v);
        }
    }
    out
}

/// Writes a store file with the public writer: `rows` rows of a few
/// columns each (several versions, a delete marker here and there), in
/// blocks of about `blocksize` bytes. Bases for the section targets and
/// the seeds.
pub fn write_file(
    encoding: DataBlockEncoding,
    compression: Compression,
    bloom: BloomType,
    blocksize: u32,
    rows: usize,
) -> Vec<u8> {
    let fs = MemStorage::new();
    let path = Path::new("written");
    let Ok(mut family) = FamilyDescriptor::new("f") else {
        return Vec::new();
    };
    family.data_block_encoding = encoding;
    family.compression = compression;
    family.bloomfilter = bloom;
    family.blocksize = blocksize;
    let Ok(mut w) = StoreFileWriter::create_on(&fs, path, &family, rows as u64 * 4) else {
        return Vec::new();
    };
    let mut seq = 1000u64;
    for r in 0..rows {
        let row = format!("row-{r:04}");
        for (q, versions) in [("a", 1u64), ("b", 2), ("qualifier-c", 1)] {
            for v in 0..versions {
                seq -= 1;
                let ts = 1_700_000_000_000 + (r as u64) * 10 - v;
                let typ = if r % 7 == 3 && v == 0 && q == "b" {
                    CellType::DeleteColumn
                } else {
                    CellType::Put
                };
                let k = key::encode(row.as_bytes(), b"f", q.as_bytes(), ts, typ);
                let value = if typ == CellType::Put {
                    format!("value-{r}-{q}-{v}").into_bytes()
                } else {
                    Vec::new()
                };
                if w.append(&k, seq, &value).is_err() {
                    return Vec::new();
                }
            }
        }
    }
    if w.finish().is_err() {
        return Vec::new();
    }
    fs.get(path).unwrap_or_default()
}

/// A file whose `which` section (bloom, index or info) is replaced by
/// `payload`, re-framed; the data blocks stay those of `base`.
pub fn splice(base: &Parts, bloom: Option<&[u8]>, index: &[u8], info: &[u8]) -> Vec<u8> {
    let frames: Vec<Vec<u8>> = base
        .blocks
        .iter()
        .map(|(codec, raw, stored)| frame(KIND_DATA, *codec, *raw, stored))
        .collect();
    assemble(&frames, bloom, index, info, base.version)
}
