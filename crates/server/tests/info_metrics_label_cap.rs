//! Label cardinality stays bounded: a server holding more regions than
//! `REGION_LABEL_CAP` reports only that many one by one, while the table's
//! figures count them all.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::http_get;
use ferrobase_server::info_server::scrape::REGION_LABEL_CAP;
use ferrobase_server::info_server::{InfoParts, InfoServer};
use prometheus_parse::{Scrape, Value};
use std::collections::BTreeSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_region_series_are_capped_per_table_figures_are_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let regions = REGION_LABEL_CAP + 20;
    let splits: Vec<bytes::Bytes> = (1..regions)
        .map(|i| bytes::Bytes::from(format!("k{i:04}")))
        .collect();
    conn.admin()
        .create_table(&common::table("wide", &["f"]), &splits)
        .await
        .unwrap();
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
    let (status, body) = http_get(info.addr(), "/metrics").await;
    assert_eq!(status, 200);
    let s = Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap();
    let labelled: BTreeSet<String> = s
        .samples
        .iter()
        .filter(|x| x.metric == "hbase_regionserver_region_memstore_size_bytes")
        .filter_map(|x| x.labels.get("region").map(str::to_string))
        .collect();
    assert_eq!(labelled.len(), REGION_LABEL_CAP);
    let table_regions = s
        .samples
        .iter()
        .find(|x| {
            x.metric == "hbase_regionserver_table_regions" && x.labels.get("table") == Some("wide")
        })
        .map(|x| x.value.clone());
    assert_eq!(table_regions, Some(Value::Gauge(regions as f64)));
    info.stop().await;
    server.stop().await.unwrap();
}
