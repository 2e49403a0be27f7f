//! The master's region-change counters on the info port follow what a
//! client does: a split, a merge of the daughters, and the janitor
//! retiring the parents once the children compacted their references away.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use common::http_get;
use ferrobase_server::info_server::{InfoParts, InfoServer};
use ferrobase_types::RowMutation;
use prometheus_parse::{Scrape, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

async fn counter(addr: SocketAddr, name: &str) -> f64 {
    let (status, body) = http_get(addr, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    let s = Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap();
    s.samples
        .iter()
        .filter(|x| x.metric == name)
        .map(|x| match x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
            _ => 0.0,
        })
        .sum()
}

/// Waits until `name` reads `want` (the master's figures are sampled every
/// few seconds); fails with the last value after two minutes.
async fn wait_for(addr: SocketAddr, name: &str, want: f64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let got = counter(addr, name).await;
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "{name} = {got}, want {want}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn splits_merges_and_janitor_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let info = InfoServer::start(
        "127.0.0.1:0".parse().unwrap(),
        InfoParts {
            master: Some(server.master().clone()),
            region_server: Some(server.region_server().clone()),
            role: "standalone",
        },
        None,
    )
    .await
    .unwrap();
    let addr = info.addr();
    for name in [
        "hbase_master_region_splits_total",
        "hbase_master_region_merges_total",
        "hbase_master_janitor_retired_regions_total",
    ] {
        wait_for(addr, name, 0.0).await;
    }

    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..100 {
        t.put(RowMutation::new(format!("r{i:03}")).put("f", "q", "v"))
            .await
            .unwrap();
    }
    admin.flush("t").await.unwrap();
    admin
        .split("t", Some(Bytes::from_static(b"r050")))
        .await
        .unwrap();
    wait_for(addr, "hbase_master_region_splits_total", 1.0).await;
    // The daughters compact their references away; then the janitor
    // retires the parent.
    admin.major_compact("t").await.unwrap();
    wait_for(addr, "hbase_master_janitor_retired_regions_total", 1.0).await;

    let d = admin.describe("t").await.unwrap();
    assert_eq!(d.regions.len(), 2);
    let (a, b) = (
        d.regions[0].region_id.to_string(),
        d.regions[1].region_id.to_string(),
    );
    admin.merge_regions(&a, &b).await.unwrap();
    wait_for(addr, "hbase_master_region_merges_total", 1.0).await;
    admin.major_compact("t").await.unwrap();
    wait_for(addr, "hbase_master_janitor_retired_regions_total", 3.0).await;
    assert_eq!(
        counter(addr, "hbase_master_region_splits_total").await,
        1.0,
        "a merge is not a split"
    );

    info.stop().await;
    server.stop().await.unwrap();
}
