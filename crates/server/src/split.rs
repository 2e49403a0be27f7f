//! Region splits, the region server's half: copy a parent region's cells
//! into two daughter regions.
//!
//! The parent is first taken out of service (calls get REGION_NOT_SERVING
//! and the client retries), closed (in-flight writes finish, the memstore
//! is flushed), then reopened privately and read whole: every version of
//! every column is written, with its timestamp, into the daughters, which
//! are flushed before the master publishes them in the meta. So no
//! acknowledged write is lost (it is in the parent's files) and none is
//! applied twice (writes during the split are refused, not queued).
//!
//! This is a copying split, O(region size); HBase's reference files are a
//! later optimisation. This module never changes the meta.

use crate::error::{Result, ServerError};
use crate::region_server::RegionServer;
use ferrobase_proto::ErrorCode;
use ferrobase_storage::{Region, RegionInfo, Scan};
use ferrobase_types::{Durability, RowMutation, TableDescriptor};
use std::sync::Arc;

/// Rows written to a daughter per batch.
const COPY_BATCH: usize = 512;

impl RegionServer {
    /// Takes `parent` out of service and reopens it privately for reading.
    fn quiesce(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<Arc<Region>> {
        self.mark_offline(parent.id);
        self.scanners().close_region(parent.id);
        if let Some(r) = self.engine().region(parent.id) {
            r.close()?;
        }
        Ok(self.engine().open_region(table, parent.clone())?)
    }

    /// The row at about half of the parent's bytes (`None`: fewer than two rows).
    fn midpoint(region: &Region) -> Result<Option<Vec<u8>>> {
        let mut sizes = Vec::new();
        let mut scanner = region.scan(&Scan {
            cache_blocks: false,
            ..Scan::default()
        })?;
        while let Some(cells) = scanner.next_row()? {
            if let Some(c) = cells.first() {
                let size: usize = cells
                    .iter()
                    .map(|c| c.qualifier.len() + c.value.len() + 12)
                    .sum();
                sizes.push((c.row.to_vec(), size as u64));
            }
        }
        if sizes.len() < 2 {
            return Ok(None);
        }
        let total: u64 = sizes.iter().map(|s| s.1).sum();
        let mut acc = 0;
        for (i, (row, size)) in sizes.iter().enumerate() {
            acc += size;
            if acc * 2 >= total {
                // The split key starts the upper daughter: never the first row.
                let idx = (i + 1).clamp(1, sizes.len() - 1);
                tracing::debug!(row = ?row, "split point after this row");
                return Ok(Some(sizes[idx].0.clone()));
            }
        }
        Ok(Some(sizes[sizes.len() / 2].0.clone()))
    }

    /// Chooses a split point for `parent` when none is given: quiesces it
    /// and returns the middle row by bytes. The parent stays out of service
    /// (call [`split_region`](Self::split_region) or [`abort_split`](Self::abort_split) next).
    pub fn split_point(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<Vec<u8>> {
        let region = self.quiesce(table, parent)?;
        match Self::midpoint(&region)? {
            Some(p) => Ok(p),
            None => {
                self.abort_split(table, parent)?;
                Err(ServerError::new(
                    ErrorCode::InvalidRequest,
                    format!(
                        "region {} has fewer than two rows; nothing to split",
                        parent.name()
                    ),
                ))
            }
        }
    }

    /// Copies `parent` into `daughters` (already allocated in the meta) and
    /// flushes them; the parent stays closed.
    pub fn split_region(
        &self,
        table: &TableDescriptor,
        parent: &RegionInfo,
        daughters: &[RegionInfo; 2],
    ) -> Result<()> {
        let region = match self.engine().region(parent.id) {
            Some(r) if self.is_offline(parent.id) && !r.is_closed() => r,
            _ => self.quiesce(table, parent)?,
        };
        for d in daughters {
            self.mark_offline(d.id);
        }
        let lower = self.engine().open_region(table, daughters[0].clone())?;
        let upper = self.engine().open_region(table, daughters[1].clone())?;
        let mut scanner = region.scan(&Scan {
            max_versions: u32::MAX,
            cache_blocks: false,
            ..Scan::default()
        })?;
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        while let Some(cells) = scanner.next_row()? {
            let Some(first) = cells.first() else { continue };
            let mut m = RowMutation::new(first.row.clone()).with_durability(Durability::SkipWal);
            for c in &cells {
                m = m.put_at(
                    c.family.clone(),
                    c.qualifier.clone(),
                    c.timestamp,
                    c.value.clone(),
                );
            }
            let (target, buf) = if daughters[1].contains_row(&m.row) {
                (&upper, &mut hi)
            } else {
                (&lower, &mut lo)
            };
            buf.push(m);
            if buf.len() >= COPY_BATCH {
                target.mutate_batch(buf)?;
                buf.clear();
            }
        }
        lower.mutate_batch(&lo)?;
        upper.mutate_batch(&hi)?;
        lower.flush(true)?;
        upper.flush(true)?;
        region.close()?;
        Ok(())
    }

    /// Puts a parent back in service after a split that did not happen.
    pub fn abort_split(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<()> {
        for d in self.engine().regions() {
            if d.info().id != parent.id
                && d.info().table == parent.table
                && self.is_offline(d.info().id)
            {
                d.close()?;
            }
        }
        self.engine().open_region(table, parent.clone())?;
        self.mark_online(parent.id);
        Ok(())
    }
}
