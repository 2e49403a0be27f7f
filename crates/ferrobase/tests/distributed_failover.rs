//! Failover: etcd, a master and 3 region servers on a shared root; a
//! pre-split table is written with SYNC_WAL while one region server is
//! killed with SIGKILL. Its lease expires, the master splits its WAL by
//! region, the regions reopen on the survivors (replaying their recovered
//! edits), and every acknowledged row is readable. Prints the MTTR: from
//! the kill to the last region online again.
//!
//! The same scenario runs on three storage roots: a shared directory, an
//! S3 bucket (a real moto server on loopback), where WAL batches are
//! objects and the fence is an `OWNER` object instead of a rename, and
//! HDFS (a MiniDFSCluster), where the master recovers the lease of the
//! dead server's open segment before splitting it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

/// The two roots' runs take turns: each starts etcd, a master and region
/// servers, and two such clusters at once on 2 cores starve each other's
/// leases (a test of failover, not of an overloaded machine).
static ONE_CLUSTER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

use anyhow::{Result, bail};
use bytes::Bytes;
use ferrobase_client::{Connection, Get};
use ferrobase_storage::fs::s3::testing::MotoServer;
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const SPLITS: [&str; 5] = ["b", "d", "f", "h", "j"];
const PREFIXES: [&str; 6] = ["a", "c", "e", "g", "i", "k"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_a_region_server_loses_no_acknowledged_row() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let mut c = cluster::Cluster::start(1, 3, &[])?;
    failover(&mut c, "shared directory").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_on_an_s3_root_loses_no_acknowledged_row() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    let moto = MotoServer::start();
    let mut c = cluster::Cluster::start_on(Some(moto.url("cluster")), 1, 3, &[])?;
    failover(&mut c, "S3 (moto)").await?;
    // The data really is in the bucket: store files, meta and WALs.
    let fs = ferrobase_storage::fs::from_url(&moto.url("cluster"))?;
    let names = fs.list(std::path::Path::new(""))?;
    for want in ["data", "meta.json", "wal"] {
        assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_on_an_hdfs_root_loses_no_acknowledged_row() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
    // A real MiniDFSCluster; skipped (loudly) only without Java in a dev run.
    let Some(hdfs) = ferrobase_storage::fs::hdfs::testing::MiniHdfs::start() else {
        return Ok(());
    };
    let mut c = cluster::Cluster::start_on(Some(hdfs.url("cluster")), 1, 3, &[])?;
    failover(&mut c, "HDFS (MiniDFSCluster)").await
}

async fn failover(c: &mut cluster::Cluster, root: &str) -> Result<()> {
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 3).await?;
    let desc = TableDescriptor::new("ft", vec![FamilyDescriptor::new("f")?])?;
    let splits: Vec<Bytes> = SPLITS
        .iter()
        .map(|s| Bytes::from_static(s.as_bytes()))
        .collect();
    conn.admin().create_table(&desc, &splits).await?;
    // Each server holds two of the six regions.
    let counts = cluster::region_counts(&conn).await?;
    assert_eq!(counts.values().sum::<usize>(), 6, "{counts:?}");
    assert!(counts.values().all(|&n| n == 2), "{counts:?}");

    let stop = Arc::new(AtomicBool::new(false));
    let acks = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for w in 0..4 {
        let t = conn.table("ft");
        let (stop, acks) = (stop.clone(), acks.clone());
        writers.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            let mut failed = None;
            for i in 0usize.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let row = format!("{}-{w}-{i:06}", PREFIXES[i % PREFIXES.len()]);
                let m = RowMutation::new(row.clone())
                    .with_durability(Durability::SyncWal)
                    .put("f", "q", format!("v{i}"));
                match t.put(m).await {
                    Ok(()) => {
                        acked.push(row);
                        acks.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        failed = Some(format!("{row}: {e}"));
                        break;
                    }
                }
            }
            (acked, failed)
        }));
    }
    wait_for(&acks, 600).await?;

    // Kill the server holding region "a" (the first region) mid-write.
    let victim_addr = cluster::holder(&conn, "ft", b"a").await?;
    let victim = c
        .servers
        .iter()
        .position(|s| s.address() == victim_addr)
        .expect("victim is one of ours");
    let before = acks.load(Ordering::Relaxed);
    let killed = Instant::now();
    c.servers[victim].kill()?;

    // Recovered: every region on a survivor and answering a read.
    let deadline = killed + Duration::from_secs(60);
    let t = conn.table("ft");
    loop {
        if Instant::now() > deadline {
            bail!("regions did not come back within 60 s");
        }
        let d = conn.admin().describe("ft").await?;
        let placed = d
            .regions
            .iter()
            .all(|r| !r.server.is_empty() && r.server != victim_addr);
        if placed {
            let mut all = true;
            for p in PREFIXES {
                if t.get(Get::new(format!("{p}-probe"))).await.is_err() {
                    all = false;
                }
            }
            if all {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mttr = killed.elapsed();
    println!(
        "MTTR (kill -9 to last region online, {root} root): {:.2} s",
        mttr.as_secs_f64()
    );
    // Writes go on after recovery.
    wait_for(&acks, before + 400).await?;
    stop.store(true, Ordering::Relaxed);
    let mut acked = Vec::new();
    for w in writers {
        let (rows, failed) = w.await?;
        assert!(failed.is_none(), "a write failed for good: {failed:?}");
        acked.extend(rows);
    }
    for chunk in acked.chunks(500) {
        let rows = chunk.iter().map(|r| Bytes::from(r.clone())).collect();
        let got = t.get_rows(rows, &Default::default()).await?;
        for (r, g) in chunk.iter().zip(got) {
            assert!(!g.is_empty(), "acknowledged row {r} lost");
        }
    }
    let counts = cluster::region_counts(&conn).await?;
    assert_eq!(counts.len(), 2, "{counts:?}");
    assert_eq!(counts.values().sum::<usize>(), 6, "{counts:?}");
    println!("{} acknowledged rows, all readable", acked.len());
    Ok(())
}

async fn wait_for(acks: &AtomicUsize, n: usize) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while acks.load(Ordering::Relaxed) < n {
        if Instant::now() > deadline {
            bail!(
                "only {} writes acknowledged, waiting for {n}",
                acks.load(Ordering::Relaxed)
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}
