//! A region split after a snapshot removes the parent region: its files,
//! which the snapshot holds, go to the archive, and the snapshot still
//! restores (one region again) and clones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_types::RowMutation;
use snapshot_common::{dump, store_files};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_parent_the_snapshot_holds_is_archived() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..40 {
        t.put(RowMutation::new(format!("r{i:02}")).put("f", "q", format!("{i}")))
            .await
            .unwrap();
    }
    let before = dump(&conn, "t").await;
    admin.snapshot("t", "s").await.unwrap();
    admin.split("t", Some(Bytes::from("r20"))).await.unwrap();
    assert_eq!(admin.describe("t").await.unwrap().regions.len(), 2);
    assert_eq!(
        store_files(&dir.path().join("archive")).len(),
        1,
        "the parent's file is archived, not deleted"
    );
    admin.clone_snapshot("s", "c").await.unwrap();
    assert_eq!(dump(&conn, "c").await, before);
    admin.disable("t").await.unwrap();
    admin.restore_snapshot("s").await.unwrap();
    admin.enable("t").await.unwrap();
    assert_eq!(admin.describe("t").await.unwrap().regions.len(), 1);
    assert_eq!(dump(&conn, "t").await, before);
    admin.delete_snapshot("s").await.unwrap();
    assert!(store_files(&dir.path().join("archive")).is_empty());
    server.stop().await.unwrap();
}
