//! RocksDB through the key-value mapping of docs/workloads.md: one key per cell,
//! `row ‖ 0x00 ‖ family ‖ 0x00 ‖ qualifier ‖ (u64::MAX − ts)` big-endian,
//! one `WriteBatch` per row, a row read as a prefix iteration.

use crate::engine::{Config, KvEngine, RowRead, ScanCount, WalMode};
use anyhow::{Context, Result};
use ferrobase_workloads::GeneratedRow;
use rocksdb::{
    BlockBasedOptions, Cache, DB, DBCompressionType, Options, ReadOptions, WriteBatch, WriteOptions,
};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub struct Rocks {
    db: DB,
    write_async: WriteOptions,
    write_fsync: WriteOptions,
    write_skip: WriteOptions,
    // The block cache lives as long as the database.
    _cache: Cache,
}

/// Milliseconds since the epoch: the "server-assigned" timestamp.
fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Appends the key of one cell.
fn push_key(key: &mut Vec<u8>, row: &[u8], family: &[u8], qualifier: &[u8], ts: u64) {
    key.extend_from_slice(row);
    key.push(0);
    key.extend_from_slice(family);
    key.push(0);
    key.extend_from_slice(qualifier);
    key.extend_from_slice(&(u64::MAX - ts).to_be_bytes());
}

/// The qualifier inside a cell key of `row`; `None` if `key` is not one.
fn qualifier_of<'k>(key: &'k [u8], row: &[u8]) -> Option<&'k [u8]> {
    let rest = key.strip_prefix(row)?.strip_prefix(&[0u8])?;
    let sep = rest.iter().position(|&b| b == 0)?;
    let column = rest.get(sep + 1..)?;
    column.get(..column.len().checked_sub(8)?)
}

impl Rocks {
    pub fn open(dir: &Path, config: &Config) -> Result<Rocks> {
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_write_buffer_size(config.memstore_flush_size as usize);
        opts.set_max_background_jobs(config.background_jobs as i32);
        opts.set_compression_type(DBCompressionType::None);
        let cache = Cache::new_lru_cache(config.block_cache_bytes as usize);
        let mut table = BlockBasedOptions::default();
        table.set_block_cache(&cache);
        opts.set_block_based_table_factory(&table);
        let db = DB::open(&opts, dir)
            .with_context(|| format!("opening RocksDB in {}", dir.display()))?;
        let mut write_async = WriteOptions::default();
        write_async.set_sync(false);
        let mut write_fsync = WriteOptions::default();
        write_fsync.set_sync(true);
        let mut write_skip = WriteOptions::default();
        write_skip.disable_wal(true);
        Ok(Rocks {
            db,
            write_async,
            write_fsync,
            write_skip,
            _cache: cache,
        })
    }

    fn int_property(&self, name: &str) -> u64 {
        self.db.property_int_value(name).ok().flatten().unwrap_or(0)
    }
}

impl KvEngine for Rocks {
    fn put_row(&self, row: &GeneratedRow, family: &'static [u8], wal: WalMode) -> Result<()> {
        let ts = now_millis();
        let mut batch = WriteBatch::new();
        let mut key = Vec::with_capacity(row.row.len() + family.len() + 32);
        for (q, v) in row {
            key.clear();
            push_key(&mut key, &row.row, family, q, ts);
            batch.put(&key, v);
        }
        let opts = match wal {
            WalMode::Skip => &self.write_skip,
            WalMode::Async => &self.write_async,
            WalMode::Fsync => &self.write_fsync,
        };
        self.db.write_opt(batch, opts)?;
        Ok(())
    }

    fn get_row(&self, row: &[u8]) -> Result<RowRead> {
        let mut prefix = Vec::with_capacity(row.len() + 1);
        prefix.extend_from_slice(row);
        prefix.push(0);
        // Every key with the prefix `row ‖ 0x00` sorts below `row ‖ 0x01`.
        let mut upper = prefix.clone();
        if let Some(last) = upper.last_mut() {
            *last = 1;
        }
        let mut ro = ReadOptions::default();
        ro.set_iterate_upper_bound(upper);
        let mut it = self.db.raw_iterator_opt(ro);
        it.seek(&prefix);
        let mut read = RowRead::default();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            if !k.starts_with(&prefix) {
                break;
            }
            read.cells += 1;
            read.value_bytes += v.len();
            it.next();
        }
        it.status()?;
        Ok(read)
    }

    fn read_row(&self, row: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut prefix = row.to_vec();
        prefix.push(0);
        let mut it = self.db.raw_iterator();
        it.seek(&prefix);
        let mut cells = Vec::new();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            if !k.starts_with(&prefix) {
                break;
            }
            let q = qualifier_of(k, row).context("malformed RocksDB key")?;
            cells.push((q.to_vec(), v.to_vec()));
            it.next();
        }
        it.status()?;
        Ok(cells)
    }

    fn scan_all(&self, progress: &AtomicU64) -> Result<ScanCount> {
        let mut it = self.db.raw_iterator_opt(ReadOptions::default());
        it.seek_to_first();
        let mut count = ScanCount::default();
        let mut current: Vec<u8> = Vec::new();
        let mut pending = 0u64;
        while let Some(k) = it.key() {
            // Row keys of the shapes hold no 0x00 byte: the row ends at the first one.
            let row = k.iter().position(|&b| b == 0).map_or(k, |p| &k[..p]);
            if count.rows == 0 || row != current.as_slice() {
                current.clear();
                current.extend_from_slice(row);
                count.rows += 1;
                pending += 1;
                if pending == 4096 {
                    progress.fetch_add(pending, Ordering::Relaxed);
                    pending = 0;
                }
            }
            count.cells += 1;
            it.next();
        }
        it.status()?;
        progress.fetch_add(pending, Ordering::Relaxed);
        Ok(count)
    }

    fn flush(&self) -> Result<()> {
        self.db.flush()?;
        Ok(())
    }

    fn settle(&self, limit: Duration) -> Result<bool> {
        let start = Instant::now();
        loop {
            let busy = self.int_property("rocksdb.compaction-pending")
                + self.int_property("rocksdb.num-running-compactions")
                + self.int_property("rocksdb.num-running-flushes")
                + self.int_property("rocksdb.mem-table-flush-pending");
            if busy == 0 {
                return Ok(true);
            }
            if start.elapsed() >= limit {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn stats(&self) -> String {
        let files: Vec<String> = (0..7)
            .map(|l| {
                self.int_property(&format!("rocksdb.num-files-at-level{l}"))
                    .to_string()
            })
            .collect();
        format!(
            "files per level [{}], sst {:.1} MB, running compactions {}, pending compaction {:.1} MB, block cache {:.1} MB",
            files.join(" "),
            self.int_property("rocksdb.total-sst-files-size") as f64 / 1048576.0,
            self.int_property("rocksdb.num-running-compactions"),
            self.int_property("rocksdb.estimate-pending-compaction-bytes") as f64 / 1048576.0,
            self.int_property("rocksdb.block-cache-usage") as f64 / 1048576.0,
        )
    }

    fn close(self: Box<Self>) -> Result<()> {
        // Dropping the handle waits for background work and closes.
        drop(self);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_mapping() {
        let mut key = Vec::new();
        push_key(&mut key, b"row1", b"f", b"c3", 5);
        let mut expect = b"row1\x00f\x00c3".to_vec();
        expect.extend_from_slice(&(u64::MAX - 5).to_be_bytes());
        assert_eq!(key, expect);
        assert_eq!(qualifier_of(&key, b"row1"), Some(&b"c3"[..]));
        assert_eq!(qualifier_of(&key, b"row"), None);
        // Newer timestamps sort first.
        let mut newer = Vec::new();
        push_key(&mut newer, b"row1", b"f", b"c3", 6);
        assert!(newer < key);
    }
}
