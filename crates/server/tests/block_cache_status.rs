//! The cluster status reports each server's block cache: a get of a
//! flushed row misses the cache once and hits it after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::Get;
use ferrobase_types::RowMutation;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_block_cache_hits_and_misses() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    t.put(RowMutation::new("r1").put("f", "q", "v"))
        .await
        .unwrap();
    admin.flush("t").await.unwrap();
    let cache = || async {
        let st = admin.cluster_status().await.unwrap();
        st.servers[0].block_cache.unwrap()
    };
    let before = cache().await;
    assert!(before.capacity_bytes > 0, "{before:?}");

    for _ in 0..3 {
        let r = t.get(Get::new("r1")).await.unwrap();
        assert_eq!(&r.cells[0].value[..], b"v");
    }
    let after = cache().await;
    assert!(after.misses > before.misses, "{before:?} -> {after:?}");
    assert!(after.hits >= before.hits + 2, "{before:?} -> {after:?}");
    assert!(after.blocks >= 1 && after.size_bytes > 0, "{after:?}");
    server.stop().await.unwrap();
}
