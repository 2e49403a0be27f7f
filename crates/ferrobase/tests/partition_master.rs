//! Network partition of the active master, on real network namespaces
//! (`tests/netns/`): etcd, two masters and two region servers each in a
//! namespace of their own, the test's clients in the root namespace. While
//! clients write with SYNC_WAL (`tests/partition/`), the active master is
//! cut off from etcd, the standby and the region servers, but stays
//! reachable by clients. It must stop acting (its session ends, the process
//! exits); the standby takes over once the old lease expires, DDL works on
//! it, and the data path never depended on the master. Then the partition
//! heals and a master starts again in the cut-off namespace, as a standby.
//!
//! Needs root: skipped with a message otherwise; as root, a failure to
//! create the namespaces fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;
mod history;
mod netns;
mod partition;

use anyhow::{Context, Result};
use bytes::Bytes;
use ferrobase_types::{FamilyDescriptor, TableDescriptor};
use partition::{NsEtcd, Workload, spawn};
use std::time::Duration;

/// Hosts (namespaces).
const ETCD: usize = 0;
const OLD: usize = 1;
const STANDBY: usize = 2;
const SERVERS: [usize; 2] = [3, 4];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_active_master_cut_off_from_etcd_stops_and_the_standby_takes_over() -> Result<()> {
    // Declared first, dropped last: every process is gone before its
    // namespace is deleted.
    let Some(net) = netns::Net::create(5)? else {
        return Ok(());
    };
    let root = tempfile::tempdir()?;
    let root_url = format!("file://{}", root.path().display());
    let etcd = NsEtcd::start(&net, ETCD)?;
    let mut old = spawn(&net, OLD, "master", &etcd.url, &root_url)?;
    old.wait_line("active on", Duration::from_secs(30))?;
    let standby = spawn(&net, STANDBY, "master", &etcd.url, &root_url)?;
    standby.wait_line("standby", Duration::from_secs(30))?;
    let mut servers = Vec::new();
    for host in SERVERS {
        let s = spawn(&net, host, "regionserver", &etcd.url, &root_url)?;
        s.wait_line("listening on", Duration::from_secs(30))?;
        servers.push(s);
    }
    // Clients name both masters, the old one first.
    let masters = format!("{},{}", old.address(), standby.address());
    let admin = partition::connect(&masters)?;
    cluster::wait_servers(&admin, 2).await?;
    let desc = TableDescriptor::new("part", vec![FamilyDescriptor::new("f")?])?;
    admin
        .admin()
        .create_table(&desc, &[Bytes::from_static(b"m")])
        .await?;
    let work = Workload::start(&masters)?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The partition: the old master loses etcd, the standby and the region
    // servers; clients still reach it.
    for other in [ETCD, STANDBY, SERVERS[0], SERVERS[1]] {
        net.cut(OLD, other)?;
    }
    standby
        .wait_line("active on", Duration::from_secs(30))
        .context("the standby did not take over")?;
    old.wait_exit(Duration::from_secs(30))
        .context("the cut-off master did not stop")?;
    println!("standby active; the cut-off master stopped");

    // DDL goes to the new master; the meta the old one wrote is there.
    let desc = TableDescriptor::new("after", vec![FamilyDescriptor::new("f")?])?;
    admin.admin().create_table(&desc, &[]).await?;
    let mut tables = admin.admin().list_tables().await?;
    tables.sort();
    assert_eq!(tables, vec!["after".to_string(), "part".to_string()]);
    cluster::wait_servers(&admin, 2).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;

    // The partition heals; a master starts again there, as a standby.
    for other in [ETCD, STANDBY, SERVERS[0], SERVERS[1]] {
        net.heal(OLD, other)?;
    }
    old = spawn(&net, OLD, "master", &etcd.url, &root_url)?;
    old.wait_line("standby", Duration::from_secs(30))?;
    tokio::time::sleep(Duration::from_secs(1)).await;

    println!("{}", work.finish().await?);
    drop(old);
    Ok(())
}
