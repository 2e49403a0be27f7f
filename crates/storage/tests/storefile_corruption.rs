//! Damaged store files: every single-byte flip and every truncation of
//! small files, garbage and empty files. Opening plus a full scan (and a few
//! seeks) must give either exactly the original data or a `Corrupt` error
//! naming the file and an offset — never a panic, never different data.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::StorageError;
use ferrobase_storage::iter::CellIterator;
use ferrobase_storage::storefile::{StoreFileReader, StoreFileWriter};
use ferrobase_types::key;
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding, FamilyDescriptor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

type Entry = (Vec<u8>, u64, Vec<u8>);

fn entries() -> Vec<Entry> {
    let mut out = Vec::new();
    for r in 0..12u8 {
        let row = [b'r', b'0' + r / 10, b'0' + r % 10, 0xfe];
        for q in 0..3u8 {
            for ts in [20u64, 10] {
                let t = if (r + q) % 5 == 0 {
                    CellType::Delete
                } else {
                    CellType::Put
                };
                let k = key::encode(&row, b"f", &[b'q', q], ts, t);
                out.push((
                    k,
                    u64::from(r) * 10 + u64::from(q),
                    vec![b'a' + q; usize::from(r % 4) * 5],
                ));
            }
        }
    }
    out
}

fn write(path: &Path, enc: DataBlockEncoding, comp: Compression, bloom: BloomType) -> Vec<u8> {
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.data_block_encoding = enc;
    f.compression = comp;
    f.bloomfilter = bloom;
    f.blocksize = 256;
    let mut w = StoreFileWriter::create(path, &f, 100).unwrap();
    for (k, s, v) in entries() {
        w.append(&k, s, &v).unwrap();
    }
    w.finish().unwrap();
    std::fs::read(path).unwrap()
}

/// Open, scan everything, seek a few times.
fn read_back(path: &Path) -> Result<Vec<Entry>, StorageError> {
    let r = StoreFileReader::open(path, None)?;
    let mut it = r.scanner(false);
    it.seek_to_first()?;
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.seq(), it.value().to_vec()));
        it.next()?;
    }
    for row in [&b"r05\xfe"[..], b"r11\xfe", b"zz"] {
        it.seek(&key::first_on_row(row))?;
        let _ = r.might_contain_row(row);
        let _ = r.might_contain_column(row, b"f", b"q\x01");
    }
    Ok(got)
}

/// The outcome must be the original data or a well-formed `Corrupt` error.
fn check(path: &Path, original: &[Entry], what: &str) -> bool {
    match read_back(path) {
        Ok(got) => {
            assert_eq!(
                got, original,
                "{what}: damaged file read back different data"
            );
            false
        }
        Err(e @ StorageError::Corrupt { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&path.display().to_string()), "{what}: {msg}");
            assert!(msg.contains("at offset"), "{what}: {msg}");
            true
        }
        Err(e) => panic!("{what}: expected Corrupt, got {e:?}"),
    }
}

fn combos() -> [(DataBlockEncoding, Compression, BloomType); 4] {
    [
        (DataBlockEncoding::None, Compression::None, BloomType::Row),
        (
            DataBlockEncoding::FastDiff,
            Compression::Snappy,
            BloomType::RowCol,
        ),
        (DataBlockEncoding::Diff, Compression::Zstd, BloomType::None),
        (
            DataBlockEncoding::RowIndexV1,
            Compression::Gz,
            BloomType::Row,
        ),
    ]
}

#[test]
fn every_single_byte_flip_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let original = entries();
    for (enc, comp, bloom) in combos() {
        let good = dir.path().join(format!("good-{enc}-{comp}"));
        let bytes = write(&good, enc, comp, bloom);
        assert_eq!(read_back(&good).unwrap(), original);
        let bad = dir.path().join(format!("bad-{enc}-{comp}"));
        let mut detected = 0;
        let mut harmless = 0;
        // The format version (trailer bytes 60..64) is outside the trailer
        // checksum: a flip naming another version this build reads changes
        // nothing for encodings whose layout never changed (all but NONE),
        // and such a file must read back exactly (`check`).
        let version = bytes.len() - 12..bytes.len() - 8;
        for i in 0..bytes.len() {
            for mask in [0x01u8, 0xff] {
                let mut b = bytes.clone();
                b[i] ^= mask;
                std::fs::write(&bad, &b).unwrap();
                let caught = check(
                    &bad,
                    &original,
                    &format!("{enc}/{comp} flip {i} ^{mask:#x}"),
                );
                detected += usize::from(caught);
                harmless += usize::from(!caught && version.contains(&i));
            }
        }
        // Everything else is checksummed, so every other flip is caught;
        // NONE blocks say which version wrote them, so there even a version
        // flip is.
        assert_eq!(detected + harmless, 2 * bytes.len(), "{enc}/{comp}");
        if enc == DataBlockEncoding::None {
            assert_eq!(harmless, 0);
        }
    }
}

#[test]
fn every_truncation_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let original = entries();
    for (enc, comp, bloom) in combos() {
        let bytes = write(&dir.path().join("good"), enc, comp, bloom);
        let bad = dir.path().join("truncated");
        for len in 0..bytes.len() {
            std::fs::write(&bad, &bytes[..len]).unwrap();
            assert!(check(
                &bad,
                &original,
                &format!("{enc}/{comp} truncated to {len}")
            ));
        }
        // Appended bytes are caught too (the trailer must end the file).
        let mut longer = bytes.clone();
        longer.extend_from_slice(b"extra");
        std::fs::write(&bad, &longer).unwrap();
        assert!(check(&bad, &original, "extended"));
    }
}

#[test]
fn garbage_and_empty_files_are_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage");
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let good = write(
        &dir.path().join("good"),
        DataBlockEncoding::Prefix,
        Compression::Lz4,
        BloomType::Row,
    );
    let tail = &good[good.len() - 12..];
    for n in [0usize, 1, 8, 71, 72, 73, 100, 1000, 5000] {
        for with_tail in [false, true] {
            let mut b: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            if with_tail && n >= 12 {
                // A valid version and magic on garbage: the CRC still catches it.
                let at = n - 12;
                b[at..].copy_from_slice(tail);
            }
            std::fs::write(&path, &b).unwrap();
            assert!(check(&path, &[], &format!("garbage {n} {with_tail}")));
        }
    }
}

#[test]
fn unknown_version_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4");
    let mut b = write(
        &path,
        DataBlockEncoding::None,
        Compression::None,
        BloomType::None,
    );
    let at = b.len() - 12;
    b[at..at + 4].copy_from_slice(&4u32.to_le_bytes());
    std::fs::write(&path, &b).unwrap();
    let e = StoreFileReader::open(&path, None).unwrap_err().to_string();
    assert!(e.contains("unsupported store file format version 4"), "{e}");
    assert!(e.contains(&path.display().to_string()), "{e}");
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = StoreFileReader::open(&dir.path().join("nope"), None).unwrap_err();
    assert!(matches!(e, StorageError::Io { .. }), "{e:?}");
}
