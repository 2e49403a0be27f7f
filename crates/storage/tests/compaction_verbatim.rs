//! A compaction that copies rows verbatim (`next_copying`: a row only one
//! input holds goes into the output as that input's bytes) writes the very
//! file the cell-by-cell merge writes, for minor and major compactions,
//! with and without TTL, over rows with versions and delete markers, rows
//! spread over several inputs, rows longer than a restart interval, and
//! block sizes that end blocks inside rows; and it does copy, where it
//! can: row-run blocks (NONE) without a ROWCOL Bloom filter.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::compaction::compactor::CompactionOutcome;
use ferrobase_storage::compaction::{CompactionKind, compact_into};
use ferrobase_storage::iter::{CellIterator, compare_entries};
use ferrobase_storage::scanner::MergingIterator;
use ferrobase_storage::storefile::{StoreFileReader, StoreFileWriter};
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding, FamilyDescriptor, key};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

/// The wall clock the compactions run at; cell timestamps lie before it.
const NOW_MS: u64 = 10_000_000;

/// A source that only forwards: it has no `next_copying` of its own, so a
/// merge of these takes the cell-by-cell path.
struct CellByCell(Box<dyn CellIterator>);

impl CellIterator for CellByCell {
    fn seek(&mut self, key: &[u8]) -> ferrobase_storage::Result<()> {
        self.0.seek(key)
    }
    fn seek_to_first(&mut self) -> ferrobase_storage::Result<()> {
        self.0.seek_to_first()
    }
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn key(&self) -> &[u8] {
        self.0.key()
    }
    fn seq(&self) -> u64 {
        self.0.seq()
    }
    fn value(&self) -> &[u8] {
        self.0.value()
    }
    fn next(&mut self) -> ferrobase_storage::Result<()> {
        self.0.next()
    }
    fn row_kept(&self) -> bool {
        self.0.row_kept()
    }
}

/// Entries of input file `file` of `files`: most rows belong to one file
/// (a load of distinct rows), every fifth to all of them. Rows are 1 to
/// 150 cells wide; some columns have older versions, some cells are delete
/// markers, timestamps spread over the last 20 seconds.
fn entries(file: u64, files: u64, rng: &mut ChaCha8Rng) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    let mut out = Vec::new();
    for r in 0..240u64 {
        if r % 5 != 0 && r % files != file {
            continue;
        }
        let row = format!("{r:032}").into_bytes();
        if rng.random_bool(0.05) {
            let ts = NOW_MS - rng.random_range(0..20_000);
            out.push((
                key::encode(&row, b"cf", b"", ts, CellType::DeleteFamily),
                0,
                Vec::new(),
            ));
        }
        let width = if r % 11 == 0 {
            150
        } else {
            rng.random_range(1..60)
        };
        for q in 0..width {
            let qualifier = format!("q{q:03}").into_bytes();
            let versions = if rng.random_bool(0.1) { 3 } else { 1 };
            for _ in 0..versions {
                let ts = NOW_MS - rng.random_range(0..20_000);
                let t = match rng.random_range(0..40) {
                    0 => CellType::Delete,
                    1 => CellType::DeleteColumn,
                    _ => CellType::Put,
                };
                let v: Vec<u8> = (0..rng.random_range(0..40)).map(|_| rng.random()).collect();
                out.push((key::encode(&row, b"cf", &qualifier, ts, t), 0, v));
            }
        }
    }
    for (i, e) in out.iter_mut().enumerate() {
        e.1 = file * 1_000_000 + i as u64;
    }
    out.sort_by(|a, b| compare_entries(&a.0, a.1, &b.0, b.1));
    // A file holds each key once.
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

fn family(encoding: DataBlockEncoding, bloom: BloomType, blocksize: u32) -> FamilyDescriptor {
    let mut f = FamilyDescriptor::new("cf").unwrap();
    f.data_block_encoding = encoding;
    f.compression = Compression::None;
    f.bloomfilter = bloom;
    f.blocksize = blocksize;
    f.versions = 2;
    f
}

fn write_inputs(dir: &Path, fam: &FamilyDescriptor, seed: u64) -> Vec<Arc<StoreFileReader>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..3)
        .map(|i| {
            let path = dir.join(format!("in{i}"));
            let mut w = StoreFileWriter::create(&path, fam, 0).unwrap();
            for (k, s, v) in entries(i, 3, &mut rng) {
                w.append(&k, s, &v).unwrap();
            }
            w.finish().unwrap();
            StoreFileReader::open(&path, None).unwrap()
        })
        .collect()
}

/// Compacts `inputs` into `out`; `copying`: through the store file
/// scanners themselves, else through [`CellByCell`] wrappers.
fn compact(
    inputs: &[Arc<StoreFileReader>],
    fam: &FamilyDescriptor,
    kind: CompactionKind,
    out: &Path,
    copying: bool,
) -> CompactionOutcome {
    let sources: Vec<Box<dyn CellIterator>> = inputs
        .iter()
        .map(|r| {
            let s: Box<dyn CellIterator> = Box::new(r.scanner(false));
            if copying {
                s
            } else {
                Box::new(CellByCell(s)) as Box<dyn CellIterator>
            }
        })
        .collect();
    let mut merged = MergingIterator::new(sources);
    let mut w = StoreFileWriter::create(out, fam, 0).unwrap();
    let mut paced = 0u64;
    let outcome = compact_into(&mut merged, &mut w, fam, (kind, NOW_MS), &mut |b| {
        paced += b;
        Ok(())
    })
    .unwrap();
    w.finish().unwrap();
    assert!(paced > 0);
    outcome
}

#[test]
fn verbatim_rows_write_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0;
    for (encoding, bloom, copies) in [
        (DataBlockEncoding::None, BloomType::Row, true),
        (DataBlockEncoding::None, BloomType::None, true),
        (DataBlockEncoding::None, BloomType::RowCol, false),
        (DataBlockEncoding::FastDiff, BloomType::Row, false),
    ] {
        for blocksize in [300, 4096, 65536] {
            for ttl in [None, Some(12)] {
                seed += 1;
                let mut fam = family(encoding, bloom, blocksize);
                fam.ttl_seconds = ttl;
                let inputs = write_inputs(dir.path(), &fam, seed);
                for kind in [CompactionKind::Minor, CompactionKind::Major] {
                    let what = format!("{encoding} {bloom:?} {blocksize} {ttl:?} {kind:?}");
                    let (a, b) = (dir.path().join("cells"), dir.path().join("copied"));
                    let by_cell = compact(&inputs, &fam, kind, &a, false);
                    let copied = compact(&inputs, &fam, kind, &b, true);
                    assert_eq!(by_cell.verbatim, 0, "{what}");
                    assert_eq!(
                        (by_cell.read, by_cell.written),
                        (copied.read, copied.written),
                        "{what}"
                    );
                    if copies {
                        // Most cells are of rows one input holds.
                        assert!(copied.verbatim * 6 > copied.written, "{what}: {copied:?}");
                    } else {
                        assert_eq!(copied.verbatim, 0, "{what}");
                    }
                    assert!(
                        std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
                        "{what}: the files differ"
                    );
                }
            }
        }
    }
}

/// A source copies nothing into a writer whose last entry is not the
/// source's current one (another cell, or the same cell with another
/// sequence id), and copies the rest of the row when it is.
#[test]
fn copying_needs_the_writers_last_entry_to_be_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let fam = family(DataBlockEncoding::None, BloomType::Row, 65536);
    let src = dir.path().join("src");
    let mut w = StoreFileWriter::create(&src, &fam, 0).unwrap();
    let row = b"row".as_slice();
    for q in 0..10u8 {
        w.append(
            &key::encode(row, b"cf", &[b'a' + q], 5, CellType::Put),
            9,
            b"v",
        )
        .unwrap();
    }
    w.finish().unwrap();
    let reader = StoreFileReader::open(&src, None).unwrap();
    let put = CellType::Put.code();
    for (qualifier, seq, copies) in [(b"b", 9, 0), (b"a", 8, 0), (b"a", 9, 9)] {
        let mut s = reader.scanner(false);
        s.seek_to_first().unwrap();
        let mut out = StoreFileWriter::create(&dir.path().join("out"), &fam, 0).unwrap();
        out.begin_row(row).unwrap();
        out.append_cell(qualifier, 5, put, seq, b"v").unwrap();
        let copied = s.next_copying(&mut out, 0).unwrap();
        assert_eq!(copied.entries, copies, "{qualifier:?} {seq}");
        // Either way the source moved past the cell the writer has.
        assert!(s.valid() != (copies == 9));
        if copies == 0 {
            assert_eq!(key::row_of(s.key()), Some(row));
        }
    }
}
