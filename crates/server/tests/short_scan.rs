//! A scan with a limit that one call satisfies costs one round trip and
//! leaves no scanner lease on the server; one cut short by
//! `max_result_size` still continues to its limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use ferrobase_client::Scan;
use ferrobase_types::RowMutation;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limited_scan_leaves_no_lease() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..50 {
        t.put(RowMutation::new(format!("r{i:02}")).put("f", "q", vec![b'v'; 100]))
            .await
            .unwrap();
    }
    let leases = || server.region_server().scanners().len();

    // Read the limit's rows, but not the end of the scanner: the server
    // must already have dropped it.
    let mut s = t.scan(Scan::new().start_row("r10").limit(5));
    let mut rows = Vec::new();
    for _ in 0..5 {
        rows.push(s.next().await.unwrap().unwrap().row);
    }
    assert_eq!(leases(), 0);
    assert!(s.next().await.unwrap().is_none());
    let expect: Vec<_> = (10..15).map(|i| format!("r{i}")).collect();
    assert_eq!(
        rows.iter()
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect::<Vec<_>>(),
        expect
    );

    // A call cut short by size keeps its lease and the scan reaches the
    // limit over several calls.
    let mut s = t.scan(Scan::new().limit(20).max_result_size(250));
    let first = s.next().await.unwrap().unwrap();
    assert_eq!(&first.row[..], b"r00");
    assert_eq!(leases(), 1);
    let mut n = 1;
    while s.next().await.unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 20);
    assert_eq!(leases(), 0);
    server.stop().await.unwrap();
}
