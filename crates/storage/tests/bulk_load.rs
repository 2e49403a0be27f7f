//! Bulk load into a region: store files written outside the region are
//! adopted in one manifest change, their cells order against memstore
//! cells by the load's sequence id (HBase's `_SeqId_` files), across a
//! flush, a major compaction and a reopen; a file crossing the region's
//! boundary, of another family, or inside the data directory is refused
//! and stays where it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::storefile::{StoreFileWriter, bulk_seq_id};
use ferrobase_storage::{Engine, ErrorKind, Get, Region, RegionInfo, StorageError};
use ferrobase_types::key;
use ferrobase_types::{CellType, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn table() -> TableDescriptor {
    TableDescriptor::new(
        "t",
        vec![
            FamilyDescriptor::new("f").unwrap(),
            FamilyDescriptor::new("g").unwrap(),
        ],
    )
    .unwrap()
}

fn open(dir: &Path, info: RegionInfo) -> (Arc<Engine>, Arc<Region>) {
    let s = Settings {
        memory_size: 256 << 20,
        ..Settings::default()
    };
    let engine = Engine::open(dir, s).unwrap();
    let region = engine.open_region(&table(), info).unwrap();
    (engine, region)
}

/// A staged store file of `family` holding `(row, qualifier, ts, value)`
/// (sorted by the caller), every cell with sequence id 0.
fn stage(dir: &Path, name: &str, family: &str, cells: &[(&str, &str, u64, &str)]) -> PathBuf {
    let path = dir.join("staging").join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let fam = FamilyDescriptor::new(family).unwrap();
    let mut w = StoreFileWriter::create(&path, &fam, cells.len() as u64).unwrap();
    for (row, q, ts, v) in cells {
        let k = key::encode(
            row.as_bytes(),
            family.as_bytes(),
            q.as_bytes(),
            *ts,
            CellType::Put,
        );
        w.append(&k, 0, v.as_bytes()).unwrap();
    }
    w.finish().unwrap();
    path
}

fn value(r: &Region, row: &str, family: &str) -> Option<String> {
    let cells = r.get(&Get::new(row.to_string())).unwrap();
    cells
        .iter()
        .find(|c| &c.family[..] == family.as_bytes())
        .map(|c| String::from_utf8_lossy(&c.value).to_string())
}

#[test]
fn loaded_cells_are_newer_than_earlier_writes_and_older_than_later_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), RegionInfo::whole_table(1, "t"));
    r.mutate(RowMutation::new("a").put_at("f", "q", 1000, "written-before"))
        .unwrap();
    r.mutate(RowMutation::new("b").put_at("f", "q", 1000, "written-before"))
        .unwrap();
    let f = stage(
        dir.path(),
        "1.sf",
        "f",
        &[("a", "q", 1000, "loaded"), ("c", "q", 1000, "loaded")],
    );
    let g = stage(dir.path(), "2.sf", "g", &[("a", "x", 5, "g-loaded")]);
    let out = r
        .bulk_load(&[("f".into(), f.clone()), ("g".into(), g.clone())])
        .unwrap();
    assert_eq!(out.files.len(), 2);
    assert_eq!(out.entries, 3);
    assert!(!f.exists() && !g.exists(), "the staged files were moved");
    for (_, name) in &out.files {
        assert_eq!(bulk_seq_id(name), Some(out.seq_id), "{name}");
    }
    // Same row, column and timestamp: the load is newer than the earlier
    // write, in the memstore still.
    assert_eq!(value(&r, "a", "f").as_deref(), Some("loaded"));
    assert_eq!(value(&r, "b", "f").as_deref(), Some("written-before"));
    assert_eq!(value(&r, "a", "g").as_deref(), Some("g-loaded"));
    r.mutate(RowMutation::new("c").put_at("f", "q", 1000, "written-after"))
        .unwrap();
    assert_eq!(value(&r, "c", "f").as_deref(), Some("written-after"));
    r.flush(true).unwrap();
    assert_eq!(value(&r, "a", "f").as_deref(), Some("loaded"));
    assert_eq!(value(&r, "c", "f").as_deref(), Some("written-after"));
    r.compact(true).unwrap();
    assert_eq!(value(&r, "a", "f").as_deref(), Some("loaded"));
    assert_eq!(value(&r, "c", "f").as_deref(), Some("written-after"));
    r.close().unwrap();
    engine.close().unwrap();
    drop((r, engine));

    let (engine, r) = open(dir.path(), RegionInfo::whole_table(1, "t"));
    assert_eq!(value(&r, "a", "f").as_deref(), Some("loaded"));
    assert_eq!(value(&r, "b", "f").as_deref(), Some("written-before"));
    assert_eq!(value(&r, "c", "f").as_deref(), Some("written-after"));
    assert_eq!(value(&r, "a", "g").as_deref(), Some("g-loaded"));
    // A write after the reopen is still newer than the load.
    r.mutate(RowMutation::new("a").put_at("f", "q", 1000, "after-reopen"))
        .unwrap();
    assert_eq!(value(&r, "a", "f").as_deref(), Some("after-reopen"));
    r.close().unwrap();
    engine.close().unwrap();
}

#[test]
fn a_load_survives_reopen_before_any_flush() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path(), RegionInfo::whole_table(1, "t"));
    let f = stage(dir.path(), "1.sf", "f", &[("a", "q", 7, "v")]);
    r.bulk_load(&[("f".into(), f)]).unwrap();
    // No close: the manifest alone must hold the load.
    drop((r, engine));
    let (engine, r) = open(dir.path(), RegionInfo::whole_table(1, "t"));
    assert_eq!(value(&r, "a", "f").as_deref(), Some("v"));
    r.close().unwrap();
    engine.close().unwrap();
}

#[test]
fn bad_files_are_refused_and_left_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let info = RegionInfo {
        id: 2,
        table: "t".into(),
        start_key: b"b".to_vec(),
        end_key: b"m".to_vec(),
    };
    let (engine, r) = open(dir.path(), info);
    let inside = stage(dir.path(), "in.sf", "f", &[("c", "q", 1, "v")]);
    let crossing = stage(
        dir.path(),
        "x.sf",
        "f",
        &[("c", "q", 1, "v"), ("n", "q", 1, "v")],
    );
    // Nothing of a refused request is loaded, not even its good files.
    let e = r
        .bulk_load(&[("f".into(), inside.clone()), ("f".into(), crossing.clone())])
        .unwrap_err();
    assert!(matches!(e, StorageError::WrongRegion { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("'n'") && text.contains("crosses the region's boundary"),
        "{text}"
    );
    assert!(inside.exists() && crossing.exists());
    assert_eq!(value(&r, "c", "f"), None);

    let before = stage(dir.path(), "b.sf", "f", &[("a", "q", 1, "v")]);
    let e = r.bulk_load(&[("f".into(), before)]).unwrap_err();
    assert!(e.to_string().contains("'a'"), "{e}");

    let e = r.bulk_load(&[("g".into(), inside.clone())]).unwrap_err();
    assert!(e.to_string().contains("holds family 'f', not 'g'"), "{e}");

    let e = r.bulk_load(&[("nope".into(), inside.clone())]).unwrap_err();
    assert!(matches!(e, StorageError::NoSuchFamily { .. }), "{e}");

    let garbage = dir.path().join("staging").join("garbage.sf");
    std::fs::write(&garbage, b"not a store file").unwrap();
    let e = r.bulk_load(&[("f".into(), garbage)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Corruption, "{e}");

    let live = r.store_files();
    let e = r.bulk_load(&[]).unwrap_err();
    assert!(e.to_string().contains("at least one"), "{e}");
    // A file inside the data directory is never moved.
    let own = r.dir().join("f").join("own.sf");
    std::fs::copy(&inside, &own).unwrap();
    let e = r.bulk_load(&[("f".into(), own.clone())]).unwrap_err();
    assert!(e.to_string().contains("inside the data directory"), "{e}");
    assert!(own.exists());
    assert_eq!(r.store_files(), live);

    r.bulk_load(&[("f".into(), inside)]).unwrap();
    assert_eq!(value(&r, "c", "f").as_deref(), Some("v"));
    r.close().unwrap();
    engine.close().unwrap();
}
