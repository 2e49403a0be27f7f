//! Load-based splits (`ferrobase.split.load.threshold`): a small region
//! that keeps serving more requests per second than the threshold splits
//! at a row from the middle of its requested rows, though it is far below
//! `hbase.hregion.max.filesize`; every row stays readable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::Get;
use ferrobase_types::{RowMutation, Settings};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_region_splits_at_its_busiest_middle() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        load_split_threshold: 100,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    let rows: Vec<String> = (0..100).map(|i| format!("r{i:03}")).collect();
    let batch: Vec<RowMutation> = rows
        .iter()
        .map(|r| RowMutation::new(r.clone()).put("f", "q", r.clone()))
        .collect();
    for r in t.batch(&batch).await {
        r.unwrap();
    }

    // Read every row over and over: well over 100 rows a second, for
    // longer than the 10 s the master measures a rate over.
    let deadline = Instant::now() + Duration::from_secs(90);
    let regions = loop {
        for r in &rows {
            let got = t.get(Get::new(r.clone())).await.unwrap();
            assert_eq!(got.cells.len(), 1, "row {r}");
        }
        let regions = admin.describe("t").await.unwrap().regions;
        if regions.len() > 1 {
            break regions;
        }
        assert!(
            Instant::now() < deadline,
            "the busy region never split by load"
        );
    };
    assert_eq!(regions.len(), 2, "{regions:?}");
    let point = String::from_utf8(regions[1].start_key.to_vec()).unwrap();
    // The sampled median of uniformly read rows: near the middle.
    let n: u32 = point.trim_start_matches('r').parse().unwrap();
    assert!((20..80).contains(&n), "split at {point}");
    for r in &rows {
        let got = t.get(Get::new(r.clone())).await.unwrap();
        assert_eq!(got.cells.len(), 1, "row {r} after the split");
    }
    // Far below the size that splits regions: this was load alone.
    let status = admin.cluster_status().await.unwrap();
    let bytes: u64 = status
        .servers
        .iter()
        .flat_map(|s| &s.regions)
        .map(|r| r.store_file_bytes + r.memstore_bytes)
        .sum();
    assert!(bytes < 1 << 20, "{bytes} bytes");
    server.stop().await.unwrap();
}
