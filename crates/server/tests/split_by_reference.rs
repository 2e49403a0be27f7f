//! Splits and merges by reference, end to end on a standalone server:
//!
//! - a region of ~16 MiB splits at its block index midkey without copying
//!   a cell (each daughter's directory is one small manifest right after
//!   the split), every row reads back forward, reversed and by get; the
//!   daughters' compaction rewrites the references and the janitor then
//!   removes the parent's directory;
//! - a daughter still holding references is neither split nor merged;
//! - the two daughters merge back by reference (the merged region's
//!   directory is a manifest), read the same, compact, and the janitor
//!   removes both daughters' directories; non-adjacent regions and unknown
//!   names are refused by name;
//! - three regions merge in one forced call naming the first and the last,
//!   by reference, and the janitor removes all three.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use ferrobase_client::{BufferedMutator, Connection, ErrorCode, Get, Scan};
use ferrobase_types::{Durability, RowMutation, Settings};
use std::path::Path;

const ROWS: u32 = 16_000;
const VALUE: usize = 1000;

fn row(i: u32) -> String {
    format!("row{i:06}")
}

fn value(i: u32) -> Vec<u8> {
    let mut v = format!("{i}-").into_bytes();
    v.resize(VALUE, b'a' + (i % 26) as u8);
    v
}

fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        total += if p.is_dir() {
            bytes_under(&p)
        } else {
            p.metadata().unwrap().len()
        };
    }
    total
}

async fn check_all_rows(conn: &Connection, ctx: &str) {
    let t = conn.table("t");
    let rows = t.scan(Scan::new()).collect().await.unwrap();
    assert_eq!(rows.len() as u32, ROWS, "{ctx}: forward scan");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.row, Bytes::from(row(i as u32)), "{ctx}");
        assert_eq!(r.cells[0].value, Bytes::from(value(i as u32)), "{ctx}");
    }
    let rev = t.scan(Scan::new().reversed(true)).collect().await.unwrap();
    assert_eq!(rev.len() as u32, ROWS, "{ctx}: reversed scan");
    assert!(
        rev.iter()
            .rev()
            .map(|r| &r.row)
            .eq(rows.iter().map(|r| &r.row))
    );
    for i in (0..ROWS).step_by(997) {
        let got = t.get(Get::new(row(i))).await.unwrap();
        assert_eq!(got.cells[0].value, Bytes::from(value(i)), "{ctx}: get");
    }
    assert!(t.get(Get::new("row999999")).await.unwrap().cells.is_empty());
}

fn region_dirs(data: &Path) -> Vec<String> {
    let mut d: Vec<String> = std::fs::read_dir(data.join("t"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    d.sort();
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_and_merge_by_reference_copy_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let settings = Settings {
        memory_size: 512 << 20,
        max_filesize: u64::MAX / 4,
        ..common::settings()
    };
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[])
        .await
        .unwrap();
    let bm = BufferedMutator::with_buffer_size(conn.table("t"), 1 << 20);
    for i in 0..ROWS {
        bm.mutate(
            RowMutation::new(row(i))
                .with_durability(Durability::SkipWal)
                .put("f", "q", value(i)),
        )
        .await
        .unwrap();
    }
    bm.close().await.unwrap();
    admin.flush("t").await.unwrap();
    let engine = server.region_server().engine().clone();
    engine.set_compactions_enabled(false);
    let parent = region_dirs(&data);
    assert_eq!(parent.len(), 1);
    let parent_bytes = bytes_under(&data.join("t").join(&parent[0]));
    assert!(parent_bytes > 15 << 20, "{parent_bytes} bytes loaded");

    // Split: the daughters are manifests of references.
    admin.split("t", None).await.unwrap();
    let regions = admin.describe("t").await.unwrap().regions;
    assert_eq!(regions.len(), 2);
    let point = regions[1].start_key.clone();
    assert!(
        point > row(ROWS / 4).as_bytes() && point < row(3 * ROWS / 4).as_bytes(),
        "midkey {point:?}"
    );
    for r in &regions {
        let d = data.join("t").join(format!("{:016x}", r.region_id));
        let b = bytes_under(&d);
        assert!(
            b < 8192,
            "daughter {} holds {b} bytes: nothing copied",
            r.region_id
        );
    }
    assert_eq!(bytes_under(&data.join("t").join(&parent[0])), parent_bytes);
    check_all_rows(&conn, "daughters with references").await;

    // A daughter holding references is not split or merged.
    let e = admin
        .split("t", Some(Bytes::from("row000100")))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidRequest), "{e}");
    assert!(e.to_string().contains("references"), "{e}");
    let (a, b) = (
        regions[0].region_id.to_string(),
        regions[1].region_id.to_string(),
    );
    let e = admin.merge_regions(&a, &b).await.unwrap_err();
    assert!(e.to_string().contains("references"), "{e}");

    // Compaction rewrites the references; the janitor removes the parent.
    assert_eq!(
        server.master().run_janitor().unwrap(),
        0,
        "still referenced"
    );
    engine.set_compactions_enabled(true);
    admin.major_compact("t").await.unwrap();
    assert!(engine.regions().iter().all(|r| !r.has_references()));
    server.master().run_janitor().unwrap();
    assert!(!region_dirs(&data).contains(&parent[0]), "parent removed");
    assert_eq!(region_dirs(&data).len(), 2);
    check_all_rows(&conn, "daughters compacted").await;

    // Merge the daughters back, by reference.
    let e = admin.merge_regions(&a, "424242").await.unwrap_err();
    assert!(e.to_string().contains("424242"), "{e}");
    engine.set_compactions_enabled(false);
    admin.merge_regions(&b, &a).await.unwrap();
    let merged = admin.describe("t").await.unwrap().regions;
    assert_eq!(merged.len(), 1);
    assert!(merged[0].start_key.is_empty() && merged[0].end_key.is_empty());
    let mdir = data.join("t").join(format!("{:016x}", merged[0].region_id));
    assert!(bytes_under(&mdir) < 8192, "merged region copies nothing");
    check_all_rows(&conn, "merged with references").await;
    engine.set_compactions_enabled(true);
    admin.major_compact("t").await.unwrap();
    server.master().run_janitor().unwrap();
    assert_eq!(
        region_dirs(&data),
        vec![format!("{:016x}", merged[0].region_id)]
    );
    check_all_rows(&conn, "merged and compacted").await;

    // Regions that do not touch are refused.
    admin
        .split("t", Some(Bytes::from(row(ROWS / 3))))
        .await
        .unwrap();
    admin.major_compact("t").await.unwrap();
    admin
        .split("t", Some(Bytes::from(row(2 * ROWS / 3))))
        .await
        .unwrap();
    let r = admin.describe("t").await.unwrap().regions;
    assert_eq!(r.len(), 3);
    let e = admin
        .merge_regions(&r[0].region_id.to_string(), &r[2].region_id.to_string())
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidRequest), "{e}");
    assert!(e.to_string().contains("not adjacent"), "{e}");
    check_all_rows(&conn, "three regions").await;

    // All three in one merge (forced: the first and the last are named,
    // the one between them comes along), by reference.
    admin.major_compact("t").await.unwrap();
    engine.set_compactions_enabled(false);
    let ids: Vec<String> = [&r[2], &r[0]]
        .iter()
        .map(|r| r.region_id.to_string())
        .collect();
    admin.merge_many(&ids, true).await.unwrap();
    let merged = admin.describe("t").await.unwrap().regions;
    assert_eq!(merged.len(), 1);
    assert!(merged[0].start_key.is_empty() && merged[0].end_key.is_empty());
    let mdir = data.join("t").join(format!("{:016x}", merged[0].region_id));
    assert!(
        bytes_under(&mdir) < 8192,
        "a three-way merge copies nothing"
    );
    check_all_rows(&conn, "three merged with references").await;
    engine.set_compactions_enabled(true);
    admin.major_compact("t").await.unwrap();
    server.master().run_janitor().unwrap();
    assert_eq!(
        region_dirs(&data),
        vec![format!("{:016x}", merged[0].region_id)],
        "the janitor removed all three parents"
    );
    check_all_rows(&conn, "three merged and compacted").await;
    server.stop().await.unwrap();
}
