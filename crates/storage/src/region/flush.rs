//! Flush: write the memstores out as one new store file per store.
//!
//! 1. Under the state write lock (a pointer swap), the active memstores
//!    become the snapshot and fresh ones take writes. The read point at
//!    that instant is the *flushed sequence id*: every write at or below it
//!    completed, so it is in the snapshot or in an earlier file.
//! 2. Each store's snapshot is written as a new store file, which the
//!    storage publishes whole and durably (`fs` module).
//! 3. The manifest is replaced atomically with the new files and the
//!    flushed sequence id; then readers see the files and the snapshot is
//!    dropped; then the WAL may delete segments holding only flushed edits.
//!
//! A crash before 3 leaves orphan files that the next open deletes, and the
//! WAL still holds every edit. A failed flush keeps the snapshot, and the
//! next flush retries it before taking a new one.

use super::{FailedFlush, Region};
use crate::error::{Result, StorageError};
use crate::memstore::MemStoreSet;
use crate::storefile::{StoreFileReader, StoreFileWriter};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl Region {
    /// Flushes the memstores. With `wait`, returns when the files are live;
    /// otherwise queues the flush on the flush pool.
    pub fn flush(&self, wait: bool) -> Result<()> {
        self.check_open()?;
        if wait {
            self.flush_now(false).map(|_| ())
        } else {
            self.request_flush();
            Ok(())
        }
    }

    /// Queues a flush on the engine's flush pool (at most one queued).
    pub(crate) fn request_flush(&self) {
        if !self.flush_requested.swap(true, Ordering::AcqRel) {
            self.shared.queue_flush(self.info.id);
        }
    }

    /// Runs a queued flush (called by the flush pool). Before flushing, waits
    /// while a store has `hbase.hstore.blockingStoreFiles` files, for
    /// compaction to catch up — but at most `blockingWaitTime`, and not
    /// at all once writers are blocked on this region's memstore: blocking
    /// writers because of file count is the stall the HBase 0.94
    /// write-stall study measured (docs/experiments.md).
    pub(crate) fn run_queued_flush(&self) -> Result<()> {
        self.flush_requested.store(false, Ordering::Release);
        if self.is_closed() {
            return Ok(());
        }
        let settings = self.shared.settings();
        let limit = Duration::from_millis(settings.blocking_wait_time_ms);
        let start = Instant::now();
        let mut counted = false;
        while self.max_store_files() >= settings.blocking_store_files
            && start.elapsed() < limit
            && self.memstore_size() < settings.memstore_block_size()
            && !self.is_closed()
        {
            if !counted {
                self.shared
                    .stalls()
                    .delayed_flushes
                    .fetch_add(1, Ordering::Relaxed);
                counted = true;
            }
            self.maybe_request_compaction();
            self.shared
                .wait_compaction_progress(Duration::from_millis(50));
        }
        let result = self.flush_now(true);
        *self.failed_flush.lock() = match &result {
            Err(StorageError::Io { path, source }) => Some(FailedFlush {
                at: Instant::now(),
                path: path.clone(),
                kind: source.kind(),
                message: source.to_string(),
            }),
            _ => None,
        };
        result.map(|_| ())
    }

    /// The I/O error of a queued flush that failed after `since` (and none
    /// succeeded after it), as an error for a writer blocked on this
    /// region's memstore: a full disk reaches the client by name.
    pub(crate) fn flush_failure_since(&self, since: Instant) -> Option<StorageError> {
        let failed = self.failed_flush.lock();
        let f = failed.as_ref().filter(|f| f.at >= since)?;
        Some(StorageError::Io {
            path: f.path.clone(),
            source: std::io::Error::new(
                f.kind,
                format!(
                    "region {} cannot flush its memstore, so writes are refused: {}",
                    self.info.name(),
                    f.message
                ),
            ),
        })
    }

    /// Flushes now; returns whether anything was written.
    pub(crate) fn flush_now(&self, from_pool: bool) -> Result<bool> {
        let _one_at_a_time = self.flush_lock.lock();
        if from_pool {
            while self.shared.flushes_paused() && !self.is_closed() {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let (snapshot, flushed_seq) = {
            let mut st = self.state.write();
            match &st.snapshot {
                // An earlier flush failed: retry its snapshot first.
                Some(s) => (s.clone(), self.manifest.lock().flushed_seq),
                None => {
                    if st.active.is_empty() {
                        return Ok(false);
                    }
                    let fresh = Arc::new(MemStoreSet::new(
                        self.stores.iter().map(|s| s.family_bytes.clone()),
                    ));
                    let snap = std::mem::replace(&mut st.active, fresh);
                    st.snapshot = Some(snap.clone());
                    (snap, self.mvcc.completed_prefix())
                }
            }
        };
        let started = std::time::Instant::now();
        let mut written = Vec::new();
        for (i, store) in self.stores.iter().enumerate() {
            let Some(mem) = snapshot.stores.get(i) else {
                continue;
            };
            if mem.is_empty() {
                continue;
            }
            let name = self.next_file_name();
            let dest = store.dir.join(&name);
            let mut writer =
                StoreFileWriter::create_on(&*self.fs, &dest, &store.family, mem.len() as u64)?;
            // Identical keys: only the newest write survives. Row by row:
            // the writer compares each row once, and in a row compares
            // only the column parts.
            mem.for_each_newest_row(|row, cells| writer.append_row(row, cells))?;
            let info = writer.finish()?;
            written.push((i, name, dest, info.max_seq_id, info.length));
        }
        let mut readers = Vec::new();
        for (i, _, dest, _, _) in &written {
            let cache = self
                .stores
                .get(*i)
                .map(|s| self.shared.cache_for(&s.family));
            readers.push((*i, StoreFileReader::open_on(&*self.fs, dest, cache)?));
        }
        {
            let mut m = self.manifest.lock();
            let mut next = m.clone();
            for (i, name, _, max_seq, _) in &written {
                if let Some(store) = self.stores.get(*i) {
                    next.stores
                        .entry(store.family.name.clone())
                        .or_default()
                        .push(name.clone());
                }
                next.max_seq = next.max_seq.max(*max_seq);
            }
            next.flushed_seq = next.flushed_seq.max(flushed_seq);
            next.store(&*self.fs, &self.dir, self.epoch)?;
            *m = next;
        }
        {
            let mut st = self.state.write();
            for (i, reader) in readers {
                if let Some(slot) = st.files.get_mut(i) {
                    let mut list = Vec::with_capacity(slot.len() + 1);
                    list.push(reader);
                    list.extend(slot.iter().cloned());
                    *slot = Arc::new(list);
                }
            }
            st.snapshot = None;
        }
        let freed = snapshot.size();
        self.memstore_size
            .fetch_sub(freed.min(self.memstore_size()), Ordering::Relaxed);
        self.shared
            .flushed(freed, written.iter().map(|w| w.4).sum());
        self.shared.wal().mark_flushed(self.info.id, flushed_seq);
        metrics::histogram!(crate::engine::FLUSH_SECONDS).record(started.elapsed());
        self.maybe_request_compaction();
        Ok(true)
    }

    /// Most files in any store.
    pub(crate) fn max_store_files(&self) -> usize {
        self.state
            .read()
            .files
            .iter()
            .map(|f| f.len())
            .max()
            .unwrap_or(0)
    }
}
