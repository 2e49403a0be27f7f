//! Which segments may be deleted: per segment, the highest seq each region
//! wrote to it; per region, the highest seq it has flushed to store files.
//!
//! A segment other than the current one is obsolete once every region in
//! it has flushed at least up to that region's max seq there (or has been
//! forgotten). This module owns that rule and the deletion of obsolete
//! files. It never deletes the current segment, and never holds its lock
//! across a file system call, so appenders' leaders and flushers only ever
//! wait on a few map updates.

use super::stats::Counters;
use crate::fs::Storage;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

struct Segment {
    path: PathBuf,
    /// region id → highest seq written to this segment.
    regions: HashMap<u64, u64>,
}

struct State {
    segments: BTreeMap<u64, Segment>,
    current: u64,
    /// region id → highest seq known flushed.
    flushed: HashMap<u64, u64>,
    /// After close the directory may belong to a newer `Wal`: delete nothing.
    closed: bool,
}

impl State {
    fn is_obsolete(&self, seg: &Segment) -> bool {
        seg.regions
            .iter()
            .all(|(region, max)| self.flushed.get(region).is_some_and(|f| f >= max))
    }
}

/// Per-segment bookkeeping, shared by the writer and the public API.
pub(crate) struct Tracker {
    fs: Arc<dyn Storage>,
    state: Mutex<State>,
    counters: Arc<Counters>,
}

/// A segment replay must read: its path and, for the current segment, how
/// many bytes of it were written when replay started.
pub(crate) struct ToRead {
    pub id: u64,
    pub path: PathBuf,
    pub limit: Option<u64>,
}

impl Tracker {
    /// Bookkeeping for `old` segments (from recovery) plus the new current one.
    pub(crate) fn new(
        fs: Arc<dyn Storage>,
        old: Vec<super::recovery::OldSegment>,
        current: (u64, PathBuf),
        counters: Arc<Counters>,
    ) -> Tracker {
        let mut segments: BTreeMap<u64, Segment> = old
            .into_iter()
            .map(|s| {
                (
                    s.id,
                    Segment {
                        path: s.path,
                        regions: s.regions,
                    },
                )
            })
            .collect();
        segments.insert(
            current.0,
            Segment {
                path: current.1,
                regions: HashMap::new(),
            },
        );
        Tracker {
            fs,
            state: Mutex::new(State {
                segments,
                current: current.0,
                flushed: HashMap::new(),
                closed: false,
            }),
            counters,
        }
    }

    /// Notes that a batch with these region → max seq entries goes to
    /// segment `id` (called by the leader before it writes the batch).
    pub(crate) fn record_batch(&self, id: u64, regions: &HashMap<u64, u64>) {
        let mut st = self.state.lock();
        if let Some(seg) = st.segments.get_mut(&id) {
            for (&region, &seq) in regions {
                let max = seg.regions.entry(region).or_insert(seq);
                *max = (*max).max(seq);
            }
        }
    }

    /// A roll made `id` the current segment; the previous one may already
    /// be obsolete.
    pub(crate) fn rolled(&self, id: u64, path: PathBuf) {
        {
            let mut st = self.state.lock();
            st.segments.insert(
                id,
                Segment {
                    path,
                    regions: HashMap::new(),
                },
            );
            st.current = id;
        }
        self.delete_obsolete();
    }

    pub(crate) fn mark_flushed(&self, region: u64, seq: u64) {
        {
            let mut st = self.state.lock();
            let f = st.flushed.entry(region).or_insert(seq);
            *f = (*f).max(seq);
        }
        self.delete_obsolete();
    }

    pub(crate) fn forget(&self, region: u64) {
        {
            let mut st = self.state.lock();
            st.flushed.remove(&region);
            for seg in st.segments.values_mut() {
                seg.regions.remove(&region);
            }
        }
        self.delete_obsolete();
    }

    /// Regions with unflushed edits in the oldest segment, ascending.
    pub(crate) fn pinning_oldest(&self) -> Vec<u64> {
        let st = self.state.lock();
        let Some(oldest) = st.segments.values().next() else {
            return Vec::new();
        };
        let mut out: Vec<u64> = oldest
            .regions
            .iter()
            .filter(|(region, max)| st.flushed.get(region).is_none_or(|f| f < max))
            .map(|(&region, _)| region)
            .collect();
        out.sort_unstable();
        out
    }

    /// Stops all deletion (the WAL is closed).
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
    }

    pub(crate) fn count(&self) -> usize {
        self.state.lock().segments.len()
    }

    pub(crate) fn contains(&self, id: u64) -> bool {
        self.state.lock().segments.contains_key(&id)
    }

    /// The segments holding edits of `region` above `after_seq`, in order.
    /// `current` is the writer's (segment id, bytes written) at the moment
    /// replay started: reading stops there, before any concurrent write.
    pub(crate) fn to_read(&self, region: u64, after_seq: u64, current: (u64, u64)) -> Vec<ToRead> {
        let st = self.state.lock();
        st.segments
            .iter()
            .filter(|(_, seg)| seg.regions.get(&region).is_some_and(|&max| max > after_seq))
            .filter(|&(&id, _)| id <= current.0)
            .map(|(&id, seg)| ToRead {
                id,
                path: seg.path.clone(),
                limit: (id == current.0).then_some(current.1),
            })
            .collect()
    }

    /// Drops obsolete segments from the books, then deletes their files
    /// with the lock released. Each segment leaves the map exactly once, so
    /// concurrent callers never delete the same file twice.
    pub(crate) fn delete_obsolete(&self) {
        let doomed: Vec<PathBuf> = {
            let mut st = self.state.lock();
            if st.closed {
                return;
            }
            let ids: Vec<u64> = st
                .segments
                .iter()
                .filter(|&(&id, seg)| id != st.current && st.is_obsolete(seg))
                .map(|(&id, _)| id)
                .collect();
            ids.iter()
                .filter_map(|id| st.segments.remove(id))
                .map(|seg| seg.path)
                .collect()
        };
        for path in doomed {
            match self.fs.delete_log(&path) {
                Ok(()) => {
                    self.counters.inc_segments_deleted();
                    tracing::debug!(path = %self.fs.display(&path), "WAL: deleted obsolete segment");
                }
                // Not fatal: the file is scanned again at the next open and
                // deleted once its regions report their flushes again.
                Err(e) => {
                    tracing::warn!(path = %self.fs.display(&path), error = %e, "WAL: could not delete obsolete segment")
                }
            }
        }
    }
}
