//! Our region engine: one process-wide `Engine`, one table `t` with family
//! `f`, one region over the whole key range.

use crate::engine::{Config, KvEngine, RowRead, ScanCount, WalMode};
use anyhow::{Context, Result};
use bytes::Bytes;
use ferrobase_storage::engine::Engine;
use ferrobase_storage::region::{Get, Region, RegionInfo, Scan};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use ferrobase_workloads::GeneratedRow;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub struct Ours {
    engine: Arc<Engine>,
    region: Arc<Region>,
}

impl Ours {
    pub fn open(dir: &Path, config: &Config) -> Result<Ours> {
        let engine = Engine::open(dir, config.settings.clone())
            .with_context(|| format!("opening our engine in {}", dir.display()))?;
        let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f")?])?;
        let region = engine.open_region(&table, RegionInfo::whole_table(1, "t"))?;
        Ok(Ours { engine, region })
    }
}

impl KvEngine for Ours {
    fn put_row(&self, row: &GeneratedRow, family: &'static [u8], wal: WalMode) -> Result<()> {
        let durability = match wal {
            WalMode::Skip => Durability::SkipWal,
            WalMode::Async => Durability::AsyncWal,
            WalMode::Fsync => Durability::FsyncWal,
        };
        let family = Bytes::from_static(family);
        let mut m = RowMutation::new(Bytes::copy_from_slice(&row.row)).with_durability(durability);
        for (q, v) in row {
            m = m.put(family.clone(), q, v);
        }
        self.region.mutate(m)?;
        Ok(())
    }

    fn get_row(&self, row: &[u8]) -> Result<RowRead> {
        let cells = self.region.get(&Get::new(Bytes::copy_from_slice(row)))?;
        Ok(RowRead {
            cells: cells.len(),
            value_bytes: cells.iter().map(|c| c.value.len()).sum(),
        })
    }

    fn read_row(&self, row: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let cells = self.region.get(&Get::new(Bytes::copy_from_slice(row)))?;
        Ok(cells
            .into_iter()
            .map(|c| (c.qualifier.to_vec(), c.value.to_vec()))
            .collect())
    }

    fn scan_all(&self, progress: &AtomicU64) -> Result<ScanCount> {
        let mut scanner = self.region.scan(&Scan::default())?;
        let mut count = ScanCount::default();
        let mut pending = 0u64;
        while let Some(cells) = scanner.next_row()? {
            count.rows += 1;
            count.cells += cells.len() as u64;
            pending += 1;
            if pending == 4096 {
                progress.fetch_add(pending, Ordering::Relaxed);
                pending = 0;
            }
        }
        progress.fetch_add(pending, Ordering::Relaxed);
        Ok(count)
    }

    fn flush(&self) -> Result<()> {
        self.region.flush(true)?;
        Ok(())
    }

    fn settle(&self, limit: Duration) -> Result<bool> {
        // The engine counts flush and compaction jobs queued or running.
        Ok(self.engine.wait_idle(limit))
    }

    fn stats(&self) -> String {
        let st = self.region.status();
        format!(
            "store files {}, store file bytes {:.1} MB, memstore {:.1} MB; {:?}",
            st.store_files,
            st.store_file_bytes as f64 / 1048576.0,
            st.memstore_bytes as f64 / 1048576.0,
            self.engine.stats()
        )
    }

    fn close(self: Box<Self>) -> Result<()> {
        self.engine.close()?;
        Ok(())
    }
}
