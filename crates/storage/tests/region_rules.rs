//! HBase's read and compaction rules at the region level: versions, time
//! ranges, TTL with MIN_VERSIONS, KEEP_DELETED_CELLS, column selection,
//! family deletes, major compaction dropping what is gone, bad requests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use bytes::Bytes;
use ferrobase_storage::{Engine, ErrorKind, Get, Region, RegionInfo, Scan, StorageError};
use ferrobase_types::{FamilyDescriptor, LATEST_TIMESTAMP, RowMutation, Settings, TableDescriptor};
use std::sync::Arc;

fn open(dir: &std::path::Path, attrs: &[(&str, &str)]) -> (Arc<Engine>, Arc<Region>) {
    let mut f = FamilyDescriptor::new("f").unwrap();
    for (k, v) in attrs {
        f.set(k, v).unwrap();
    }
    let table = TableDescriptor::new("t", vec![f, FamilyDescriptor::new("g").unwrap()]).unwrap();
    let mut s = Settings::default();
    s.memory_size = 256 << 20;
    let engine = Engine::open(dir, s).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    (engine, region)
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn values(cells: &[ferrobase_types::Cell]) -> Vec<String> {
    cells
        .iter()
        .map(|c| String::from_utf8_lossy(&c.value).to_string())
        .collect()
}

#[test]
fn versions_time_range_and_major_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), &[("VERSIONS", "3")]);
    for ts in 1..=5u64 {
        r.mutate(RowMutation::new("r").put_at("f", "q", ts, format!("v{ts}")))
            .unwrap();
    }
    let mut g = Get::new("r");
    g.max_versions = 10;
    assert_eq!(
        values(&r.get(&g).unwrap()),
        ["v5", "v4", "v3"],
        "capped at VERSIONS"
    );
    g.time_range = (2, 4);
    assert_eq!(values(&r.get(&g).unwrap()), ["v3", "v2"], "[2, 4) only");
    r.flush(true).unwrap();
    r.compact(true).unwrap();
    let mut g = Get::new("r");
    g.max_versions = 10;
    g.time_range = (0, 3);
    assert!(
        r.get(&g).unwrap().is_empty(),
        "major compaction dropped versions beyond VERSIONS"
    );
    engine.close().unwrap();
}

#[test]
fn deletes_of_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), &[("VERSIONS", "5")]);
    let m = RowMutation::new("r")
        .put_at("f", "a", 10, "a10")
        .put_at("f", "a", 20, "a20")
        .put_at("f", "b", 10, "b10")
        .put_at("f", "b", 20, "b20")
        .put_at("f", "c", 10, "c10")
        .put_at("g", "x", 10, "x10");
    r.mutate(m).unwrap();
    r.flush(true).unwrap();
    // Delete (one version), DeleteColumn (≤ ts), DeleteFamilyVersion (exact ts in every column).
    r.mutate(RowMutation::new("r").delete_version("f", "a", LATEST_TIMESTAMP))
        .unwrap();
    r.mutate(RowMutation::new("r").delete_column("f", "b", 20))
        .unwrap();
    let mut g = Get::new("r");
    g.max_versions = 5;
    assert_eq!(values(&r.get(&g).unwrap()), ["a10", "c10", "x10"]);
    r.mutate(RowMutation::new("r").delete_family_version("f", 10))
        .unwrap();
    assert_eq!(values(&r.get(&g).unwrap()), ["x10"]);
    // DeleteFamily masks older cells but not newer ones.
    r.mutate(
        RowMutation::new("r")
            .put_at("g", "y", 30, "y30")
            .delete_family("g", 25),
    )
    .unwrap();
    assert_eq!(values(&r.get(&g).unwrap()), ["y30"]);
    r.compact(true).unwrap();
    assert_eq!(values(&r.get(&g).unwrap()), ["y30"]);
    r.flush(true).unwrap();
    r.compact(true).unwrap();
    assert_eq!(values(&r.get(&g).unwrap()), ["y30"]);
    // After a major compaction the masked cells and markers are gone.
    let files = r.store_files();
    assert!(files.iter().all(|(_, f)| f.len() <= 1));
    engine.close().unwrap();
}

#[test]
fn ttl_min_versions_and_keep_deleted_cells() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(
        dir.path(),
        &[("TTL", "60"), ("VERSIONS", "3"), ("MIN_VERSIONS", "1")],
    );
    let old = now() - 3_600_000;
    r.mutate(
        RowMutation::new("r")
            .put_at("f", "q", old, "old1")
            .put_at("f", "q", old + 1, "old2"),
    )
    .unwrap();
    r.mutate(RowMutation::new("s").put("f", "q", "fresh"))
        .unwrap();
    let mut g = Get::new("r");
    g.max_versions = 3;
    // Expired, but MIN_VERSIONS keeps the newest one visible.
    assert_eq!(values(&r.get(&g).unwrap()), ["old2"]);
    r.flush(true).unwrap();
    r.compact(true).unwrap();
    assert_eq!(values(&r.get(&g).unwrap()), ["old2"]);
    assert_eq!(values(&r.get(&Get::new("s")).unwrap()), ["fresh"]);
    engine.close().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), &[("TTL", "60")]);
    r.mutate(RowMutation::new("r").put_at("f", "q", now() - 3_600_000, "gone"))
        .unwrap();
    assert!(
        r.get(&Get::new("r")).unwrap().is_empty(),
        "expired cell hidden"
    );
    engine.close().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(
        dir.path(),
        &[("KEEP_DELETED_CELLS", "TRUE"), ("VERSIONS", "3")],
    );
    r.mutate(RowMutation::new("r").put_at("f", "q", 5, "kept"))
        .unwrap();
    r.mutate(RowMutation::new("r").delete_column("f", "q", 6))
        .unwrap();
    r.flush(true).unwrap();
    r.compact(true).unwrap();
    assert!(r.get(&Get::new("r")).unwrap().is_empty());
    let path = &r.store_files()[0].1[0];
    let reader = ferrobase_storage::storefile::StoreFileReader::open(path, None).unwrap();
    assert_eq!(reader.info().entries, 2, "marker and deleted put both kept");
    engine.close().unwrap();
}

#[test]
fn columns_scans_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), &[("BLOOMFILTER", "ROWCOL")]);
    for i in 0..100u32 {
        let row = format!("row{i:03}");
        r.mutate(
            RowMutation::new(row.clone())
                .put("f", "a", format!("a{i}"))
                .put("f", "b", "b")
                .put("g", "c", "c"),
        )
        .unwrap();
        if i == 50 {
            r.flush(true).unwrap();
        }
    }
    let mut g = Get::new("row007");
    g.add_column(Bytes::from_static(b"f"), Bytes::from_static(b"a"));
    assert_eq!(values(&r.get(&g).unwrap()), ["a7"]);
    let mut g = Get::new("row070");
    g.add_family(Bytes::from_static(b"g"));
    assert_eq!(values(&r.get(&g).unwrap()), ["c"]);
    assert!(r.get(&Get::new("nope")).unwrap().is_empty());

    let scan = Scan {
        start_row: Bytes::from_static(b"row010"),
        stop_row: Bytes::from_static(b"row020"),
        ..Scan::default()
    };
    let rows: Vec<_> = r.scan(&scan).unwrap().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[0][0].row, Bytes::from_static(b"row010"));
    assert_eq!(rows[0].len(), 3);
    let limited = Scan {
        limit: Some(7),
        ..Scan::default()
    };
    assert_eq!(r.scan(&limited).unwrap().count(), 7);
    engine.close().unwrap();
}

#[test]
fn bad_requests_are_named_and_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), &[]);
    let e = r
        .mutate(RowMutation::new("r").put("nofam", "q", "v"))
        .unwrap_err();
    assert!(
        matches!(e, StorageError::NoSuchFamily { .. }) && e.to_string().contains("nofam"),
        "{e}"
    );
    assert_eq!(e.kind(), ErrorKind::BadRequest);
    let e = r
        .mutate(RowMutation::new("").put("f", "q", "v"))
        .unwrap_err();
    assert!(e.to_string().contains("row key is empty"), "{e}");
    let e = r
        .mutate(RowMutation::new("r").put("f", "q", vec![0u8; 11 << 20]))
        .unwrap_err();
    assert!(
        e.to_string().contains("hbase.client.keyvalue.maxsize"),
        "{e}"
    );
    let mut g = Get::new("r");
    g.add_family(Bytes::from_static(b"nofam"));
    assert!(r.get(&g).is_err());
    r.mutate(RowMutation::new("r").put("f", "q", "v")).unwrap();
    assert_eq!(values(&r.get(&Get::new("r")).unwrap()), ["v"]);
    engine.close().unwrap();

    let dir = tempfile::tempdir().unwrap();
    let mut s = Settings::default();
    s.memory_size = 256 << 20;
    let engine = Engine::open(dir.path(), s).unwrap();
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let info = RegionInfo {
        id: 2,
        table: "t".into(),
        start_key: b"m".to_vec(),
        end_key: vec![],
    };
    let r = engine.open_region(&table, info).unwrap();
    let e = r
        .mutate(RowMutation::new("a").put("f", "q", "v"))
        .unwrap_err();
    assert!(matches!(e, StorageError::WrongRegion { .. }), "{e}");
    engine.close().unwrap();
}

#[test]
fn corrupt_store_file_is_an_error_not_wrong_data() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), &[]);
    for i in 0..2000u32 {
        r.mutate(RowMutation::new(format!("row{i:05}")).put("f", "q", format!("value{i}")))
            .unwrap();
    }
    r.flush(true).unwrap();
    let path = r.store_files()[0].1[0].clone();
    engine.close().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[100] ^= 0xFF; // inside the first data block
    std::fs::write(&path, &bytes).unwrap();
    let (engine, r) = open(dir.path(), &[]);
    let e = r.get(&Get::new("row00001")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption);
    assert!(
        e.to_string().contains(&path.display().to_string()) && e.to_string().contains("offset"),
        "{e}"
    );
    engine.close().unwrap();
}

#[test]
fn block_cache_counts_hits() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), &[]);
    for i in 0..5000u32 {
        r.mutate(RowMutation::new(format!("row{i:05}")).put("f", "q", format!("value{i}")))
            .unwrap();
    }
    r.flush(true).unwrap();
    for _ in 0..3 {
        assert_eq!(r.get(&Get::new("row00042")).unwrap().len(), 1);
    }
    let c = engine.stats().cache;
    assert!(c.hits >= 2 && c.misses >= 1, "{c:?}");
    engine.close().unwrap();
}

/// One mutation's cells arrive in any order, may repeat a key, and may put
/// and delete the same version: the memstore sorts them (qualifier byte
/// order, newest first, deletes before puts of one timestamp), keeps the
/// mutation's last cell of identical keys, and a flush keeps that order.
#[test]
fn one_mutation_unsorted_and_repeated_cells() {
    let dir = tempfile::tempdir().unwrap();
    let (_engine, r) = open(dir.path(), &[("VERSIONS", "5")]);
    let m = |row: &str| {
        RowMutation::new(row.to_string())
            .put_at("f", "q10", 5, "a")
            .put_at("f", "q2", 5, "b")
            .put_at("f", "q1", 7, "c-old")
            .put_at("f", "q1", 9, "d")
            .put_at("f", "q1", 7, "c")
            .put_at("f", "q3", 4, "gone")
            .delete_version("f", "q3", 4)
            .put_at("f", "q0", 1, "e")
    };
    let expect = [
        ("q0", 1, "e"),
        ("q1", 9, "d"),
        ("q1", 7, "c"),
        ("q10", 5, "a"),
        ("q2", 5, "b"),
    ];
    let check = |row: &str, what: &str| {
        let mut g = Get::new(row.to_string());
        g.max_versions = 10;
        let got: Vec<(String, u64, String)> = r
            .get(&g)
            .unwrap()
            .iter()
            .map(|c| {
                (
                    String::from_utf8_lossy(&c.qualifier).to_string(),
                    c.timestamp,
                    String::from_utf8_lossy(&c.value).to_string(),
                )
            })
            .collect();
        let want: Vec<(String, u64, String)> = expect
            .iter()
            .map(|(q, ts, v)| (q.to_string(), *ts, v.to_string()))
            .collect();
        assert_eq!(got, want, "{what}");
    };
    // A new row (the sorted fast path) and a row that already has cells
    // (the one-at-a-time path).
    r.mutate(m("new")).unwrap();
    r.mutate(RowMutation::new("old").put_at("f", "q5", 1, "x"))
        .unwrap();
    r.mutate(RowMutation::new("old").delete_version("f", "q5", 1))
        .unwrap();
    r.mutate(m("old")).unwrap();
    check("new", "memstore, new row");
    check("old", "memstore, existing row");
    r.flush(true).unwrap();
    check("new", "after flush, new row");
    check("old", "after flush, existing row");
}

/// Server-assigned timestamps (`LATEST_TIMESTAMP`) are resolved once per
/// write, also when the same mutation carries explicit ones: ordering
/// uses the resolved value, in the memstore and after a flush.
#[test]
fn server_timestamps_sort_among_explicit_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (_engine, r) = open(dir.path(), &[("VERSIONS", "5")]);
    let before = now();
    let future = before + 1_000_000_000;
    r.mutate(
        RowMutation::new("r")
            .put("f", "q", "server")
            .put_at("f", "q", future, "future")
            .put_at("f", "q", 5, "old"),
    )
    .unwrap();
    let after = now();
    let check = |what: &str| {
        let mut g = Get::new("r");
        g.max_versions = 10;
        let cells = r.get(&g).unwrap();
        assert_eq!(values(&cells), ["future", "server", "old"], "{what}");
        let ts = cells[1].timestamp;
        assert!((before..=after).contains(&ts), "{what}: {ts}");
        assert_ne!(ts, LATEST_TIMESTAMP);
    };
    check("memstore");
    r.flush(true).unwrap();
    check("store file");
}
