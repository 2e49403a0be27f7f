//! The row cache never answers older than an acknowledged write: writers
//! put rising values into a few rows (so their stamps are busy) while
//! readers get them through the cache, across flushes and a compaction.
//! Each reader checks that a get returns at least the
//! value acknowledged before the get began, and never less than it saw
//! before.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::{Engine, Get, Region, RegionInfo};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

const ROWS: usize = 4;

fn open(dir: &std::path::Path) -> (Arc<Engine>, Arc<Region>) {
    let mut f = FamilyDescriptor::new("f").unwrap();
    f.set("ROW_CACHE", "true").unwrap();
    let table = TableDescriptor::new("t", vec![f]).unwrap();
    let s = Settings {
        memory_size: 256 << 20,
        row_cache_size: (8 << 20) as f64,
        ..Settings::default()
    };
    let engine = Engine::open(dir, s).unwrap();
    let region = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    (engine, region)
}

fn read(r: &Region, row: usize) -> u64 {
    let cells = r.get(&Get::new(format!("row-{row}"))).unwrap();
    cells.first().map_or(0, |c| {
        std::str::from_utf8(&c.value)
            .unwrap()
            .parse::<u64>()
            .unwrap()
    })
}

#[test]
fn gets_through_the_row_cache_never_miss_an_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, r) = open(dir.path());
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..ROWS).map(|_| AtomicU64::new(0)).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (r, acked, stop) = (r.clone(), acked.clone(), stop.clone());
            std::thread::spawn(move || {
                // Each writer owns every other row: a row's values rise.
                let mut v = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    v += 1;
                    for row in (w..ROWS).step_by(2) {
                        r.mutate(
                            RowMutation::new(format!("row-{row}"))
                                .with_durability(Durability::SkipWal)
                                .put("f", "q", format!("{v:020}")),
                        )
                        .unwrap();
                        acked[row].store(v, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (r, acked, stop) = (r.clone(), acked.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = [0u64; ROWS];
                let mut gets = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    for row in 0..ROWS {
                        let before = acked[row].load(Ordering::SeqCst);
                        let got = read(&r, row);
                        assert!(
                            got >= before,
                            "row {row}: got {got}, {before} was acknowledged before the get"
                        );
                        assert!(
                            got >= seen[row],
                            "row {row} went back from {} to {got}",
                            seen[row]
                        );
                        seen[row] = got;
                        gets += 1;
                    }
                }
                gets
            })
        })
        .collect();
    for _ in 0..5 {
        std::thread::sleep(std::time::Duration::from_millis(200));
        r.flush(true).unwrap();
    }
    r.compact(true).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    stop.store(true, Ordering::SeqCst);
    for w in writers {
        w.join().unwrap();
    }
    let gets: u64 = readers.into_iter().map(|h| h.join().unwrap()).sum();
    let stats = engine.row_cache().unwrap().stats();
    assert!(gets > 100, "only {gets} gets ran");
    assert!(stats.hits > 0, "the cache never hit: {stats:?}");
    // Quiet now: every row reads its last acknowledged value, twice (the
    // second from the cache).
    for row in 0..ROWS {
        let want = read(&r, row);
        assert_eq!(read(&r, row), want);
    }
}
