//! Compaction throughput control: a compaction ahead of its limit sleeps
//! (and says so in the engine's counters), and closing the region stops a
//! throttled compaction at once: the close does not wait for it, the
//! half-written output is discarded, the inputs stay live, and every row
//! is readable after a reopen.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::field_reassign_with_default
)]

use ferrobase_storage::{Engine, Get, RegionInfo, StorageError};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const ROWS: u64 = 3_000;

fn table() -> TableDescriptor {
    TableDescriptor::new("ct", vec![FamilyDescriptor::new("f").unwrap()]).unwrap()
}

fn settings() -> Settings {
    let mut s = Settings::default();
    s.memory_size = 256 << 20;
    // 64 KiB/s: the first pacing check (after 1 MiB) is 16 s ahead.
    s.compaction_throughput_lower = 64 << 10;
    s.compaction_throughput_higher = 64 << 10;
    s
}

/// Bounded wait for a condition (a liveness guard, not a measurement).
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn closing_a_region_stops_a_throttled_compaction_and_keeps_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path(), settings()).unwrap();
    engine.set_compactions_enabled(false);
    let region = engine
        .open_region(&table(), RegionInfo::whole_table(1, "ct"))
        .unwrap();
    // Three flushed files of ~1 MiB each: 3 MiB for the compaction to write.
    for part in 0..3 {
        for i in (part..ROWS).step_by(3) {
            let m = RowMutation::new(format!("row{i:06}"))
                .put("f", "q", vec![b'v'; 1000])
                .with_durability(Durability::SkipWal);
            region.mutate(m).unwrap();
        }
        region.flush(true).unwrap();
    }
    assert_eq!(region.status().store_files, 3);

    let (tx, rx) = mpsc::channel();
    let compacting = region.clone();
    std::thread::spawn(move || {
        let _ = tx.send(compacting.compact(false));
    });
    wait_until("the compaction to be throttled", || {
        engine.stats().compaction_throttled_ms > 0
    });
    region.close().unwrap();
    let result = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the throttled compaction stopped");
    assert!(matches!(result, Err(StorageError::Closed(_))), "{result:?}");
    engine.close().unwrap();
    drop(engine);

    // The inputs are still the region's files; the output left nothing.
    let engine = Engine::open(dir.path(), Settings::default()).unwrap();
    let region = engine
        .open_region(&table(), RegionInfo::whole_table(1, "ct"))
        .unwrap();
    assert_eq!(region.status().store_files, 3);
    for i in (0..ROWS).step_by(97) {
        let cells = region.get(&Get::new(format!("row{i:06}"))).unwrap();
        assert_eq!(cells.len(), 1, "row{i:06}");
    }
    // Unthrottled (the defaults at this pressure allow 50 MiB/s), the
    // same compaction finishes.
    region.compact(false).unwrap();
    assert_eq!(region.status().store_files, 1);
    engine.close().unwrap();
}
