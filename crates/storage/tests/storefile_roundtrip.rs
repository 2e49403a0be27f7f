//! Store files round-trip: every DATA_BLOCK_ENCODING × COMPRESSION ×
//! BLOOMFILTER combination writes a few thousand entries and reads them back
//! by full scan and by random seeks, compared with a sorted Vec model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::StorageError;
use ferrobase_storage::cache::BlockCache;
use ferrobase_storage::iter::{CellIterator, compare_entries};
use ferrobase_storage::storefile::{StoreFileReader, StoreFileWriter};
use ferrobase_types::key::{self, KeyRef};
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding, FamilyDescriptor};
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use std::sync::Arc;

type Entry = (Vec<u8>, u64, Vec<u8>);

const FAMILY: &str = "cf";

/// Rows with binary bytes, several qualifiers and versions, some deletes,
/// sorted in internal order.
fn model(seed: u64, rows: usize) -> Vec<Entry> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let types = [
        CellType::Delete,
        CellType::DeleteColumn,
        CellType::DeleteFamily,
        CellType::DeleteFamilyVersion,
    ];
    for r in 0..rows {
        let mut row = format!("user{:06}", r * 7).into_bytes();
        if r % 5 == 0 {
            row.extend_from_slice(&[0, 0xff, r as u8]);
        }
        for q in 0..rng.random_range(1..6) {
            let qual: Vec<u8> = if q == 0 {
                Vec::new()
            } else {
                vec![b'q', q as u8, 0x80]
            };
            for v in 0..rng.random_range(1..4u64) {
                let ts = 1_700_000_000_000 + rng.random_range(0..1000) * 10 - v;
                let t = if rng.random_bool(0.08) {
                    *types.choose(&mut rng).unwrap()
                } else {
                    CellType::Put
                };
                let len = if rng.random_bool(0.05) {
                    rng.random_range(200..3000)
                } else {
                    rng.random_range(0..40)
                };
                let value: Vec<u8> = (0..len)
                    .map(|i| if i % 3 == 0 { rng.random() } else { b'v' })
                    .collect();
                let k = key::encode(&row, FAMILY.as_bytes(), &qual, ts, t);
                out.push((k, rng.random_range(1..100_000), value));
            }
        }
    }
    out.sort_by(|a, b| compare_entries(&a.0, a.1, &b.0, b.1));
    out.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    out
}

fn family(
    enc: DataBlockEncoding,
    comp: Compression,
    bloom: BloomType,
    blocksize: u32,
) -> FamilyDescriptor {
    let mut f = FamilyDescriptor::new(FAMILY).unwrap();
    f.data_block_encoding = enc;
    f.compression = comp;
    f.bloomfilter = bloom;
    f.blocksize = blocksize;
    f
}

fn write(
    path: &Path,
    fam: &FamilyDescriptor,
    entries: &[Entry],
) -> ferrobase_storage::storefile::FileInfo {
    let mut w = StoreFileWriter::create(path, fam, entries.len() as u64).unwrap();
    for (k, s, v) in entries {
        w.append(k, *s, v).unwrap();
    }
    assert_eq!(w.entries(), entries.len() as u64);
    w.finish().unwrap()
}

fn scan_all(r: &Arc<StoreFileReader>, cache_blocks: bool) -> Vec<Entry> {
    let mut it = r.scanner(cache_blocks);
    it.seek_to_first().unwrap();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.seq(), it.value().to_vec()));
        it.next().unwrap();
    }
    got
}

/// Index of the first model entry with key ≥ target.
fn expected_seek(entries: &[Entry], target: &[u8]) -> usize {
    entries.partition_point(|e| key::compare(&e.0, target) == std::cmp::Ordering::Less)
}

fn check_seeks(r: &Arc<StoreFileReader>, entries: &[Entry], rng: &mut ChaCha8Rng, what: &str) {
    let mut it = r.scanner(true);
    for _ in 0..150 {
        let e = entries.choose(rng).unwrap();
        let k = KeyRef::parse(&e.0).unwrap();
        let targets = [
            e.0.clone(),
            key::first_on_row(k.row),
            key::first_on_column(k.row, k.family, k.qualifier),
            key::first_on_row(&[k.row, b"\x00"].concat()),
            key::encode(
                k.row,
                k.family,
                k.qualifier,
                k.timestamp.wrapping_sub(1),
                CellType::Put,
            ),
        ];
        for t in &targets {
            it.seek(t).unwrap();
            let i = expected_seek(entries, t);
            match entries.get(i) {
                Some((ek, es, ev)) => {
                    assert!(it.valid(), "{what}: seek lost");
                    assert_eq!(
                        (it.key(), it.seq(), it.value()),
                        (ek.as_slice(), *es, ev.as_slice()),
                        "{what}"
                    );
                    // A few nexts after the seek continue in order.
                    for j in 1..4 {
                        it.next().unwrap();
                        match entries.get(i + j) {
                            Some(n) => {
                                assert_eq!((it.key(), it.seq()), (n.0.as_slice(), n.1), "{what}")
                            }
                            None => assert!(!it.valid()),
                        }
                    }
                }
                None => assert!(!it.valid(), "{what}: seek past the end must be invalid"),
            }
        }
    }
    it.seek(&key::first_on_row(b"\xff\xff")).unwrap();
    assert!(!it.valid());
    it.seek(&key::first_on_row(b"")).unwrap();
    assert_eq!(it.key(), entries[0].0.as_slice());
}

#[test]
fn every_combination_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let entries = model(42, 700);
    assert!(entries.len() > 2000, "{}", entries.len());
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let rows: Vec<&[u8]> = {
        let mut r: Vec<&[u8]> = entries.iter().map(|e| key::row_of(&e.0).unwrap()).collect();
        r.dedup();
        r
    };
    for enc in DataBlockEncoding::ALL {
        for comp in Compression::ALL {
            for bloom in BloomType::ALL {
                let what = format!("{enc}/{comp}/{bloom}");
                let path = dir.path().join(format!("{enc}-{comp}-{bloom}"));
                let fam = family(*enc, *comp, *bloom, 4096);
                let info = write(&path, &fam, &entries);
                let cache = Arc::new(BlockCache::new(1 << 20));
                let r = StoreFileReader::open(&path, Some(cache.clone())).unwrap();
                assert_eq!(r.info(), &info, "{what}");
                assert_eq!(r.size(), std::fs::metadata(&path).unwrap().len());
                assert_eq!(info.length, r.size());
                assert_eq!(info.entries, entries.len() as u64);
                assert_eq!(info.first_key, entries[0].0);
                assert_eq!(info.last_key, entries.last().unwrap().0);
                assert_eq!(info.max_seq_id, entries.iter().map(|e| e.1).max().unwrap());
                assert_eq!(info.min_seq_id, entries.iter().map(|e| e.1).min().unwrap());
                let ts = |e: &Entry| KeyRef::parse(&e.0).unwrap().timestamp;
                assert_eq!(info.min_timestamp, entries.iter().map(ts).min().unwrap());
                assert_eq!(info.max_timestamp, entries.iter().map(ts).max().unwrap());
                let deletes = entries
                    .iter()
                    .filter(|e| KeyRef::parse(&e.0).unwrap().type_code != CellType::Put.code());
                assert_eq!(info.delete_markers, deletes.count() as u64);
                assert_eq!(
                    info.avg_key_len,
                    entries.iter().map(|e| e.0.len() as u64).sum::<u64>() / info.entries
                );
                assert_eq!(
                    info.avg_value_len,
                    entries.iter().map(|e| e.2.len() as u64).sum::<u64>() / info.entries
                );
                assert_eq!(
                    (info.compression, info.encoding, info.bloom),
                    (*comp, *enc, *bloom)
                );
                assert_eq!(info.family, FAMILY);
                assert!(info.blocks > 10, "{what}: {} blocks", info.blocks);

                assert_eq!(scan_all(&r, true), entries, "{what}");
                check_seeks(&r, &entries, &mut rng, &what);

                for row in &rows {
                    assert!(r.might_contain_row(row), "{what}: Bloom false negative");
                }
                for e in &entries {
                    let k = KeyRef::parse(&e.0).unwrap();
                    assert!(
                        r.might_contain_column(k.row, k.family, k.qualifier),
                        "{what}"
                    );
                }
                let absent = (0..2000)
                    .filter(|i| r.might_contain_row(format!("nobody{i}").as_bytes()))
                    .count();
                let absent_cols = (0..2000)
                    .filter(|i| {
                        r.might_contain_column(
                            rows[i % rows.len()],
                            b"cf",
                            format!("zz{i}").as_bytes(),
                        )
                    })
                    .count();
                match bloom {
                    BloomType::None => assert_eq!((absent, absent_cols), (2000, 2000)),
                    BloomType::Row => {
                        assert!(absent < 100 && absent_cols == 2000, "{what}: {absent}")
                    }
                    BloomType::RowCol => assert!(
                        absent < 100 && absent_cols < 100,
                        "{what}: {absent} {absent_cols}"
                    ),
                }
            }
        }
    }
}

#[test]
fn block_cache_is_filled_used_and_evicted() {
    let dir = tempfile::tempdir().unwrap();
    let entries = model(3, 300);
    let path = dir.path().join("f");
    let fam = family(
        DataBlockEncoding::FastDiff,
        Compression::Lz4,
        BloomType::Row,
        2048,
    );
    let info = write(&path, &fam, &entries);
    let cache = Arc::new(BlockCache::new(64 << 20));
    let r = StoreFileReader::open(&path, Some(cache.clone())).unwrap();

    // A compaction-style scan does not fill the cache.
    assert_eq!(scan_all(&r, false), entries);
    assert_eq!(cache.stats().inserts, 0);
    assert_eq!(cache.stats().misses, info.blocks);

    // A cached scan fills it; the next scan (even a non-caching one) hits.
    assert_eq!(scan_all(&r, true), entries);
    assert_eq!(cache.stats().entries, info.blocks);
    let before = cache.stats().hits;
    assert_eq!(scan_all(&r, false), entries);
    assert_eq!(cache.stats().hits - before, info.blocks);
    assert!(
        cache.stats().size_bytes >= info.uncompressed_bytes,
        "caches decompressed blocks"
    );

    // Two readers of the same path have distinct ids; evicting one leaves the other.
    let r2 = StoreFileReader::open(&path, Some(cache.clone())).unwrap();
    assert_ne!(r.id(), r2.id());
    assert_eq!(scan_all(&r2, true), entries);
    r.evict_from_cache();
    assert_eq!(cache.stats().entries, info.blocks);
    assert_eq!(cache.stats().invalidations, info.blocks);
    cache.evict_file(r2.id());
    assert_eq!(cache.stats().entries, 0);
}

#[test]
fn same_key_versions_spanning_blocks_seek_to_the_newest() {
    let dir = tempfile::tempdir().unwrap();
    let k = key::encode(b"row", FAMILY.as_bytes(), b"q", 5, CellType::Put);
    let before = key::encode(b"row", FAMILY.as_bytes(), b"a", 5, CellType::Put);
    let mut entries = vec![(before, 1000, b"x".to_vec())];
    for seq in (1..200).rev() {
        entries.push((k.clone(), seq, vec![seq as u8; 30]));
    }
    for enc in DataBlockEncoding::ALL {
        let path = dir.path().join(format!("v-{enc}"));
        let info = write(
            &path,
            &family(*enc, Compression::None, BloomType::RowCol, 256),
            &entries,
        );
        assert!(info.blocks > 5);
        let r = StoreFileReader::open(&path, None).unwrap();
        let mut it = r.scanner(false);
        it.seek(&k).unwrap();
        assert_eq!((it.key(), it.seq()), (k.as_slice(), 199), "{enc}");
        assert_eq!(scan_all(&r, false), entries, "{enc}");
    }
}

#[test]
fn empty_file_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    for bloom in BloomType::ALL {
        let path = dir.path().join(format!("empty-{bloom}"));
        let info = write(
            &path,
            &family(DataBlockEncoding::Diff, Compression::Zstd, *bloom, 65536),
            &[],
        );
        let r = StoreFileReader::open(&path, None).unwrap();
        assert_eq!(r.info(), &info);
        assert_eq!((info.entries, info.blocks, info.first_key.len()), (0, 0, 0));
        assert!(scan_all(&r, true).is_empty());
        let mut it = r.scanner(true);
        it.seek(&key::first_on_row(b"a")).unwrap();
        assert!(!it.valid());
        assert_eq!(r.might_contain_row(b"a"), *bloom == BloomType::None);
        let lines = info.describe();
        assert_eq!(lines[0], ("entries", "0".to_string()));
    }
}

#[test]
fn writer_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let fam = family(
        DataBlockEncoding::Prefix,
        Compression::None,
        BloomType::Row,
        65536,
    );
    let mut w = StoreFileWriter::create(&dir.path().join("bad"), &fam, 10).unwrap();
    let b = key::encode(b"b", b"cf", b"q", 1, CellType::Put);
    let a = key::encode(b"a", b"cf", b"q", 1, CellType::Put);
    w.append(&b, 5, b"v").unwrap();
    // Same key: lower seq may follow, higher may not.
    w.append(&b, 4, b"v").unwrap();
    let is_bad_request =
        |r: Result<(), StorageError>| matches!(r, Err(StorageError::InvalidRequest(_)));
    assert!(is_bad_request(w.append(&b, 6, b"v")));
    assert!(is_bad_request(w.append(&a, 9, b"v")));
    assert!(is_bad_request(w.append(b"garbage", 9, b"v")));
    assert!(is_bad_request(w.append(
        &key::encode(b"c", b"other", b"q", 1, CellType::Put),
        9,
        b"v"
    )));
    // Within the row: an earlier qualifier, a newer timestamp of the same
    // column, and a delete after a put of the same version are out of order.
    let k = |q: &[u8], ts: u64, t: CellType| key::encode(b"b", b"cf", q, ts, t);
    assert!(is_bad_request(w.append(
        &k(b"p", 1, CellType::Put),
        1,
        b"v"
    )));
    assert!(is_bad_request(w.append(
        &k(b"q", 2, CellType::Put),
        1,
        b"v"
    )));
    assert!(is_bad_request(w.append(
        &k(b"q", 1, CellType::Delete),
        1,
        b"v"
    )));
    // In order again: an older version, a later qualifier, a later row.
    w.append(&k(b"q", 0, CellType::Put), 1, b"v").unwrap();
    w.append(&k(b"r", 9, CellType::Put), 1, b"v").unwrap();
    w.append(&key::encode(b"c", b"cf", b"a", 1, CellType::Put), 1, b"v")
        .unwrap();
    assert!(is_bad_request(w.append(
        &k(b"z", 1, CellType::Put),
        1,
        b"v"
    )));
    assert_eq!(w.entries(), 5);
    let info = w.finish().unwrap();
    assert_eq!(info.entries, 5);
}

#[test]
fn describe_prints_hbase_style_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d");
    let entries = vec![
        (
            key::encode(b"r\x01", b"cf", b"q", 7, CellType::Put),
            3,
            b"v".to_vec(),
        ),
        (
            key::encode(b"s", b"cf", b"", 9, CellType::DeleteFamily),
            4,
            Vec::new(),
        ),
    ];
    let info = write(
        &path,
        &family(
            DataBlockEncoding::None,
            Compression::Gz,
            BloomType::Row,
            65536,
        ),
        &entries,
    );
    let lines: Vec<String> = info
        .describe()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    assert_eq!(
        lines,
        [
            "entries=2",
            "avgKeyLen=16",
            "avgValueLen=0",
            "firstKey=r\\x01/cf:q/7/Put",
            "lastKey=s/cf:/9/DeleteFamily",
            "compression=GZ",
            "encoding=NONE",
            "bloom=ROW",
            "blocks=1",
            &format!("length={}", std::fs::metadata(&path).unwrap().len()),
            "maxSeqId=4",
            "timeRange=[7, 9]",
        ]
    );
}

#[test]
fn concurrent_scanners_share_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let entries = Arc::new(model(11, 300));
    let path = dir.path().join("c");
    write(
        &path,
        &family(
            DataBlockEncoding::RowIndexV1,
            Compression::Snappy,
            BloomType::Row,
            1024,
        ),
        &entries,
    );
    let r = StoreFileReader::open(&path, Some(Arc::new(BlockCache::new(1 << 16)))).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (r, entries) = (r.clone(), entries.clone());
            std::thread::spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(t);
                assert_eq!(scan_all(&r, true), *entries);
                check_seeks(&r, &entries, &mut rng, "threads");
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn arb_entry() -> impl Strategy<Value = Entry> {
        let bytes = |max| {
            proptest::collection::vec(
                prop_oneof![Just(0u8), Just(0xff), Just(b'a'), any::<u8>()],
                0..max,
            )
        };
        let ts = prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            Just(1_700_000_000_000),
            any::<u64>()
        ];
        let seq = prop_oneof![Just(0u64), Just(u64::MAX), 0u64..5, any::<u64>()];
        let t = prop_oneof![
            Just(CellType::Put),
            Just(CellType::Delete),
            Just(CellType::DeleteFamily)
        ];
        (bytes(6), bytes(4), ts, t, seq, bytes(50)).prop_map(|(row, q, ts, t, seq, v)| {
            (key::encode(&row, FAMILY.as_bytes(), &q, ts, t), seq, v)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn any_sorted_input_round_trips(
            mut entries in proptest::collection::vec(arb_entry(), 1..300),
            enc in proptest::sample::select(DataBlockEncoding::ALL),
            comp in proptest::sample::select(Compression::ALL),
            bloom in proptest::sample::select(BloomType::ALL),
            blocksize in prop_oneof![Just(1u32), 64u32..512, Just(65536)],
            probes in proptest::collection::vec(arb_entry(), 10),
        ) {
            entries.sort_by(|a, b| compare_entries(&a.0, a.1, &b.0, b.1));
            entries.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p");
            let info = write(&path, &family(enc, comp, bloom, blocksize), &entries);
            let r = StoreFileReader::open(&path, Some(Arc::new(BlockCache::new(1 << 20)))).unwrap();
            prop_assert_eq!(r.info(), &info);
            prop_assert_eq!(scan_all(&r, true), entries.clone());
            let mut it = r.scanner(true);
            for t in probes.iter().map(|p| &p.0).chain(entries.iter().map(|e| &e.0)) {
                it.seek(t).unwrap();
                match entries.get(expected_seek(&entries, t)) {
                    Some(e) => prop_assert_eq!((it.key(), it.seq(), it.value()), (e.0.as_slice(), e.1, e.2.as_slice())),
                    None => prop_assert!(!it.valid()),
                }
            }
            for e in &entries {
                let k = KeyRef::parse(&e.0).unwrap();
                prop_assert!(r.might_contain_row(k.row));
                prop_assert!(r.might_contain_column(k.row, k.family, k.qualifier));
            }
        }
    }
}

/// Throughput smoke run, printed only (no timing assertions):
/// `cargo test --release -p ferrobase-storage --test storefile_roundtrip -- --ignored --nocapture`
#[test]
#[ignore]
fn throughput_smoke() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1_000_000u64;
    let mut entries = Vec::with_capacity(n as usize);
    for i in 0..n {
        let row = format!("user{:010}", i / 10);
        let q = format!("field{}", i % 10);
        entries.push((
            key::encode(
                row.as_bytes(),
                b"cf",
                q.as_bytes(),
                1_700_000_000_000,
                CellType::Put,
            ),
            i,
            vec![b'x'; 100],
        ));
    }
    for (enc, comp) in [
        (DataBlockEncoding::None, Compression::None),
        (DataBlockEncoding::FastDiff, Compression::None),
        (DataBlockEncoding::Prefix, Compression::Snappy),
        (DataBlockEncoding::RowIndexV1, Compression::Zstd),
    ] {
        let path = dir.path().join(format!("t-{enc}-{comp}"));
        let t = std::time::Instant::now();
        let info = write(&path, &family(enc, comp, BloomType::Row, 65536), &entries);
        let w = t.elapsed();
        let cache = Arc::new(BlockCache::new(1 << 30));
        let r = StoreFileReader::open(&path, Some(cache)).unwrap();
        let t = std::time::Instant::now();
        let mut it = r.scanner(true);
        it.seek_to_first().unwrap();
        let mut count = 0u64;
        while it.valid() {
            count += it.value().len() as u64 & 1;
            it.next().unwrap();
        }
        let s = t.elapsed();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let t = std::time::Instant::now();
        let gets = 200_000;
        for _ in 0..gets {
            let e = &entries[rng.random_range(0..entries.len())];
            it.seek(&e.0).unwrap();
            assert!(it.valid());
        }
        let g = t.elapsed();
        println!(
            "{enc}/{comp}: {} bytes, {} blocks; write {:.0} k/s, scan {:.0} k/s, cached seek {:.0} k/s {count}",
            info.length,
            info.blocks,
            n as f64 / w.as_secs_f64() / 1e3,
            n as f64 / s.as_secs_f64() / 1e3,
            gets as f64 / g.as_secs_f64() / 1e3
        );
    }
}
