//! Golden bytes: tiny store files written from fixed input must stay
//! byte-identical, so any change to the on-disk format (frames, encodings,
//! Bloom hash, index, file info, trailer) shows up as a snapshot diff and
//! is made on purpose, with a FORMAT_VERSION decision.
//!
//! The snapshots live in `tests/snapshots/` and are committed; CI runs with
//! `INSTA_UPDATE=no`. After an intended format change, regenerate them with
//! `INSTA_UPDATE=always cargo test -p ferrobase-storage --test storefile_golden`
//! and review the diff.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::iter::CellIterator;
use ferrobase_storage::storefile::{StoreFileReader, StoreFileWriter};
use ferrobase_types::key;
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding, FamilyDescriptor};
use std::fmt::Write;

fn entries() -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    vec![
        (
            key::encode(b"row\x00\xff", b"f", b"", 5, CellType::Put),
            9,
            b"\x00\x01".to_vec(),
        ),
        (
            key::encode(b"row1", b"f", b"a", 1000, CellType::Put),
            7,
            b"v1".to_vec(),
        ),
        (
            key::encode(b"row1", b"f", b"a", 900, CellType::Put),
            5,
            b"v0".to_vec(),
        ),
        (
            key::encode(b"row1", b"f", b"b", 1000, CellType::DeleteColumn),
            8,
            Vec::new(),
        ),
        (
            key::encode(b"row2", b"f", b"a", 1000, CellType::Put),
            9,
            b"value".to_vec(),
        ),
    ]
}

fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let ascii: String = chunk
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() || b == b' ' {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        writeln!(out, "{:08x}  {:<47}  |{ascii}|", i * 16, hex.join(" ")).unwrap();
    }
    out
}

/// Every entry of a store file, in order.
fn read_back(path: &std::path::Path) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    let r = StoreFileReader::open(path, None).unwrap();
    let mut it = r.scanner(false);
    it.seek_to_first().unwrap();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.seq(), it.value().to_vec()));
        it.next().unwrap();
    }
    got
}

fn golden(enc: DataBlockEncoding, bloom: BloomType) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("golden");
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.data_block_encoding = enc;
    f.compression = Compression::None;
    f.bloomfilter = bloom;
    // Small blocks so the file has several blocks and a real index.
    f.blocksize = 32;
    let mut w = StoreFileWriter::create(&path, &f, 5).unwrap();
    for (k, s, v) in entries() {
        w.append(&k, s, &v).unwrap();
    }
    let info = w.finish().unwrap();
    assert!(info.blocks >= 2, "{enc}: {} blocks", info.blocks);

    // The golden file must also read back.
    assert_eq!(read_back(&path), entries());

    let mut text = String::new();
    for (k, v) in info.describe() {
        writeln!(text, "{k}={v}").unwrap();
    }
    text.push('\n');
    text.push_str(&hex_dump(&std::fs::read(&path).unwrap()));
    text
}

#[test]
fn none_none_row_bloom() {
    insta::assert_snapshot!(
        "none_none_row",
        golden(DataBlockEncoding::None, BloomType::Row)
    );
}

/// The bytes of a hex-dump fixture (`offset  hex bytes  |ascii|` lines).
fn fixture(dump: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    for line in dump.lines() {
        // The hex part sits between the offset and the ASCII column.
        let hex = line.get(10..57).unwrap();
        bytes.extend(
            hex.split_whitespace()
                .map(|b| u8::from_str_radix(b, 16).unwrap()),
        );
    }
    bytes
}

/// An older version's `none_none_row` golden file reads with this build:
/// every entry, and a seek through its restart points.
fn older_none_file_reads(bytes: &[u8], len: usize, version: u32) {
    assert_eq!(bytes.len(), len);
    assert_eq!(
        bytes[bytes.len() - 12..bytes.len() - 8],
        version.to_le_bytes()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("v{version}"));
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(read_back(&path), entries());
    let r = StoreFileReader::open(&path, None).unwrap();
    let mut it = r.scanner(false);
    let target = key::encode(b"row1", b"f", b"b", u64::MAX, CellType::Put);
    it.seek(&target).unwrap();
    assert!(it.valid());
    assert_eq!(it.value(), b"");
}

/// Version 1 wrote NONE blocks with whole keys (block code 0).
#[test]
fn version_1_none_file_still_reads() {
    let bytes = fixture(include_str!("fixtures/storefile_v1_none_row.hex"));
    older_none_file_reads(&bytes, 558, 1);
}

/// Version 2 wrote NONE blocks row-shared (block code 5).
#[test]
fn version_2_none_file_still_reads() {
    let bytes = fixture(include_str!("fixtures/storefile_v2_none_row.hex"));
    older_none_file_reads(&bytes, 564, 2);
}

#[test]
fn every_encoding_is_pinned() {
    for (name, enc) in [
        ("prefix", DataBlockEncoding::Prefix),
        ("diff", DataBlockEncoding::Diff),
        ("fast_diff", DataBlockEncoding::FastDiff),
        ("row_index_v1", DataBlockEncoding::RowIndexV1),
    ] {
        insta::assert_snapshot!(
            format!("{name}_none_rowcol"),
            golden(enc, BloomType::RowCol)
        );
    }
}
