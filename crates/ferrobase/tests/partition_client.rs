//! Network partition of the clients, on real network namespaces
//! (`tests/netns/`): etcd, a master and two region servers each in a
//! namespace of their own, the test's clients in the root namespace. While
//! clients write with SYNC_WAL (`tests/partition/`) and a batch writer
//! sends batches of 200 rows, every host drops the clients' packets for a
//! few seconds: calls in flight, batches among them, hang or fail halfway.
//! Then the partition heals. Afterwards every row a batch reported as
//! written is present, every register's history is linearizable (a call
//! that failed may or may not have applied, never applied twice for the
//! counter), and the cluster itself noticed nothing (no failover).
//!
//! Needs root: skipped with a message otherwise; as root, a failure to
//! create the namespaces fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;
mod history;
mod netns;
mod partition;

use anyhow::{Result, bail};
use bytes::Bytes;
use ferrobase_client::Connection;
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use partition::{NsEtcd, Workload, spawn};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Hosts (namespaces).
const ETCD: usize = 0;
const MASTER: usize = 1;
const SERVERS: [usize; 2] = [2, 3];

/// Batches of 200 rows across both regions until `stop`; returns the rows
/// reported written and how many batches had failures.
async fn batch_writer(conn: Arc<Connection>, stop: Arc<AtomicBool>) -> (Vec<String>, usize) {
    let t = conn.table("part");
    let (mut acked, mut partial) = (Vec::new(), 0);
    let mut n = 0u64;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let rows: Vec<String> = (0..200)
            .map(|i| format!("{}-batch-{n:04}-{i:03}", if i % 2 == 0 { "b" } else { "y" }))
            .collect();
        let ms: Vec<RowMutation> = rows
            .iter()
            .map(|r| {
                RowMutation::new(r.clone())
                    .with_durability(Durability::SyncWal)
                    .put("f", "q", "v")
            })
            .collect();
        let results = t.batch(&ms).await;
        if results.iter().any(Result::is_err) {
            partial += 1;
        }
        acked.extend(
            rows.into_iter()
                .zip(results)
                .filter(|(_, r)| r.is_ok())
                .map(|(row, _)| row),
        );
    }
    (acked, partial)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_cut_off_mid_batch_lose_nothing_acknowledged() -> Result<()> {
    // Declared first, dropped last: every process is gone before its
    // namespace is deleted.
    let Some(net) = netns::Net::create(4)? else {
        return Ok(());
    };
    let root = tempfile::tempdir()?;
    let root_url = format!("file://{}", root.path().display());
    let etcd = NsEtcd::start(&net, ETCD)?;
    let master = spawn(&net, MASTER, "master", &etcd.url, &root_url)?;
    master.wait_line("active on", Duration::from_secs(30))?;
    let mut servers = Vec::new();
    for host in SERVERS {
        let s = spawn(&net, host, "regionserver", &etcd.url, &root_url)?;
        s.wait_line("listening on", Duration::from_secs(30))?;
        servers.push(s);
    }
    let admin = partition::connect(&master.address())?;
    cluster::wait_servers(&admin, 2).await?;
    let desc = TableDescriptor::new("part", vec![FamilyDescriptor::new("f")?])?;
    admin
        .admin()
        .create_table(&desc, &[Bytes::from_static(b"m")])
        .await?;
    let before = cluster::region_counts(&admin).await?;
    let work = Workload::start(&master.address())?;
    let stop = Arc::new(AtomicBool::new(false));
    let batches = tokio::spawn(batch_writer(
        partition::connect(&master.address())?,
        stop.clone(),
    ));
    tokio::time::sleep(Duration::from_secs(2)).await;

    // Every host drops the clients' packets; calls in flight stall.
    for host in [ETCD, MASTER, SERVERS[0], SERVERS[1]] {
        net.cut_client(host)?;
    }
    tokio::time::sleep(Duration::from_secs(4)).await;
    for host in [ETCD, MASTER, SERVERS[0], SERVERS[1]] {
        net.heal_client(host)?;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;

    stop.store(true, Ordering::SeqCst);
    let (rows, partial) = batches.await?;
    let summary = work.finish().await?;
    let t = admin.table("part");
    let got = t
        .get_rows(
            rows.iter().map(|r| Bytes::from(r.clone())).collect(),
            &Default::default(),
        )
        .await?;
    let lost = rows.iter().zip(&got).filter(|(_, g)| g.is_empty()).count();
    if lost > 0 {
        bail!("{lost} rows a batch acknowledged are lost");
    }
    // The servers kept their leases: nothing moved, nobody died.
    assert_eq!(cluster::region_counts(&admin).await?, before);
    for s in &mut servers {
        assert!(
            s.wait_exit(Duration::from_millis(1)).is_err(),
            "a server exited"
        );
    }
    println!(
        "{summary}; {} batched rows present ({partial} batches with failures)",
        rows.len()
    );
    Ok(())
}
