//! Engine counters: stalls (every wait a writer or a flush suffered),
//! flushes, compactions, and snapshots of the cache and WAL counters.

use super::EngineShared;
use crate::cache::CacheStats;
use crate::wal::WalStats;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Live stall counters (docs/architecture.md, design rule 4: a metric for
/// every stall).
#[derive(Default, Debug)]
pub struct StallCounters {
    /// Writes that had to wait for memory (region or global limit).
    pub blocked_writes: AtomicU64,
    /// Total milliseconds writers spent blocked.
    pub blocked_ms: AtomicU64,
    /// Writes that gave up with "region too busy".
    pub too_busy: AtomicU64,
    /// Flushes delayed because a store had blockingStoreFiles files.
    pub delayed_flushes: AtomicU64,
    /// Flushes forced by the global memstore low mark.
    pub forced_flushes_global: AtomicU64,
    /// Flushes forced by hbase.regionserver.maxlogs.
    pub forced_flushes_wal: AtomicU64,
}

impl StallCounters {
    pub(crate) fn add_blocked_time(&self, d: Duration) {
        self.blocked_ms
            .fetch_add(d.as_millis() as u64, Ordering::Relaxed);
    }

    fn snapshot(&self) -> StallStats {
        StallStats {
            blocked_writes: self.blocked_writes.load(Ordering::Relaxed),
            blocked_ms: self.blocked_ms.load(Ordering::Relaxed),
            too_busy: self.too_busy.load(Ordering::Relaxed),
            delayed_flushes: self.delayed_flushes.load(Ordering::Relaxed),
            forced_flushes_global: self.forced_flushes_global.load(Ordering::Relaxed),
            forced_flushes_wal: self.forced_flushes_wal.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of [`StallCounters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StallStats {
    pub blocked_writes: u64,
    pub blocked_ms: u64,
    pub too_busy: u64,
    pub delayed_flushes: u64,
    pub forced_flushes_global: u64,
    pub forced_flushes_wal: u64,
}

#[derive(Default, Debug)]
pub(crate) struct Counters {
    pub flushes: AtomicU64,
    pub flushed_bytes: AtomicU64,
    pub compactions: AtomicU64,
    pub compacted_bytes_in: AtomicU64,
    pub compacted_bytes_out: AtomicU64,
    /// Compactions merging right now (they share the throughput limit).
    pub running_compactions: AtomicU64,
    /// Milliseconds compactions slept to stay within the throughput limit.
    pub compaction_throttled_ms: AtomicU64,
    /// Flush and compaction jobs queued or running.
    pub background_jobs: AtomicU64,
    /// Of those, the flush jobs.
    pub flush_jobs: AtomicU64,
}

/// Everything the engine counts.
#[derive(Clone, Debug)]
pub struct EngineStats {
    pub regions: usize,
    pub global_memstore_bytes: u64,
    pub global_memstore_limit: u64,
    pub flushes: u64,
    pub flushed_bytes: u64,
    pub compactions: u64,
    pub compacted_bytes_in: u64,
    pub compacted_bytes_out: u64,
    /// Milliseconds compactions slept to stay within
    /// `hbase.hstore.compaction.throughput.*` (`compaction::throttle`).
    pub compaction_throttled_ms: u64,
    /// Flush and compaction jobs queued or running (0: the engine is idle).
    pub background_jobs: u64,
    /// Flush jobs queued or running (0: every requested flush is done;
    /// compactions may still be queued or merging).
    pub flush_jobs: u64,
    pub stalls: StallStats,
    pub cache: CacheStats,
    pub wal: WalStats,
}

impl EngineShared {
    pub(crate) fn stats(&self) -> EngineStats {
        let c = &self.counters;
        EngineStats {
            regions: self.regions.read().len(),
            global_memstore_bytes: self.global_memstore.load(Ordering::Relaxed),
            global_memstore_limit: self.global_limit,
            flushes: c.flushes.load(Ordering::Relaxed),
            flushed_bytes: c.flushed_bytes.load(Ordering::Relaxed),
            compactions: c.compactions.load(Ordering::Relaxed),
            compacted_bytes_in: c.compacted_bytes_in.load(Ordering::Relaxed),
            compacted_bytes_out: c.compacted_bytes_out.load(Ordering::Relaxed),
            compaction_throttled_ms: c.compaction_throttled_ms.load(Ordering::Relaxed),
            background_jobs: c.background_jobs.load(Ordering::Relaxed),
            flush_jobs: c.flush_jobs.load(Ordering::Relaxed),
            stalls: self.stalls.snapshot(),
            cache: self.cache.stats(),
            wal: self.wal.stats(),
        }
    }
}
