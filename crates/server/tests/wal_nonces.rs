//! Nonces travel with their edits through the WAL: increments tagged with
//! HBase client nonces are applied on region server A, which "crashes"
//! (nothing flushed or closed); its WAL is split and region server B opens
//! the region. B then knows those operations as applied, so a client
//! retrying one across the failover is answered once, while other nonces
//! still apply. A server restarted on its own WAL learns them the same way.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use ferrobase_server::nonces::Start;
use ferrobase_server::region_server::RegionServer;
use ferrobase_storage::fs::LocalFs;
use ferrobase_storage::wal::split;
use ferrobase_storage::{Get, RegionInfo};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};

fn increment(nonce: Option<(u64, u64)>) -> RowMutation {
    let mut m = RowMutation::new("counter")
        .with_durability(Durability::SyncWal)
        .put("f", "n", 5i64.to_be_bytes());
    m.nonce = nonce;
    m
}

fn counter(rs: &RegionServer) -> i64 {
    let r = rs.engine().region(7).unwrap();
    let cells = r.get(&Get::new(Bytes::from_static(b"counter"))).unwrap();
    i64::from_be_bytes(cells[0].value[..8].try_into().unwrap())
}

#[test]
fn a_failover_keeps_the_nonces_of_applied_increments() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let (wal_a, wal_b) = (root.path().join("wal/a"), root.path().join("wal/b"));
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let info = RegionInfo::whole_table(7, "t");

    let a = RegionServer::open_dirs(&data, &wal_a, Settings::default()).unwrap();
    a.open_region(&table, info.clone()).unwrap();
    for nonce in [Some((42, 1)), Some((42, 2)), None, Some((43, 1))] {
        a.read_modify_write_row(7, increment(nonce), false).unwrap();
    }
    assert_eq!(counter(&a), 20);
    // Crash: no close, no flush.
    std::mem::forget(a);

    let dir = data.join("t").join(info.dir_name());
    split::split_wal_dir(&LocalFs::as_given(), &wal_a, "a", &|id| {
        (id == 7).then(|| dir.clone())
    })
    .unwrap();
    let b = RegionServer::open_dirs(&data, &wal_b, Settings::default()).unwrap();
    // Before the region opens here, B knows nothing of them.
    assert_eq!(b.nonces().start(42, 1), Start::Proceed);
    b.nonces().end(42, 1, false);
    b.open_region(&table, info).unwrap();
    assert_eq!(counter(&b), 20);
    for (group, nonce) in [(42, 1), (42, 2), (43, 1)] {
        assert_eq!(
            b.nonces().start(group, nonce),
            Start::Duplicate,
            "({group}, {nonce}) was applied on A"
        );
    }
    // Not applied anywhere: proceeds.
    assert_eq!(b.nonces().start(42, 3), Start::Proceed);
    b.nonces().end(42, 3, false);
    b.engine().close().unwrap();
}

/// Child-process half of the restart test: applies tagged increments to a
/// server on `dir` and exits without closing anything, as a crash would.
const CHILD_ENV: &str = "FERROBASE_WAL_NONCES_CHILD";

#[test]
fn a_restart_keeps_the_nonces_of_applied_increments() {
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let info = RegionInfo::whole_table(7, "t");
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        let rs = RegionServer::open(std::path::Path::new(&dir), Settings::default()).unwrap();
        rs.open_region(&table, info).unwrap();
        for nonce in [Some((9, 100)), Some((9, 101))] {
            rs.read_modify_write_row(7, increment(nonce), false)
                .unwrap();
        }
        std::process::exit(0);
    }
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_restart_keeps_the_nonces_of_applied_increments",
            "--nocapture",
        ])
        .env(CHILD_ENV, dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let rs = RegionServer::open(dir.path(), Settings::default()).unwrap();
    rs.open_region(&table, info).unwrap();
    assert_eq!(counter(&rs), 10, "both increments replayed from the WAL");
    assert_eq!(rs.nonces().start(9, 100), Start::Duplicate);
    assert_eq!(rs.nonces().start(9, 101), Start::Duplicate);
    assert_eq!(rs.nonces().start(9, 102), Start::Proceed);
    rs.nonces().end(9, 102, false);
    rs.engine().close().unwrap();
}
