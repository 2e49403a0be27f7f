//! Snapshots and splits by reference:
//!
//! - a snapshot taken before a split holds the parent's file; the split
//!   leaves it in place for the daughters, and once they have compacted
//!   their references away the janitor moves it to the archive (not
//!   deleted), from which the snapshot still restores (one region again)
//!   and clones;
//! - a snapshot of daughters that still hold references names the
//!   parent's file; after the daughters compacted, the janitor ran and the
//!   table changed, the snapshot restores and clones to exactly what it saw.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_types::RowMutation;
use snapshot_common::{dump, store_files};

async fn load(conn: &ferrobase_client::Connection) {
    let t = conn.table("t");
    for i in 0..40 {
        t.put(RowMutation::new(format!("r{i:02}")).put("f", "q", format!("{i}")))
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_parent_the_snapshot_holds_is_archived_by_the_janitor() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    load(&conn).await;
    let before = dump(&conn, "t").await;
    admin.snapshot("t", "s").await.unwrap();
    admin.split("t", Some(Bytes::from("r20"))).await.unwrap();
    assert_eq!(admin.describe("t").await.unwrap().regions.len(), 2);
    assert_eq!(dump(&conn, "t").await, before);
    // The daughters compact their references away; then the janitor
    // retires the parent's file, which the snapshot holds.
    admin.major_compact("t").await.unwrap();
    server.master().run_janitor().unwrap();
    assert_eq!(
        store_files(&dir.path().join("archive")).len(),
        1,
        "the parent's file is archived, not deleted"
    );
    assert_eq!(dump(&conn, "t").await, before);
    admin.clone_snapshot("s", "c").await.unwrap();
    assert_eq!(dump(&conn, "c").await, before);
    admin.disable("t").await.unwrap();
    admin.restore_snapshot("s").await.unwrap();
    admin.enable("t").await.unwrap();
    assert_eq!(admin.describe("t").await.unwrap().regions.len(), 1);
    assert_eq!(dump(&conn, "t").await, before);
    admin.delete_snapshot("s").await.unwrap();
    // The clone and the restored table read the snapshot's files by link
    // until their compactions rewrite them; the janitor then releases them.
    admin.major_compact("t").await.unwrap();
    admin.major_compact("c").await.unwrap();
    server.master().run_janitor().unwrap();
    assert!(store_files(&dir.path().join("archive")).is_empty());
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_of_daughters_holding_references_restores_and_clones() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    load(&conn).await;
    // Keep the references: no compaction until the snapshot is taken.
    server
        .region_server()
        .engine()
        .set_compactions_enabled(false);
    admin.split("t", Some(Bytes::from("r13"))).await.unwrap();
    let t = conn.table("t");
    t.put(RowMutation::new("r05").put("f", "q", "after-split"))
        .await
        .unwrap();
    let seen = dump(&conn, "t").await;
    admin.snapshot("t", "s").await.unwrap();
    let m = ferrobase_storage::snapshot_manifest::SnapshotManifest::load(
        &ferrobase_storage::fs::LocalFs::as_given(),
        &ferrobase_storage::snapshot_manifest::SnapshotLayout::for_data_dir(
            &dir.path().join("data"),
        ),
        "s",
    )
    .unwrap()
    .unwrap();
    assert!(
        m.regions.iter().all(|r| !r.references.is_empty()),
        "both daughters were snapshotted with their references"
    );

    // The daughters compact, the janitor runs, the table changes.
    server
        .region_server()
        .engine()
        .set_compactions_enabled(true);
    admin.major_compact("t").await.unwrap();
    assert!(
        server
            .region_server()
            .engine()
            .regions()
            .iter()
            .all(|r| !r.has_references())
    );
    server.master().run_janitor().unwrap();
    // Only the daughters' directories are left; the parent's file and the
    // daughter's flushed write, which the snapshot holds, are archived.
    assert_eq!(
        std::fs::read_dir(dir.path().join("data/t"))
            .unwrap()
            .count(),
        2
    );
    assert_eq!(store_files(&dir.path().join("archive")).len(), 2);
    for i in 0..40 {
        t.put(RowMutation::new(format!("r{i:02}")).put("f", "q", "changed"))
            .await
            .unwrap();
    }
    admin.flush("t").await.unwrap();
    admin.major_compact("t").await.unwrap();

    admin.clone_snapshot("s", "c").await.unwrap();
    assert_eq!(dump(&conn, "c").await, seen);
    admin.disable("t").await.unwrap();
    admin.restore_snapshot("s").await.unwrap();
    admin.enable("t").await.unwrap();
    assert_eq!(admin.describe("t").await.unwrap().regions.len(), 2);
    assert_eq!(dump(&conn, "t").await, seen);
    admin.delete_snapshot("s").await.unwrap();
    // The clone and the restored table read the snapshot's files by link
    // until their compactions rewrite them; the janitor then releases them.
    admin.major_compact("t").await.unwrap();
    admin.major_compact("c").await.unwrap();
    server.master().run_janitor().unwrap();
    assert!(store_files(&dir.path().join("archive")).is_empty());
    server.stop().await.unwrap();
}
