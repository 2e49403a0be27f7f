//! Compaction of a region's stores: select, merge into a temp file, publish
//! the swap of inputs for output in the manifest, then retire the inputs
//! (deleted, or archived while a snapshot holds them: `crate::archive`).
//!
//! Flushes may add files while a compaction runs; the swap is computed
//! against the file list *at publish time*, so those files are kept.

use super::{Region, manifest::Manifest};
use crate::archive;
use crate::compaction::{CompactionKind, compact_into, select_minor, throttle};
use crate::error::{Result, StorageError};
use crate::iter::CellIterator;
use crate::scanner::MergingIterator;
use crate::snapshot_manifest::SnapshotLayout;
use crate::storefile::{StoreFileReader, StoreFileWriter};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

impl Region {
    /// Compacts every store now: `major` merges all files of each store and
    /// applies deletes, TTL and VERSIONS; otherwise a minor compaction runs
    /// where the ratio policy finds files to merge.
    pub fn compact(&self, major: bool) -> Result<()> {
        self.check_open()?;
        for i in 0..self.stores.len() {
            self.compact_store(i, major)?;
        }
        Ok(())
    }

    /// Compacts one family's store now, as [`compact`](Self::compact) does
    /// every store.
    pub fn compact_family(&self, family: &str, major: bool) -> Result<()> {
        self.check_open()?;
        let index = self
            .stores
            .iter()
            .position(|s| s.family.name == family)
            .ok_or_else(|| StorageError::NoSuchFamily {
                table: self.table.name.clone(),
                family: family.to_string(),
            })?;
        self.compact_store(index, major)?;
        Ok(())
    }

    /// Queues a minor compaction if some store has enough files, or holds
    /// references (HBase compacts a split's daughters as soon as they
    /// open, so that their parent's files can go).
    pub(crate) fn maybe_request_compaction(&self) {
        let min = self.shared.settings().compaction_min;
        if (self.max_store_files() >= min.max(2) || self.has_references())
            && !self.compaction_requested.swap(true, Ordering::AcqRel)
        {
            let bytes = self.status().store_file_bytes;
            self.shared.queue_compaction(self.info.id, bytes);
        }
    }

    /// The pacing of a compaction's writes (`compaction::throttle`): sleeps
    /// while the compaction is ahead of its share of the throughput limit,
    /// and stops it with [`StorageError::Closed`] once the region closes.
    fn pacer(&self) -> impl FnMut(u64) -> Result<()> + '_ {
        let settings = self.shared.settings();
        let (lower, higher) = (
            settings.compaction_throughput_lower,
            settings.compaction_throughput_higher,
        );
        let start = Instant::now();
        let (mut written, mut next_check) = (0u64, throttle::CHECK_EVERY_BYTES);
        move |bytes| {
            written += bytes;
            if written < next_check {
                return Ok(());
            }
            next_check = written + throttle::CHECK_EVERY_BYTES;
            loop {
                let pressure = self.shared.compaction_pressure();
                let active = self.shared.running_compactions();
                let Some(rate) = throttle::limit(lower, higher, pressure, active) else {
                    return Ok(());
                };
                let wait = throttle::behind(written, start.elapsed(), rate);
                if wait.is_zero() {
                    return Ok(());
                }
                if self.is_closed() {
                    return Err(StorageError::Closed(self.info.name()));
                }
                let slice = wait.min(throttle::SLEEP_SLICE);
                std::thread::sleep(slice);
                self.shared.compaction_throttled(slice);
            }
        }
    }

    /// Runs a queued compaction (called by a compaction pool).
    pub(crate) fn run_queued_compaction(&self) -> Result<()> {
        self.compaction_requested.store(false, Ordering::Release);
        if self.is_closed() || !self.shared.compactions_enabled() {
            return Ok(());
        }
        for i in 0..self.stores.len() {
            // Keep going while the policy finds work (a burst of flushes
            // can leave several rounds to do).
            loop {
                match self.compact_store(i, false) {
                    Ok(true) => {}
                    Ok(false) => break,
                    // Closed while throttled: the output was discarded and
                    // the inputs stay; nothing failed.
                    Err(StorageError::Closed(_)) if self.is_closed() => return Ok(()),
                    Err(e) => return Err(e),
                }
                if self.is_closed() || !self.shared.compactions_enabled() {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Compacts one store; returns whether it did anything.
    fn compact_store(&self, index: usize, major: bool) -> Result<bool> {
        let Some(store) = self.stores.get(index) else {
            return Ok(false);
        };
        let _one_at_a_time = store.compaction_lock.lock();
        let started = std::time::Instant::now();
        if self.is_closed() {
            // Closed while this waited for the lock: the files may be gone
            // (a dropped table) or served elsewhere (a moved region).
            return Ok(false);
        }
        let files = match self.state.read().files.get(index) {
            Some(f) => f.clone(),
            None => return Ok(false),
        };
        // `files` is newest first; the policy wants oldest first.
        let oldest_first: Vec<Arc<StoreFileReader>> = files.iter().rev().cloned().collect();
        let settings = self.shared.settings();
        let has_references = oldest_first.iter().any(|f| f.is_reference());
        let (inputs, kind): (Vec<Arc<StoreFileReader>>, CompactionKind) = if major || has_references
        {
            // A store holding references rewrites every file (HBase forces
            // a major compaction there): the references go all at once.
            if oldest_first.is_empty() {
                return Ok(false);
            }
            (oldest_first, CompactionKind::Major)
        } else {
            let sizes: Vec<u64> = oldest_first.iter().map(|f| f.size()).collect();
            let Some(range) = select_minor(
                &sizes,
                settings.compaction_min,
                settings.compaction_max,
                settings.compaction_ratio,
            ) else {
                return Ok(false);
            };
            let kind = if range.len() == oldest_first.len() {
                CompactionKind::Major
            } else {
                CompactionKind::Minor
            };
            (
                oldest_first
                    .get(range)
                    .map(|s| s.to_vec())
                    .unwrap_or_default(),
                kind,
            )
        };
        if inputs.is_empty() {
            return Ok(false);
        }
        let bytes_in: u64 = inputs.iter().map(|f| f.size()).sum();
        let entries: u64 = inputs.iter().map(|f| f.info().entries).sum();
        let sources: Vec<Box<dyn CellIterator>> = inputs
            .iter()
            .map(|f| Box::new(f.scanner(false)) as Box<dyn CellIterator>)
            .collect();
        let mut merged = MergingIterator::new(sources);
        let name = self.next_file_name();
        let dest = store.dir.join(&name);
        let mut writer = StoreFileWriter::create_on(&*self.fs, &dest, &store.family, entries)?;
        let outcome = {
            let _running = self.shared.compaction_running();
            let _here =
                Compacting::start(&self.compacting[usize::from(kind == CompactionKind::Major)]);
            let mut pace = self.pacer();
            compact_into(
                &mut merged,
                &mut writer,
                &store.family,
                (kind, super::now_ms()),
                &mut pace,
            )?
        };
        let info = writer.finish()?;
        let output = if outcome.written > 0 {
            Some((
                name,
                StoreFileReader::open_on(
                    &*self.fs,
                    &dest,
                    Some(self.shared.cache_for(&store.family)),
                )?,
            ))
        } else {
            // Everything was deleted or expired: the empty file is not
            // published in the manifest, so it goes.
            self.fs.delete(&dest)?;
            None
        };
        let input_names: Vec<String> = inputs.iter().map(|f| f.name().to_string()).collect();
        {
            let mut m = self.manifest.lock();
            let mut next = m.clone();
            let list = next.stores.entry(store.family.name.clone()).or_default();
            let pos = list
                .iter()
                .position(|n| input_names.contains(n))
                .unwrap_or(0);
            list.retain(|n| !input_names.contains(n));
            if let Some((name, _)) = &output {
                list.insert(pos.min(list.len()), name.clone());
            }
            next.references.retain(|n, _| !input_names.contains(n));
            next.max_seq = next.max_seq.max(info.max_seq_id);
            next.store(&*self.fs, &self.dir, self.epoch)?;
            *m = next;
        }
        {
            let mut st = self.state.write();
            if let Some(slot) = st.files.get_mut(index) {
                let mut list: Vec<Arc<StoreFileReader>> = Vec::with_capacity(slot.len());
                let mut placed = false;
                // Newest first: the output sits where its newest input was.
                for f in slot.iter() {
                    if inputs.iter().any(|i| Arc::ptr_eq(i, f)) {
                        if !placed {
                            if let Some((_, r)) = &output {
                                list.push(r.clone());
                            }
                            placed = true;
                        }
                    } else {
                        list.push(f.clone());
                    }
                }
                *slot = Arc::new(list);
            }
        }
        if Manifest::superseded(&*self.fs, &self.dir, self.epoch)? {
            // Another server owns the region now (this one was paused past
            // its lease): its manifest may still name the inputs.
            return Err(StorageError::Fenced(format!(
                "region {} was opened by another server; keeping the compaction inputs",
                self.info.name()
            )));
        }
        // Read only now, after the manifest without the inputs is
        // published: see `crate::archive` for why that order is safe.
        let layout = SnapshotLayout::for_data_dir(self.shared.data_dir());
        match archive::Holds::load(&*self.fs, &layout) {
            Ok(holds) => {
                for f in &inputs {
                    f.evict_from_cache();
                    if f.is_reference() {
                        // The parent's file: the master's janitor removes
                        // it once no region refers to it.
                        continue;
                    }
                    if let Err(e) = archive::retire(&*self.fs, &layout, &holds, f.path()) {
                        tracing::warn!(file = %self.fs.display(f.path()), error = %e, "could not retire compacted file");
                    }
                }
            }
            // Kept in place: the next open of the region retires them as
            // files its manifest does not list.
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the snapshots; keeping compaction inputs")
            }
        }
        self.shared.compacted(bytes_in, info.length);
        self.shared.notify_compaction_progress();
        metrics::histogram!(crate::engine::COMPACTION_SECONDS).record(started.elapsed());
        Ok(true)
    }
}

/// Counts a compaction as running in its region while it lives.
struct Compacting<'a>(&'a AtomicU32);

impl<'a> Compacting<'a> {
    fn start(count: &'a AtomicU32) -> Compacting<'a> {
        count.fetch_add(1, Ordering::AcqRel);
        Compacting(count)
    }
}

impl Drop for Compacting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
