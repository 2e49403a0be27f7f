//! The write-ahead log: one per process, shared by all its regions.
//!
//! Every edit (one row's cells for one region, with its sequence id) is
//! appended here before it is acknowledged, so that the memstore can be
//! rebuilt after a crash. Layout on disk (details in `docs/wal-format.md`):
//!
//! ```text
//! wal/                                (on the storage root, `crate::fs`)
//!   LOCK                              held (flock) while a Wal is open (local roots)
//!   wal-00000000000000000001.log      oldest segment ...
//!   wal-00000000000000000002.log      ... current segment (appends go here)
//!
//! segment: | "FBWALSEG" | version u32 LE | record | record | ...
//! record:  | 0xA7 | payload len u32 LE | CRC32C(payload) u32 LE | payload |
//! payload: region varint | seq varint | row | nfam varint
//!          { family | ncells varint { type u8 | qualifier | ts varint | value } }
//!          (byte strings are varint-length-prefixed; row and family once per edit)
//! ```
//!
//! Modules, one concept each:
//! - `record`: frame and payload bytes (no I/O);
//! - `segment`: file names, header, durable creation;
//! - `reader`: checked sequential reading of one segment;
//! - `recovery`: what open does with old segments (torn tail vs corruption);
//! - `writer`: group commit, roll, failure handling;
//! - `flusher`: the ASYNC_WAL background thread;
//! - `tracker`: per-segment region → max seq, flushed seqs, deletion;
//! - `replay`: per-region replay; `stats`: counters.
//!
//! This module only wires them together behind [`Wal`]. The WAL never
//! panics on bytes read from disk, never skips a bad record (except a torn
//! tail of the last segment at open, which it reports), and never
//! acknowledges an append after a failed write.

#![deny(clippy::indexing_slicing)]

#[cfg(test)]
mod fault_tests;
mod flusher;
mod reader;
mod record;
mod recovery;
mod replay;
mod segment;
pub mod split;
mod stats;
mod tracker;
mod writer;

pub use recovery::{OpenReport, TruncatedTail};
pub use stats::WalStats;

/// Histogram (in the process's `metrics` recorder, when one is installed)
/// of each WAL sync's duration in seconds.
pub const SYNC_SECONDS: &str = "hbase_regionserver_wal_sync_seconds";

use crate::error::Result;
use crate::fs::{LocalFs, Storage};
use bytes::Bytes;
use ferrobase_types::Durability;
use parking_lot::Mutex;
use stats::Counters;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tracker::Tracker;
use writer::Writer;

/// Settings of a [`Wal`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalOptions {
    /// A segment rolls once it holds more than this many bytes
    /// (`hbase.regionserver.hlog.blocksize` × `logroll.multiplier`).
    pub roll_size: u64,
    /// ASYNC_WAL edits reach the OS at least this often
    /// (`hbase.regionserver.optionallogflushinterval`).
    pub async_flush_interval: Duration,
}

impl Default for WalOptions {
    fn default() -> WalOptions {
        WalOptions {
            roll_size: 128 << 20,
            async_flush_interval: Duration::from_secs(1),
        }
    }
}

/// One row's edit for one region: the unit of a WAL record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalEdit {
    pub region_id: u64,
    pub seq: u64,
    pub row: Bytes,
    pub families: Vec<WalFamily>,
    /// The timestamp of this write's cells that say `LATEST_TIMESTAMP`
    /// (HBase: "the server sets it"). The write path leaves such cells as
    /// the client sent them, instead of copying every run to rewrite them;
    /// the WAL encoder and the memstore insert resolve them through
    /// [`timestamp_of`](Self::timestamp_of). The WAL stores it once per
    /// edit (format 2), so an edit read back carries it too; one read from
    /// a format-1 segment has every cell resolved and `LATEST_TIMESTAMP`
    /// here (resolves nothing).
    pub now: u64,
    /// The client operation's `(nonce group, nonce)` (HBase's WALKey
    /// nonces), logged from format 3 on; `None` when untagged.
    pub nonce: Option<(u64, u64)>,
}

impl WalEdit {
    /// The edit with every `LATEST_TIMESTAMP` cell set to `now`, for a
    /// caller that hands its cells to a new write (recovered edits), which
    /// would otherwise stamp them with its own clock. Copies only the runs
    /// that hold such a cell.
    pub fn into_resolved(mut self) -> WalEdit {
        if self.now == ferrobase_types::LATEST_TIMESTAMP {
            return self;
        }
        let mut families = std::mem::take(&mut self.families);
        for fam in &mut families {
            let resolved = fam.cells.map_timestamps(|c| {
                Ok::<u64, std::convert::Infallible>(self.timestamp_of(c.timestamp))
            });
            if let Ok(Some(run)) = resolved {
                fam.cells = run;
            }
        }
        self.families = families;
        self.now = ferrobase_types::LATEST_TIMESTAMP;
        self
    }

    /// A cell's timestamp as stored: `now` for `LATEST_TIMESTAMP`.
    #[inline]
    pub fn timestamp_of(&self, ts: u64) -> u64 {
        if ts == ferrobase_types::LATEST_TIMESTAMP {
            self.now
        } else {
            ts
        }
    }

    /// The client operation this edit applied, when it carries a nonce:
    /// its pair, row and time (`now`; an edit without one counts as new).
    pub fn logged_nonce(&self) -> Option<LoggedNonce> {
        let nonce = self.nonce.filter(|n| n.1 != 0)?;
        let at_ms = if self.now == ferrobase_types::LATEST_TIMESTAMP {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        } else {
            self.now
        };
        Some(LoggedNonce {
            nonce,
            row: self.row.clone(),
            at_ms,
        })
    }
}

/// A client operation's `(nonce group, nonce)` as a log holds it: with the
/// row it changed and when (Unix milliseconds), so a server that learns it
/// from a WAL, recovered edits or a closed region's file knows which
/// region's retries it answers and until when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedNonce {
    pub nonce: (u64, u64),
    pub row: Bytes,
    pub at_ms: u64,
}

/// The cells of one family in a [`WalEdit`]: the same encoded run a row
/// mutation carries, so a write moves its cells into the edit whole.
pub use ferrobase_types::FamilyCells as WalFamily;

/// The process's write-ahead log. See the module docs.
pub struct Wal {
    fs: Arc<dyn Storage>,
    writer: Arc<Writer>,
    tracker: Arc<Tracker>,
    counters: Arc<Counters>,
    signal: Arc<flusher::Signal>,
    flusher: Mutex<Option<JoinHandle<()>>>,
    report: OpenReport,
    /// The directory lock (where the storage has one), released by close.
    lock: Mutex<Option<Box<dyn Send + Sync>>>,
    /// Client nonces of the old segments' edits, until each region takes
    /// its own ([`take_old_nonces`](Self::take_old_nonces)).
    old_nonces: Mutex<recovery::OldNonces>,
}

impl Wal {
    /// Opens (creating) the directory: validates every old segment (a torn
    /// tail of the last one is truncated and reported, any other bad record
    /// is [`StorageError::Corrupt`](crate::StorageError::Corrupt)), rebuilds the per-segment bookkeeping,
    /// starts a new segment for appends and the ASYNC_WAL flusher thread.
    pub fn open(dir: &Path, opts: WalOptions) -> Result<Arc<Wal>> {
        Wal::open_on(Arc::new(LocalFs::as_given()), dir, opts)
    }

    /// [`open`](Self::open) on a storage root (`dir` relative to it).
    pub fn open_on(fs: Arc<dyn Storage>, dir: &Path, opts: WalOptions) -> Result<Arc<Wal>> {
        let claim = fs.claim_dir(dir)?;
        let lock = fs.lock_dir(dir)?;
        let (old, report, old_nonces) = recovery::recover(&*fs, dir)?;
        let next_id = old.last().map_or(1, |s| s.id + 1);
        let (file, path) = segment::create(&*fs, dir, next_id)?;
        let counters = Arc::new(Counters::default());
        let tracker = Arc::new(Tracker::new(
            fs.clone(),
            old,
            (next_id, path.clone()),
            counters.clone(),
        ));
        // Segments without edits (e.g. the previous process's last,
        // unused one) are obsolete right away.
        tracker.delete_obsolete();
        let writer = Arc::new(Writer::new(
            (fs.clone(), dir, claim),
            opts.roll_size,
            (next_id, file, path),
            tracker.clone(),
            counters.clone(),
        ));
        let signal = Arc::new(flusher::Signal::default());
        let handle = flusher::spawn(writer.clone(), signal.clone(), opts.async_flush_interval)?;
        tracing::info!(dir = %fs.display(dir), %report, "WAL opened");
        Ok(Arc::new(Wal {
            fs,
            writer,
            tracker,
            counters,
            signal,
            flusher: Mutex::new(Some(handle)),
            report,
            lock: Mutex::new(lock),
            old_nonces: Mutex::new(old_nonces),
        }))
    }

    /// The client nonces of `region_id`'s edits up to `flushed_seq` in the
    /// segments a previous process left (the region's flushed edits, which
    /// replay skips), taken once: the region's opener learns them so a
    /// client retrying such an operation after a crash and restart is
    /// answered instead of applied again. Edits above `flushed_seq` carry
    /// theirs through replay.
    pub fn take_old_nonces(&self, region_id: u64, flushed_seq: u64) -> Vec<LoggedNonce> {
        let Some(all) = self.old_nonces.lock().remove(&region_id) else {
            return Vec::new();
        };
        all.into_iter()
            .filter(|(seq, _)| *seq <= flushed_seq)
            .map(|(_, n)| n)
            .collect()
    }

    /// What open found: segments, records, max seq, a truncated tail.
    pub fn open_report(&self) -> OpenReport {
        self.report.clone()
    }

    /// Appends `edits` as one group-commit unit (all buffered, or none on
    /// error). Returns per `durability`: `AsyncWal` once buffered,
    /// `SyncWal` (and `UseDefault`) once written to the OS, `FsyncWal` once
    /// fdatasynced; `SkipWal` does nothing. Each edit is its own record:
    /// after a crash, a prefix of the unit's edits may survive.
    pub fn append(&self, edits: &[WalEdit], durability: Durability) -> Result<()> {
        let fsync = match durability {
            Durability::SkipWal => return Ok(()),
            Durability::FsyncWal => true,
            Durability::AsyncWal | Durability::SyncWal | Durability::UseDefault => false,
        };
        if edits.is_empty() {
            return Ok(());
        }
        let buffered = self.writer.buffer(edits, fsync)?;
        if durability == Durability::AsyncWal {
            if buffered.must_wait {
                return self.writer.wait(buffered.end, buffered.generation, false);
            }
            if buffered.kick {
                self.signal.kick();
            }
            return Ok(());
        }
        self.writer.wait(buffered.end, buffered.generation, fsync)
    }

    /// Calls `f` for every edit of `region_id` with seq > `after_seq`, in
    /// file order, across all segments; returns how many were delivered.
    pub fn replay(
        &self,
        region_id: u64,
        after_seq: u64,
        f: &mut dyn FnMut(WalEdit) -> Result<()>,
    ) -> Result<u64> {
        replay::replay(
            &*self.fs,
            &self.writer,
            &self.tracker,
            region_id,
            after_seq,
            f,
        )
    }

    /// The region has durably flushed every edit with seq <= `flushed_seq`;
    /// segments (other than the current) that no longer hold unflushed
    /// edits are deleted.
    pub fn mark_flushed(&self, region_id: u64, flushed_seq: u64) {
        self.tracker.mark_flushed(region_id, flushed_seq);
    }

    /// The region is gone for good: its edits no longer pin segments.
    pub fn forget_region(&self, region_id: u64) {
        self.tracker.forget(region_id);
    }

    /// Regions with unflushed edits in the oldest segment, ascending (for
    /// `hbase.regionserver.maxlogs` forced flushes).
    pub fn regions_pinning_oldest_segment(&self) -> Vec<u64> {
        self.tracker.pinning_oldest()
    }

    /// Segments on disk, the current one included.
    pub fn segment_count(&self) -> usize {
        self.tracker.count()
    }

    /// Writes and fdatasyncs everything buffered.
    pub fn sync(&self) -> Result<()> {
        self.writer.flush(true)
    }

    /// Syncs, stops the flusher thread and releases the directory; later
    /// appends fail with [`StorageError::Closed`](crate::StorageError::Closed). Idempotent.
    pub fn close(&self) -> Result<()> {
        let result = self.writer.close();
        self.tracker.close();
        self.signal.stop();
        if let Some(handle) = self.flusher.lock().take() {
            // The flusher never panics; a join error could only carry one.
            if handle.join().is_err() {
                tracing::error!("WAL flusher thread panicked");
            }
        }
        self.lock.lock().take();
        result
    }

    /// Counters since open.
    pub fn stats(&self) -> WalStats {
        self.counters.snapshot()
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::error!(error = %e, "WAL close on drop failed");
        }
    }
}
