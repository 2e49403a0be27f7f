//! Manual splits (with and without a point) and automatic splits past
//! hbase.hregion.max.filesize, while writers are running: every row
//! written is readable exactly once afterwards and the regions tile the
//! row space.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_client::{BufferedMutator, ErrorCode, Scan};
use ferrobase_types::{Durability, RowMutation, Settings};

const WRITERS: u32 = 4;
const ROWS: u32 = 2000;

fn row(w: u32, i: u32) -> String {
    // Spread writers over the key space: "0…", "4…", "8…", "c…".
    format!("{:x}{i:05}-{w}", (w * 4) % 16)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn splits_under_concurrent_writes() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        max_filesize: 48 * 1024,
        memstore_flush_size: 32 * 1024,
        client_retries: 30,
        client_pause_ms: 10,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();

    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let t = conn.table("t");
        writers.push(tokio::spawn(async move {
            let bm = BufferedMutator::with_buffer_size(t, 4096);
            for i in 0..ROWS {
                let m = RowMutation::new(row(w, i))
                    .with_durability(Durability::AsyncWal)
                    .put("f", "q", format!("value-{w}-{i}-{}", "x".repeat(40)));
                bm.mutate(m).await.unwrap();
            }
            bm.close().await.unwrap();
        }));
    }

    // Manual splits while the writers run.
    admin.split("t", Some(Bytes::from("8"))).await.unwrap();
    let e = admin.split("t", Some(Bytes::from("8"))).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidRequest), "{e}");
    loop {
        match admin.split("t", None).await {
            Ok(()) => break,
            Err(e) if e.code() == Some(ErrorCode::InvalidRequest) => tokio::task::yield_now().await,
            Err(e) => panic!("{e}"),
        }
    }
    for w in writers {
        w.await.unwrap();
    }
    admin.flush("t").await.unwrap();

    // Automatic splits: wait until the store files have been split below
    // the limit at least once more.
    let mut rounds = 0;
    while admin.describe("t").await.unwrap().regions.len() < 5 {
        rounds += 1;
        assert!(rounds < 6000, "no automatic split happened");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }

    let d = admin.describe("t").await.unwrap();
    assert!(d.regions.first().unwrap().start_key.is_empty());
    assert!(d.regions.last().unwrap().end_key.is_empty());
    for pair in d.regions.windows(2) {
        assert_eq!(pair[0].end_key, pair[1].start_key);
    }

    let rows = conn.table("t").scan(Scan::new()).collect().await.unwrap();
    assert_eq!(rows.len() as u32, WRITERS * ROWS);
    assert!(rows.windows(2).all(|p| p[0].row < p[1].row));
    for r in &rows {
        assert_eq!(r.cells.len(), 1, "row {:?}", r.row);
    }
    server.stop().await.unwrap();
}
