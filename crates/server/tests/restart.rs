//! Stopping and restarting standalone on the same directory (or S3 root:
//! a real moto server) brings back every table, its state, and every row.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_client::Connection;
use ferrobase_client::{ErrorCode, Get, Scan};
use ferrobase_server::Standalone;
use ferrobase_types::RowMutation;

/// Where the server keeps its data.
enum Root<'a> {
    Dir(&'a std::path::Path),
    Url(&'a str),
}

async fn start(root: &Root<'_>) -> (Standalone, Connection) {
    match root {
        Root::Dir(d) => common::start_on(d, common::settings()).await,
        Root::Url(u) => common::start_on_root(u, common::settings()).await,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_keeps_tables_and_rows() {
    let dir = tempfile::tempdir().unwrap();
    restart(Root::Dir(dir.path())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_on_an_s3_root_keeps_tables_and_rows() {
    let moto = ferrobase_storage::fs::s3::testing::MotoServer::start();
    restart(Root::Url(&moto.url("standalone"))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_on_an_hdfs_root_keeps_tables_and_rows() {
    // A real MiniDFSCluster; skipped (loudly) only without Java in a dev run.
    let Some(hdfs) = ferrobase_storage::fs::hdfs::testing::MiniHdfs::start() else {
        return;
    };
    restart(Root::Url(&hdfs.url("standalone"))).await;
}

async fn restart(root: Root<'_>) {
    {
        let (server, conn) = start(&root).await;
        let admin = conn.admin();
        admin
            .create_table(&common::table("kept", &["f"]), &[Bytes::from("m")])
            .await
            .unwrap();
        admin
            .create_table(&common::table("off", &["f"]), &[])
            .await
            .unwrap();
        let t = conn.table("kept");
        let rows: Vec<RowMutation> = (0..500)
            .map(|i| RowMutation::new(format!("{:x}-{i}", i % 16)).put("f", "q", format!("{i}")))
            .collect();
        for r in t.batch(&rows).await {
            r.unwrap();
        }
        admin.flush("kept").await.unwrap();
        // Some rows only in the WAL/memstore at stop.
        t.put(RowMutation::new("late").put("f", "q", "x"))
            .await
            .unwrap();
        admin.disable("off").await.unwrap();
        server.stop().await.unwrap();
    }
    let (server, conn) = start(&root).await;
    let admin = conn.admin();
    assert_eq!(
        admin.list_tables().await.unwrap(),
        vec!["kept".to_string(), "off".to_string()]
    );
    assert!(!admin.is_enabled("off").await.unwrap());
    assert_eq!(admin.describe("kept").await.unwrap().regions.len(), 2);
    let t = conn.table("kept");
    assert_eq!(t.scan(Scan::new()).collect().await.unwrap().len(), 501);
    let r = t.get(Get::new("late")).await.unwrap();
    assert_eq!(r.value(b"f", b"q").unwrap(), &Bytes::from("x"));
    let e = conn.table("off").get(Get::new("a")).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableDisabled));
    server.stop().await.unwrap();
}
