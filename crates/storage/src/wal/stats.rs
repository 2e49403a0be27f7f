//! The WAL's counters: lock-free increments on the hot path, a plain
//! snapshot ([`WalStats`]) for metrics and tests. Owns nothing else.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A snapshot of the WAL's counters since open.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Edits appended (buffered).
    pub appends: u64,
    /// Group commits: write(2) calls, each carrying one or more appends.
    pub batches: u64,
    /// fdatasync calls.
    pub syncs: u64,
    /// Record bytes written to segments.
    pub bytes: u64,
    /// Segments rolled.
    pub rolls: u64,
    /// Obsolete segments deleted.
    pub segments_deleted: u64,
}

#[derive(Default, Debug)]
pub(crate) struct Counters {
    appends: AtomicU64,
    batches: AtomicU64,
    syncs: AtomicU64,
    bytes: AtomicU64,
    rolls: AtomicU64,
    segments_deleted: AtomicU64,
}

impl Counters {
    pub(crate) fn add_appends(&self, n: u64) {
        self.appends.fetch_add(n, Relaxed);
    }
    pub(crate) fn add_batch(&self, bytes: u64) {
        self.batches.fetch_add(1, Relaxed);
        self.bytes.fetch_add(bytes, Relaxed);
    }
    pub(crate) fn inc_syncs(&self) {
        self.syncs.fetch_add(1, Relaxed);
    }
    pub(crate) fn inc_rolls(&self) {
        self.rolls.fetch_add(1, Relaxed);
    }
    pub(crate) fn inc_segments_deleted(&self) {
        self.segments_deleted.fetch_add(1, Relaxed);
    }

    pub(crate) fn snapshot(&self) -> WalStats {
        WalStats {
            appends: self.appends.load(Relaxed),
            batches: self.batches.load(Relaxed),
            syncs: self.syncs.load(Relaxed),
            bytes: self.bytes.load(Relaxed),
            rolls: self.rolls.load(Relaxed),
            segments_deleted: self.segments_deleted.load(Relaxed),
        }
    }
}
