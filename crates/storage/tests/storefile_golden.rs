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

/// A version-1 file (the `none_none_row` golden file as version 1 wrote it,
/// with whole-key NONE blocks) still reads with this build.
#[test]
fn version_1_none_file_still_reads() {
    let dump = include_str!("fixtures/storefile_v1_none_row.hex");
    let mut bytes = Vec::new();
    for line in dump.lines() {
        // `offset  hex bytes  |ascii|`: the hex part sits between the offset
        // and the ASCII column.
        let hex = line.get(10..57).unwrap();
        bytes.extend(
            hex.split_whitespace()
                .map(|b| u8::from_str_radix(b, 16).unwrap()),
        );
    }
    assert_eq!(bytes.len(), 558);
    assert_eq!(bytes[bytes.len() - 12..bytes.len() - 8], 1u32.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1");
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(read_back(&path), entries());
    // Seeks too (restart points of version-1 blocks).
    let r = StoreFileReader::open(&path, None).unwrap();
    let mut it = r.scanner(false);
    let target = key::encode(b"row1", b"f", b"b", u64::MAX, CellType::Put);
    it.seek(&target).unwrap();
    assert!(it.valid());
    assert_eq!(it.value(), b"");
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
