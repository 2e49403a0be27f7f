//! [`FileInfo`]: what a store file holds (HBase's FileInfo and trailer
//! statistics), how it is stored and how `ferrobase storefile meta` prints it.
//!
//! ```text
//!  section payload: a sequence of tagged fields, in tag order
//!  +-----+---------+-------------+-----+---------+-------------+---
//!  | tag | len v   | value       | tag | len v   | value       | ...
//!  | u8  |         | len bytes   |     |         |             |
//!  +-----+---------+-------------+-----+---------+-------------+---
//!  numbers are varints inside their value, keys are raw bytes, the family
//!  name is UTF-8; unknown tags are skipped, so fields can be added without
//!  a format version bump.
//! ```
//!
//! The file `length` is not stored: it is what the writer wrote and what the
//! reader finds on disk. This module does no I/O.

use super::{bloom, compression, encoding};
use crate::codec::{Cursor, put_varint};
use ferrobase_types::binary::to_string_binary;
use ferrobase_types::key::KeyRef;
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding};

/// Everything a store file says about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct FileInfo {
    pub entries: u64,
    pub avg_key_len: u64,
    pub avg_value_len: u64,
    /// Encoded key of the first entry (empty for an empty file).
    pub first_key: Vec<u8>,
    /// Encoded key of the last entry (empty for an empty file).
    pub last_key: Vec<u8>,
    pub max_seq_id: u64,
    /// Smallest sequence id in the file (0 for an empty file).
    pub min_seq_id: u64,
    /// Smallest cell timestamp (0 for an empty file).
    pub min_timestamp: u64,
    /// Largest cell timestamp (0 for an empty file).
    pub max_timestamp: u64,
    pub compression: Compression,
    pub encoding: DataBlockEncoding,
    pub bloom: BloomType,
    /// Data blocks.
    pub blocks: u64,
    /// File length in bytes.
    pub length: u64,
    /// Cells of any delete type.
    pub delete_markers: u64,
    /// The column family the file belongs to.
    pub family: String,
    /// The family's BLOCKSIZE when the file was written.
    pub blocksize: u64,
    /// Keys in the Bloom filter (rows, plus columns for ROWCOL).
    pub bloom_keys: u64,
    /// Sum of the data blocks' uncompressed (encoded) payload sizes.
    pub uncompressed_bytes: u64,
}

const T_ENTRIES: u8 = 1;
const T_AVG_KEY: u8 = 2;
const T_AVG_VALUE: u8 = 3;
const T_FIRST_KEY: u8 = 4;
const T_LAST_KEY: u8 = 5;
const T_MAX_SEQ: u8 = 6;
const T_MIN_TS: u8 = 7;
const T_MAX_TS: u8 = 8;
const T_COMPRESSION: u8 = 9;
const T_ENCODING: u8 = 10;
const T_BLOOM: u8 = 11;
const T_BLOCKS: u8 = 12;
const T_DELETES: u8 = 13;
const T_FAMILY: u8 = 14;
const T_MIN_SEQ: u8 = 15;
const T_BLOOM_KEYS: u8 = 16;
const T_BLOCKSIZE: u8 = 17;
const T_UNCOMPRESSED: u8 = 18;
/// Tags every version-1 file has.
const REQUIRED: std::ops::RangeInclusive<u8> = T_ENTRIES..=T_FAMILY;

fn put_field(out: &mut Vec<u8>, tag: u8, value: &[u8]) {
    out.push(tag);
    put_varint(out, value.len() as u64);
    out.extend_from_slice(value);
}

fn put_num(out: &mut Vec<u8>, tag: u8, v: u64) {
    let mut buf = Vec::with_capacity(10);
    put_varint(&mut buf, v);
    put_field(out, tag, &buf);
}

/// `row/family:qualifier/timestamp/Type`, as HBase prints a key.
pub(crate) fn key_text(key: &[u8]) -> String {
    if key.is_empty() {
        return "(none)".into();
    }
    match KeyRef::parse(key) {
        Some(k) => {
            let t = CellType::from_code(k.type_code)
                .map(|t| t.name().to_string())
                .unwrap_or_else(|| format!("Type{}", k.type_code));
            format!(
                "{}/{}:{}/{}/{}",
                to_string_binary(k.row),
                to_string_binary(k.family),
                to_string_binary(k.qualifier),
                k.timestamp,
                t
            )
        }
        None => to_string_binary(key),
    }
}

impl FileInfo {
    /// Lines for `ferrobase storefile meta FILE`, in `hbase hfile -m` order.
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        vec![
            ("entries", self.entries.to_string()),
            ("avgKeyLen", self.avg_key_len.to_string()),
            ("avgValueLen", self.avg_value_len.to_string()),
            ("firstKey", key_text(&self.first_key)),
            ("lastKey", key_text(&self.last_key)),
            ("compression", self.compression.to_string()),
            ("encoding", self.encoding.to_string()),
            ("bloom", self.bloom.to_string()),
            ("blocks", self.blocks.to_string()),
            ("length", self.length.to_string()),
            ("maxSeqId", self.max_seq_id.to_string()),
            (
                "timeRange",
                format!("[{}, {}]", self.min_timestamp, self.max_timestamp),
            ),
        ]
    }

    /// The section payload.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out =
            Vec::with_capacity(64 + self.first_key.len() + self.last_key.len() + self.family.len());
        put_num(&mut out, T_ENTRIES, self.entries);
        put_num(&mut out, T_AVG_KEY, self.avg_key_len);
        put_num(&mut out, T_AVG_VALUE, self.avg_value_len);
        put_field(&mut out, T_FIRST_KEY, &self.first_key);
        put_field(&mut out, T_LAST_KEY, &self.last_key);
        put_num(&mut out, T_MAX_SEQ, self.max_seq_id);
        put_num(&mut out, T_MIN_TS, self.min_timestamp);
        put_num(&mut out, T_MAX_TS, self.max_timestamp);
        put_num(
            &mut out,
            T_COMPRESSION,
            compression::code(self.compression).into(),
        );
        put_num(&mut out, T_ENCODING, encoding::code(self.encoding).into());
        put_num(&mut out, T_BLOOM, bloom::code(self.bloom).into());
        put_num(&mut out, T_BLOCKS, self.blocks);
        put_num(&mut out, T_DELETES, self.delete_markers);
        put_field(&mut out, T_FAMILY, self.family.as_bytes());
        put_num(&mut out, T_MIN_SEQ, self.min_seq_id);
        put_num(&mut out, T_BLOOM_KEYS, self.bloom_keys);
        put_num(&mut out, T_BLOCKSIZE, self.blocksize);
        put_num(&mut out, T_UNCOMPRESSED, self.uncompressed_bytes);
        out
    }

    /// Parses a section payload; `length` is the file's size.
    pub(crate) fn decode(payload: &[u8], length: u64) -> Result<FileInfo, String> {
        let mut info = FileInfo {
            entries: 0,
            avg_key_len: 0,
            avg_value_len: 0,
            first_key: Vec::new(),
            last_key: Vec::new(),
            max_seq_id: 0,
            min_seq_id: 0,
            min_timestamp: 0,
            max_timestamp: 0,
            compression: Compression::None,
            encoding: DataBlockEncoding::None,
            bloom: BloomType::None,
            blocks: 0,
            length,
            delete_markers: 0,
            family: String::new(),
            blocksize: 0,
            bloom_keys: 0,
            uncompressed_bytes: 0,
        };
        let mut seen = 0u64;
        let mut c = Cursor::new(payload);
        while !c.is_empty() {
            let tag = c.u8().ok_or("truncated field")?;
            let value = c
                .len_prefixed()
                .ok_or_else(|| format!("field {tag} truncated"))?;
            let num = || {
                let mut v = Cursor::new(value);
                v.varint()
                    .filter(|_| v.is_empty())
                    .ok_or_else(|| format!("field {tag}: bad number"))
            };
            let small = |what: &str| {
                num().and_then(|n| u8::try_from(n).map_err(|_| format!("bad {what} code {n}")))
            };
            match tag {
                T_ENTRIES => info.entries = num()?,
                T_AVG_KEY => info.avg_key_len = num()?,
                T_AVG_VALUE => info.avg_value_len = num()?,
                T_FIRST_KEY => info.first_key = value.to_vec(),
                T_LAST_KEY => info.last_key = value.to_vec(),
                T_MAX_SEQ => info.max_seq_id = num()?,
                T_MIN_TS => info.min_timestamp = num()?,
                T_MAX_TS => info.max_timestamp = num()?,
                T_COMPRESSION => {
                    let c = small("compression")?;
                    info.compression = compression::from_code(c)
                        .ok_or_else(|| format!("unknown compression code {c}"))?;
                }
                T_ENCODING => {
                    let c = small("encoding")?;
                    info.encoding = encoding::from_code(c)
                        .ok_or_else(|| format!("unknown data block encoding code {c}"))?;
                }
                T_BLOOM => {
                    let c = small("Bloom type")?;
                    info.bloom = bloom::from_code(c)
                        .ok_or_else(|| format!("unknown Bloom type code {c}"))?;
                }
                T_BLOCKS => info.blocks = num()?,
                T_DELETES => info.delete_markers = num()?,
                T_FAMILY => {
                    info.family = String::from_utf8(value.to_vec())
                        .map_err(|_| "family name is not UTF-8".to_string())?
                }
                T_MIN_SEQ => info.min_seq_id = num()?,
                T_BLOOM_KEYS => info.bloom_keys = num()?,
                T_BLOCKSIZE => info.blocksize = num()?,
                T_UNCOMPRESSED => info.uncompressed_bytes = num()?,
                _ => {} // a newer writer's field
            }
            if tag < 64 {
                seen |= 1 << tag;
            }
        }
        if let Some(missing) = REQUIRED.clone().find(|t| seen & (1 << t) == 0) {
            return Err(format!("file info lacks field {missing}"));
        }
        if (info.entries == 0) != (info.blocks == 0) {
            return Err(format!(
                "{} entries in {} blocks",
                info.entries, info.blocks
            ));
        }
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::key;

    pub(crate) fn sample() -> FileInfo {
        FileInfo {
            entries: 3,
            avg_key_len: 20,
            avg_value_len: 5,
            first_key: key::encode(b"r\x00", b"f", b"q", 7, CellType::Put),
            last_key: key::encode(b"s", b"f", b"", 1, CellType::DeleteFamily),
            max_seq_id: 99,
            min_seq_id: 4,
            min_timestamp: 1,
            max_timestamp: 7,
            compression: Compression::Zstd,
            encoding: DataBlockEncoding::FastDiff,
            bloom: BloomType::RowCol,
            blocks: 1,
            length: 1234,
            delete_markers: 1,
            family: "f".into(),
            blocksize: 65536,
            bloom_keys: 4,
            uncompressed_bytes: 80,
        }
    }

    #[test]
    fn round_trips_and_describes() -> Result<(), String> {
        let info = sample();
        assert_eq!(FileInfo::decode(&info.encode(), 1234)?, info);
        let lines = info.describe();
        let names: Vec<&str> = lines.iter().map(|l| l.0).collect();
        assert_eq!(
            names,
            [
                "entries",
                "avgKeyLen",
                "avgValueLen",
                "firstKey",
                "lastKey",
                "compression",
                "encoding",
                "bloom",
                "blocks",
                "length",
                "maxSeqId",
                "timeRange"
            ]
        );
        assert_eq!(lines.get(3).map(|l| l.1.as_str()), Some("r\\x00/f:q/7/Put"));
        assert_eq!(
            lines.get(4).map(|l| l.1.as_str()),
            Some("s/f:/1/DeleteFamily")
        );
        assert_eq!(lines.get(11).map(|l| l.1.as_str()), Some("[1, 7]"));
        Ok(())
    }

    #[test]
    fn unknown_fields_are_skipped_and_missing_ones_rejected() -> Result<(), String> {
        let mut bytes = sample().encode();
        put_field(&mut bytes, 200, b"future");
        assert_eq!(FileInfo::decode(&bytes, 1234)?, sample());
        let short = bytes.get(..10).unwrap_or_default();
        assert!(FileInfo::decode(short, 1).is_err());
        for cut in 0..bytes.len() {
            let _ = FileInfo::decode(bytes.get(..cut).unwrap_or_default(), 1);
        }
        Ok(())
    }
}
