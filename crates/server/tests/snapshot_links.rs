//! Clones and restores link to the snapshot's files instead of copying
//! them: a restored (still disabled) table's regions hold references and
//! no store file of their own, its link hold keeps the snapshot's files
//! after the snapshot is deleted, and once the regions have compacted the
//! links away the janitor releases the hold and the archive is emptied.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_types::RowMutation;
use snapshot_common::{dump, store_files};
use std::path::Path;
use std::time::{Duration, Instant};

/// Waits (up to a minute: the janitor runs every second) until `done`.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "still not the case: {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Region manifests under `table_dir` that name a reference.
fn manifests_with_references(table_dir: &Path) -> usize {
    let mut n = 0;
    for region in std::fs::read_dir(table_dir).unwrap() {
        let region = region.unwrap().path();
        for f in std::fs::read_dir(&region).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("MANIFEST") {
                let text = std::fs::read_to_string(&f).unwrap();
                if text.contains("\"references\"") {
                    n += 1;
                }
            }
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restores_and_clones_link_instead_of_copying() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    let desc = common::table("t", &["f"]);
    admin
        .create_table(&desc, &[Bytes::from("4"), Bytes::from("a")])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..300 {
        t.put(RowMutation::new(format!("{:02x}", i % 256)).put("f", "q", format!("{i}")))
            .await
            .unwrap();
    }
    admin.flush("t").await.unwrap();
    let at_snapshot = dump(&conn, "t").await;
    admin.snapshot("t", "s").await.unwrap();
    let snapshot_files = store_files(&dir.path().join("data/t"));
    assert!(!snapshot_files.is_empty());

    // Change the table so that its files are no longer the snapshot's:
    // those go to the archive, held by the snapshot.
    for i in 0..50 {
        t.put(RowMutation::new(format!("new{i}")).put("f", "q", "x"))
            .await
            .unwrap();
    }
    admin.flush("t").await.unwrap();
    admin.major_compact("t").await.unwrap();
    assert_eq!(
        store_files(&dir.path().join("archive")).len(),
        snapshot_files.len()
    );

    // Restore: the regions link to the archived files and copy nothing.
    admin.disable("t").await.unwrap();
    admin.restore_snapshot("s").await.unwrap();
    let data = dir.path().join("data/t");
    assert!(
        store_files(&data).is_empty(),
        "a restore writes no store file: {:?}",
        store_files(&data)
    );
    assert_eq!(manifests_with_references(&data), 3);
    let hold = dir.path().join(".hbase-snapshot/.links/t");
    assert!(hold.exists(), "the restored table holds the linked files");

    // Deleting the snapshot frees nothing the restored table reads.
    admin.delete_snapshot("s").await.unwrap();
    assert_eq!(
        store_files(&dir.path().join("archive")).len(),
        snapshot_files.len()
    );

    // Enabled, the table serves the snapshot's rows from the links, and
    // its regions' first compactions rewrite them as their own files;
    // the janitor then releases the hold and the archive empties.
    admin.enable("t").await.unwrap();
    assert_eq!(dump(&conn, "t").await, at_snapshot);
    eventually("the hold is released", || !hold.exists()).await;
    eventually("the archive is empty", || {
        store_files(&dir.path().join("archive")).is_empty()
    })
    .await;
    assert_eq!(manifests_with_references(&data), 0);
    assert_eq!(dump(&conn, "t").await, at_snapshot);

    // A clone dropped before its regions compacted releases its hold too.
    admin.snapshot("t", "s2").await.unwrap();
    admin.clone_snapshot("s2", "copy").await.unwrap();
    assert_eq!(dump(&conn, "copy").await, at_snapshot);
    admin.disable("copy").await.unwrap();
    admin.drop_table("copy").await.unwrap();
    admin.delete_snapshot("s2").await.unwrap();
    let copy_hold = dir.path().join(".hbase-snapshot/.links/copy");
    eventually("the dropped clone's hold is released", || {
        !copy_hold.exists()
    })
    .await;
    eventually("the archive is empty again", || {
        store_files(&dir.path().join("archive")).is_empty()
    })
    .await;
    assert_eq!(dump(&conn, "t").await, at_snapshot);
    server.stop().await.unwrap();
}
