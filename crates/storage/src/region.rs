//! A region: one row range of one table, with one store per column family.
//!
//! The region owns the write path (validate → sequence id → WAL → memstore
//! → read point), the read path (a consistent view of memstores and files at
//! a read point), flush (swap the memstores, write one file per store,
//! publish with the manifest), compaction of its stores, and bulk load
//! (store files written elsewhere, adopted in one manifest change).
//!
//! Concurrency: `state` holds the memstores and file lists. Writers insert
//! under its *read* lock (shared among writers); flush and compaction take
//! the *write* lock only to swap pointers, so a flush never stops writers
//! for longer than a pointer swap (docs/architecture.md, design rule 1).
//! Readers clone the `Arc`s they need and never hold the lock while reading.
//!
//! A region never talks to the network and never blocks a writer without a
//! bound: backpressure waits at most `hbase.hstore.blockingWaitTime`.

mod bulk_load;
mod compact;
mod flush;
pub mod hot_keys;
pub mod info;
pub mod manifest;
pub mod mvcc;
mod read;
pub mod reference;
mod write;

pub use bulk_load::BulkLoadOutcome;
pub use info::RegionInfo;
pub use read::{Get, RegionScanner, Scan};

use crate::archive;
use crate::engine::EngineShared;
use crate::error::{Result, StorageError};
use crate::fs::Storage;
use crate::memstore::MemStoreSet;
use crate::row_cache::RegionRowCache;
use crate::snapshot_manifest::SnapshotLayout;
use crate::storefile::StoreFileReader;
use crate::wal::WalEdit;
use bytes::Bytes;
use ferrobase_types::{FamilyDescriptor, TableDescriptor};
use manifest::Manifest;
use mvcc::Mvcc;
use parking_lot::{Mutex, RwLock};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// A queued flush that failed with an I/O error (see `Region::failed_flush`).
struct FailedFlush {
    at: Instant,
    path: PathBuf,
    kind: std::io::ErrorKind,
    message: String,
}

/// Store file extension.
pub const STORE_FILE_EXT: &str = "sf";
const TMP_DIR: &str = ".tmp";

/// One column family's files in this region.
pub(crate) struct Store {
    pub family: FamilyDescriptor,
    pub family_bytes: Bytes,
    pub dir: PathBuf,
    /// Serializes compactions of this store.
    pub compaction_lock: Mutex<()>,
}

/// Everything swapped atomically under the state lock.
pub(crate) struct State {
    pub active: Arc<MemStoreSet>,
    /// The memstores being flushed (readable until their files are live).
    pub snapshot: Option<Arc<MemStoreSet>>,
    /// Per store, newest file first.
    pub files: Vec<Arc<Vec<Arc<StoreFileReader>>>>,
}

/// Counters a region server reports per region.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionStatus {
    pub name: String,
    pub read_requests: u64,
    pub write_requests: u64,
    pub memstore_bytes: u64,
    pub store_files: u64,
    pub store_file_bytes: u64,
    pub max_store_files: u64,
}

/// See the module docs.
pub struct Region {
    info: RegionInfo,
    table: TableDescriptor,
    fs: Arc<dyn Storage>,
    dir: PathBuf,
    shared: Arc<EngineShared>,
    stores: Vec<Store>,
    state: RwLock<State>,
    mvcc: Mvcc,
    manifest: Mutex<Manifest>,
    /// This process's ownership epoch of the region (`manifest` module).
    epoch: u64,
    flush_lock: Mutex<()>,
    memstore_size: AtomicU64,
    flush_requested: AtomicBool,
    /// The last queued flush's I/O failure (when, which file, the error),
    /// cleared by a flush that succeeds: writers blocked on this region's
    /// memstore fail with it instead of waiting out blockingWaitTime.
    failed_flush: Mutex<Option<FailedFlush>>,
    compaction_requested: AtomicBool,
    /// Compactions running now: `[minor, major]` (HBase's `CompactionState`).
    compacting: [AtomicU32; 2],
    closed: AtomicBool,
    read_requests: AtomicU64,
    write_requests: AtomicU64,
    /// A sample of the rows requests name, for load-based splits.
    hot_keys: hot_keys::HotKeys,
    /// Its handle on the row cache (`None`: off, or no ROW_CACHE family).
    row_cache: Option<RegionRowCache>,
    /// Nonces of the edits replayed from the WAL at open, until taken.
    replayed_nonces: Mutex<Vec<crate::wal::LoggedNonce>>,
}

impl Region {
    /// Opens (creating if new) the region's directory, loads its manifest,
    /// deletes files an interrupted flush or compaction left behind, and
    /// replays its WAL edits newer than the last flush.
    pub(crate) fn open(
        shared: Arc<EngineShared>,
        table: &TableDescriptor,
        info: RegionInfo,
    ) -> Result<Arc<Region>> {
        let fs = shared.fs().clone();
        let dir = shared.data_dir().join(&table.name).join(info.dir_name());
        fs.create_dir_all(&dir)?;
        // Earlier versions wrote flush and compaction outputs here.
        fs.delete_all(&dir.join(TMP_DIR))?;
        let (manifest, epoch) = Manifest::claim(&*fs, &dir)?;
        let layout = crate::snapshot_manifest::SnapshotLayout::for_data_dir(shared.data_dir());
        let mut stores = Vec::new();
        let mut files = Vec::new();
        for family in &table.families {
            let fdir = dir.join(&family.name);
            fs.create_dir_all(&fdir)?;
            let live: Vec<String> = manifest
                .stores
                .get(&family.name)
                .cloned()
                .unwrap_or_default();
            remove_orphans(&*fs, shared.data_dir(), &fdir, &live)?;
            let mut readers = Vec::new();
            for name in live.iter().rev() {
                let cache = Some(shared.cache_for(family));
                readers.push(match manifest.references.get(name) {
                    // A parent's file (a split or merge) or a snapshot's
                    // (a clone or restore): found in data/ or archive/,
                    // and followed there if it moves while open.
                    Some(r) => {
                        let (file, at) = crate::file_link::open(&fs, &layout, &r.file)?;
                        let shown = fs.display(&at).into();
                        crate::storefile::open_reference_file(
                            file,
                            &at,
                            shown,
                            name,
                            r.bounds(),
                            cache,
                        )?
                    }
                    None => StoreFileReader::open_on(&*fs, &fdir.join(name), cache)?,
                });
            }
            files.push(Arc::new(readers));
            stores.push(Store {
                family: family.clone(),
                family_bytes: interned_family(&family.name),
                dir: fdir,
                compaction_lock: Mutex::new(()),
            });
        }
        let active = Arc::new(MemStoreSet::new(
            stores.iter().map(|s| s.family_bytes.clone()),
        ));
        let mut last_seq = manifest.max_seq.max(manifest.flushed_seq);
        let mut replayed_bytes = 0;
        // Nonces of edits this region flushed before a crash, from the
        // segments still on disk; newer edits bring theirs as they replay.
        let mut nonces = shared.wal().take_old_nonces(info.id, manifest.flushed_seq);
        let mut replay = |edit: WalEdit| -> Result<()> {
            last_seq = last_seq.max(edit.seq);
            nonces.extend(edit.logged_nonce());
            replayed_bytes += write::insert_edit(&stores, &active, &edit);
            Ok(())
        };
        let replayed = shared
            .wal()
            .replay(info.id, manifest.flushed_seq, &mut replay)?;
        // The WAL keeps flushed sequence ids in memory only: tell it again
        // after a restart so old segments can be deleted.
        shared.wal().mark_flushed(info.id, manifest.flushed_seq);
        if replayed > 0 {
            tracing::info!(region = %info.name(), edits = replayed, "replayed WAL edits");
        }
        let region = Arc::new(Region {
            fs,
            dir,
            shared: shared.clone(),
            stores,
            state: RwLock::new(State {
                active,
                snapshot: None,
                files,
            }),
            mvcc: Mvcc::new(last_seq),
            manifest: Mutex::new(manifest),
            epoch,
            flush_lock: Mutex::new(()),
            memstore_size: AtomicU64::new(replayed_bytes),
            flush_requested: AtomicBool::new(false),
            failed_flush: Mutex::new(None),
            compaction_requested: AtomicBool::new(false),
            compacting: [AtomicU32::new(0), AtomicU32::new(0)],
            closed: AtomicBool::new(false),
            read_requests: AtomicU64::new(0),
            row_cache: RegionRowCache::open(shared.row_cache(), &table.families),
            replayed_nonces: Mutex::new(nonces),
            write_requests: AtomicU64::new(0),
            hot_keys: hot_keys::HotKeys::default(),
            info,
            table: table.clone(),
        });
        shared.add_memstore(replayed_bytes);
        Ok(region)
    }

    /// Queues the background work a just-opened region needs: a flush of
    /// edits replayed from the WAL, and a compaction when a store has
    /// enough files or reads references. Called by the engine only once
    /// the region is in its region map: a pool worker looks the region up
    /// by id, and a job that finds no region is dropped while the region's
    /// `*_requested` flag stays set, so no later request would ever queue
    /// another (a restored region then kept its links forever).
    pub(crate) fn request_startup_work(&self) {
        if self.memstore_size.load(Ordering::Acquire) > 0 {
            self.request_flush();
        }
        self.maybe_request_compaction();
    }

    /// True while some store still reads a parent's file by reference
    /// (until its first compaction): such a region is not split or merged.
    pub fn has_references(&self) -> bool {
        self.state
            .read()
            .files
            .iter()
            .any(|f| f.iter().any(|r| r.is_reference()))
    }

    /// The row HBase would split the region at: the middle block's first
    /// row (block index midkey) of the largest file of the largest store,
    /// when it lies strictly inside the region. `None` when no file has
    /// two blocks or the midkey is the region's first row.
    pub fn midkey(&self) -> Option<Vec<u8>> {
        let st = self.state.read();
        let largest = st
            .files
            .iter()
            .max_by_key(|f| f.iter().map(|r| r.size()).sum::<u64>())?;
        let file = largest.iter().max_by_key(|r| r.size())?;
        crate::storefile::midkey_row(file)
            .filter(|row| self.info.contains_row(row) && row.as_slice() != self.info.start_key)
    }

    /// The region's identity and row range.
    pub fn info(&self) -> &RegionInfo {
        &self.info
    }

    /// The `(nonce group, nonce)` pairs of the edits its WAL replay applied
    /// at open (each operation a client may still retry), once: the server
    /// remembers them as applied (HBase's `reportOperationFromWal`).
    pub fn take_replayed_nonces(&self) -> Vec<crate::wal::LoggedNonce> {
        std::mem::take(&mut *self.replayed_nonces.lock())
    }

    /// The table descriptor the region was opened with.
    pub fn table(&self) -> &TableDescriptor {
        &self.table
    }

    /// The region's directory (on [`fs`](Self::fs)).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The storage root the region lives on.
    pub fn fs(&self) -> &Arc<dyn Storage> {
        &self.fs
    }

    /// Bytes in the memstores (active and being flushed).
    pub fn memstore_size(&self) -> u64 {
        self.memstore_size.load(Ordering::Relaxed)
    }

    /// The current MVCC read point.
    pub fn read_point(&self) -> u64 {
        self.mvcc.read_point()
    }

    /// Per-store file lists, newest first: `(family, file paths)`.
    pub fn store_files(&self) -> Vec<(String, Vec<PathBuf>)> {
        let st = self.state.read();
        self.stores
            .iter()
            .zip(st.files.iter())
            .map(|(s, f)| {
                (
                    s.family.name.clone(),
                    f.iter().map(|r| r.path().to_path_buf()).collect(),
                )
            })
            .collect()
    }

    /// Which kinds of compaction run in the region now: `(minor, major)`.
    pub fn compacting(&self) -> (bool, bool) {
        (
            self.compacting[0].load(Ordering::Acquire) > 0,
            self.compacting[1].load(Ordering::Acquire) > 0,
        )
    }

    /// The row that halves this region's recent requests (a load-based
    /// split's point, `hot_keys`), when the sample has one.
    pub fn load_split_point(&self) -> Option<Vec<u8>> {
        self.hot_keys.split_point(&self.info.start_key)
    }

    /// Request and size counters.
    pub fn status(&self) -> RegionStatus {
        let st = self.state.read();
        let (mut count, mut bytes, mut max) = (0u64, 0u64, 0u64);
        for files in &st.files {
            count += files.len() as u64;
            max = max.max(files.len() as u64);
            bytes += files.iter().map(|f| f.size()).sum::<u64>();
        }
        RegionStatus {
            name: self.info.name(),
            read_requests: self.read_requests.load(Ordering::Relaxed),
            write_requests: self.write_requests.load(Ordering::Relaxed),
            memstore_bytes: self.memstore_size(),
            store_files: count,
            store_file_bytes: bytes,
            max_store_files: max,
        }
    }

    /// Flushes what is in memory and stops accepting requests. Idempotent.
    pub fn close(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        // Writers that passed the closed check finish under the state lock;
        // taking it once makes sure they are done before the last flush.
        drop(self.state.write());
        // A compaction running now finishes first (new ones see `closed`):
        // after close the master may delete the region's files (drop) or
        // another server may open them (move), and a compaction publishing
        // into a removed directory would fail halfway.
        for store in &self.stores {
            drop(store.compaction_lock.lock());
        }
        self.flush_now(false)?;
        self.shared.forget_region(self.info.id);
        Ok(())
    }

    /// True once [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(StorageError::Closed(self.info.name()));
        }
        Ok(())
    }

    fn store_index(&self, family: &[u8]) -> Result<usize> {
        self.stores
            .iter()
            .position(|s| s.family_bytes == family)
            .ok_or_else(|| StorageError::NoSuchFamily {
                table: self.table.name.clone(),
                family: ferrobase_types::binary::to_string_binary(family),
            })
    }

    fn next_file_name(&self) -> String {
        let mut m = self.manifest.lock();
        m.next_file_id += 1;
        format!("{:016x}.{STORE_FILE_EXT}", m.next_file_id)
    }
}

/// Retires store files in `dir` that the manifest does not list: outputs of
/// a flush or compaction that crashed before publishing, or compaction
/// inputs whose retirement a crash interrupted (a snapshot may hold those,
/// so they go through `crate::archive`, never a plain delete).
fn remove_orphans(fs: &dyn Storage, data_dir: &Path, dir: &Path, live: &[String]) -> Result<()> {
    let orphans: Vec<String> = fs
        .list(dir)?
        .into_iter()
        .filter(|n| !live.contains(n))
        .collect();
    if orphans.is_empty() {
        return Ok(());
    }
    let layout = SnapshotLayout::for_data_dir(data_dir);
    let holds = archive::Holds::load(fs, &layout)?;
    for name in orphans {
        let path = dir.join(&name);
        tracing::info!(file = %fs.display(&path), "retiring store file not in manifest");
        archive::retire(fs, &layout, &holds, &path)?;
    }
    Ok(())
}

/// The family name as a `Bytes` backed by static memory, so the read path
/// clones it into every returned cell without touching a reference count.
/// Each distinct family name is leaked once per process (a handful of
/// short strings).
fn interned_family(name: &str) -> Bytes {
    static NAMES: std::sync::OnceLock<Mutex<std::collections::HashMap<String, &'static [u8]>>> =
        std::sync::OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock();
    let stat = *names
        .entry(name.to_string())
        .or_insert_with(|| Box::leak(name.as_bytes().to_vec().into_boxed_slice()));
    Bytes::from_static(stat)
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The smallest key after every cell of `row` (used as an exclusive bound).
pub(crate) fn row_successor(row: &[u8]) -> Vec<u8> {
    let mut r = row.to_vec();
    r.push(0);
    r
}
