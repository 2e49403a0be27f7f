//! Model-based test of snapshots: seeded random sequences of puts,
//! deletes, flushes, minor and major compactions, snapshots, restores,
//! clones and snapshot deletions against a real standalone server, checked
//! against a plain map after every step that can change what is read.
//! Timestamps are explicit and increasing, so the model is exact.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod snapshot_common;

use bytes::Bytes;
use ferrobase_client::{Connection, Scan};
use ferrobase_types::RowMutation;
use std::collections::BTreeMap;

type Model = BTreeMap<String, String>;

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

async fn read(conn: &Connection, table: &str) -> Model {
    conn.table(table)
        .scan(Scan::new())
        .collect()
        .await
        .unwrap()
        .into_iter()
        .flat_map(|r| r.cells)
        .map(|c| {
            (
                String::from_utf8(c.row.to_vec()).unwrap(),
                String::from_utf8(c.value.to_vec()).unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_agree_with_a_model() {
    for seed in [0x5eed_0001_u64, 0xdead_beef, 0x1234_5678_9abc] {
        run(seed, 80).await;
    }
}

async fn run(seed: u64, steps: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (server, conn) = common::start_on(dir.path(), common::settings()).await;
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), &[Bytes::from("r5")])
        .await
        .unwrap();
    let t = conn.table("t");
    let mut rng = Rng(seed);
    let mut model = Model::new();
    let mut snapshots: BTreeMap<String, Model> = BTreeMap::new();
    let mut ts = 1u64;
    let mut next_snapshot = 0;
    for step in 0..steps {
        let ctx = format!("seed {seed:#x}, step {step}");
        ts += 1;
        match rng.below(100) {
            0..=44 => {
                let row = format!("r{}", rng.below(10));
                let value = format!("v{step}");
                t.put(RowMutation::new(row.clone()).put_at("f", "q", ts, value.clone()))
                    .await
                    .unwrap();
                model.insert(row, value);
            }
            45..=59 => {
                let row = format!("r{}", rng.below(10));
                t.delete(RowMutation::new(row.clone()).delete_family("f", ts))
                    .await
                    .unwrap();
                model.remove(&row);
            }
            60..=66 => admin.flush("t").await.unwrap(),
            67..=70 => admin.compact("t").await.unwrap(),
            71..=74 => admin.major_compact("t").await.unwrap(),
            75..=84 => {
                let name = format!("s{next_snapshot}");
                next_snapshot += 1;
                admin.snapshot("t", &name).await.unwrap();
                snapshots.insert(name, model.clone());
            }
            85..=91 if !snapshots.is_empty() => {
                let i = rng.below(snapshots.len() as u64) as usize;
                let (name, held) = snapshots.iter().nth(i).unwrap();
                admin.disable("t").await.unwrap();
                admin.restore_snapshot(name).await.unwrap();
                admin.enable("t").await.unwrap();
                model = held.clone();
            }
            92..=95 if !snapshots.is_empty() => {
                let i = rng.below(snapshots.len() as u64) as usize;
                let (name, held) = snapshots.iter().nth(i).unwrap();
                admin.clone_snapshot(name, "c").await.unwrap();
                assert_eq!(&read(&conn, "c").await, held, "{ctx}: clone of {name}");
                admin.disable("c").await.unwrap();
                admin.drop_table("c").await.unwrap();
            }
            96..=99 if !snapshots.is_empty() => {
                let i = rng.below(snapshots.len() as u64) as usize;
                let name = snapshots.keys().nth(i).unwrap().clone();
                admin.delete_snapshot(&name).await.unwrap();
                snapshots.remove(&name);
            }
            _ => {}
        }
        assert_eq!(read(&conn, "t").await, model, "{ctx}");
    }
    // Every snapshot still restores what it held, after all of the above.
    let names: Vec<String> = snapshots.keys().cloned().collect();
    for name in names {
        admin.disable("t").await.unwrap();
        admin.restore_snapshot(&name).await.unwrap();
        admin.enable("t").await.unwrap();
        assert_eq!(
            read(&conn, "t").await,
            snapshots[&name],
            "seed {seed:#x}: {name}"
        );
        admin.delete_snapshot(&name).await.unwrap();
        model = snapshots[&name].clone();
    }
    // With no snapshot left, the archive empties once the restored
    // table's regions have compacted their links into files of their own
    // and the janitor (every second) has released its hold. The bound only
    // stops a hang (a region whose startup compaction was never queued).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !snapshot_common::store_files(&dir.path().join("archive")).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "seed {seed:#x}: archive not cleaned"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        read(&conn, "t").await,
        model,
        "seed {seed:#x}: after the janitor"
    );
    server.stop().await.unwrap();
}
