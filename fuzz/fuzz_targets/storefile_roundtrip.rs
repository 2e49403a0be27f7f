//! Encoder round trip: arbitrary cells, sorted into the internal order,
//! written by the public store file writer (any encoding, compression,
//! Bloom type and block size; by key or by row and parts) must read back
//! exactly, each key must be found by a seek, and the Bloom filter must
//! never deny a row or column the file holds.
#![no_main]

use arbitrary::Arbitrary;
use ferrobase_fuzz::cells::Kind;
use ferrobase_fuzz::mem::MemStorage;
use ferrobase_fuzz::storefile::{self, Entry};
use ferrobase_storage::iter::{CellIterator, compare_entries};
use ferrobase_storage::storefile::{StoreFileReader, StoreFileWriter};
use ferrobase_types::key::{self, KeyRef};
use ferrobase_types::{BloomType, FamilyDescriptor};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

/// Row, qualifier, timestamp, type, sequence id, value.
type ACell = (Vec<u8>, Vec<u8>, u64, Kind, u64, Vec<u8>);

#[derive(Arbitrary, Debug)]
struct Input {
    encoding: u8,
    compression: u8,
    bloom: u8,
    blocksize: u16,
    by_parts: bool,
    cells: Vec<ACell>,
}

fuzz_target!(|input: Input| {
    let mut entries: Vec<Entry> = input
        .cells
        .iter()
        .map(|(row, q, ts, kind, seq, value)| {
            let row = &row[..row.len().min(64)];
            let k = key::encode(row, b"f", q, *ts, kind.cell_type());
            (k, *seq, value.clone())
        })
        .collect();
    entries.sort_by(|a, b| compare_entries(&a.0, a.1, &b.0, b.1));
    entries.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);

    let Ok(mut family) = FamilyDescriptor::new("f") else {
        return;
    };
    family.data_block_encoding = storefile::encoding_of(input.encoding);
    family.compression = storefile::compression_of(input.compression);
    family.bloomfilter = storefile::bloom_of(input.bloom);
    family.blocksize = u32::from(input.blocksize).max(1);
    let fs = MemStorage::new();
    let path = Path::new("rt");
    let mut w = StoreFileWriter::create_on(&fs, path, &family, entries.len() as u64)
        .unwrap_or_else(|e| panic!("create: {e}"));
    let mut row: Option<Vec<u8>> = None;
    for (k, seq, value) in &entries {
        let r = if input.by_parts {
            let Some(p) = KeyRef::parse(k) else {
                panic!("a key we encoded does not parse")
            };
            if row.as_deref() != Some(p.row) {
                w.begin_row(p.row)
                    .unwrap_or_else(|e| panic!("begin_row: {e}"));
                row = Some(p.row.to_vec());
            }
            w.append_cell(p.qualifier, p.timestamp, p.type_code, *seq, value)
        } else {
            w.append(k, *seq, value)
        };
        r.unwrap_or_else(|e| panic!("the writer refused sorted input: {e}"));
    }
    w.finish().unwrap_or_else(|e| panic!("finish: {e}"));

    let reader = StoreFileReader::open_on(&fs, path, None)
        .unwrap_or_else(|e| panic!("a file the writer wrote does not open: {e}"));
    let (got, clean) = storefile::scan_all(&reader, false);
    assert!(clean, "a file the writer wrote does not scan");
    assert!(
        got == entries,
        "the file reads back {} entries, {} written",
        got.len(),
        entries.len()
    );

    let mut s = reader.scanner(false);
    for (k, _, _) in entries.iter().take(64) {
        s.seek(k).unwrap_or_else(|e| panic!("seek: {e}"));
        assert!(
            s.valid() && s.key() == &k[..],
            "a seek misses a key the file holds"
        );
        let p = KeyRef::parse(k);
        if let Some(p) = p {
            assert!(
                reader.might_contain_row(p.row),
                "the Bloom filter denies a row"
            );
            if family.bloomfilter == BloomType::RowCol {
                assert!(
                    reader.might_contain_column(p.row, p.family, p.qualifier),
                    "the Bloom filter denies a column"
                );
            }
        }
    }
});
