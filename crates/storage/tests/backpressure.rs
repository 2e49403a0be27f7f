//! Backpressure: a tiny memstore with flushes held back makes writers
//! block, then fail with "region too busy" after blockingWaitTime; with
//! compactions switched off, flushes are delayed at blockingStoreFiles and
//! writers are slowed, never deadlocked; every stall is counted.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use ferrobase_storage::{Engine, ErrorKind, Get, RegionInfo, StorageError};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::sync::Arc;

fn table() -> TableDescriptor {
    TableDescriptor::new("bp", vec![FamilyDescriptor::new("f").unwrap()]).unwrap()
}

fn put(i: u64) -> RowMutation {
    RowMutation::new(format!("row{i:06}"))
        .put("f", "q", vec![b'v'; 200])
        .with_durability(Durability::SkipWal)
}

#[test]
fn blocked_writers_get_region_too_busy_then_recover() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Settings::default();
    s.memstore_flush_size = 8 * 1024;
    s.memstore_block_multiplier = 2;
    s.blocking_wait_time_ms = 300;
    s.memory_size = 256 << 20;
    let engine = Engine::open(dir.path(), s).unwrap();
    let region = engine
        .open_region(&table(), RegionInfo::whole_table(1, "bp"))
        .unwrap();
    engine.set_flushes_paused(true);

    let writers: Vec<_> = (0..4u64)
        .map(|t| {
            let region = Arc::clone(&region);
            std::thread::spawn(move || {
                let mut busy = 0;
                for i in 0..400 {
                    match region.mutate(put(t * 1000 + i)) {
                        Ok(()) => {}
                        Err(e @ StorageError::RegionTooBusy { .. }) => {
                            assert_eq!(e.kind(), ErrorKind::Retry);
                            assert!(e.to_string().contains("too busy"), "{e}");
                            busy += 1;
                            if busy >= 2 {
                                return busy;
                            }
                        }
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
                busy
            })
        })
        .collect();
    let busy: u32 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(busy > 0, "no writer was refused although flushes were held");
    let stats = engine.stats();
    assert!(stats.stalls.blocked_writes > 0);
    assert!(stats.stalls.too_busy > 0);
    // The held flush is counted as a flush job (what `bench` waits for
    // before it drops a table).
    assert!(stats.flush_jobs > 0, "{stats:?}");
    assert!(stats.background_jobs >= stats.flush_jobs);

    engine.set_flushes_paused(false);
    // Flushes resume: writes go through again. The first ones may still
    // wait out a flush that a loaded machine finishes after
    // blockingWaitTime; they retry as a client would (bounded, so a flush
    // that never resumes still fails the test).
    for i in 0..200 {
        let mut attempts = 0;
        loop {
            match region.mutate(put(9000 + i)) {
                Ok(()) => break,
                Err(e) if e.kind() == ErrorKind::Retry && attempts < 50 => attempts += 1,
                Err(e) => panic!("write {i} after flushes resumed: {e}"),
            }
        }
    }
    assert_eq!(region.get(&Get::new("row009199")).unwrap().len(), 1);
    assert!(engine.wait_idle(std::time::Duration::from_secs(60)));
    assert_eq!(engine.stats().flush_jobs, 0);
    engine.close().unwrap();
}

#[test]
fn stalled_compaction_delays_flushes_without_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Settings::default();
    s.memstore_flush_size = 16 * 1024;
    s.memstore_block_multiplier = 2;
    s.blocking_store_files = 3;
    s.blocking_wait_time_ms = 200;
    s.memory_size = 256 << 20;
    let engine = Engine::open(dir.path(), s).unwrap();
    engine.set_compactions_enabled(false);
    let region = engine
        .open_region(&table(), RegionInfo::whole_table(1, "bp"))
        .unwrap();
    let writers: Vec<_> = (0..3u64)
        .map(|t| {
            let region = Arc::clone(&region);
            std::thread::spawn(move || {
                for i in 0..1500 {
                    // Writers may be refused while flushes wait; they retry
                    // like a client would.
                    loop {
                        match region.mutate(put(t * 10_000 + i)) {
                            Ok(()) => break,
                            Err(e) if e.kind() == ErrorKind::Retry => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let stats = engine.stats();
    assert!(stats.stalls.delayed_flushes > 0, "{stats:?}");
    assert!(region.status().max_store_files >= 3);
    engine.set_compactions_enabled(true);
    region.compact(false).unwrap();
    for t in 0..3u64 {
        for i in (0..1500).step_by(97) {
            assert_eq!(
                region
                    .get(&Get::new(format!("row{:06}", t * 10_000 + i)))
                    .unwrap()
                    .len(),
                1
            );
        }
    }
    engine.close().unwrap();
}
