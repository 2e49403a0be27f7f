//! Snapshot → mutate (puts, deletes, flush, major compaction) → restore:
//! the table reads exactly what it held when the snapshot was taken, on a
//! local root and on an S3 root (a real moto server).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_client::{Connection, ErrorCode};
use ferrobase_server::Standalone;
use ferrobase_types::{LATEST_TIMESTAMP, RowMutation};
use snapshot_common::dump;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_brings_back_the_snapshots_contents() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    scenario(&server, &conn).await;
    // The compacted-away files the snapshot held were archived, not lost;
    // after the restore the table's own regions hold copies.
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_on_an_s3_root() {
    let moto = ferrobase_storage::fs::s3::testing::MotoServer::start();
    let (server, conn) = common::start_on_root(&moto.url("snap"), common::settings()).await;
    scenario(&server, &conn).await;
    server.stop().await.unwrap();
}

async fn scenario(_server: &Standalone, conn: &Connection) {
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f", "g"]), &[Bytes::from("m")])
        .await
        .unwrap();
    let t = conn.table("t");
    let rows: Vec<RowMutation> = (0..200)
        .map(|i| {
            RowMutation::new(format!("{}{i:03}", (b'a' + (i % 26) as u8) as char))
                .put("f", "q", format!("v{i}"))
                .put("g", "x", format!("w{i}"))
        })
        .collect();
    for r in t.batch(&rows).await {
        r.unwrap();
    }
    admin.flush("t").await.unwrap();
    // Some rows only in the memstore: the snapshot flushes them.
    t.put(RowMutation::new("late").put("f", "q", "memstore"))
        .await
        .unwrap();
    let before = dump(conn, "t").await;
    assert_eq!(before.len(), 401);

    let d = admin.snapshot("t", "s1").await.unwrap();
    assert_eq!((d.name.as_str(), d.table.as_str()), ("s1", "t"));
    assert!(d.created_ms > 0);

    // Mutate every way: new versions, new rows, deletes, flush, major
    // compaction (which drops the files the snapshot holds).
    for i in 0..50 {
        t.put(RowMutation::new(format!("a{i:03}")).put("f", "q", "changed"))
            .await
            .unwrap();
        t.put(RowMutation::new(format!("new{i}")).put("f", "q", "n"))
            .await
            .unwrap();
    }
    t.delete(RowMutation::new("late").delete_family("f", LATEST_TIMESTAMP))
        .await
        .unwrap();
    t.delete(RowMutation::new("b001").delete_column("g", "x", LATEST_TIMESTAMP))
        .await
        .unwrap();
    admin.flush("t").await.unwrap();
    admin.major_compact("t").await.unwrap();
    assert_ne!(dump(conn, "t").await, before);

    // Restore needs a disabled table.
    let e = admin.restore_snapshot("s1").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableNotDisabled), "{e}");
    assert!(e.to_string().contains("disable it"), "{e}");
    admin.disable("t").await.unwrap();
    admin.restore_snapshot("s1").await.unwrap();
    assert!(
        !admin.is_enabled("t").await.unwrap(),
        "restore keeps it disabled"
    );
    admin.enable("t").await.unwrap();
    assert_eq!(dump(conn, "t").await, before);
    assert_eq!(admin.describe("t").await.unwrap().regions.len(), 2);

    // The restored table takes writes above the snapshot's sequence ids:
    // a new version wins over the restored one.
    t.put(RowMutation::new("a000").put("f", "q", "after"))
        .await
        .unwrap();
    admin.flush("t").await.unwrap();
    admin.major_compact("t").await.unwrap();
    let r = t
        .get(ferrobase_client::Get::new("a000").column("f", "q"))
        .await
        .unwrap();
    assert_eq!(r.value(b"f", b"q").unwrap(), &Bytes::from("after"));

    // A second restore of the same snapshot still works (the snapshot's
    // files survived the first restore's cleanup of the old regions).
    admin.disable("t").await.unwrap();
    admin.restore_snapshot("s1").await.unwrap();
    admin.enable("t").await.unwrap();
    assert_eq!(dump(conn, "t").await, before);
}
