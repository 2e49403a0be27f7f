//! Region splits, the region server's half: split a parent region into
//! two daughters *by reference* (HBase's reference files).
//!
//! The parent is first taken out of service (calls get REGION_NOT_SERVING
//! and the client retries) and closed (in-flight writes finish, the
//! memstore is flushed), so every acknowledged write is in its store files
//! and none is applied twice (writes during the split are refused, not
//! queued). Then each daughter gets a directory holding one manifest of
//! references to the parent's files (`ferrobase_storage::region::reference`),
//! one atomic write each: no cell is copied, and the split costs the same
//! whatever the region's size. The master then publishes the daughters in
//! the meta and opens them; they serve through half readers at once and
//! rewrite the references into files of their own at their first
//! compaction, after which the master's janitor removes the parent's files.
//!
//! The split point, when none is given, is the block index midkey of the
//! parent's largest file (no scan); only a region whose files have fewer
//! than two blocks is scanned for its middle row. A region that still
//! holds references is not split (as HBase). This module never changes
//! the meta.

use crate::crash_point;
use crate::error::{Result, ServerError};
use crate::region_server::RegionServer;
use ferrobase_proto::ErrorCode;
use ferrobase_storage::region::manifest::Manifest;
use ferrobase_storage::region::reference;
use ferrobase_storage::{Region, RegionInfo, Scan};
use ferrobase_types::TableDescriptor;
use std::sync::Arc;

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

    /// Refuses a split of a region still reading its own parent's files.
    fn refuse_references(&self, parent: &RegionInfo) -> Result<()> {
        match self.engine().region(parent.id) {
            Some(r) if r.has_references() => Err(ServerError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "region {} still holds references to its parent's files; it can split \
                     after its compaction",
                    parent.name()
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Chooses a split point for `parent` when none is given: quiesces it
    /// (its memstore flushed) and returns its block index midkey, or for a
    /// region of fewer than two blocks its middle row by bytes. The parent
    /// stays out of service (call [`split_region`](Self::split_region) or
    /// [`abort_split`](Self::abort_split) next).
    pub fn split_point(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<Vec<u8>> {
        self.refuse_references(parent)?;
        let region = self.quiesce(table, parent)?;
        let point = match region.midkey() {
            Some(p) => Some(p),
            None => Self::midpoint(&region)?,
        };
        match point {
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

    /// Writes `daughters` (already allocated in the meta) as references to
    /// `parent`'s files; the parent stays closed. The master publishes and
    /// opens the daughters.
    pub fn split_region(
        &self,
        table: &TableDescriptor,
        parent: &RegionInfo,
        daughters: &[RegionInfo; 2],
    ) -> Result<()> {
        self.refuse_references(parent)?;
        let _ = table;
        self.mark_offline(parent.id);
        self.scanners().close_region(parent.id);
        if let Some(region) = self.engine().region(parent.id) {
            // Flushes what the memstore holds: the parent's manifest is final.
            region.close()?;
        }
        crash_point::reached("split-before-references");
        let (fs, data_dir) = (self.engine().fs(), self.engine().data_dir());
        let dir = data_dir.join(&parent.table).join(parent.dir_name());
        let manifest = Manifest::load(&**fs, &dir)?.unwrap_or_default();
        let parents = [(parent.clone(), manifest)];
        for d in daughters {
            reference::write_child(&**fs, data_dir, &parents, d)?;
            // The parent's recent operations, for whoever opens the
            // daughter: this server answers their retries from its table,
            // but a daughter reopened elsewhere would not know them.
            self.leave_nonces(d, &data_dir.join(&d.table).join(d.dir_name()))?;
        }
        crash_point::reached("split-after-references");
        Ok(())
    }

    /// Puts a parent back in service after a split that did not happen.
    pub fn abort_split(&self, table: &TableDescriptor, parent: &RegionInfo) -> Result<()> {
        // A closed region has left the engine: this opens it afresh.
        self.engine().open_region(table, parent.clone())?;
        self.mark_online(parent.id);
        Ok(())
    }
}
