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
//! Needs root: skipped with a message otherwise; as root, a failure to
//! create the namespaces fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;
mod history;
mod netns;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use ferrobase_client::{Connection, Get, Table};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use history::History;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Hosts (namespaces).
const ETCD: usize = 0;
const MASTER: usize = 1;
const SERVERS: [usize; 2] = [2, 3];
/// Any single call longer than this counts as unknown.
const OP_LIMIT: Duration = Duration::from_secs(10);

/// etcd inside a namespace, killed on drop.
struct NsEtcd {
    child: Child,
    _dir: tempfile::TempDir,
    url: String,
}

impl NsEtcd {
    fn start(net: &netns::Net, host: usize) -> Result<NsEtcd> {
        let dir = tempfile::tempdir()?;
        let ip = net.host_ip(host);
        // The namespace's ports are its own: fixed ones cannot collide.
        let url = format!("http://{ip}:2379");
        let peer = "http://127.0.0.1:2380";
        let log = std::fs::File::create(dir.path().join("etcd.log"))?;
        let child = net
            .command(host, "etcd")
            .args(["--name", "fb", "--data-dir"])
            .arg(dir.path().join("etcd"))
            .args(["--listen-client-urls", &url])
            .args(["--advertise-client-urls", &url])
            .args(["--listen-peer-urls", peer])
            .args(["--initial-advertise-peer-urls", peer])
            .args(["--initial-cluster", &format!("fb={peer}")])
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting etcd in its namespace")?;
        let etcd = NsEtcd {
            child,
            _dir: dir,
            url,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect((ip.as_str(), 2379)).is_err() {
            if Instant::now() > deadline {
                bail!("etcd in its namespace did not listen on {ip}:2379 within 30 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(etcd)
    }
}

impl Drop for NsEtcd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(
    net: &netns::Net,
    host: usize,
    kind: &str,
    etcd: &str,
    root: &str,
) -> Result<cluster::Node> {
    let cmd = net.command(host, env!("CARGO_BIN_EXE_ferrobase"));
    let port = if kind == "master" { 16000 } else { 16020 };
    cluster::Node::spawn_with(cmd, &net.host_ip(host), port, kind, etcd, root, &[])
}

fn register_put(key: &str, value: u64) -> RowMutation {
    RowMutation::new(key.to_string())
        .with_durability(Durability::SyncWal)
        .put("f", "v", value.to_be_bytes())
}

async fn register_get(t: &Table, key: &str) -> Result<Option<u64>> {
    let r = t.get(Get::new(key.to_string())).await?;
    match r.value(b"f", b"v") {
        None => Ok(None),
        Some(v) => {
            let a: [u8; 8] = v[..].try_into().context("register value is not 8 bytes")?;
            Ok(Some(u64::from_be_bytes(a)))
        }
    }
}

/// A client task on registers: random puts of unique values and gets.
async fn register_client(
    id: u64,
    conn: Arc<Connection>,
    keys: Arc<Vec<String>>,
    hist: Arc<History>,
    stop: Arc<AtomicBool>,
) {
    let t = conn.table("part");
    let mut seq = 0u64;
    while !stop.load(Ordering::SeqCst) {
        seq += 1;
        let key = &keys[(seq.wrapping_mul(7) + id) as usize % keys.len()];
        if seq.is_multiple_of(2) {
            let value = (id << 32) | seq;
            let at = hist.invoke();
            let r = tokio::time::timeout(OP_LIMIT, t.put(register_put(key, value))).await;
            hist.put(key, value, at, matches!(r, Ok(Ok(()))));
        } else {
            let at = hist.invoke();
            if let Ok(Ok(v)) = tokio::time::timeout(OP_LIMIT, register_get(&t, key)).await {
                hist.get(key, v, at);
            }
        }
    }
}

/// A client task that only reads the cut-off server's registers: it never
/// fails a write, so it keeps the old location cached for as long as the
/// old server answers it — exactly the client a stale read would reach.
async fn register_reader(
    conn: Arc<Connection>,
    keys: Arc<Vec<String>>,
    hist: Arc<History>,
    stop: Arc<AtomicBool>,
) {
    let t = conn.table("part");
    let mine: Vec<&String> = keys.iter().filter(|k| k.starts_with('a')).collect();
    let mut i = 0;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let key = mine[i % mine.len()];
        let at = hist.invoke();
        if let Ok(Ok(v)) = tokio::time::timeout(OP_LIMIT, register_get(&t, key)).await {
            hist.get(key, v, at);
        }
    }
}

/// Increments `a-counter` with SYNC_WAL; counts attempts and acks.
async fn counter_client(
    conn: Arc<Connection>,
    attempted: Arc<AtomicI64>,
    acked: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
) {
    let t = conn.table("part");
    while !stop.load(Ordering::SeqCst) {
        let m = RowMutation::new("a-counter")
            .with_durability(Durability::SyncWal)
            .put("f", "c", 1i64.to_be_bytes());
        attempted.fetch_add(1, Ordering::SeqCst);
        if let Ok(Ok(_)) = tokio::time::timeout(OP_LIMIT, t.increment_row(m)).await {
            acked.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// Writes unique rows with SYNC_WAL; returns the acknowledged ones.
async fn row_writer(id: u64, conn: Arc<Connection>, stop: Arc<AtomicBool>) -> Vec<String> {
    let t = conn.table("part");
    let mut acked = Vec::new();
    let mut i = 0u64;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let prefix = if i.is_multiple_of(2) { "a" } else { "z" };
        let row = format!("{prefix}-row-{id}-{i:05}");
        let m = RowMutation::new(row.clone())
            .with_durability(Durability::SyncWal)
            .put("f", "q", "v");
        if let Ok(Ok(())) = tokio::time::timeout(OP_LIMIT, t.put(m)).await {
            acked.push(row);
        }
    }
    acked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_region_server_cut_off_from_etcd_acknowledges_nothing_the_new_owner_misses() -> Result<()>
{
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

    // Clients: each task its own connection, so each has its own cache.
    let keys: Arc<Vec<String>> = Arc::new(
        (0..3)
            .flat_map(|k| [format!("a-reg-{k}"), format!("z-reg-{k}")])
            .collect(),
    );
    let hist = Arc::new(History::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (attempted, acked) = (Arc::new(AtomicI64::new(0)), Arc::new(AtomicI64::new(0)));
    let connect = || -> Result<Arc<Connection>> {
        Ok(Arc::new(Connection::connect(
            &master.address(),
            cluster::client_settings(),
        )?))
    };
    let mut registers = Vec::new();
    for id in 0..4 {
        registers.push(tokio::spawn(register_client(
            id,
            connect()?,
            keys.clone(),
            hist.clone(),
            stop.clone(),
        )));
    }
    for _ in 0..2 {
        registers.push(tokio::spawn(register_reader(
            connect()?,
            keys.clone(),
            hist.clone(),
            stop.clone(),
        )));
    }
    let counter = tokio::spawn(counter_client(
        connect()?,
        attempted.clone(),
        acked.clone(),
        stop.clone(),
    ));
    let writers: Vec<_> = (0..2)
        .map(|id| Ok(tokio::spawn(row_writer(id, connect()?, stop.clone()))))
        .collect::<Result<_>>()?;
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The partition: the victim loses etcd and the master, keeps clients.
    net.cut(victim_host, ETCD)?;
    net.cut(victim_host, MASTER)?;
    let fresh = connect()?;
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

    stop.store(true, Ordering::SeqCst);
    for r in registers {
        r.await?;
    }
    counter.await?;
    let mut rows = Vec::new();
    for w in writers {
        rows.extend(w.await?);
    }

    // Final reads, recorded in the history like any other get.
    let after = connect()?;
    let t = after.table("part");
    for key in keys.iter() {
        let at = hist.invoke();
        let v = register_get(&t, key).await?;
        hist.get(key, v, at);
    }
    let got = t
        .get_rows(
            rows.iter().map(|r| Bytes::from(r.clone())).collect(),
            &Default::default(),
        )
        .await?;
    for (r, g) in rows.iter().zip(&got) {
        assert!(!g.is_empty(), "acknowledged row {r} lost");
    }
    let counted = t.get(Get::new("a-counter")).await?;
    let value = match counted.value(b"f", b"c") {
        Some(v) => i64::from_be_bytes(v[..].try_into().context("counter is not 8 bytes")?),
        None => 0,
    };
    let (attempted, acked) = (
        attempted.load(Ordering::SeqCst),
        acked.load(Ordering::SeqCst),
    );
    history::check_counter(value, acked, attempted).map_err(anyhow::Error::msg)?;
    let ops = hist.check().map_err(anyhow::Error::msg)?;
    println!(
        "{} acknowledged rows present; {ops} register ops linearizable; counter {value} \
         (acked {acked}, attempted {attempted})",
        rows.len()
    );
    assert!(
        acked > 0 && !rows.is_empty(),
        "the workload made no progress"
    );
    Ok(())
}
