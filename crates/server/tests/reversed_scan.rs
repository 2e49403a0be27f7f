//! A reversed scan over regions holding several chunks of rows (the server
//! reads a reversed region in chunks of 1024 rows): every row comes back
//! once, in descending order, across chunk and region boundaries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_client::Scan;
use ferrobase_types::RowMutation;

const ROWS: u32 = 3000;

fn key(i: u32) -> String {
    format!("k{i:05}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reversed_scan_over_several_chunks_and_regions() {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    conn.admin()
        .create_table(&common::table("rv", &["f"]), &[Bytes::from(key(500))])
        .await
        .unwrap();
    let t = conn.table("rv");
    let mutations: Vec<RowMutation> = (0..ROWS)
        .map(|i| RowMutation::new(key(i)).put("f", "q", i.to_string()))
        .collect();
    for r in t.batch(&mutations).await {
        r.unwrap();
    }
    // Half the rows in store files, half in the memstore.
    conn.admin().flush("rv").await.unwrap();
    let more: Vec<RowMutation> = (0..ROWS)
        .filter(|i| i.is_multiple_of(2))
        .map(|i| RowMutation::new(key(i)).put("f", "q2", "x"))
        .collect();
    for r in t.batch(&more).await {
        r.unwrap();
    }

    let got = t
        .scan(Scan::new().reversed(true).caching(700))
        .collect()
        .await
        .unwrap();
    let want: Vec<Bytes> = (0..ROWS).rev().map(|i| Bytes::from(key(i))).collect();
    assert_eq!(got.iter().map(|r| r.row.clone()).collect::<Vec<_>>(), want);
    for r in &got {
        let i: u32 = std::str::from_utf8(&r.row[1..]).unwrap().parse().unwrap();
        assert_eq!(
            r.cells.len(),
            if i.is_multiple_of(2) { 2 } else { 1 },
            "row {i}"
        );
    }

    // A range inside the big region, crossing chunk boundaries.
    let got = t
        .scan(Scan::range(key(2600), key(400)).reversed(true))
        .collect()
        .await
        .unwrap();
    let want: Vec<Bytes> = (401..=2600).rev().map(|i| Bytes::from(key(i))).collect();
    assert_eq!(got.iter().map(|r| r.row.clone()).collect::<Vec<_>>(), want);

    // Filtered: only rows with the second column, every chunk visited.
    let got = t
        .scan(
            Scan::new()
                .reversed(true)
                .filter("QualifierFilter(=, 'binary:q2')"),
        )
        .collect()
        .await
        .unwrap();
    assert_eq!(got.len(), (ROWS / 2) as usize);
    assert_eq!(&got[0].row[..], key(ROWS - 2).as_bytes());
    assert_eq!(&got[got.len() - 1].row[..], key(0).as_bytes());

    server.stop().await.unwrap();
}
