//! delete_snapshot frees the files nobody else holds (archived files of
//! that snapshot alone) and keeps files still live or held by another
//! snapshot.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use ferrobase_types::RowMutation;
use snapshot_common::store_files;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_snapshot_frees_only_what_nothing_else_holds() {
    let dir = tempfile::tempdir().unwrap();
    // No background compaction: the test counts the files each explicit
    // flush and major compaction leaves.
    let settings = ferrobase_types::Settings {
        compaction_min: 1000,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    let (data, archive) = (dir.path().join("data"), dir.path().join("archive"));
    let put = |i: u32| RowMutation::new(format!("r{i}")).put("f", "q", format!("{i}"));

    // Two flushes → files A, B; snapshot s1 holds {A, B}.
    t.put(put(1)).await.unwrap();
    admin.flush("t").await.unwrap();
    t.put(put(2)).await.unwrap();
    admin.flush("t").await.unwrap();
    let ab = store_files(&data);
    assert_eq!(ab.len(), 2);
    admin.snapshot("t", "s1").await.unwrap();
    assert!(
        store_files(&archive).is_empty(),
        "a snapshot copies nothing"
    );

    // Third flush → C; s2 holds {A, B, C}. A major compaction replaces
    // them with D: A, B, C move to the archive (held), none is deleted.
    t.put(put(3)).await.unwrap();
    admin.flush("t").await.unwrap();
    admin.snapshot("t", "s2").await.unwrap();
    admin.major_compact("t").await.unwrap();
    assert_eq!(store_files(&data).len(), 1);
    assert_eq!(store_files(&archive).len(), 3);

    // Deleting s1 frees nothing: s2 holds A, B, C.
    admin.delete_snapshot("s1").await.unwrap();
    assert_eq!(store_files(&archive).len(), 3);

    // A snapshot of the live table (s3 holds D), then deleting s2 frees
    // A, B, C and keeps D, which is live and held by s3.
    admin.snapshot("t", "s3").await.unwrap();
    admin.delete_snapshot("s2").await.unwrap();
    assert!(store_files(&archive).is_empty());
    let live = store_files(&data);
    assert_eq!(live.len(), 1);

    // Dropping the table archives D (s3 holds it); deleting s3 frees it.
    admin.disable("t").await.unwrap();
    admin.drop_table("t").await.unwrap();
    assert!(store_files(&data).is_empty());
    assert_eq!(store_files(&archive).len(), 1);
    // The dropped table comes back from s3.
    admin.restore_snapshot("s3").await.unwrap();
    let rows = conn
        .table("t")
        .scan(ferrobase_client::Scan::new())
        .collect()
        .await
        .unwrap();
    assert_eq!(rows.len(), 3);
    // The restored (enabled) table links to D and its first compaction,
    // queued at open, may already have rewritten it: that ordering is
    // snapshot_links.rs's to check. Either way, once s3 is deleted and the
    // table has compacted its link into a file of its own, the janitor
    // (every second) releases D and the archive empties.
    admin.delete_snapshot("s3").await.unwrap();
    admin.major_compact("t").await.unwrap();
    assert_eq!(store_files(&data).len(), 1, "the restored table's own file");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !store_files(&archive).is_empty() {
        assert!(std::time::Instant::now() < deadline, "D was never freed");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(admin.list_snapshots(None).await.unwrap().is_empty());
    server.stop().await.unwrap();
}
