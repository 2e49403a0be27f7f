//! What the harness needs from an engine, and the settings both engines
//! share.

use anyhow::Result;
use ferrobase_workloads::GeneratedRow;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// How far a write must get before it is acknowledged, in the terms of
/// docs/workloads.md's mapping (ASYNC ≙ WAL on, `sync=false`; FSYNC ≙
/// `sync=true`; SKIP ≙ `disable_wal`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalMode {
    #[allow(dead_code)]
    Skip,
    Async,
    Fsync,
}

impl WalMode {
    pub fn name(self) -> &'static str {
        match self {
            WalMode::Skip => "SKIP_WAL",
            WalMode::Async => "ASYNC_WAL",
            WalMode::Fsync => "FSYNC_WAL",
        }
    }
}

/// Cells and value bytes of one row read.
#[derive(Clone, Copy, Debug, Default)]
pub struct RowRead {
    pub cells: usize,
    pub value_bytes: usize,
}

/// Rows and cells of a full scan.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScanCount {
    pub rows: u64,
    pub cells: u64,
}

/// One open database holding one table with one family.
pub trait KvEngine: Sync {
    /// Writes one row atomically (our row mutation; one RocksDB write batch).
    fn put_row(&self, row: &GeneratedRow, family: &'static [u8], wal: WalMode) -> Result<()>;
    /// Reads one row, counting what it finds (the timed read).
    fn get_row(&self, row: &[u8]) -> Result<RowRead>;
    /// Reads one row's `(qualifier, value)` cells (for verification).
    fn read_row(&self, row: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;
    /// Reads every row in key order; adds 1 to `progress` per row.
    fn scan_all(&self, progress: &AtomicU64) -> Result<ScanCount>;
    /// Writes what is in memory to files and waits for it.
    fn flush(&self) -> Result<()>;
    /// Waits (at most `limit`) until no flush or compaction runs or is
    /// pending; returns whether it got there.
    fn settle(&self, limit: Duration) -> Result<bool>;
    /// Engine counters, one line, for the progress log.
    fn stats(&self) -> String;
    /// Closes the database.
    fn close(self: Box<Self>) -> Result<()>;
}

/// The settings both engines run with (ours' defaults; RocksDB gets the
/// same numbers, as docs/workloads.md says).
#[derive(Clone, Debug)]
pub struct Config {
    /// `hbase.hregion.memstore.flush.size` ≙ RocksDB `write_buffer_size`.
    pub memstore_flush_size: u64,
    /// Flushers + small + large compaction threads ≙ `max_background_jobs`.
    pub background_jobs: usize,
    /// Our block cache capacity ≙ RocksDB's LRU block cache.
    pub block_cache_bytes: u64,
    /// Our settings, passed to our engine as they are.
    #[cfg(feature = "ours")]
    pub settings: ferrobase_types::Settings,
}

impl Config {
    /// Our default settings.
    #[cfg(feature = "ours")]
    pub fn defaults() -> Config {
        let settings = ferrobase_types::Settings::default();
        Config {
            memstore_flush_size: settings.memstore_flush_size,
            background_jobs: settings.flusher_count
                + settings.compaction_small_threads
                + settings.compaction_large_threads,
            block_cache_bytes: settings.block_cache_bytes(),
            settings,
        }
    }

    /// Our default settings, computed as `ferrobase_types::Settings` does
    /// (that crate is not linked without the `ours` feature: see
    /// Cargo.toml).
    #[cfg(not(feature = "ours"))]
    pub fn defaults() -> Config {
        // hbase.hregion.memstore.flush.size = 128 MiB; flusher.count 2 +
        // compaction small 1 + large 1; hfile.block.cache.size 0.4 of
        // ferrobase.memory.size (default a quarter of physical RAM).
        let budget = physical_memory() / 4;
        Config {
            memstore_flush_size: 134_217_728,
            background_jobs: 4,
            block_cache_bytes: (budget as f64 * 0.4) as u64,
        }
    }
}

/// Physical RAM in bytes (from /proc/meminfo; 8 GiB if unreadable), as
/// `ferrobase_types::settings::physical_memory`.
#[cfg(not(feature = "ours"))]
fn physical_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(8 << 30)
}

/// The engines being compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineId {
    Ours,
    RocksDb,
}

impl EngineId {
    pub fn name(self) -> &'static str {
        match self {
            EngineId::Ours => "ours",
            EngineId::RocksDb => "rocksdb",
        }
    }

    pub fn parse(name: &str) -> Result<EngineId, String> {
        match name.trim().to_ascii_lowercase().as_str() {
            "ours" | "ferrobase" => Ok(EngineId::Ours),
            "rocksdb" | "rocks" => Ok(EngineId::RocksDb),
            other => Err(format!("unknown engine '{other}'; valid: ours, rocksdb")),
        }
    }

    /// Whether this binary can run the engine.
    pub fn available(self) -> bool {
        match self {
            EngineId::Ours => cfg!(feature = "ours"),
            EngineId::RocksDb => true,
        }
    }

    /// Opens (creating if needed) the engine's database in `dir`.
    pub fn open(self, dir: &Path, config: &Config) -> Result<Box<dyn KvEngine>> {
        match self {
            EngineId::RocksDb => Ok(Box::new(crate::rocks::Rocks::open(dir, config)?)),
            #[cfg(feature = "ours")]
            EngineId::Ours => Ok(Box::new(crate::ours::Ours::open(dir, config)?)),
            #[cfg(not(feature = "ours"))]
            EngineId::Ours => {
                anyhow::bail!("built without our engine: build with `--features ours`")
            }
        }
    }
}
