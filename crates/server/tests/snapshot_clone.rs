//! A clone is independent of its source: writes to either do not show in
//! the other, and dropping the source (and the snapshot) leaves the clone
//! whole.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_client::{ErrorCode, Get};
use ferrobase_types::RowMutation;
use snapshot_common::dump;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clone_is_independent_of_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    let mut desc = common::table("src", &["f"]);
    desc.families[0].set("VERSIONS", "3").unwrap();
    admin
        .create_table(&desc, &[Bytes::from("k"), Bytes::from("t")])
        .await
        .unwrap();
    let src = conn.table("src");
    for i in 0..300 {
        src.put(RowMutation::new(format!("{:02x}", i % 256)).put("f", "q", format!("{i}")))
            .await
            .unwrap();
    }
    let at_snapshot = dump(&conn, "src").await;
    admin.snapshot("src", "s").await.unwrap();
    admin.clone_snapshot("s", "copy").await.unwrap();

    // Same rows, schema and boundaries.
    assert_eq!(dump(&conn, "copy").await, at_snapshot);
    let d = admin.describe("copy").await.unwrap();
    assert_eq!(d.regions.len(), 3);
    assert_eq!(d.descriptor.families, desc.families);
    assert!(d.enabled);

    // Writes to one do not show in the other.
    src.put(RowMutation::new("only-src").put("f", "q", "1"))
        .await
        .unwrap();
    let copy = conn.table("copy");
    copy.put(RowMutation::new("only-copy").put("f", "q", "2"))
        .await
        .unwrap();
    assert!(copy.get(Get::new("only-src")).await.unwrap().is_empty());
    assert!(src.get(Get::new("only-copy")).await.unwrap().is_empty());

    // Compact and drop the source, then delete the snapshot: the clone
    // still reads every row.
    admin.flush("src").await.unwrap();
    admin.major_compact("src").await.unwrap();
    admin.disable("src").await.unwrap();
    admin.drop_table("src").await.unwrap();
    admin.delete_snapshot("s").await.unwrap();
    admin.flush("copy").await.unwrap();
    admin.major_compact("copy").await.unwrap();
    let mut expected = at_snapshot.clone();
    let after = dump(&conn, "copy").await;
    expected.retain(|c| after.contains(c));
    assert_eq!(
        expected, at_snapshot,
        "every snapshot cell is still in the clone"
    );
    assert_eq!(after.len(), at_snapshot.len() + 1);

    // Nothing is left in the archive once the janitor (every second) has
    // released the clone's hold on the source's files: no snapshot holds
    // anything, and the clone's compaction rewrote its links.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !snapshot_common::store_files(&dir.path().join("archive")).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "archived files never freed: {:?}",
            snapshot_common::store_files(&dir.path().join("archive"))
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // Clone onto an existing table is refused, naming it.
    admin.snapshot("copy", "s2").await.unwrap();
    let e = admin.clone_snapshot("s2", "copy").await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableExists));
    assert!(e.to_string().contains("'copy' already exists"), "{e}");
    server.stop().await.unwrap();
}
