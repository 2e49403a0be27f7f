//! Kill -9 soak: a `ferrobase standalone` child process under concurrent
//! SYNC_WAL and FSYNC_WAL writers and a counter incrementer is killed with
//! SIGKILL at seeded random instants — with a small memstore flush size, a
//! low compaction threshold and a small split size, so kills land during
//! flushes, compactions and splits — and restarted on the same directory,
//! `FERROBASE_SOAK_KILLS` times (default 20; `scripts/soak.sh N` runs N;
//! `FERROBASE_SOAK_SEED` picks the instants, `FERROBASE_SOAK_TRACE=1`
//! prints the counter around every kill).
//! Every restart must open every region (an unreadable store file or
//! manifest fails it). At the end every acknowledged row must be there
//! with its value, and the counter must hold at least the acknowledged
//! increments and at most the attempted ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod standalone;

use bytes::Bytes;
use ferrobase_client::{Connection, Get};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Server settings that make flushes, compactions and splits frequent.
const BUSY: &[&str] = &[
    "ferrobase.memory.size=268435456",
    "hbase.hregion.memstore.flush.size=262144",
    "hbase.hstore.compaction.min=2",
    "hbase.hregion.max.filesize=524288",
];

fn settings() -> Settings {
    Settings {
        client_retries: 1,
        client_pause_ms: 10,
        ..Settings::default()
    }
}

/// xorshift64*: the kill instants, reproducible from the seed.
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_flushes_compactions_and_splits_loses_nothing() {
    let kills: u32 = std::env::var("FERROBASE_SOAK_KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("FERROBASE_SOAK_SEED")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(0x5eed_f00d);
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().unwrap();
    let (mut server, addr) = standalone::start(dir.path(), BUSY);
    let conn = Connection::connect(&addr, settings()).unwrap();
    let desc = TableDescriptor::new("soak", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    conn.admin()
        .create_table(&desc, &[Bytes::from_static(b"m")])
        .await
        .unwrap();

    let mut acked: Vec<String> = Vec::new();
    let (mut incr_acked, mut incr_tried) = (0u64, 0u64);
    let started = Instant::now();
    let mut addr = addr;
    for cycle in 0..kills {
        let conn = Connection::connect(&addr, settings()).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut writers = Vec::new();
        for w in 0..4u32 {
            let t = conn.table("soak");
            let stop = stop.clone();
            let durability = if w % 2 == 0 {
                Durability::SyncWal
            } else {
                Durability::FsyncWal
            };
            writers.push(tokio::spawn(async move {
                let mut mine = Vec::new();
                for i in 0u32.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    // Rows on both sides of the split point, 100-byte padding
                    // so the memstore fills and flushes often.
                    let side = if i % 2 == 0 { "a" } else { "z" };
                    let row = format!("{side}{cycle:05}-{w}-{i:07}");
                    let m = RowMutation::new(row.clone())
                        .with_durability(durability)
                        .put("f", "q", value_of(&row))
                        .put("f", "pad", [b'p'; 100]);
                    match t.put(m).await {
                        Ok(()) => mine.push(row),
                        Err(_) => break,
                    }
                }
                mine
            }));
        }
        let tried = Arc::new(AtomicU64::new(0));
        let counter = {
            let t = conn.table("soak");
            let (stop, tried) = (stop.clone(), tried.clone());
            tokio::spawn(async move {
                let mut ok = 0u64;
                let mut last = 0i64;
                while !stop.load(Ordering::Relaxed) {
                    tried.fetch_add(1, Ordering::Relaxed);
                    match t.increment("counter", "f", "n", 1).await {
                        Ok(v) => {
                            ok += 1;
                            if std::env::var("FERROBASE_SOAK_TRACE").is_ok() && ok <= 2 {
                                eprintln!("cycle {cycle}: increment {ok} returned {v}");
                            }
                            last = v;
                        }
                        Err(_) => break,
                    }
                }
                if std::env::var("FERROBASE_SOAK_TRACE").is_ok() {
                    eprintln!("cycle {cycle}: last increment returned {last}");
                }
                ok
            })
        };
        // A kill 50–800 ms into the cycle.
        let delay = Duration::from_millis(50 + rng.next() % 750);
        tokio::time::sleep(delay).await;
        if std::env::var("FERROBASE_SOAK_TRACE").is_ok() {
            let got = conn.table("soak").get(Get::new("counter")).await;
            let n = got.ok().and_then(|g| {
                g.value(b"f", b"n")
                    .map(|v| i64::from_be_bytes(v[..8].try_into().unwrap()))
            });
            eprintln!("cycle {cycle}: before the kill the counter reads {n:?}");
        }
        server.0.kill().unwrap(); // SIGKILL
        server.0.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        for w in writers {
            acked.extend(w.await.unwrap());
        }
        incr_acked += counter.await.unwrap();
        incr_tried += tried.load(Ordering::Relaxed);
        let (s, a) = standalone::start(dir.path(), BUSY);
        server = s;
        addr = a;
        if std::env::var("FERROBASE_SOAK_TRACE").is_ok() {
            let conn = Connection::connect(&addr, settings()).unwrap();
            let got = conn.table("soak").get(Get::new("counter")).await.unwrap();
            let n = got
                .value(b"f", b"n")
                .map(|v| i64::from_be_bytes(v[..8].try_into().unwrap()))
                .unwrap_or(0);
            eprintln!("cycle {cycle}: counter {n}, acknowledged {incr_acked}, tried {incr_tried}");
        }
        if cycle % 10 == 9 {
            eprintln!(
                "soak: {} kills, {} rows acknowledged, {:.0} s",
                cycle + 1,
                acked.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }

    // The reads that check: patient (regions may still be opening or
    // splitting after the last restart).
    let patient = Settings {
        client_retries: 20,
        client_pause_ms: 50,
        ..Settings::default()
    };
    let conn = Connection::connect(&addr, patient).unwrap();
    let t = conn.table("soak");
    assert!(
        kills == 0 || !acked.is_empty(),
        "no write was acknowledged in {kills} cycles"
    );
    for chunk in acked.chunks(500) {
        let rows = chunk.iter().map(|r| Bytes::from(r.clone())).collect();
        let got = t.get_rows(rows, &Default::default()).await.unwrap();
        for (r, g) in chunk.iter().zip(got) {
            let v = g.value(b"f", b"q");
            assert_eq!(
                v.map(|v| v.to_vec()),
                Some(value_of(r).into_bytes()),
                "acknowledged row {r} lost or changed"
            );
        }
    }
    let counter = t.get(Get::new("counter")).await.unwrap();
    let n = counter
        .value(b"f", b"n")
        .map(|v| i64::from_be_bytes(v[..8].try_into().unwrap()))
        .unwrap_or(0);
    let n = u64::try_from(n).unwrap();
    assert!(
        (incr_acked..=incr_tried).contains(&n),
        "counter {n}: {incr_acked} increments acknowledged, {incr_tried} tried"
    );
    let regions = conn.admin().cluster_status().await.unwrap().servers[0]
        .regions
        .len();
    eprintln!(
        "soak: {kills} kills, {} acknowledged rows all present, counter {n} \
         ({incr_acked} increments acknowledged, {incr_tried} tried), \
         {regions} regions (2 at the start), {:.0} s",
        acked.len(),
        started.elapsed().as_secs_f64()
    );
    let pid = server.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert!(server.0.wait().unwrap().success());
}
