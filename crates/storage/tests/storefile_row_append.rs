//! The store file writer's row paths (`append_row`, what a flush uses,
//! `begin_row` + `append_cell` and `begin_row` + `append_column`) write the
//! very bytes `append` writes for the same cells, and refuse what `append`
//! refuses.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::StorageError;
use ferrobase_storage::cell::CellView;
use ferrobase_storage::storefile::StoreFileWriter;
use ferrobase_types::key;
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding, FamilyDescriptor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// (row, column key, seq, value), in internal order.
type Cell = (Vec<u8>, Vec<u8>, u64, Vec<u8>);

fn cells(seed: u64) -> Vec<Cell> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for r in 0..400 {
        let row = format!("{r:064}").into_bytes();
        // Rows of 1 to 120 cells: some cross restart intervals and blocks.
        let width = if r % 7 == 0 {
            120
        } else {
            rng.random_range(1..60)
        };
        for q in 0..width {
            let mut col = Vec::new();
            let ts = 1_000 + rng.random_range(0..3);
            let t = if rng.random_bool(0.05) {
                CellType::Delete
            } else {
                CellType::Put
            };
            key::encode_column_into(&mut col, b"cf", format!("q{q:03}").as_bytes(), ts, t);
            let v: Vec<u8> = (0..rng.random_range(0..30)).map(|_| rng.random()).collect();
            out.push((row.clone(), col, 7, v));
        }
    }
    out
}

/// The row path under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    Column,
    Cell,
    Row,
}

fn family(enc: DataBlockEncoding, bloom: BloomType) -> FamilyDescriptor {
    let mut f = FamilyDescriptor::new("cf").unwrap();
    f.data_block_encoding = enc;
    f.compression = Compression::None;
    f.bloomfilter = bloom;
    f.blocksize = 4096;
    f
}

#[test]
fn row_path_writes_the_same_bytes_as_append() {
    let dir = tempfile::tempdir().unwrap();
    let cells = cells(11);
    for enc in DataBlockEncoding::ALL {
        for bloom in [BloomType::None, BloomType::Row, BloomType::RowCol] {
            let fam = family(*enc, bloom);
            let by_key = dir.path().join("by_key");
            let by_row = dir.path().join("by_row");
            let mut w = StoreFileWriter::create(&by_key, &fam, cells.len() as u64).unwrap();
            for (row, col, seq, v) in &cells {
                let mut k = Vec::new();
                key::join_into(&mut k, row, col);
                w.append(&k, *seq, v).unwrap();
            }
            let a = w.finish().unwrap();
            for path in [Path::Column, Path::Cell, Path::Row] {
                let mut w = StoreFileWriter::create(&by_row, &fam, cells.len() as u64).unwrap();
                for row_cells in cells.chunk_by(|a, b| a.0 == b.0) {
                    let row = &row_cells[0].0;
                    if path == Path::Row {
                        let views: Vec<CellView<'_>> = row_cells
                            .iter()
                            .map(|(_, col, seq, v)| {
                                let (_, q, ts, t) = key::column_parts(col).unwrap();
                                CellView {
                                    qualifier: q,
                                    timestamp: ts,
                                    kind: t,
                                    seq: *seq,
                                    value: v,
                                }
                            })
                            .collect();
                        w.append_row(row, &views).unwrap();
                        continue;
                    }
                    w.begin_row(row).unwrap();
                    for (_, col, seq, v) in row_cells {
                        if path == Path::Cell {
                            let (_, q, ts, t) = key::column_parts(col).unwrap();
                            w.append_cell(q, ts, t, *seq, v).unwrap();
                        } else {
                            w.append_column(col, *seq, v).unwrap();
                        }
                    }
                }
                let b = w.finish().unwrap();
                assert_eq!(a.entries, b.entries);
                assert!(a.blocks > 10, "{enc} {bloom:?}: {} blocks", a.blocks);
                assert_eq!(
                    std::fs::read(&by_key).unwrap(),
                    std::fs::read(&by_row).unwrap(),
                    "{enc} {bloom:?} {path:?}"
                );
            }
        }
    }
}

#[test]
fn row_path_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let fam = family(DataBlockEncoding::None, BloomType::Row);
    let mut w = StoreFileWriter::create(&dir.path().join("bad"), &fam, 10).unwrap();
    let bad = |r: Result<(), StorageError>| matches!(r, Err(StorageError::InvalidRequest(_)));
    let col = |q: &[u8], ts: u64, t: CellType| {
        let mut c = Vec::new();
        key::encode_column_into(&mut c, b"cf", q, ts, t);
        c
    };
    // A column before any row.
    assert!(bad(w.append_column(&col(b"q", 1, CellType::Put), 1, b"v")));
    w.begin_row(b"b").unwrap();
    w.append_column(&col(b"q", 5, CellType::Put), 5, b"v")
        .unwrap();
    // Earlier qualifier, newer version, higher seq of the same key, a
    // delete after a put of the same version, another family, garbage.
    assert!(bad(w.append_column(&col(b"p", 1, CellType::Put), 1, b"v")));
    assert!(bad(w.append_column(&col(b"q", 6, CellType::Put), 1, b"v")));
    assert!(bad(w.append_column(&col(b"q", 5, CellType::Put), 6, b"v")));
    assert!(bad(w.append_column(
        &col(b"q", 5, CellType::Delete),
        1,
        b"v"
    )));
    let mut other = Vec::new();
    key::encode_column_into(&mut other, b"xx", b"r", 1, CellType::Put);
    assert!(bad(w.append_column(&other, 1, b"v")));
    assert!(bad(w.append_column(b"\x09", 1, b"v")));
    // An earlier row; the same row again continues its order.
    assert!(bad(w.begin_row(b"a")));
    w.begin_row(b"b").unwrap();
    assert!(bad(w.append_column(&col(b"p", 1, CellType::Put), 1, b"v")));
    w.append_column(&col(b"r", 1, CellType::Put), 1, b"v")
        .unwrap();
    // A cell appended by key ends the row: columns need a row again.
    let k = key::encode(b"c", b"cf", b"q", 1, CellType::Put);
    w.append(&k, 1, b"v").unwrap();
    assert!(bad(w.append_column(&col(b"z", 1, CellType::Put), 1, b"v")));
    w.begin_row(b"d").unwrap();
    w.append_column(&col(b"a", 1, CellType::Put), 1, b"v")
        .unwrap();
    // By parts: an unknown type code, an earlier qualifier, then a good one.
    assert!(bad(w.append_cell(b"b", 1, 0x42, 1, b"v")));
    assert!(bad(w.append_cell(b"0", 1, CellType::Put.code(), 1, b"v")));
    w.append_cell(b"b", 1, CellType::Put.code(), 1, b"v")
        .unwrap();
    let info = w.finish().unwrap();
    assert_eq!(info.entries, 5);
}

fn view(q: &'static [u8], ts: u64, kind: u8, seq: u64) -> CellView<'static> {
    CellView {
        qualifier: q,
        timestamp: ts,
        kind,
        seq,
        value: b"v",
    }
}

#[test]
fn append_row_rejects_bad_cells_and_keeps_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let put = CellType::Put.code();
    for enc in [DataBlockEncoding::None, DataBlockEncoding::FastDiff] {
        let fam = family(enc, BloomType::Row);
        let path = dir.path().join(format!("bad-{enc}"));
        let mut w = StoreFileWriter::create(&path, &fam, 10).unwrap();
        let bad = |r: Result<(), StorageError>, what: &str| match r {
            Err(StorageError::InvalidRequest(m)) => assert!(m.contains(what), "{m}"),
            other => panic!("expected an error naming {what:?}, got {other:?}"),
        };
        // Out of order inside the row: the cells before it stay, and the
        // writer's last key is the last good cell's.
        bad(
            w.append_row(
                b"a",
                &[
                    view(b"a", 1, put, 1),
                    view(b"b", 1, put, 1),
                    view(b"a", 1, put, 1),
                ],
            ),
            "out of order after",
        );
        // The same row again continues after `b`: `a` is refused, `c` kept.
        bad(w.append_row(b"a", &[view(b"a", 1, put, 1)]), "out of order");
        w.append_row(b"a", &[view(b"c", 1, put, 1)]).unwrap();
        // Newer version of the same column after an older one; an unknown
        // type; an earlier row.
        bad(
            w.append_row(b"b", &[view(b"q", 1, put, 1), view(b"q", 2, put, 1)]),
            "out of order",
        );
        bad(
            w.append_row(b"c", &[view(b"q", 1, put, 1), view(b"r", 1, 0x42, 1)]),
            "unknown cell type code 66",
        );
        bad(w.append_row(b"b", &[view(b"z", 1, put, 1)]), "out of order");
        let info = w.finish().unwrap();
        // a/a, a/b, a/c, b/q@1, c/q.
        assert_eq!(info.entries, 5, "{enc}");
        assert_eq!(
            info.last_key,
            key::encode(b"c", b"cf", b"q", 1, CellType::Put)
        );
    }
}
