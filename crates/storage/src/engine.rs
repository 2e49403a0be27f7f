//! What the regions of one process share: settings, the WAL, the block
//! cache, the flush and compaction pools, process-wide memstore accounting
//! and the stall counters.
//!
//! Pools are plain threads fed by channels: `hbase.hstore.flusher.count`
//! flushers, and `hbase.regionserver.thread.compaction.small/large`
//! compactors (a request goes to the large pool when the region's files
//! pass `hbase.regionserver.thread.compaction.throttle`). A chore thread
//! checks, every 100 ms, the global memstore low mark (forced flushes of
//! the largest regions) and `hbase.regionserver.maxlogs` (flushes of the
//! regions pinning the oldest WAL segment).
//!
//! Global memstore accounting is one atomic counter updated by each write
//! and flush (docs/architecture.md, design rule 2), never a walk over
//! regions on the write path.

mod pools;
mod stats;

pub use stats::{EngineStats, StallCounters, StallStats};

/// Histogram (in the process's `metrics` recorder, when one is installed)
/// of each flush's duration in seconds, from the memstore swap to the
/// store files' publication.
pub const FLUSH_SECONDS: &str = "hbase_regionserver_flush_seconds";
/// Histogram of each compaction's duration in seconds (one store's merge,
/// published).
pub const COMPACTION_SECONDS: &str = "hbase_regionserver_compaction_seconds";

use crate::cache::BlockCache;
use crate::error::{Result, StorageError};
use crate::fs::{LocalFs, Storage};
use crate::region::{Region, RegionInfo};
use crate::row_cache::RowCache;
use crate::wal::{Wal, WalOptions};
use crossbeam_channel::Sender;
use ferrobase_types::{Settings, TableDescriptor};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// A job for a pool.
pub(crate) enum Job {
    Flush(u64),
    Compact(u64),
}

/// State shared by the engine, its regions and its pools.
pub struct EngineShared {
    settings: Settings,
    fs: Arc<dyn Storage>,
    data_dir: PathBuf,
    wal: Arc<Wal>,
    cache: Arc<BlockCache>,
    /// The view of `cache` IN_MEMORY families read through.
    in_memory_cache: Arc<BlockCache>,
    /// Off unless `ferrobase.rowcache.size` is set.
    row_cache: Option<Arc<RowCache>>,
    regions: RwLock<HashMap<u64, Arc<Region>>>,
    global_memstore: AtomicU64,
    global_limit: u64,
    global_low_mark: u64,
    memory_freed: (Mutex<()>, Condvar),
    compaction_progress: (Mutex<()>, Condvar),
    flush_tx: Mutex<Option<Sender<Job>>>,
    small_tx: Mutex<Option<Sender<Job>>>,
    large_tx: Mutex<Option<Sender<Job>>>,
    stalls: StallCounters,
    counters: stats::Counters,
    compactions_enabled: AtomicBool,
    flushes_paused: AtomicBool,
    forced_flush_pending: AtomicBool,
    shutting_down: AtomicBool,
}

/// A compaction in progress; see [`EngineShared::compaction_running`].
pub(crate) struct RunningCompaction<'a>(&'a EngineShared);

impl Drop for RunningCompaction<'_> {
    fn drop(&mut self) {
        self.0
            .counters
            .running_compactions
            .fetch_sub(1, Ordering::AcqRel);
    }
}

/// The region engine of one process; see the module docs.
pub struct Engine {
    shared: Arc<EngineShared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// Opens the engine on `dir` (`dir/wal`, `dir/data`), creating them.
    pub fn open(dir: &Path, settings: Settings) -> Result<Arc<Engine>> {
        Engine::open_dirs(&dir.join("data"), &dir.join("wal"), settings)
    }

    /// Opens the engine with store files under `data_dir` and its WAL in
    /// `wal_dir` (distributed mode: a shared data directory, one WAL
    /// directory per region server).
    pub fn open_dirs(data_dir: &Path, wal_dir: &Path, settings: Settings) -> Result<Arc<Engine>> {
        Engine::open_on(Arc::new(LocalFs::as_given()), data_dir, wal_dir, settings)
    }

    /// Opens the engine on a storage root (`--root`): store files under
    /// `data_dir`, the WAL in `wal_dir`, both relative to the root.
    pub fn open_on(
        fs: Arc<dyn Storage>,
        data_dir: &Path,
        wal_dir: &Path,
        settings: Settings,
    ) -> Result<Arc<Engine>> {
        let data_dir = data_dir.to_path_buf();
        fs.create_dir_all(&data_dir)?;
        let wal = Wal::open_on(
            fs.clone(),
            wal_dir,
            WalOptions {
                roll_size: settings.wal_roll_size(),
                async_flush_interval: Duration::from_millis(
                    settings.async_wal_flush_interval_ms.max(1),
                ),
            },
        )?;
        let cache = Arc::new(BlockCache::new(settings.block_cache_bytes()));
        let row_cache = match settings.row_cache_bytes() {
            0 => None,
            bytes => Some(Arc::new(RowCache::new(bytes))),
        };
        let in_memory_cache = Arc::new(cache.in_memory_view());
        let shared = Arc::new(EngineShared {
            in_memory_cache,
            row_cache,
            global_limit: settings.global_memstore_limit().max(1),
            global_low_mark: settings.global_memstore_low_mark().max(1),
            settings,
            fs,
            data_dir,
            wal,
            cache,
            regions: RwLock::new(HashMap::new()),
            global_memstore: AtomicU64::new(0),
            memory_freed: (Mutex::new(()), Condvar::new()),
            compaction_progress: (Mutex::new(()), Condvar::new()),
            flush_tx: Mutex::new(None),
            small_tx: Mutex::new(None),
            large_tx: Mutex::new(None),
            stalls: StallCounters::default(),
            counters: stats::Counters::default(),
            compactions_enabled: AtomicBool::new(true),
            flushes_paused: AtomicBool::new(false),
            forced_flush_pending: AtomicBool::new(false),
            shutting_down: AtomicBool::new(false),
        });
        let threads = pools::start(&shared);
        Ok(Arc::new(Engine {
            shared,
            threads: Mutex::new(threads),
        }))
    }

    /// Opens a region of `table` (replaying its WAL edits) and registers it.
    pub fn open_region(&self, table: &TableDescriptor, info: RegionInfo) -> Result<Arc<Region>> {
        if self.shared.shutting_down.load(Ordering::SeqCst) {
            return Err(StorageError::Closed("engine".into()));
        }
        if let Some(r) = self.shared.regions.read().get(&info.id) {
            return Ok(r.clone());
        }
        let region = Region::open(self.shared.clone(), table, info)?;
        self.shared
            .regions
            .write()
            .insert(region.info().id, region.clone());
        region.request_startup_work();
        Ok(region)
    }

    /// An open region by id.
    pub fn region(&self, id: u64) -> Option<Arc<Region>> {
        self.shared.regions.read().get(&id).cloned()
    }

    /// Every open region.
    pub fn regions(&self) -> Vec<Arc<Region>> {
        self.shared.regions.read().values().cloned().collect()
    }

    /// The settings the engine runs with.
    pub fn settings(&self) -> &Settings {
        &self.shared.settings
    }

    /// The storage root the engine stores on.
    pub fn fs(&self) -> &Arc<dyn Storage> {
        self.shared.fs()
    }

    /// The directory of the tables' store files, on [`fs`](Self::fs).
    pub fn data_dir(&self) -> &Path {
        self.shared.data_dir()
    }

    /// True when store file reads are local `pread`s (see
    /// [`Storage::reads_are_local`]): a point read then takes microseconds
    /// and may run where it was received.
    pub fn reads_are_local(&self) -> bool {
        self.shared.fs.reads_are_local()
    }

    /// The shared block cache.
    pub fn cache(&self) -> &Arc<BlockCache> {
        &self.shared.cache
    }

    /// The row cache, when `ferrobase.rowcache.size` turns it on.
    pub fn row_cache(&self) -> Option<&Arc<RowCache>> {
        self.shared.row_cache.as_ref()
    }

    /// Whether compactions may start (HBase's `compaction_switch`).
    pub fn compactions_enabled(&self) -> bool {
        self.shared.compactions_enabled()
    }

    /// Turns compactions on or off (HBase's `compaction_switch`). Off, no
    /// new compaction starts; running ones finish.
    pub fn set_compactions_enabled(&self, on: bool) {
        self.shared.compactions_enabled.store(on, Ordering::SeqCst);
        if on {
            for r in self.regions() {
                r.maybe_request_compaction();
            }
        }
    }

    /// Holds queued flushes (explicit `flush(true)` calls still run). A
    /// fault-injection switch for tests of backpressure; not for production.
    #[doc(hidden)]
    pub fn set_flushes_paused(&self, paused: bool) {
        self.shared.flushes_paused.store(paused, Ordering::SeqCst);
    }

    /// Counters for monitoring and benchmarks.
    pub fn stats(&self) -> EngineStats {
        self.shared.stats()
    }

    /// Waits until no flush or compaction is queued or running, at most
    /// `timeout`; returns whether the engine went idle.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            if self.shared.counters.background_jobs.load(Ordering::Acquire) == 0 {
                return true;
            }
            if start.elapsed() >= timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes every region (flushing it), syncs and closes the WAL, stops
    /// the pools. Idempotent.
    pub fn close(&self) -> Result<()> {
        if self.shared.shutting_down.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.shared.flushes_paused.store(false, Ordering::SeqCst);
        let mut first_err = None;
        for r in self.regions() {
            if let Err(e) = r.close() {
                first_err.get_or_insert(e);
            }
        }
        for tx in [
            &self.shared.flush_tx,
            &self.shared.small_tx,
            &self.shared.large_tx,
        ] {
            tx.lock().take();
        }
        self.shared.notify_memory_freed();
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
        if let Err(e) = self.shared.wal.close() {
            first_err.get_or_insert(e);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::warn!(error = %e, "error closing engine");
        }
    }
}

impl EngineShared {
    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(crate) fn fs(&self) -> &Arc<dyn Storage> {
        &self.fs
    }

    pub(crate) fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub(crate) fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    /// The block cache view for a family's readers: IN_MEMORY families
    /// get the tier other reads never evict from (`cache` module).
    pub(crate) fn cache_for(&self, family: &ferrobase_types::FamilyDescriptor) -> Arc<BlockCache> {
        if family.in_memory {
            self.in_memory_cache.clone()
        } else {
            self.cache.clone()
        }
    }

    pub(crate) fn row_cache(&self) -> Option<&Arc<RowCache>> {
        self.row_cache.as_ref()
    }

    pub(crate) fn stalls(&self) -> &StallCounters {
        &self.stalls
    }

    pub(crate) fn compactions_enabled(&self) -> bool {
        self.compactions_enabled.load(Ordering::SeqCst)
    }

    pub(crate) fn flushes_paused(&self) -> bool {
        self.flushes_paused.load(Ordering::SeqCst)
    }

    pub(crate) fn region(&self, id: u64) -> Option<Arc<Region>> {
        self.regions.read().get(&id).cloned()
    }

    pub(crate) fn forget_region(&self, id: u64) {
        self.regions.write().remove(&id);
    }

    pub(crate) fn add_memstore(&self, bytes: u64) {
        let total = self.global_memstore.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total >= self.global_low_mark {
            self.request_global_flush();
        }
    }

    pub(crate) fn over_global_limit(&self) -> bool {
        self.global_memstore.load(Ordering::Relaxed) >= self.global_limit
    }

    /// Asks the chore for a forced flush of the largest region.
    pub(crate) fn request_global_flush(&self) {
        self.forced_flush_pending.store(true, Ordering::Release);
    }

    pub(crate) fn flushed(&self, freed: u64, bytes_written: u64) {
        let _ = self
            .global_memstore
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(freed))
            });
        self.counters.flushes.fetch_add(1, Ordering::Relaxed);
        self.counters
            .flushed_bytes
            .fetch_add(bytes_written, Ordering::Relaxed);
        self.notify_memory_freed();
    }

    pub(crate) fn compacted(&self, bytes_in: u64, bytes_out: u64) {
        self.counters.compactions.fetch_add(1, Ordering::Relaxed);
        self.counters
            .compacted_bytes_in
            .fetch_add(bytes_in, Ordering::Relaxed);
        self.counters
            .compacted_bytes_out
            .fetch_add(bytes_out, Ordering::Relaxed);
    }

    /// Counts a compaction as running until the guard drops.
    pub(crate) fn compaction_running(&self) -> RunningCompaction<'_> {
        self.counters
            .running_compactions
            .fetch_add(1, Ordering::AcqRel);
        RunningCompaction(self)
    }

    /// Compactions merging right now (at least 1 from inside one).
    pub(crate) fn running_compactions(&self) -> usize {
        self.counters.running_compactions.load(Ordering::Acquire) as usize
    }

    /// The highest compaction pressure of any store of any region
    /// (`compaction::throttle::pressure`), as HBase's region server uses.
    pub(crate) fn compaction_pressure(&self) -> f64 {
        let (min, blocking) = (
            self.settings.compaction_min,
            self.settings.blocking_store_files,
        );
        self.regions
            .read()
            .values()
            .map(|r| crate::compaction::throttle::pressure(r.max_store_files(), min, blocking))
            .fold(0.0, f64::max)
    }

    pub(crate) fn compaction_throttled(&self, slept: Duration) {
        self.counters
            .compaction_throttled_ms
            .fetch_add(slept.as_millis() as u64, Ordering::Relaxed);
    }

    fn notify_memory_freed(&self) {
        let _g = self.memory_freed.0.lock();
        self.memory_freed.1.notify_all();
    }

    pub(crate) fn wait_memory_freed(&self, timeout: Duration) {
        let mut g = self.memory_freed.0.lock();
        let _ = self.memory_freed.1.wait_for(&mut g, timeout);
    }

    pub(crate) fn notify_compaction_progress(&self) {
        let _g = self.compaction_progress.0.lock();
        self.compaction_progress.1.notify_all();
    }

    pub(crate) fn wait_compaction_progress(&self, timeout: Duration) {
        let mut g = self.compaction_progress.0.lock();
        let _ = self.compaction_progress.1.wait_for(&mut g, timeout);
    }

    pub(crate) fn queue_flush(&self, region: u64) {
        self.queue(&self.flush_tx, Job::Flush(region));
    }

    fn queue(&self, pool: &Mutex<Option<Sender<Job>>>, job: Job) {
        let flush = matches!(job, Job::Flush(_));
        if let Some(tx) = pool.lock().as_ref() {
            self.counters.background_jobs.fetch_add(1, Ordering::AcqRel);
            if flush {
                self.counters.flush_jobs.fetch_add(1, Ordering::AcqRel);
            }
            if tx.send(job).is_err() {
                if flush {
                    self.counters.flush_jobs.fetch_sub(1, Ordering::AcqRel);
                }
                self.counters.background_jobs.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    pub(crate) fn queue_compaction(&self, region: u64, bytes: u64) {
        let pool = if bytes > self.settings.compaction_throttle {
            &self.large_tx
        } else {
            &self.small_tx
        };
        self.queue(pool, Job::Compact(region));
    }
}
