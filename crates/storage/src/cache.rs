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
//! its single/multi LRU buckets. IN_MEMORY families' blocks (HBase's
//! in-memory bucket) go to a tier of their own of up to a quarter of the
//! capacity, which other reads never evict from; the general tier gets the
//! capacity that tier does not use.
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

/// The share of the capacity IN_MEMORY families' blocks may hold (HBase's
/// `hbase.lru.blockcache.memory.percentage` default).
pub const IN_MEMORY_SHARE: f64 = 0.25;

type Tier = Cache<Key, Bytes, BlockWeighter, DefaultHashBuilder, EvictionCounter>;

/// The tiers and counters every view shares.
struct Tiers {
    /// `None` when the capacity is 0 (cache disabled).
    general: Option<Tier>,
    /// IN_MEMORY families' blocks, up to [`IN_MEMORY_SHARE`] of the
    /// capacity; the general tier gets the rest of what this one holds.
    in_memory: Option<Tier>,
    capacity: u64,
    /// The in-memory tier's weight when the general tier was last resized.
    sized_for: AtomicU64,
    evictions: EvictionCounter,
    hits: AtomicU64,
    misses: AtomicU64,
    inserts: AtomicU64,
    invalidations: AtomicU64,
}

fn tier(capacity: u64, evictions: &EvictionCounter) -> Option<Tier> {
    (capacity > 0).then(|| {
        let items = (capacity / TYPICAL_BLOCK).clamp(64, usize::MAX as u64 / 2) as usize;
        let options = OptionsBuilder::new()
            .estimated_items_capacity(items)
            .weight_capacity(capacity)
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
                capacity,
                BlockWeighter,
                DefaultHashBuilder::default(),
                evictions.clone(),
            ),
        }
    })
}

/// See the module docs. A `BlockCache` is a view of the process's cache:
/// [`BlockCache::new`] gives the general view,
/// [`in_memory_view`](Self::in_memory_view) the one IN_MEMORY families'
/// readers use. A view
/// reads and fills its own tier; counters and capacity are shared.
pub struct BlockCache {
    tiers: Arc<Tiers>,
    in_memory: bool,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("in_memory", &self.in_memory)
            .field("stats", &self.stats())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes`; 0 disables it (every get
    /// misses, inserts are dropped).
    pub fn new(capacity_bytes: u64) -> BlockCache {
        let evictions = EvictionCounter::default();
        let memory_cap = (capacity_bytes as f64 * IN_MEMORY_SHARE) as u64;
        BlockCache {
            tiers: Arc::new(Tiers {
                general: tier(capacity_bytes, &evictions),
                in_memory: tier(memory_cap, &evictions),
                capacity: capacity_bytes,
                sized_for: AtomicU64::new(0),
                evictions,
                hits: AtomicU64::new(0),
                misses: AtomicU64::new(0),
                inserts: AtomicU64::new(0),
                invalidations: AtomicU64::new(0),
            }),
            in_memory: false,
        }
    }

    /// The view of the same cache for IN_MEMORY families: their blocks
    /// live in a tier of their own, so scans and other families' reads
    /// never push them out (HBase's in-memory priority).
    pub fn in_memory_view(&self) -> BlockCache {
        BlockCache {
            tiers: self.tiers.clone(),
            in_memory: true,
        }
    }

    /// The general view again (tests compare the two).
    #[cfg(test)]
    fn in_memory_view_off(&self) -> BlockCache {
        BlockCache {
            tiers: self.tiers.clone(),
            in_memory: false,
        }
    }

    fn own(&self) -> Option<&Tier> {
        if self.in_memory {
            self.tiers.in_memory.as_ref()
        } else {
            self.tiers.general.as_ref()
        }
    }

    /// The block at `offset` of reader `file_id`, if cached.
    pub fn get(&self, file_id: u64, offset: u64) -> Option<Bytes> {
        let t = &*self.tiers;
        let found = self.own().and_then(|c| c.get(&(file_id, offset)));
        let counter = if found.is_some() { &t.hits } else { &t.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Caches a block (replacing any block under the same key).
    pub fn insert(&self, file_id: u64, offset: u64, block: Bytes) {
        let Some(c) = self.own() else {
            return;
        };
        c.insert((file_id, offset), block);
        self.tiers.inserts.fetch_add(1, Ordering::Relaxed);
        if self.in_memory {
            self.resize_general();
        }
    }

    /// Gives the general tier what the in-memory tier does not hold, once
    /// the latter moved by 1/64 of the capacity (resizing evicts, so not
    /// at every insert).
    fn resize_general(&self) {
        let t = &*self.tiers;
        let (Some(general), Some(memory)) = (&t.general, &t.in_memory) else {
            return;
        };
        let held = memory.weight();
        let last = t.sized_for.load(Ordering::Relaxed);
        if held.abs_diff(last) >= (t.capacity / 64).max(1) {
            t.sized_for.store(held, Ordering::Relaxed);
            general.set_capacity(t.capacity.saturating_sub(held).max(1));
        }
    }

    /// Drops one block (a store file reader evicting its own blocks).
    pub fn evict_block(&self, file_id: u64, offset: u64) {
        if let Some(c) = self.own()
            && c.remove(&(file_id, offset)).is_some()
        {
            self.tiers.invalidations.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Drops every block of reader `file_id`. Walks the whole cache (shard by
    /// shard); a reader that knows its block offsets should prefer
    /// [`evict_block`](Self::evict_block), which
    /// `StoreFileReader::evict_from_cache` does.
    pub fn evict_file(&self, file_id: u64) {
        let t = &*self.tiers;
        for c in [&t.general, &t.in_memory].into_iter().flatten() {
            let before = c.len();
            c.retain(|k, _| k.0 != file_id);
            let removed = before.saturating_sub(c.len());
            t.invalidations.fetch_add(removed as u64, Ordering::Relaxed);
        }
    }

    /// A snapshot of the counters (both tiers).
    pub fn stats(&self) -> CacheStats {
        let t = &*self.tiers;
        let tiers = [&t.general, &t.in_memory];
        CacheStats {
            hits: t.hits.load(Ordering::Relaxed),
            misses: t.misses.load(Ordering::Relaxed),
            evictions: t.evictions.0.load(Ordering::Relaxed),
            inserts: t.inserts.load(Ordering::Relaxed),
            invalidations: t.invalidations.load(Ordering::Relaxed),
            size_bytes: tiers
                .iter()
                .filter_map(|c| c.as_ref())
                .map(|c| c.weight())
                .sum(),
            capacity_bytes: t.capacity,
            entries: tiers
                .iter()
                .filter_map(|c| c.as_ref())
                .map(|c| c.len() as u64)
                .sum(),
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
    fn in_memory_blocks_survive_any_other_read() {
        // A full cache; then 50 blocks (half the in-memory tier: its shards
        // fill unevenly) read once each (no second hit to
        // protect them), then 50 times the capacity of other blocks.
        // Returns how many of the 50 are still cached.
        let run = |in_memory: bool| {
            let c = BlockCache::new(400 * (1000 + ENTRY_OVERHEAD));
            let m = if in_memory {
                c.in_memory_view()
            } else {
                c.in_memory_view_off()
            };
            for b in 0..1_000 {
                access(&c, 3, b);
            }
            for b in 0..50 {
                assert!(!access(&m, 1, b));
            }
            for b in 0..20_000 {
                access(&c, 2, b);
            }
            let s = c.stats();
            // The capacity is shared (the general tier is resized once the
            // other moved by 1/64 of it).
            assert!(
                s.size_bytes <= s.capacity_bytes + s.capacity_bytes / 64,
                "{s:?}"
            );
            (0..50).filter(|b| m.get(1, *b).is_some()).count()
        };
        assert_eq!(run(true), 50);
        assert!(run(false) < 10, "the test must tell the tiers apart");
    }

    #[test]
    fn is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<BlockCache>();
    }
}
