//! Two writes of one cell at the same timestamp: the later write wins
//! (HBase orders them by sequence id), in the memstore, across a flush and
//! after a crash whose WAL is replayed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use ferrobase_storage::{Engine, Get, Region, RegionInfo};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::sync::Arc;

fn open(dir: &std::path::Path) -> (Arc<Engine>, Arc<Region>) {
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let mut s = Settings::default();
    s.memory_size = 256 << 20;
    let engine = Engine::open(dir, s).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    (engine, region)
}

fn put(r: &Region, value: &str) {
    r.mutate(
        RowMutation::new("r")
            .with_durability(Durability::SyncWal)
            .put_at("f", "q", 1000, value),
    )
    .unwrap();
}

fn value(r: &Region) -> String {
    let cells = r.get(&Get::new("r")).unwrap();
    assert_eq!(cells.len(), 1, "{cells:?}");
    String::from_utf8_lossy(&cells[0].value).to_string()
}

#[test]
fn later_write_wins_in_memstore_and_across_flush() {
    let dir = tempfile::tempdir().unwrap();
    let (_e, r) = open(dir.path());
    put(&r, "one");
    put(&r, "two");
    assert_eq!(value(&r), "two");
    r.flush(true).unwrap();
    assert_eq!(value(&r), "two");
    put(&r, "three");
    assert_eq!(value(&r), "three");
    r.flush(true).unwrap();
    assert_eq!(value(&r), "three");
    r.compact(true).unwrap();
    assert_eq!(value(&r), "three");
}

const CHILD_ENV: &str = "FERROBASE_SAME_TS_CHILD";

/// Runs `test` again in a child process with `CHILD_ENV` set to `dir`: the
/// child writes and exits without closing anything, as a crash would.
fn crash_after_writes_in_child(test: &str, dir: &std::path::Path) {
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads=1"])
        .env(CHILD_ENV, dir)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn later_write_wins_after_wal_replay() {
    if let Ok(d) = std::env::var(CHILD_ENV) {
        let (_e, r) = open(std::path::Path::new(&d));
        put(&r, "one");
        put(&r, "two");
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().unwrap();
    crash_after_writes_in_child("later_write_wins_after_wal_replay", dir.path());
    let (_e, r) = open(dir.path());
    assert_eq!(value(&r), "two");
}

#[test]
fn later_write_wins_after_flush_then_replay() {
    if let Ok(d) = std::env::var(CHILD_ENV) {
        let (_e, r) = open(std::path::Path::new(&d));
        put(&r, "one");
        r.flush(true).unwrap();
        put(&r, "two");
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().unwrap();
    crash_after_writes_in_child("later_write_wins_after_flush_then_replay", dir.path());
    let (_e, r) = open(dir.path());
    assert_eq!(value(&r), "two");
}
