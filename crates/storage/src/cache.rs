//! The process-wide block cache: decoded store file blocks keyed by
//! `(reader id, block offset)`, bounded in bytes, shared by every region and
//! thread of the process (docs/architecture.md, design rule 8).
//!
//! It is a [`quick_cache::sync::Cache`] with a byte weighter. quick_cache's
//! admission is S3-FIFO/CLOCK-Pro-like: a new block enters a small "cold"
//! queue and is only promoted to the large "hot" queue if it is hit again
//! while cold (or re-inserted soon after being evicted, via its ghost list),
//! so a long one-pass scan or compaction read churns the cold queue without
//! flushing the hot working set. That is the scan resistance HBase gets from
//! its single/multi/in-memory LRU buckets.
//!
//! What it stores is decided by the store file reader: the decompressed but
//! still encoded block payload. This module never reads files and never
//! decodes a block. Reader ids are never reused, so a stale entry of a
//! deleted file can only waste memory until evicted, never be read.

use bytes::Bytes;
use quick_cache::sync::Cache;
use quick_cache::{DefaultHashBuilder, Lifecycle, OptionsBuilder, Weighter};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes charged per cached block on top of its payload: the key, the
/// `Bytes` handle and quick_cache's slot. Keeps tiny blocks from looking free.
const ENTRY_OVERHEAD: u64 = 64;

/// Typical block size used to estimate how many entries the cache holds
/// (sizes quick_cache's shards and ghost list; being off by 4× is harmless).
const TYPICAL_BLOCK: u64 = 16 * 1024;

type Key = (u64, u64);

#[derive(Clone)]
struct BlockWeighter;

impl Weighter<Key, Bytes> for BlockWeighter {
    fn weight(&self, _key: &Key, block: &Bytes) -> u64 {
        block.len() as u64 + ENTRY_OVERHEAD
    }
}

/// Counts evictions (capacity pressure, and blocks too big to admit).
#[derive(Clone, Default)]
struct EvictionCounter(Arc<AtomicU64>);

impl Lifecycle<Key, Bytes> for EvictionCounter {
    type RequestState = ();

    fn begin_request(&self) -> Self::RequestState {}

    fn on_evict(&self, _state: &mut Self::RequestState, _key: Key, _block: Bytes) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Counters of a [`BlockCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Blocks pushed out by capacity pressure (or refused as too big).
    pub evictions: u64,
    pub inserts: u64,
    /// Blocks removed because their file was deleted.
    pub invalidations: u64,
    pub size_bytes: u64,
    pub capacity_bytes: u64,
    pub entries: u64,
}

impl CacheStats {
    /// Hits over lookups, 0 when there were none.
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

/// See the module docs.
pub struct BlockCache {
    /// `None` when the capacity is 0 (cache disabled).
    inner: Option<Cache<Key, Bytes, BlockWeighter, DefaultHashBuilder, EvictionCounter>>,
    capacity: u64,
    evictions: EvictionCounter,
    hits: AtomicU64,
    misses: AtomicU64,
    inserts: AtomicU64,
    invalidations: AtomicU64,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes`; 0 disables it (every get
    /// misses, inserts are dropped).
    pub fn new(capacity_bytes: u64) -> BlockCache {
        let evictions = EvictionCounter::default();
        let inner = (capacity_bytes > 0).then(|| {
            let items = (capacity_bytes / TYPICAL_BLOCK).clamp(64, usize::MAX as u64 / 2) as usize;
            let options = OptionsBuilder::new()
                .estimated_items_capacity(items)
                .weight_capacity(capacity_bytes)
                .build();
            match options {
                Ok(o) => Cache::with_options(
                    o,
                    BlockWeighter,
                    DefaultHashBuilder::default(),
                    evictions.clone(),
                ),
                // Only fails when a required option is missing; both are set.
                Err(_) => Cache::with(
                    items,
                    capacity_bytes,
                    BlockWeighter,
                    DefaultHashBuilder::default(),
                    evictions.clone(),
                ),
            }
        });
        BlockCache {
            inner,
            capacity: capacity_bytes,
            evictions,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            inserts: AtomicU64::new(0),
            invalidations: AtomicU64::new(0),
        }
    }

    /// The block at `offset` of reader `file_id`, if cached.
    pub fn get(&self, file_id: u64, offset: u64) -> Option<Bytes> {
        let found = self.inner.as_ref().and_then(|c| c.get(&(file_id, offset)));
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Caches a block (replacing any block under the same key).
    pub fn insert(&self, file_id: u64, offset: u64, block: Bytes) {
        if let Some(c) = &self.inner {
            c.insert((file_id, offset), block);
            self.inserts.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Drops one block (a store file reader evicting its own blocks).
    pub fn evict_block(&self, file_id: u64, offset: u64) {
        if let Some(c) = &self.inner
            && c.remove(&(file_id, offset)).is_some()
        {
            self.invalidations.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Drops every block of reader `file_id`. Walks the whole cache (shard by
    /// shard); a reader that knows its block offsets should prefer
    /// [`evict_block`](Self::evict_block), which
    /// `StoreFileReader::evict_from_cache` does.
    pub fn evict_file(&self, file_id: u64) {
        if let Some(c) = &self.inner {
            let before = c.len();
            c.retain(|k, _| k.0 != file_id);
            let removed = before.saturating_sub(c.len());
            self.invalidations
                .fetch_add(removed as u64, Ordering::Relaxed);
        }
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.0.load(Ordering::Relaxed),
            inserts: self.inserts.load(Ordering::Relaxed),
            invalidations: self.invalidations.load(Ordering::Relaxed),
            size_bytes: self.inner.as_ref().map_or(0, |c| c.weight()),
            capacity_bytes: self.capacity,
            entries: self.inner.as_ref().map_or(0, |c| c.len() as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(n: usize, tag: u8) -> Bytes {
        Bytes::from(vec![tag; n])
    }

    /// A reader's access: get, and insert on a miss.
    fn access(c: &BlockCache, file: u64, off: u64) -> bool {
        if c.get(file, off).is_some() {
            return true;
        }
        c.insert(file, off, block(1000, off as u8));
        false
    }

    #[test]
    fn disabled_cache_misses_and_ignores_inserts() {
        let c = BlockCache::new(0);
        c.insert(1, 0, block(10, 1));
        assert!(c.get(1, 0).is_none());
        let s = c.stats();
        assert_eq!(
            (s.hits, s.misses, s.inserts, s.entries, s.capacity_bytes),
            (0, 1, 0, 0, 0)
        );
    }

    #[test]
    fn get_insert_and_evict_file() {
        let c = BlockCache::new(1 << 20);
        c.insert(1, 0, block(100, 1));
        c.insert(1, 100, block(100, 2));
        c.insert(2, 0, block(100, 3));
        assert_eq!(c.get(1, 100).as_deref(), Some(&[2u8; 100][..]));
        assert!(c.get(3, 0).is_none());
        c.evict_file(1);
        assert!(c.get(1, 0).is_none() && c.get(1, 100).is_none());
        assert!(c.get(2, 0).is_some());
        c.evict_block(2, 0);
        let s = c.stats();
        assert_eq!(
            (s.hits, s.misses, s.inserts, s.invalidations, s.entries),
            (2, 3, 3, 3, 0)
        );
    }

    #[test]
    fn stays_within_capacity_and_counts_evictions() {
        let c = BlockCache::new(100 * 1064);
        for i in 0..1000 {
            c.insert(7, i * 1000, block(1000, 0));
        }
        let s = c.stats();
        assert!(s.size_bytes <= s.capacity_bytes, "{s:?}");
        assert!(s.evictions >= 850, "{s:?}");
        assert_eq!(s.entries + s.evictions, 1000, "{s:?}");
    }

    #[test]
    fn hot_set_survives_a_long_scan() {
        // Room for ~200 blocks; the hot set is 50 blocks read repeatedly,
        // then 20 000 other blocks are read once each (a full-table scan).
        let c = BlockCache::new(200 * (1000 + ENTRY_OVERHEAD));
        for _ in 0..5 {
            for b in 0..50 {
                access(&c, 1, b);
            }
        }
        for b in 0..20_000 {
            access(&c, 2, b);
            if b % 1000 == 0 {
                // The hot set stays in use during the scan, sparsely.
                access(&c, 1, b / 1000);
            }
        }
        let survivors = (0..50).filter(|b| c.get(1, *b).is_some()).count();
        assert!(
            survivors >= 45,
            "only {survivors}/50 hot blocks survived: {:?}",
            c.stats()
        );
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<BlockCache>();
    }
}
