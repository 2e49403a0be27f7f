//! Network partition of a region server, on real network namespaces
//! (`tests/netns/`): etcd, a master and two region servers each in a
//! namespace of their own, joined by a bridge; the test's clients in the
//! root namespace. While clients write single-row registers, a counter and
//! unique rows with SYNC_WAL, one region server is cut off from etcd and the
//! master (blackhole routes both ways) but stays reachable by the clients,
//! so clients with a cached location keep sending it calls. Its lease
//! expires, its regions reopen on the other server, and it must not
//! acknowledge anything the new owner cannot see, nor answer a read with
//! a value older than an acknowledged write. Then the partition heals and a
//! region server starts again in the cut-off namespace.
//!
//! Afterwards: every acknowledged unique row is present, every register's
//! history is linearizable (`tests/history/`), and the counter is at least
//! its acknowledged increments and at most its attempted ones.
//!
//! The second test cuts a region server from the master only: it keeps
//! its lease, so nothing moves, and the master must keep working.
//!
//! Needs root: skipped with a message otherwise; as root, a failure to
//! create the namespaces fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;
mod history;
mod netns;
mod partition;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use ferrobase_client::{Connection, Get};
use ferrobase_types::{FamilyDescriptor, TableDescriptor};
use partition::{NsEtcd, Workload, spawn};
use std::time::{Duration, Instant};

/// The tests take turns: two clusters at once on 2 cores starve each
/// other's leases (a test of partitions, not of an overloaded machine).
static ONE_CLUSTER_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Hosts (namespaces).
const ETCD: usize = 0;
const MASTER: usize = 1;
const SERVERS: [usize; 2] = [2, 3];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_region_server_cut_off_from_etcd_acknowledges_nothing_the_new_owner_misses() -> Result<()>
{
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
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

    let admin = Connection::connect(&master.address(), cluster::client_settings())?;
    cluster::wait_servers(&admin, 2).await?;
    let desc = TableDescriptor::new("part", vec![FamilyDescriptor::new("f")?])?;
    admin
        .admin()
        .create_table(&desc, &[Bytes::from_static(b"m")])
        .await?;
    let victim_addr = cluster::holder(&admin, "part", b"a").await?;
    let victim = servers
        .iter()
        .position(|s| s.address() == victim_addr)
        .context("the holder of 'a' is one of ours")?;
    let victim_host = SERVERS[victim];
    println!("cutting off {victim_addr} (host {victim_host})");
    let work = Workload::start(&master.address())?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The partition: the victim loses etcd and the master, keeps clients.
    net.cut(victim_host, ETCD)?;
    net.cut(victim_host, MASTER)?;
    let fresh = partition::connect(&master.address())?;
    let ft = fresh.table("part");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if Instant::now() > deadline {
            bail!("region 'a' did not move off the cut-off server within 60 s");
        }
        let moved = cluster::holder(&fresh, "part", b"a")
            .await
            .is_ok_and(|s| !s.is_empty() && s != victim_addr);
        if moved && ft.get(Get::new("a-probe")).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    println!("region 'a' reopened elsewhere");
    // The cut-off server sees its lease lost and stops.
    servers[victim]
        .wait_exit(Duration::from_secs(30))
        .context("the cut-off region server did not stop")?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The partition heals; a region server starts again on that host.
    net.heal(victim_host, ETCD)?;
    net.heal(victim_host, MASTER)?;
    let back = spawn(&net, victim_host, "regionserver", &etcd.url, &root_url)?;
    back.wait_line("listening on", Duration::from_secs(30))?;
    servers[victim] = back;
    cluster::wait_servers(&admin, 2).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    println!("{}", work.finish().await?);
    Ok(())
}

/// The other half-partition: a region server that still holds its etcd
/// lease but that the master cannot reach. It is alive, so nothing moves:
/// it keeps serving clients, the master keeps working (DDL, assignment on
/// the reachable server), and after healing everything checks out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_region_server_cut_off_from_the_master_only_keeps_serving() -> Result<()> {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().await;
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
    let cut_addr = cluster::holder(&admin, "part", b"a").await?;
    let cut = servers
        .iter()
        .position(|s| s.address() == cut_addr)
        .context("the holder of 'a' is one of ours")?;
    let work = Workload::start(&master.address())?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    net.cut(SERVERS[cut], MASTER)?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    // The master still works: DDL, and a new table's regions open.
    let desc = TableDescriptor::new("during", vec![FamilyDescriptor::new("f")?])?;
    admin
        .admin()
        .create_table(&desc, &[])
        .await
        .context("create_table while a region server is cut off from the master")?;
    let t = admin.table("during");
    t.put(ferrobase_types::RowMutation::new("r").put("f", "q", "v"))
        .await?;
    assert!(!t.get(Get::new("r")).await?.is_empty());
    // Nothing moved off the live server.
    assert_eq!(cluster::holder(&admin, "part", b"a").await?, cut_addr);
    net.heal(SERVERS[cut], MASTER)?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    for s in &mut servers {
        assert!(
            s.wait_exit(Duration::from_millis(1)).is_err(),
            "a region server exited"
        );
    }
    println!("{}", work.finish().await?);
    Ok(())
}
