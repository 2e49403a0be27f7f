//! Kill -9 soak of a cluster: etcd, a master and three region servers on a
//! shared root, under concurrent SYNC_WAL and FSYNC_WAL writers, a counter
//! incrementer and an appender, with a small memstore flush size, a low
//! compaction threshold and a small split size so kills land during
//! flushes, compactions and splits. A random region server is killed with
//! SIGKILL at a seeded random instant and a new one started in its place,
//! `FERROBASE_SOAK_CLUSTER_KILLS` times (default 4; `scripts/soak.sh N SEED
//! cluster` runs N; `FERROBASE_SOAK_SEED` picks the instants and victims).
//! The clients ride out each failover (the killed server's regions reopen
//! on the others after its WAL is split); each cycle waits until every
//! region answers again.
//!
//! At the end every acknowledged row must be there with its value, and
//! the counter and the appended value must hold their acknowledged
//! increments and appends plus at most the calls that failed for good:
//! they carry nonces, which reach the region's next server whether the
//! region was split, merged or moved between the call and its retry (see
//! docs/reliability.md), so a call cut by a kill and retried is applied
//! once. `distributed_nonces` checks each of those paths exactly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cluster;

use anyhow::{Result, bail};
use bytes::Bytes;
use ferrobase_client::{Connection, Get};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Server settings that make flushes, compactions and splits frequent.
const BUSY: &[&str] = &[
    "hbase.hregion.memstore.flush.size=65536",
    "hbase.hstore.compaction.min=2",
    "hbase.hregion.max.filesize=262144",
];

const SPLITS: [&str; 5] = ["b", "d", "f", "h", "j"];
const PREFIXES: [&str; 6] = ["a", "c", "e", "g", "i", "k"];

/// xorshift64*: the kill instants and victims, reproducible from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn value_of(row: &str) -> String {
    format!("value-of-{row}")
}

/// What the clients saw: calls acknowledged and calls that failed for good.
#[derive(Default)]
struct Tally {
    puts: AtomicU64,
    put_failures: AtomicU64,
    increments: AtomicU64,
    increment_failures: AtomicU64,
    appends: AtomicU64,
    append_failures: AtomicU64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_region_servers_loses_nothing_acknowledged() -> Result<()> {
    let kills: u32 = std::env::var("FERROBASE_SOAK_CLUSTER_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(4);
    let seed: u64 = std::env::var("FERROBASE_SOAK_SEED")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(0x5eed_f00d);
    let mut rng = Rng(seed | 1);
    let mut c = cluster::Cluster::start(1, 3, BUSY)?;
    let conn = Connection::connect(&c.master_addresses(), cluster::client_settings())?;
    cluster::wait_servers(&conn, 3).await?;
    let desc = TableDescriptor::new("soak", vec![FamilyDescriptor::new("f")?])?;
    let splits: Vec<Bytes> = SPLITS
        .iter()
        .map(|s| Bytes::from_static(s.as_bytes()))
        .collect();
    conn.admin().create_table(&desc, &splits).await?;

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let mut writers = Vec::new();
    for w in 0..4u32 {
        let t = conn.table("soak");
        let (stop, tally) = (stop.clone(), tally.clone());
        let durability = if w % 2 == 0 {
            Durability::SyncWal
        } else {
            Durability::FsyncWal
        };
        writers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            for i in 0usize.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                // Every region in turn; 1,000-byte padding so memstores fill
                // and flush often.
                let row = format!("{}-{w}-{i:07}", PREFIXES[i % PREFIXES.len()]);
                let m = RowMutation::new(row.clone())
                    .with_durability(durability)
                    .put("f", "q", value_of(&row))
                    .put("f", "pad", [b'p'; 1000]);
                match t.put(m).await {
                    Ok(()) => {
                        mine.push(row);
                        tally.puts.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        eprintln!("soak: put {row} failed: {e}");
                        tally.put_failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            mine
        }));
    }
    let counter = {
        let t = conn.table("soak");
        let (stop, tally) = (stop.clone(), tally.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                match t.increment("a-counter", "f", "n", 1).await {
                    Ok(_) => tally.increments.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        eprintln!("soak: increment failed: {e}");
                        tally.increment_failures.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        })
    };
    let appender = {
        let t = conn.table("soak");
        let (stop, tally) = (stop.clone(), tally.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                match t.append("k-appended", "f", "s", "x").await {
                    Ok(_) => tally.appends.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        eprintln!("soak: append failed: {e}");
                        tally.append_failures.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        })
    };

    let started = Instant::now();
    let mut recovery = Vec::new();
    for cycle in 0..kills {
        // Writes flow before every kill.
        let puts = tally.puts.load(Ordering::Relaxed);
        wait_until("puts before the kill", || {
            tally.puts.load(Ordering::Relaxed) >= puts + 200
        })
        .await?;
        // A kill 100–1,500 ms later, of a random region server.
        tokio::time::sleep(Duration::from_millis(100 + rng.next() % 1_400)).await;
        let victim = usize::try_from(rng.next() % c.servers.len() as u64)?;
        let mut node = c.servers.remove(victim);
        let victim_addr = node.address();
        let killed = Instant::now();
        node.kill()?;
        drop(node);
        c.add_server()?;
        wait_recovered(&conn, &victim_addr).await?;
        recovery.push(killed.elapsed().as_secs_f64());
        eprintln!(
            "soak: kill {} of {victim_addr}: every region answering again after {:.2} s; \
             {} puts acknowledged",
            cycle + 1,
            killed.elapsed().as_secs_f64(),
            tally.puts.load(Ordering::Relaxed)
        );
    }
    // And writes flow after the last one.
    let puts = tally.puts.load(Ordering::Relaxed);
    wait_until("puts after the last kill", || {
        tally.puts.load(Ordering::Relaxed) >= puts + 200
    })
    .await?;
    stop.store(true, Ordering::Relaxed);
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await?);
    }
    counter.await?;
    appender.await?;

    let t = conn.table("soak");
    let mut lost = Vec::new();
    for chunk in acked.chunks(500) {
        let rows = chunk.iter().map(|r| Bytes::from(r.clone())).collect();
        let got = t.get_rows(rows, &Default::default()).await?;
        for (r, g) in chunk.iter().zip(got) {
            if g.value(b"f", b"q").map(|v| v.to_vec()) != Some(value_of(r).into_bytes()) {
                lost.push(r.clone());
            }
        }
    }
    if !lost.is_empty() {
        // Keep the root (meta, WALs, store files) for the post-mortem.
        let root = std::mem::replace(&mut c.root, tempfile::tempdir()?).keep();
        bail!(
            "{} of {} acknowledged rows lost or changed after {kills} kills (writers 0 and 2 \
             SYNC_WAL, 1 and 3 FSYNC_WAL): {:?}{}; the cluster's root is kept in {}",
            lost.len(),
            acked.len(),
            &lost[..lost.len().min(20)],
            if lost.len() > 20 { " …" } else { "" },
            root.display()
        );
    }
    let n = t.get(Get::new("a-counter")).await?;
    let n = n
        .value(b"f", b"n")
        .map(|v| v[..].try_into().map(i64::from_be_bytes))
        .transpose()?
        .unwrap_or(0);
    let n = u64::try_from(n)?;
    let (incr_acked, incr_failed) = (
        tally.increments.load(Ordering::Relaxed),
        tally.increment_failures.load(Ordering::Relaxed),
    );
    assert!(
        (incr_acked..=incr_acked + incr_failed).contains(&n),
        "counter {n}: {incr_acked} increments acknowledged, {incr_failed} failed, {kills} kills"
    );
    let s = t.get(Get::new("k-appended")).await?;
    let s = s.value(b"f", b"s").map_or(0, |v| v.len()) as u64;
    let (app_acked, app_failed) = (
        tally.appends.load(Ordering::Relaxed),
        tally.append_failures.load(Ordering::Relaxed),
    );
    assert!(
        (app_acked..=app_acked + app_failed).contains(&s),
        "appended {s} bytes: {app_acked} appends acknowledged, {app_failed} failed, {kills} kills"
    );
    let regions = conn.admin().describe("soak").await?.regions.len();
    let worst = recovery.iter().copied().fold(0.0f64, f64::max);
    println!(
        "cluster soak: {kills} region server kills, {} acknowledged rows all present \
         ({} puts failed for good), counter {n} = {incr_acked} acknowledged increments \
         ({incr_failed} failed), {s} appends ({app_failed} failed), {regions} regions \
         (6 at the start), slowest recovery {worst:.2} s, {:.0} s",
        acked.len(),
        tally.put_failures.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Waits (at most 90 s) for `done`.
async fn wait_until(what: &str, done: impl Fn() -> bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(90);
    while !done() {
        if Instant::now() > deadline {
            bail!("{what}: not within 90 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Waits (at most 90 s) until no region of the table is on `dead` or
/// unassigned and a read of every region answers.
async fn wait_recovered(conn: &Connection, dead: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(90);
    let t = conn.table("soak");
    loop {
        if Instant::now() > deadline {
            bail!("the regions of {dead} did not come back within 90 s");
        }
        let placed = conn.admin().describe("soak").await.is_ok_and(|d| {
            d.regions
                .iter()
                .all(|r| !r.server.is_empty() && r.server != dead)
        });
        if placed {
            let mut all = true;
            for p in PREFIXES {
                let probe = format!("{p}-probe");
                if t.get(Get::new(probe)).await.is_err() {
                    all = false;
                }
            }
            if all {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
