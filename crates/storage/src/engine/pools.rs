//! The flush pool, the two compaction pools and the chore thread.
//!
//! Jobs name regions by id and are looked up when they run, so a queued job
//! for a region closed meanwhile is simply dropped. A failing job is
//! logged; the region keeps its data in memory (flush) or its inputs
//! (compaction) and a later request retries.

use super::{EngineShared, Job};
use crossbeam_channel::{Receiver, unbounded};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::Duration;

pub(super) fn start(shared: &Arc<EngineShared>) -> Vec<JoinHandle<()>> {
    let s = &shared.settings;
    let mut threads = Vec::new();
    let (flush_tx, flush_rx) = unbounded();
    let (small_tx, small_rx) = unbounded();
    let (large_tx, large_rx) = unbounded();
    *shared.flush_tx.lock() = Some(flush_tx);
    *shared.small_tx.lock() = Some(small_tx);
    *shared.large_tx.lock() = Some(large_tx);
    for (name, count, rx) in [
        ("flusher", s.flusher_count.max(1), flush_rx),
        ("compact-small", s.compaction_small_threads.max(1), small_rx),
        ("compact-large", s.compaction_large_threads.max(1), large_rx),
    ] {
        for i in 0..count {
            let shared = Arc::downgrade(shared);
            let rx: Receiver<Job> = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                .spawn(move || worker(shared, rx));
            match spawned {
                Ok(t) => threads.push(t),
                Err(e) => tracing::error!(error = %e, "could not start {name} thread"),
            }
        }
    }
    let weak = Arc::downgrade(shared);
    match std::thread::Builder::new()
        .name("chore".into())
        .spawn(move || chore(weak))
    {
        Ok(t) => threads.push(t),
        Err(e) => tracing::error!(error = %e, "could not start chore thread"),
    }
    threads
}

fn worker(shared: std::sync::Weak<EngineShared>, rx: Receiver<Job>) {
    while let Ok(job) = rx.recv() {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let flush = matches!(job, Job::Flush(_));
        let (id, result) = match job {
            Job::Flush(id) => (id, shared.region(id).map(|r| r.run_queued_flush())),
            Job::Compact(id) => (id, shared.region(id).map(|r| r.run_queued_compaction())),
        };
        if let Some(Err(e)) = result {
            tracing::error!(region = id, error = %e, "background flush/compaction failed");
        }
        // Decremented after the job, whose follow-up jobs (a compaction
        // after a flush) were counted when queued: never 0 while work remains.
        if flush {
            shared
                .counters
                .flush_jobs
                .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
        shared
            .counters
            .background_jobs
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Forced flushes: global low mark, then WAL segment count.
fn chore(shared: std::sync::Weak<EngineShared>) {
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if shared.shutting_down.load(Ordering::SeqCst) {
            return;
        }
        if shared.forced_flush_pending.swap(false, Ordering::AcqRel)
            && shared.global_memstore.load(Ordering::Relaxed) >= shared.global_low_mark
        {
            let largest = shared
                .regions
                .read()
                .values()
                .max_by_key(|r| r.memstore_size())
                .cloned();
            if let Some(r) = largest {
                shared
                    .stalls
                    .forced_flushes_global
                    .fetch_add(1, Ordering::Relaxed);
                r.request_flush();
            }
        }
        if shared.wal.segment_count() > shared.settings.wal_max_logs {
            for id in shared.wal.regions_pinning_oldest_segment() {
                if let Some(r) = shared.region(id) {
                    shared
                        .stalls
                        .forced_flushes_wal
                        .fetch_add(1, Ordering::Relaxed);
                    r.request_flush();
                }
            }
        }
    }
}
