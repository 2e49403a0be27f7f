//! Kill -9 at every step of a split and of a merge by reference, and in the
//! middle of the janitor: a `ferrobase standalone` child with
//! `FERROBASE_CRASH_AT=<step>` aborts there (the server's crash points,
//! `crates/server/src/crash_point.rs`), is restarted on the same data
//! directory, and then:
//!
//! - either the parent(s) or the child(ren) serve, never both: the table's
//!   regions tile the row space, before the meta write as they were, after
//!   it as the split or merge made them;
//! - every acknowledged row reads back with its value;
//! - the operation can be done again (or goes on: compaction and the
//!   janitor remove what the children no longer read).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod standalone;

use bytes::Bytes;
use ferrobase_client::{BufferedMutator, Connection, Get, Scan};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::path::Path;
use std::time::{Duration, Instant};

const ROWS: u32 = 3000;

fn settings() -> Settings {
    Settings {
        client_retries: 2,
        client_pause_ms: 10,
        ..Settings::default()
    }
}

fn row(i: u32) -> String {
    format!("row{i:05}")
}

fn value(i: u32) -> String {
    format!("value-{i}-{}", "x".repeat(100))
}

async fn load(conn: &Connection, from: u32, to: u32) {
    let bm = BufferedMutator::with_buffer_size(conn.table("t"), 64 << 10);
    for i in from..to {
        bm.mutate(
            RowMutation::new(row(i))
                .with_durability(Durability::SyncWal)
                .put("f", "q", value(i)),
        )
        .await
        .unwrap();
    }
    bm.close().await.unwrap();
}

/// Waits for the child to die of the crash point.
fn wait_for_abort(server: &mut standalone::Server, step: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            assert!(!status.success(), "{step}: the server exited cleanly");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{step}: the server never reached the crash point"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every acknowledged row, and the regions tiling the row space; returns
/// the regions' start keys.
async fn check(conn: &Connection, step: &str) -> Vec<Bytes> {
    let d = conn.admin().describe("t").await.unwrap();
    assert!(d.regions.first().unwrap().start_key.is_empty(), "{step}");
    assert!(d.regions.last().unwrap().end_key.is_empty(), "{step}");
    for pair in d.regions.windows(2) {
        assert_eq!(pair[0].end_key, pair[1].start_key, "{step}: regions tile");
    }
    let t = conn.table("t");
    let mut rows = Vec::new();
    for attempt in 0..200 {
        match t.scan(Scan::new()).collect().await {
            Ok(r) => {
                rows = r;
                break;
            }
            // Regions still opening after the restart.
            Err(_) if attempt < 199 => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(e) => panic!("{step}: {e}"),
        }
    }
    assert_eq!(rows.len() as u32, ROWS, "{step}: every acknowledged row");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.row, Bytes::from(row(i as u32)), "{step}");
        assert_eq!(r.cells[0].value, Bytes::from(value(i as u32)), "{step}");
    }
    let got = t.get(Get::new(row(ROWS - 1))).await.unwrap();
    assert_eq!(got.cells.len(), 1, "{step}");
    d.regions.iter().map(|r| r.start_key.clone()).collect()
}

fn region_dirs(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("data").join("t"))
        .map(|d| d.count())
        .unwrap_or(0)
}

async fn create(conn: &Connection, splits: &[Bytes]) {
    let desc = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    conn.admin().create_table(&desc, splits).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_at_every_step_of_a_split() {
    let point = Bytes::from(row(ROWS / 2));
    for (step, published) in [
        ("split-before-references", false),
        ("split-after-references", false),
        ("split-after-meta", true),
        ("split-after-open", true),
        ("janitor-after-delete", true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (mut server, addr) =
            standalone::start_with_env(dir.path(), &[], &[("FERROBASE_CRASH_AT", step)]);
        let conn = Connection::connect(&addr, settings()).unwrap();
        create(&conn, &[]).await;
        load(&conn, 0, ROWS).await;
        let split = conn.admin().split("t", Some(point.clone())).await;
        if step == "janitor-after-delete" {
            // The split returns; the daughters' compaction and then the
            // janitor's chore run in the background and reach the step.
            split.unwrap();
        }
        wait_for_abort(&mut server, step);
        drop(server);

        let (_server, addr) = standalone::start(dir.path(), &[]);
        let conn = Connection::connect(&addr, settings()).unwrap();
        let starts = check(&conn, step).await;
        if published {
            assert_eq!(
                starts,
                vec![Bytes::new(), point.clone()],
                "{step}: the daughters serve"
            );
        } else {
            assert_eq!(starts, vec![Bytes::new()], "{step}: the parent serves");
            conn.admin().split("t", Some(point.clone())).await.unwrap();
            check(&conn, &format!("{step}, split again")).await;
        }
        // The daughters compact their references away; the janitor then
        // leaves only live regions' directories: the parent's, and for a
        // split that died before the meta write its unused daughters', go.
        conn.admin().major_compact("t").await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while region_dirs(dir.path()) > 2 {
            assert!(
                Instant::now() < deadline,
                "{step}: the parent's directory stays"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        check(&conn, &format!("{step}, after the janitor")).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill9_at_every_step_of_a_merge() {
    let point = Bytes::from(row(ROWS / 2));
    for (step, published) in [
        ("merge-after-references", false),
        ("merge-after-meta", true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (mut server, addr) =
            standalone::start_with_env(dir.path(), &[], &[("FERROBASE_CRASH_AT", step)]);
        let conn = Connection::connect(&addr, settings()).unwrap();
        create(&conn, std::slice::from_ref(&point)).await;
        load(&conn, 0, ROWS).await;
        let d = conn.admin().describe("t").await.unwrap();
        let (a, b) = (d.regions[0].region_id, d.regions[1].region_id);
        let merged = conn
            .admin()
            .merge_regions(&a.to_string(), &b.to_string())
            .await;
        assert!(merged.is_err(), "{step}: the server died in the merge");
        wait_for_abort(&mut server, step);
        drop(server);

        let (_server, addr) = standalone::start(dir.path(), &[]);
        let conn = Connection::connect(&addr, settings()).unwrap();
        let starts = check(&conn, step).await;
        if published {
            assert_eq!(
                starts,
                vec![Bytes::new()],
                "{step}: the merged region serves"
            );
        } else {
            assert_eq!(
                starts,
                vec![Bytes::new(), point.clone()],
                "{step}: the parents serve"
            );
            conn.admin()
                .merge_regions(&a.to_string(), &b.to_string())
                .await
                .unwrap();
            check(&conn, &format!("{step}, merged again")).await;
        }
        // Only the merged region's directory stays: the parents', and for a
        // merge that died before the meta write its unused child's, go.
        conn.admin().major_compact("t").await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while region_dirs(dir.path()) > 1 {
            assert!(
                Instant::now() < deadline,
                "{step}: the parents' directories stay"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        check(&conn, &format!("{step}, after the janitor")).await;
    }
}
