//! Crash test: a child process writes with SYNC_WAL or FSYNC_WAL and
//! prints every acknowledged row; the parent kills it with SIGKILL at a
//! random moment, reopens the data directory, and checks that every
//! acknowledged row is there and that nothing is corrupt.
//!
//! The child is this test binary re-executed with `FERROBASE_CRASH_CHILD`
//! set; tiny flush sizes make flushes, compactions and WAL truncation run
//! while the child writes, so kills land inside them too.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use ferrobase_storage::{Engine, Get, RegionInfo, Scan};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const CHILD_ENV: &str = "FERROBASE_CRASH_CHILD";

fn settings() -> Settings {
    let mut s = Settings::default();
    s.memstore_flush_size = 64 * 1024;
    s.compaction_min = 3;
    s.wal_block_size = 256 * 1024;
    s.memory_size = 256 << 20;
    s
}

fn table() -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.set("BLOCKSIZE", "4096").unwrap();
    f.set("COMPRESSION", "LZ4").unwrap();
    f.set("DATA_BLOCK_ENCODING", "FAST_DIFF").unwrap();
    TableDescriptor::new("crash", vec![f, FamilyDescriptor::new("g").unwrap()]).unwrap()
}

fn row(i: u64) -> Vec<u8> {
    format!("row-{:08}", (i * 7919) % 1_000_003).into_bytes()
}

fn child(dir: &Path, durability: Durability) {
    let engine = Engine::open(dir, settings()).unwrap();
    let region = engine
        .open_region(&table(), RegionInfo::whole_table(1, "crash"))
        .unwrap();
    let start: u64 = std::env::var("FERROBASE_CRASH_START")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let region = region.clone();
            std::thread::spawn(move || {
                let mut i = start + t;
                loop {
                    let m = RowMutation::new(row(i))
                        .put("f", "a", format!("value-a-{i}"))
                        .put("f", "b", vec![b'x'; 100 + (i % 200) as usize])
                        .put("g", "c", format!("{i}"))
                        .with_durability(durability);
                    region.mutate(m).unwrap();
                    // Printed only after the write was acknowledged.
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "{i}").unwrap();
                    out.flush().unwrap();
                    i += 4;
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    if let Ok(d) = std::env::var(CHILD_ENV) {
        let durability = std::env::var("FERROBASE_CRASH_DURABILITY")
            .unwrap()
            .parse()
            .unwrap();
        child(Path::new(&d), durability);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xC0FFEE);
    let mut acked: Vec<u64> = Vec::new();
    let mut next_start = 0u64;
    for round in 0..6 {
        let durability = if round % 2 == 0 {
            "SYNC_WAL"
        } else {
            "FSYNC_WAL"
        };
        let kill_after: usize = rng.random_range(50..3000);
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "acknowledged_writes_survive_sigkill",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .env("FERROBASE_CRASH_DURABILITY", durability)
            .env("FERROBASE_CRASH_START", next_start.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut seen = 0;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(i) = line.trim().parse::<u64>() {
                acked.push(i);
                next_start = next_start.max(i + 4);
                seen += 1;
                if seen >= kill_after {
                    break;
                }
            }
        }
        child.kill().unwrap(); // SIGKILL
        let _ = child.wait();
        // Round up to a multiple of 4 so thread ranges stay disjoint.
        next_start = next_start.div_ceil(4) * 4;

        let engine = Engine::open(dir.path(), settings()).unwrap();
        let region = engine
            .open_region(&table(), RegionInfo::whole_table(1, "crash"))
            .unwrap();
        for &i in &acked {
            let cells = region.get(&Get::new(row(i))).unwrap();
            assert_eq!(
                cells.len(),
                3,
                "round {round} ({durability}): acknowledged row {i} has {} cells",
                cells.len()
            );
            assert_eq!(cells[0].value, format!("value-a-{i}").as_bytes());
            assert_eq!(cells[2].value, format!("{i}").as_bytes());
        }
        // Everything readable, nothing corrupt.
        let mut scanner = region.scan(&Scan::default()).unwrap();
        let mut rows = 0;
        while scanner.next_row().unwrap().is_some() {
            rows += 1;
        }
        assert!(
            rows >= acked.len(),
            "scan saw {rows} rows, {} acknowledged",
            acked.len()
        );
        engine.close().unwrap();
    }
}
