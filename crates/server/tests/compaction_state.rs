//! A region's running compaction shows in the cluster status the shell's
//! `compaction_state` reads: a major compaction throttled to 256 KiB/s
//! (`hbase.hstore.compaction.throughput.*`) is seen as major while it
//! runs, and nothing is seen once it is done.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_types::{RowMutation, Settings};
use std::time::{Duration, Instant};

async fn compacting(conn: &ferrobase_client::Connection) -> (bool, bool) {
    let st = conn.admin().cluster_status().await.unwrap();
    st.servers
        .iter()
        .flat_map(|s| &s.regions)
        .filter(|r| r.table == "t")
        .fold((false, false), |(mi, ma), r| {
            (mi || r.compacting_minor, ma || r.compacting_major)
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_major_compaction_shows_in_the_region_load() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        compaction_throughput_lower: 256 << 10,
        compaction_throughput_higher: 256 << 10,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    // Two flushed files of about 1 MiB: the major compaction takes a few
    // seconds at 256 KiB/s.
    for round in 0..2 {
        for i in 0..1000 {
            t.put(RowMutation::new(format!("r{round}-{i:04}")).put("f", "q", vec![b'v'; 1000]))
                .await
                .unwrap();
        }
        admin.flush("t").await.unwrap();
    }
    assert_eq!(compacting(&conn).await, (false, false));
    let compact = {
        let conn = conn.clone();
        tokio::spawn(async move { conn.admin().major_compact("t").await })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !compacting(&conn).await.1 {
        assert!(
            Instant::now() < deadline,
            "the major compaction never showed"
        );
        assert!(
            !compact.is_finished(),
            "finished before it was seen running"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    compact.await.unwrap().unwrap();
    assert_eq!(compacting(&conn).await, (false, false));
    server.stop().await.unwrap();
}
