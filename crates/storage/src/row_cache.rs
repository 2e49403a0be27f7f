//! The row cache: whole results of point gets, per process, for families
//! with `ROW_CACHE => true` (Hypertable's query cache; HBase has none).
//! Sized by `ferrobase.rowcache.size` (off by default).
//!
//! An entry is one get's answer, keyed by the region's *cache epoch*, the
//! row and the get's spec (columns, versions, time range). A filter is not
//! part of the key: the server filters what a get returns, cached or not.
//!
//! Never stale. Every write to a row brackets its visibility with
//! [`RowCache::begin_write`] and [`RowCache::end_write`] on the row's
//! *stamp* (one of [`STAMPS`] atomics, chosen by hashing the region's
//! cache id and the row; the id never changes while the region is open):
//!
//! ```text
//! stamp (u64) = generation << 16 | writers in flight (low 16 bits)
//! begin_write: stamp += 1 << 16 | 1   (new generation, one more writer)
//! end_write:   stamp -= 1             (after the write is visible)
//! ```
//!
//! A get loads the stamp first. With a writer in flight it neither reads
//! nor fills the cache. Otherwise a cached entry counts only if it was
//! filled under exactly this stamp, and a get that misses fills the cache
//! tagged with the stamp it loaded *before* it read the region. So an
//! entry's cells are the row as it was at that stamp, and any write that
//! began since has moved the stamp on: the entry never matches again. A
//! hit answers the row as of the moment its stamp was loaded, when no
//! write was under way, which keeps reads linearizable. Two rows sharing a
//! stamp only cost each other misses.
//!
//! What changes cells without a write moves the region's epoch instead
//! ([`RegionRowCache::begin_reload`]): a bulk load (odd while it runs, so
//! gets bypass the cache), a reopen (a new epoch). Cells that a TTL will
//! expire give the entry a deadline. This module never reads a region.

use bytes::{BufMut, Bytes, BytesMut};
use ferrobase_types::{Cell, FamilyDescriptor};
use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, Weighter};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Stamps shared by all rows (a power of two).
pub const STAMPS: usize = 1 << 16;
const WRITERS_MASK: u64 = 0xFFFF;
const GENERATION: u64 = 1 << 16;
/// Bytes charged per entry on top of its cells.
const ENTRY_OVERHEAD: u64 = 128;
/// Typical entry size, to size quick_cache's shards.
const TYPICAL_ENTRY: u64 = 1024;

/// Epochs are handed out in steps of this, so a region's reloads (two
/// steps each) never reach another region's epoch.
const EPOCH_STRIDE: u64 = 1 << 32;
static NEXT_EPOCH: AtomicU64 = AtomicU64::new(EPOCH_STRIDE);

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    epoch: u64,
    row: Bytes,
    spec: Bytes,
}

struct Entry {
    stamp: u64,
    /// Milliseconds since the epoch at which a cell expires by TTL.
    deadline: u64,
    cells: Vec<Cell>,
}

#[derive(Clone)]
struct EntryWeighter;

impl Weighter<Key, Arc<Entry>> for EntryWeighter {
    fn weight(&self, key: &Key, e: &Arc<Entry>) -> u64 {
        let cells: usize = e
            .cells
            .iter()
            .map(|c| c.row.len() + c.family.len() + c.qualifier.len() + c.value.len() + 48)
            .sum();
        (key.row.len() + key.spec.len() + cells) as u64 + ENTRY_OVERHEAD
    }
}

/// Counters of the row cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowCacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Gets that bypassed the cache because a write to their row (or a
    /// bulk load of their region) was under way.
    pub bypasses: u64,
    pub size_bytes: u64,
    pub capacity_bytes: u64,
    pub entries: u64,
}

/// What a get should do; see the module docs.
pub enum Lookup {
    /// The cached answer.
    Hit(Vec<Cell>),
    /// Read the region, then [`RowCache::fill`] with this stamp.
    Miss(u64),
    /// A write is under way: read the region, cache nothing.
    Bypass,
}

/// The process-wide row cache. See the module docs.
pub struct RowCache {
    cache: Cache<Key, Arc<Entry>, EntryWeighter>,
    stamps: Box<[AtomicU64]>,
    hasher: DefaultHashBuilder,
    capacity: u64,
    hits: AtomicU64,
    misses: AtomicU64,
    bypasses: AtomicU64,
}

impl RowCache {
    /// A cache of `capacity_bytes`.
    pub fn new(capacity_bytes: u64) -> RowCache {
        let items = (capacity_bytes / TYPICAL_ENTRY).max(16) as usize;
        RowCache {
            cache: Cache::with_weighter(items, capacity_bytes.max(1), EntryWeighter),
            stamps: (0..STAMPS).map(|_| AtomicU64::new(0)).collect(),
            hasher: DefaultHashBuilder::default(),
            capacity: capacity_bytes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            bypasses: AtomicU64::new(0),
        }
    }

    fn stamp_index(&self, region: u64, row: &[u8]) -> usize {
        self.hasher.hash_one((region, row)) as usize & (STAMPS - 1)
    }

    fn stamp(&self, region: u64, row: &[u8]) -> u64 {
        self.stamps
            .get(self.stamp_index(region, row))
            .map_or(WRITERS_MASK, |s| s.load(Ordering::SeqCst))
    }

    /// Before a write to `row` of the region with cache id `region` can
    /// become visible; returns the token for [`end_write`](Self::end_write).
    pub fn begin_write(&self, region: u64, row: &[u8]) -> usize {
        let i = self.stamp_index(region, row);
        if let Some(s) = self.stamps.get(i) {
            s.fetch_add(GENERATION | 1, Ordering::SeqCst);
        }
        i
    }

    /// After the write of [`begin_write`](Self::begin_write) is visible
    /// (or failed).
    pub fn end_write(&self, token: usize) {
        if let Some(s) = self.stamps.get(token) {
            s.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Looks a get up in the region with cache id `region` at `epoch`;
    /// `now` is the time in milliseconds.
    pub fn lookup(
        &self,
        (region, epoch): (u64, u64),
        row: &Bytes,
        spec: &Bytes,
        now: u64,
    ) -> Lookup {
        let stamp = self.stamp(region, row);
        if stamp & WRITERS_MASK != 0 || epoch % 2 == 1 {
            self.bypasses.fetch_add(1, Ordering::Relaxed);
            return Lookup::Bypass;
        }
        let key = Key {
            epoch,
            row: row.clone(),
            spec: spec.clone(),
        };
        if let Some(e) = self.cache.get(&key) {
            if e.stamp == stamp && now < e.deadline {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Lookup::Hit(e.cells.clone());
            }
            self.cache.remove(&key);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        Lookup::Miss(stamp)
    }

    /// Caches what a get that missed under `stamp` read.
    pub fn fill(
        &self,
        (region, epoch): (u64, u64),
        (row, spec): (&Bytes, &Bytes),
        stamp: u64,
        (cells, deadline): (&[Cell], u64),
    ) {
        // Already stale: a write began after the stamp was loaded.
        if self.stamp(region, row) != stamp {
            return;
        }
        let key = Key {
            epoch,
            row: row.clone(),
            spec: spec.clone(),
        };
        self.cache.insert(
            key,
            Arc::new(Entry {
                stamp,
                deadline,
                cells: cells.to_vec(),
            }),
        );
    }

    /// The counters now.
    pub fn stats(&self) -> RowCacheStats {
        RowCacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bypasses: self.bypasses.load(Ordering::Relaxed),
            size_bytes: self.cache.weight(),
            capacity_bytes: self.capacity,
            entries: self.cache.len() as u64,
        }
    }
}

/// A region's handle on the row cache: its epoch and which families cache.
pub struct RegionRowCache {
    cache: Arc<RowCache>,
    /// Picks the row's stamps; fixed while the region is open.
    id: u64,
    /// Part of every key; moved by reloads (two steps each).
    epoch: AtomicU64,
    /// Families with ROW_CACHE, and their TTL in milliseconds.
    families: BTreeMap<Bytes, Option<u64>>,
    /// Every family of the table has ROW_CACHE.
    all: bool,
}

impl RegionRowCache {
    /// The handle of a region opened now, or `None` when the cache is off
    /// or no family of `families` asks for it.
    pub fn open(cache: Option<&Arc<RowCache>>, families: &[FamilyDescriptor]) -> Option<Self> {
        let cache = cache?;
        let cached: BTreeMap<Bytes, Option<u64>> = families
            .iter()
            .filter(|f| f.row_cache)
            .map(|f| (Bytes::from(f.name.clone()), f.ttl_millis()))
            .collect();
        if cached.is_empty() {
            return None;
        }
        let id = NEXT_EPOCH.fetch_add(EPOCH_STRIDE, Ordering::SeqCst);
        Some(RegionRowCache {
            cache: cache.clone(),
            id,
            epoch: AtomicU64::new(id),
            all: cached.len() == families.len(),
            families: cached,
        })
    }

    /// The process-wide cache.
    pub fn cache(&self) -> &RowCache {
        &self.cache
    }

    /// Brackets a write of `rows` (module docs): ends when dropped, which
    /// must be after the write is visible.
    pub fn writing<'a>(&'a self, rows: impl Iterator<Item = &'a [u8]>) -> Writing<'a> {
        Writing {
            cache: &self.cache,
            tokens: rows.map(|r| self.cache.begin_write(self.id, r)).collect(),
        }
    }

    /// (cache id, current epoch): what [`RowCache::lookup`] and
    /// [`RowCache::fill`] take.
    pub fn position(&self) -> (u64, u64) {
        (self.id, self.epoch.load(Ordering::SeqCst))
    }

    /// Starts a change of cells that is not a write (a bulk load): gets
    /// bypass the cache until [`end_reload`](Self::end_reload).
    pub fn begin_reload(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Ends it: entries filled before it never match again.
    pub fn end_reload(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// The cache key's spec of a get, or `None` when the get reads a family
    /// that does not cache (then the get is not cached at all).
    pub fn spec(
        &self,
        columns: &BTreeMap<Bytes, Option<BTreeSet<Bytes>>>,
        max_versions: u32,
        time_range: (u64, u64),
    ) -> Option<Bytes> {
        if columns.is_empty() {
            if !self.all {
                return None;
            }
        } else if !columns.keys().all(|f| self.families.contains_key(f)) {
            return None;
        }
        let mut b = BytesMut::with_capacity(24 + columns.len() * 16);
        b.put_u32(max_versions);
        b.put_u64(time_range.0);
        b.put_u64(time_range.1);
        for (family, qualifiers) in columns {
            b.put_u32(family.len() as u32);
            b.put_slice(family);
            match qualifiers {
                None => b.put_u32(u32::MAX),
                Some(q) => {
                    b.put_u32(q.len() as u32);
                    for q in q {
                        b.put_u32(q.len() as u32);
                        b.put_slice(q);
                    }
                }
            }
        }
        Some(b.freeze())
    }

    /// When the first of `cells` expires by its family's TTL (`u64::MAX`:
    /// never).
    pub fn deadline(&self, cells: &[Cell]) -> u64 {
        cells
            .iter()
            .filter_map(|c| {
                let ttl = (*self.families.get(&c.family)?)?;
                Some(c.timestamp.saturating_add(ttl))
            })
            .min()
            .unwrap_or(u64::MAX)
    }
}

/// A write in progress; see [`RegionRowCache::writing`].
pub struct Writing<'a> {
    cache: &'a RowCache,
    tokens: Vec<usize>,
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        for t in &self.tokens {
            self.cache.end_write(*t);
        }
    }
}

#[cfg(test)]
mod tests;
