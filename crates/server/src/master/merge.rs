//! Region merges (HBase's `merge_region` / `MergeTableRegions`): two
//! adjacent regions of one table become one, by reference.
//!
//! ```text
//! resolve both (region id, or HBase encoded name) ─► adjacent, same enabled table,
//! neither holding references ─► allocate the merged region's id (meta)
//! ─► close both where they are (memstores flushed: their manifests are final)
//! ─► write the merged region: one manifest of references, each covering one parent
//!    file bounded by that parent's range (region::reference)         [crash point]
//! ─► one meta write: the two parents out, the merged region in, the parents handed
//!    to the janitor                                                   [crash point]
//! ─► open the merged region (it compacts its references away soon after)
//! ```
//!
//! A failure before the meta write reopens both parents where they were;
//! a crash before it leaves the meta naming the parents (which the next
//! start opens) and an unused directory. No cell is copied, so a merge
//! costs the same whatever the regions' sizes. Runs under the DDL lock.

use super::*;
use crate::crash_point;
use crate::meta::ParentRegion;
use ferrobase_hbase_wire::names::{RegionName, TableName};
use ferrobase_storage::region::manifest::Manifest;
use ferrobase_storage::region::reference;

fn invalid(message: String) -> ServerError {
    ServerError::new(ErrorCode::InvalidRequest, message)
}

impl Master {
    /// The region `spec` names: a region id as text, or an HBase encoded
    /// region name (32 hex digits), with its table.
    fn find_region(&self, spec: &str) -> Result<(TableMeta, RegionInfo)> {
        let meta = self.meta.snapshot();
        let id = spec.parse::<u64>().ok();
        for t in meta.tables.values() {
            let table = TableName::parse(&t.descriptor.name).ok();
            for r in &t.regions {
                let encoded = || {
                    table
                        .as_ref()
                        .is_some_and(|n| RegionName::new(n, &r.start_key, r.id).encoded == spec)
                };
                if id == Some(r.id) || encoded() {
                    return Ok((t.clone(), r.clone()));
                }
            }
        }
        Err(ServerError::new(
            ErrorCode::InvalidRequest,
            format!("no region '{spec}' (give a region id or an encoded region name)"),
        ))
    }

    /// Merges the two adjacent regions `a` and `b` (ids or encoded names,
    /// either order) into one; returns it.
    pub fn merge(&self, a: &str, b: &str) -> Result<RegionInfo> {
        let _ddl = self.ddl.lock();
        if self.stopping.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ServerError::new(
                ErrorCode::RegionNotServing,
                "the master is stopping",
            ));
        }
        let (t, ra) = self.find_region(a)?;
        let (tb, rb) = self.find_region(b)?;
        let table = t.descriptor.name.clone();
        if tb.descriptor.name != table {
            return Err(invalid(format!(
                "regions {} and {} belong to different tables",
                ra.name(),
                rb.name()
            )));
        }
        if !t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableDisabled,
                format!("table '{table}' is disabled"),
            ));
        }
        let (lo, hi) = if !ra.end_key.is_empty() && ra.end_key == rb.start_key {
            (ra, rb)
        } else if !rb.end_key.is_empty() && rb.end_key == ra.start_key {
            (rb, ra)
        } else {
            return Err(invalid(format!(
                "regions {} and {} are not adjacent",
                ra.name(),
                rb.name()
            )));
        };
        for r in [&lo, &hi] {
            let m = Manifest::load(&*self.fs, &self.region_dir(r))?.unwrap_or_default();
            if !m.references.is_empty() {
                return Err(invalid(format!(
                    "region {} still holds references to its parent's files; it can merge \
                     after its compaction",
                    r.name()
                )));
            }
        }
        let holders = [self.holder(lo.id)?, self.holder(hi.id)?];
        let merged = self.meta.update(|m| {
            Ok(RegionInfo {
                id: m.allocate_region_id(),
                table: table.clone(),
                start_key: lo.start_key.clone(),
                end_key: hi.end_key.clone(),
            })
        })?;
        let parents = [lo, hi];
        let written = self.write_merged(&parents, &holders, &merged);
        let published = written.and_then(|()| {
            self.meta.update(|m| {
                let entry = m
                    .tables
                    .get_mut(&table)
                    .ok_or_else(|| ServerError::no_table(&table))?;
                let i = entry
                    .regions
                    .iter()
                    .position(|r| r.id == parents[0].id)
                    .filter(|i| entry.regions.get(i + 1).map(|r| r.id) == Some(parents[1].id))
                    .ok_or_else(|| ServerError::not_serving(parents[0].id))?;
                entry.regions.splice(i..=i + 1, [merged.clone()]);
                for p in &parents {
                    entry.parents.push(ParentRegion {
                        info: p.clone(),
                        children: vec![merged.id],
                    });
                    entry.retire(p.id);
                }
                Ok(())
            })
        });
        if let Err(e) = published {
            // Put both parents back where they were.
            for (h, p) in holders.iter().zip(&parents) {
                if h.open_region(&t.descriptor, p).is_ok() {
                    self.assignments.lock().insert(p.id, h.address());
                }
            }
            let _ = self.fs.delete_all(&self.region_dir(&merged));
            return Err(e);
        }
        crash_point::reached("merge-after-meta");
        self.region_changes[1].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.assign_region(&t.descriptor, &merged)?;
        tracing::info!(
            a = %parents[0].name(),
            b = %parents[1].name(),
            merged = %merged.name(),
            "merged regions by reference"
        );
        Ok(merged)
    }

    /// Closes both parents and writes the merged region's manifest of
    /// references to their files.
    fn write_merged(
        &self,
        parents: &[RegionInfo; 2],
        holders: &[Arc<dyn crate::coordination::RegionServerAdmin>; 2],
        merged: &RegionInfo,
    ) -> Result<()> {
        for (h, p) in holders.iter().zip(parents) {
            self.assignments.lock().remove(&p.id);
            h.close_region(p.id)?;
        }
        let mut with_manifests = Vec::with_capacity(2);
        for p in parents {
            let m = Manifest::load(&*self.fs, &self.region_dir(p))?.unwrap_or_default();
            with_manifests.push((p.clone(), m));
        }
        reference::write_child(&*self.fs, &self.data_dir, &with_manifests, merged)?;
        // Each parent's close left the nonces of its recent operations
        // beside it; the merged region's opener learns both sets, so a
        // retry of an operation applied on a parent is answered once.
        for p in parents {
            ferrobase_storage::wal::split::copy_nonces(
                &*self.fs,
                &self.region_dir(p),
                &self.region_dir(merged),
            )?;
        }
        crash_point::reached("merge-after-references");
        Ok(())
    }

    /// A region's directory on the root.
    pub(crate) fn region_dir(&self, r: &RegionInfo) -> PathBuf {
        self.data_dir.join(&r.table).join(r.dir_name())
    }
}
