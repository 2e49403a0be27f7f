//! Failover without the network: region server A takes SYNC_WAL writes
//! (some flushed, some only in its WAL) and "crashes" (its engine is
//! abandoned, nothing more is flushed); A's WAL is split by region and
//! region server B, on the same data directory with its own WAL, opens the
//! region: every write is back, deletes included, cells the server
//! timestamped keep A's timestamps, and the recovered edits file is gone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use ferrobase_server::region_server::RegionServer;
use ferrobase_storage::fs::LocalFs;
use ferrobase_storage::wal::split;
use ferrobase_storage::{Get, RegionInfo};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};

#[test]
fn a_dead_servers_wal_is_replayed_by_the_new_owner() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let (wal_a, wal_b) = (root.path().join("wal/a"), root.path().join("wal/b"));
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let info = RegionInfo::whole_table(7, "t");
    let put = |row: &str, v: &str| {
        RowMutation::new(row.to_string())
            .with_durability(Durability::SyncWal)
            .put_at("f", "q", 10, v)
    };

    let a = RegionServer::open_dirs(&data, &wal_a, Settings::default()).unwrap();
    a.open_region(&table, info.clone()).unwrap();
    let r = a.engine().region(7).unwrap();
    r.mutate(put("flushed", "1")).unwrap();
    r.flush(true).unwrap();
    for i in 0..50 {
        r.mutate(put(&format!("row{i:02}"), &format!("v{i}")))
            .unwrap();
    }
    // A server-timestamped cell: the WAL keeps it as sent plus the write's
    // clock reading, which the replay on B must use instead of its own.
    r.mutate(
        RowMutation::new("latest")
            .with_durability(Durability::SyncWal)
            .put("f", "q", "now"),
    )
    .unwrap();
    let latest_ts = r
        .get(&Get::new(Bytes::from_static(b"latest")))
        .unwrap()
        .first()
        .map(|c| c.timestamp)
        .unwrap();
    r.mutate(put("gone", "x")).unwrap();
    r.mutate(
        RowMutation::new("gone")
            .with_durability(Durability::SyncWal)
            .delete_column("f", "q", 10),
    )
    .unwrap();
    // Crash: no close, no flush; the WAL holds the unflushed edits.
    drop(r);
    std::mem::forget(a);

    let dir = data.join("t").join(info.dir_name());
    let report = split::split_wal_dir(&LocalFs::as_given(), &wal_a, "a", &|id| {
        (id == 7).then(|| dir.clone())
    })
    .unwrap();
    assert_eq!(report.recovered, 53, "{report:?}");
    assert_eq!(
        split::recovered_files(&LocalFs::as_given(), &dir)
            .unwrap()
            .len(),
        1
    );

    // B's clock must have moved past A's last write for the timestamp
    // check below to mean anything (timestamps are milliseconds).
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    while now_ms() <= latest_ts {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let b = RegionServer::open_dirs(&data, &wal_b, Settings::default()).unwrap();
    b.open_region(&table, info).unwrap();
    let r = b.engine().region(7).unwrap();
    let value = |row: &str| {
        r.get(&Get::new(Bytes::from(row.to_string())))
            .unwrap()
            .first()
            .map(|c| c.value.clone())
    };
    assert_eq!(value("flushed").as_deref(), Some(&b"1"[..]));
    for i in 0..50 {
        assert_eq!(
            value(&format!("row{i:02}")).as_deref(),
            Some(format!("v{i}").as_bytes()),
            "row{i:02}"
        );
    }
    assert_eq!(value("gone"), None, "the delete was replayed too");
    let replayed = r.get(&Get::new(Bytes::from_static(b"latest"))).unwrap();
    assert_eq!(replayed.len(), 1);
    assert_eq!(&replayed[0].value[..], b"now");
    assert_eq!(
        replayed[0].timestamp, latest_ts,
        "A's timestamp, not B's clock"
    );
    assert!(
        split::recovered_files(&LocalFs::as_given(), &dir)
            .unwrap()
            .is_empty()
    );
    b.engine().close().unwrap();
}
