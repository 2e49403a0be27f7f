//! Snapshot TTLs (HBase's): a snapshot taken with `TTL => 1` is listed
//! with it; once the second has passed it can be neither cloned nor
//! restored (`SNAPSHOT_EXPIRED`), the cleaner leaves it alone while
//! `snapshot_cleanup_switch` is off and deletes it (and frees its archived
//! files) once the switch is on, while a snapshot without a TTL stays and
//! clones. `hbase.master.snapshot.ttl` gives snapshots taken without one
//! theirs. The switch survives a restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_client::ErrorCode;
use ferrobase_types::{RowMutation, Settings};
use snapshot_common::{dump, store_files};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Waits (up to a minute: the cleaner's chore runs every second) until `done`.
async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done().await {
        assert!(Instant::now() < deadline, "still not the case: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_snapshots_refuse_clones_and_are_cleaned() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        snapshot_cleaner_interval_ms: 1,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings.clone()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[Bytes::from("m")])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..50 {
        t.put(RowMutation::new(format!("r{i:02}")).put("f", "q", format!("{i}")))
            .await
            .unwrap();
    }

    assert!(admin.snapshot_cleanup_enabled().await.unwrap());
    assert!(
        admin.snapshot_cleanup_switch(false).await.unwrap(),
        "was on"
    );
    assert!(!admin.snapshot_cleanup_enabled().await.unwrap());
    let rows = dump(&conn, "t").await;
    let kept = admin.snapshot("t", "kept").await.unwrap();
    // "short" holds one more file than "kept".
    t.put(RowMutation::new("later").put("f", "q", "x"))
        .await
        .unwrap();
    admin.flush("t").await.unwrap();
    let short = admin.snapshot_with_ttl("t", "short", 1).await.unwrap();
    assert_eq!((short.ttl_secs, kept.ttl_secs), (1, 0));
    let listed = admin.list_snapshots(None).await.unwrap();
    assert_eq!(
        listed.iter().map(|s| s.ttl_secs).collect::<Vec<_>>(),
        [0, 1]
    );

    // The table moves on: the snapshots' files go to the archive.
    admin.major_compact("t").await.unwrap();
    let archived = store_files(&dir.path().join("archive")).len();

    // Past its second: no clone, no restore, and the cleaner (switched
    // off) keeps it.
    while now_ms() <= short.created_ms + 1000 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let e = admin.clone_snapshot("short", "c1").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::SnapshotExpired), "{e}");
    assert!(e.to_string().contains("'short' has already expired"), "{e}");
    assert!(!admin.exists("c1").await.unwrap());
    admin.disable("t").await.unwrap();
    let e = admin.restore_snapshot("short").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::SnapshotExpired), "{e}");
    admin.enable("t").await.unwrap();
    server.master().snapshot_cleaner_chore();
    assert_eq!(admin.list_snapshots(None).await.unwrap().len(), 2);

    // Switched on, the cleaner deletes it; the other stays and clones.
    assert!(
        !admin.snapshot_cleanup_switch(true).await.unwrap(),
        "was off"
    );
    eventually("the expired snapshot is deleted", async || {
        admin.list_snapshots(None).await.unwrap().len() == 1
    })
    .await;
    assert_eq!(admin.list_snapshots(None).await.unwrap()[0].name, "kept");
    let left = store_files(&dir.path().join("archive")).len();
    assert!(
        left < archived,
        "the expired snapshot's own files are freed: {archived} archived, {left} left"
    );
    admin.clone_snapshot("kept", "c2").await.unwrap();
    assert_eq!(dump(&conn, "c2").await, rows);

    // The switch is kept in the meta: off again, it stays off across a
    // restart.
    admin.snapshot_cleanup_switch(false).await.unwrap();
    server.stop().await.unwrap();
    let (server, conn) = common::start_on(dir.path(), settings).await;
    assert!(!conn.admin().snapshot_cleanup_enabled().await.unwrap());
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_ttl_applies_to_snapshots_taken_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        snapshot_ttl_secs: 3600,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    assert_eq!(admin.snapshot("t", "d").await.unwrap().ttl_secs, 3600);
    // An explicit 0 keeps it until deleted.
    assert_eq!(
        admin
            .snapshot_with_ttl("t", "forever", 0)
            .await
            .unwrap()
            .ttl_secs,
        0
    );
    server.stop().await.unwrap();
}
