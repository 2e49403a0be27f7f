//! Every data call through the client against a real standalone server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_client::{BufferedMutator, ErrorCode, Get, ReadSpec, Scan};
use ferrobase_types::{Durability, LATEST_TIMESTAMP, RowMutation};

fn row(i: u32) -> Bytes {
    Bytes::from(format!("row{i:05}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_data_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = common::settings();
    settings.keyvalue_max_size = 64 * 1024;
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let admin = conn.admin();
    let desc = common::table("t", &["f", "g"]);
    admin
        .create_table(&desc, &[row(100), row(200), row(300)])
        .await
        .unwrap();
    let t = conn.table("t");

    // put / get / delete
    t.put(
        RowMutation::new(row(1))
            .put("f", "a", "1")
            .put("g", "b", "2"),
    )
    .await
    .unwrap();
    let r = t.get(Get::new(row(1))).await.unwrap();
    assert_eq!(r.cells.len(), 2);
    assert_eq!(r.value(b"g", b"b").unwrap(), &Bytes::from("2"));
    let r = t.get(Get::new(row(1)).family("f")).await.unwrap();
    assert_eq!(r.cells.len(), 1);
    t.delete(RowMutation::new(row(1)).delete_column("g", "b", LATEST_TIMESTAMP))
        .await
        .unwrap();
    assert!(
        t.get(Get::new(row(1)))
            .await
            .unwrap()
            .value(b"g", b"b")
            .is_none()
    );

    // batch (multi: many regions of one server in one call)
    let batch: Vec<RowMutation> = (0..400)
        .map(|i| {
            RowMutation::new(row(i))
                .with_durability(Durability::AsyncWal)
                .put("f", "v", format!("value{i}"))
        })
        .collect();
    for r in t.batch(&batch).await {
        r.unwrap();
    }

    // multi-get across regions, in request order, with a missing row
    let rows = vec![row(350), row(5), row(150), Bytes::from("zzz-missing")];
    let got = t
        .get_rows(rows.clone(), &ReadSpec::default())
        .await
        .unwrap();
    assert_eq!(got.len(), 4);
    assert_eq!(got[0].row, rows[0]);
    assert_eq!(got[2].value(b"f", b"v").unwrap(), &Bytes::from("value150"));
    assert!(got[3].is_empty());

    // scan across regions with small caching and a small max result size
    let all = t.scan(Scan::new().caching(7)).collect().await.unwrap();
    assert_eq!(all.len(), 400);
    assert!(all.windows(2).all(|w| w[0].row < w[1].row));
    let some = t
        .scan(Scan::range(row(95), row(205)).max_result_size(1))
        .collect()
        .await
        .unwrap();
    assert_eq!(some.len(), 110);
    assert_eq!(some[0].row, row(95));
    let cols = t
        .scan(Scan::range(row(10), row(12)).column("f", "v"))
        .collect()
        .await
        .unwrap();
    assert_eq!(cols.len(), 2);

    // increment from many tasks: no lost update
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let t = t.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                t.increment("counter", "f", "n", 2).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(t.increment("counter", "f", "n", 0).await.unwrap(), 200);
    let e = t.increment(row(1), "f", "a", 1).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidRequest));

    // append
    assert_eq!(&t.append("ap", "f", "s", "ab").await.unwrap()[..], b"ab");
    assert_eq!(&t.append("ap", "f", "s", "cd").await.unwrap()[..], b"abcd");

    // checkAndMutate
    let m = RowMutation::new("cam").put("f", "q", "new");
    assert!(t.check_and_mutate("f", "q", None, m.clone()).await.unwrap());
    assert!(!t.check_and_mutate("f", "q", None, m.clone()).await.unwrap());
    assert!(
        !t.check_and_mutate("f", "q", Some(Bytes::from("old")), m.clone())
            .await
            .unwrap()
    );
    let m2 = RowMutation::new("cam").put("f", "q", "newer");
    assert!(
        t.check_and_mutate("f", "q", Some(Bytes::from("new")), m2)
            .await
            .unwrap()
    );

    // bad input: stable codes, server unaffected
    let e = t
        .put(RowMutation::new("x").put("nope", "q", "v"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::FamilyNotFound), "{e}");
    let e = t.get(Get::new("x").family("nope")).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::FamilyNotFound), "{e}");
    let e = t
        .put(RowMutation::new("").put("f", "q", "v"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::EmptyRow));
    let e = t
        .put(RowMutation::new("x").put("f", "q", vec![0u8; 100 * 1024]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::CellTooLarge), "{e}");
    let e = conn.table("missing").get(Get::new("x")).await.unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::TableNotFound));

    // BufferedMutator: failures come back with the mutation
    let bm = BufferedMutator::with_buffer_size(t.clone(), 4096);
    for i in 1000..1300u32 {
        bm.mutate(RowMutation::new(row(i)).put("f", "v", "buffered"))
            .await
            .unwrap();
    }
    bm.mutate(RowMutation::new("bad").put("nope", "q", "v"))
        .await
        .ok();
    let failures = match bm.close().await {
        Ok(()) => panic!("the bad mutation must be reported"),
        Err(e) => e.0,
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(&failures[0].mutation.row[..], b"bad");
    assert_eq!(failures[0].error.code(), Some(ErrorCode::FamilyNotFound));
    let r = t.get(Get::new(row(1299))).await.unwrap();
    assert_eq!(r.value(b"f", b"v").unwrap(), &Bytes::from("buffered"));

    // admin: flush, compact, major compact, cluster status
    admin.flush("t").await.unwrap();
    admin.compact("t").await.unwrap();
    admin.major_compact("t").await.unwrap();
    let status = admin.cluster_status().await.unwrap();
    assert_eq!(status.servers.len(), 1);
    let regions = &status.servers[0].regions;
    assert_eq!(regions.iter().filter(|r| r.table == "t").count(), 4);
    assert!(regions.iter().all(|r| r.write_requests > 0), "{regions:?}");
    assert!(regions.iter().any(|r| r.store_file_bytes > 0));
    assert_eq!(t.scan(Scan::new()).collect().await.unwrap().len(), 703);

    server.stop().await.unwrap();
}
