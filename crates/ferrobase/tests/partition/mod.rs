//! Shared pieces of the network partition tests (`partition_*.rs`): etcd
//! and ferrobase processes inside namespaces (`tests/netns/`), and a client
//! workload on one table `part` (split at `m`) that records a history
//! (`tests/history/`): register puts and gets, a counter, unique rows, all
//! with SYNC_WAL; [`Workload::finish`] stops it, reads everything back and
//! checks it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use crate::history::{self, History};
use crate::{cluster, netns};
use anyhow::{Context, Result, bail};
use bytes::Bytes;
use ferrobase_client::{Connection, Get, Table};
use ferrobase_types::{Durability, RowMutation};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Any single call longer than this counts as unknown.
pub const OP_LIMIT: Duration = Duration::from_secs(10);

/// etcd inside a namespace, killed on drop.
pub struct NsEtcd {
    child: Child,
    _dir: tempfile::TempDir,
    pub url: String,
}

impl NsEtcd {
    pub fn start(net: &netns::Net, host: usize) -> Result<NsEtcd> {
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

pub fn spawn(
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

pub fn register_put(key: &str, value: u64) -> RowMutation {
    RowMutation::new(key.to_string())
        .with_durability(Durability::SyncWal)
        .put("f", "v", value.to_be_bytes())
}

pub async fn register_get(t: &Table, key: &str) -> Result<Option<u64>> {
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
pub async fn register_client(
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
pub async fn register_reader(
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
pub async fn counter_client(
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
pub async fn row_writer(id: u64, conn: Arc<Connection>, stop: Arc<AtomicBool>) -> Vec<String> {
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

/// Client tasks on table `part`, each with a connection (and so a location
/// cache) of its own.
pub struct Workload {
    masters: String,
    keys: Arc<Vec<String>>,
    hist: Arc<History>,
    stop: Arc<AtomicBool>,
    attempted: Arc<AtomicI64>,
    acked: Arc<AtomicI64>,
    registers: Vec<tokio::task::JoinHandle<()>>,
    counter: tokio::task::JoinHandle<()>,
    writers: Vec<tokio::task::JoinHandle<Vec<String>>>,
}

/// A connection to `masters` with the failover client settings.
pub fn connect(masters: &str) -> Result<Arc<Connection>> {
    Ok(Arc::new(Connection::connect(
        masters,
        cluster::client_settings(),
    )?))
}

impl Workload {
    /// Starts 4 register clients, 2 readers of the `a` registers, a
    /// counter client and 2 row writers.
    pub fn start(masters: &str) -> Result<Workload> {
        let keys: Arc<Vec<String>> = Arc::new(
            (0..3)
                .flat_map(|k| [format!("a-reg-{k}"), format!("z-reg-{k}")])
                .collect(),
        );
        let hist = Arc::new(History::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (attempted, acked) = (Arc::new(AtomicI64::new(0)), Arc::new(AtomicI64::new(0)));
        let mut registers = Vec::new();
        for id in 0..4 {
            registers.push(tokio::spawn(register_client(
                id,
                connect(masters)?,
                keys.clone(),
                hist.clone(),
                stop.clone(),
            )));
        }
        for _ in 0..2 {
            registers.push(tokio::spawn(register_reader(
                connect(masters)?,
                keys.clone(),
                hist.clone(),
                stop.clone(),
            )));
        }
        let counter = tokio::spawn(counter_client(
            connect(masters)?,
            attempted.clone(),
            acked.clone(),
            stop.clone(),
        ));
        let writers = (0..2)
            .map(|id| {
                Ok(tokio::spawn(row_writer(
                    id,
                    connect(masters)?,
                    stop.clone(),
                )))
            })
            .collect::<Result<_>>()?;
        Ok(Workload {
            masters: masters.to_string(),
            keys,
            hist,
            stop,
            attempted,
            acked,
            registers,
            counter,
            writers,
        })
    }

    /// Stops the clients, reads every register (recorded like any get),
    /// every acknowledged row and the counter, and checks them: no
    /// acknowledged row lost, every register linearizable, the counter
    /// between its acknowledged and attempted increments. Returns a summary.
    pub async fn finish(self) -> Result<String> {
        self.stop.store(true, Ordering::SeqCst);
        for r in self.registers {
            r.await?;
        }
        self.counter.await?;
        let mut rows = Vec::new();
        for w in self.writers {
            rows.extend(w.await?);
        }
        let after = connect(&self.masters)?;
        let t = after.table("part");
        for key in self.keys.iter() {
            let at = self.hist.invoke();
            let v = register_get(&t, key).await?;
            self.hist.get(key, v, at);
        }
        let got = t
            .get_rows(
                rows.iter().map(|r| Bytes::from(r.clone())).collect(),
                &Default::default(),
            )
            .await?;
        let lost: Vec<&String> = rows
            .iter()
            .zip(&got)
            .filter(|(_, g)| g.is_empty())
            .map(|(r, _)| r)
            .collect();
        if !lost.is_empty() {
            bail!("{} acknowledged rows lost: {lost:?}", lost.len());
        }
        let counted = t.get(Get::new("a-counter")).await?;
        let value = match counted.value(b"f", b"c") {
            Some(v) => i64::from_be_bytes(v[..].try_into().context("counter is not 8 bytes")?),
            None => 0,
        };
        let (attempted, acked) = (
            self.attempted.load(Ordering::SeqCst),
            self.acked.load(Ordering::SeqCst),
        );
        history::check_counter(value, acked, attempted).map_err(anyhow::Error::msg)?;
        let ops = self.hist.check().map_err(anyhow::Error::msg)?;
        if acked == 0 || rows.is_empty() {
            bail!("the workload made no progress");
        }
        Ok(format!(
            "{} acknowledged rows present; {ops} register ops linearizable; counter {value} \
             (acked {acked}, attempted {attempted})",
            rows.len()
        ))
    }
}
