//! A scanner not continued within hbase.client.scanner.timeout.period is
//! closed by the server; the client gets UNKNOWN_SCANNER.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::{ErrorCode, Scan};
use ferrobase_types::RowMutation;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scanner_lease_expires() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = common::settings();
    settings.scanner_timeout_ms = 100;
    let (server, conn) = common::start_on(dir.path(), settings).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..10 {
        t.put(RowMutation::new(format!("r{i}")).put("f", "q", "v"))
            .await
            .unwrap();
    }

    // A scanner that keeps going within its lease reads everything.
    let mut s = t.scan(Scan::new().caching(2));
    let mut n = 0;
    while s.next().await.unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 10);

    // One left idle past its lease is gone.
    let mut s = t.scan(Scan::new().caching(2));
    s.next().await.unwrap().unwrap();
    s.next().await.unwrap().unwrap();
    assert_eq!(server.region_server().scanners().len(), 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let e = s.next().await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::UnknownScanner), "{e}");
    assert!(
        e.to_string()
            .contains("hbase.client.scanner.timeout.period")
    );
    assert_eq!(server.region_server().scanners().len(), 0);
    server.stop().await.unwrap();
}
