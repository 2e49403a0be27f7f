//! The client against a real `ferrobase` standalone server over TCP: the
//! shared checks of `common`, then a region split under a client with a
//! stale region cache (the server answers `NotServingRegionException` for
//! the parent, the client reads meta again and retries).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{b, row};
use ferrobase_hbase_client::{ClientConfig, Connection, Get, Scan};
use ferrobase_server::Standalone;
use ferrobase_types::{RowMutation, Settings};

async fn server(dir: &std::path::Path) -> Standalone {
    let settings = Settings {
        memory_size: 256 << 20,
        ..Settings::default()
    };
    Standalone::start(dir, settings, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_calls_and_ddl() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let conn = Connection::connect(&server.addr().to_string())
        .await
        .unwrap();
    assert!(!conn.cluster_id().is_empty());
    common::create(&conn, "hc").await;
    common::exercise(&conn, "hc").await;
    common::reversed_and_atomic(&conn, "hc").await;
    common::flush_and_compact(&conn, "hc").await;
    common::drop(&conn, "hc").await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_region_is_relocated() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path()).await;
    let addr = server.addr().to_string();
    let conn = Connection::connect_with(ClientConfig {
        pool_size: 2,
        ..ClientConfig::new(&addr)
    })
    .await
    .unwrap();
    common::create(&conn, "hs").await;
    let t = conn.table("hs");
    let rows: Vec<RowMutation> = (0..3000)
        .map(|i| RowMutation::new(row(i)).put(b("f"), "a", b("1")))
        .collect();
    for r in t.batch(&rows).await {
        r.unwrap();
    }
    // Split the middle region behind the client's back.
    let native = ferrobase_client::Connection::connect(&addr, Settings::default()).unwrap();
    native.admin().split("hs", Some(row(1500))).await.unwrap();
    // The cached location of row01500 names the parent, which is gone.
    let rows: Vec<RowMutation> = (0..3000)
        .map(|i| RowMutation::new(row(i)).put(b("f"), "a", b("2")))
        .collect();
    for r in t.batch(&rows).await {
        r.unwrap();
    }
    let cells = t.get(&Get::new(row(1700))).await.unwrap();
    assert_eq!(&cells[0].value[..], b"2");
    let regions = conn.region_locations("hs").await.unwrap();
    assert_eq!(regions.len(), 4, "{regions:?}");
    let all = t.scan_all(Scan::new().caching(100)).await.unwrap();
    assert_eq!(all.len(), 3000);
    assert!(all.iter().all(|r| &r[0].value[..] == b"2"));
    common::drop(&conn, "hs").await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_listening_is_a_connect_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = Connection::connect(&format!("127.0.0.1:{port}"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("cannot connect"), "{e}");
    assert!(e.is_retryable());
}
