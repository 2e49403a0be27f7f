//! Region merges (HBase's `merge_region` / `MergeTableRegions`): two or
//! more adjacent regions of one table become one, by reference.
//!
//! ```text
//! resolve each (region id, or HBase encoded name) ─► one enabled table, adjacent
//! (or, forced, widened to every region between the first and the last),
//! none holding references ─► allocate the merged region's id (meta)
//! ─► close each where it is (memstores flushed: their manifests are final)
//! ─► write the merged region: one manifest of references, each covering one parent
//!    file bounded by that parent's range (region::reference)         [crash point]
//! ─► one meta write: the two parents out, the merged region in, the parents handed
//!    to the janitor                                                   [crash point]
//! ─► open the merged region (it compacts its references away soon after)
//! ```
//!
//! A failure before the meta write reopens every parent where it was; a
//! crash before it leaves the meta naming the parents (which the next
//! start opens) and an unused directory. No cell is copied, so a merge
//! costs the same whatever the regions' sizes. Runs under the DDL lock.
//!
//! HBase's `forcible` merge of non-adjacent regions makes a region that
//! overlaps the ones between them (a repair tool's move). Here a forced
//! merge takes those regions in as well: the table's regions still tile
//! its key space, and no row is served by two regions.

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
    pub fn find_region(&self, spec: &str) -> Result<(TableMeta, RegionInfo)> {
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

    /// Merges `specs` (two or more region ids or encoded names of one
    /// table, in any order) into one region; returns it. Without `force`
    /// the regions must cover one unbroken key range; with it (HBase's
    /// `forcible`), every region between the first and the last is merged
    /// too, so the result never overlaps a region left out.
    pub fn merge_regions(&self, specs: &[String], force: bool) -> Result<RegionInfo> {
        let _ddl = self.ddl.lock();
        if self.stopping.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ServerError::new(
                ErrorCode::RegionNotServing,
                "the master is stopping",
            ));
        }
        let (t, parents) = self.merge_plan(specs, force)?;
        let table = t.descriptor.name.clone();
        let mut holders = Vec::with_capacity(parents.len());
        for p in &parents {
            holders.push(self.holder(p.id)?);
        }
        let (first, last) = match (parents.first(), parents.last()) {
            (Some(f), Some(l)) => (f.clone(), l.clone()),
            _ => return Err(invalid("a merge takes at least two regions".into())),
        };
        let merged = self.meta.update(|m| {
            Ok(RegionInfo {
                id: m.allocate_region_id(),
                table: table.clone(),
                start_key: first.start_key.clone(),
                end_key: last.end_key.clone(),
            })
        })?;
        let written = self.write_merged(&parents, &holders, &merged);
        let published = written.and_then(|()| {
            self.meta.update(|m| {
                let entry = m
                    .tables
                    .get_mut(&table)
                    .ok_or_else(|| ServerError::no_table(&table))?;
                // The parents must still be listed together, in order.
                let i = entry
                    .regions
                    .iter()
                    .position(|r| r.id == first.id)
                    .filter(|&i| {
                        parents
                            .iter()
                            .enumerate()
                            .all(|(k, p)| entry.regions.get(i + k).map(|r| r.id) == Some(p.id))
                    })
                    .ok_or_else(|| ServerError::not_serving(first.id))?;
                entry.regions.splice(i..i + parents.len(), [merged.clone()]);
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
            // Put every parent back where it was.
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
        let names: Vec<String> = parents.iter().map(RegionInfo::name).collect();
        tracing::info!(
            parents = %names.join(", "),
            merged = %merged.name(),
            "merged regions by reference"
        );
        Ok(merged)
    }

    /// The table and the regions (in key order) a merge of `specs`
    /// combines, after every check that needs no region closed.
    fn merge_plan(&self, specs: &[String], force: bool) -> Result<(TableMeta, Vec<RegionInfo>)> {
        if specs.len() < 2 {
            return Err(invalid(format!(
                "a merge takes at least two regions; {} {} given",
                specs.len(),
                if specs.len() == 1 { "was" } else { "were" }
            )));
        }
        let mut t: Option<TableMeta> = None;
        let mut named = Vec::with_capacity(specs.len());
        for spec in specs {
            let (tr, r) = self.find_region(spec)?;
            if let Some(t) = &t {
                if t.descriptor.name != tr.descriptor.name {
                    return Err(invalid(format!(
                        "regions {} and {} belong to different tables",
                        named.first().map(RegionInfo::name).unwrap_or_default(),
                        r.name()
                    )));
                }
            } else {
                t = Some(tr);
            }
            if named.iter().any(|n: &RegionInfo| n.id == r.id) {
                return Err(invalid(format!(
                    "region {} is named twice in the merge",
                    r.name()
                )));
            }
            named.push(r);
        }
        let Some(t) = t else {
            return Err(invalid("a merge takes at least two regions".into()));
        };
        let table = t.descriptor.name.clone();
        if !t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableDisabled,
                format!("table '{table}' is disabled"),
            ));
        }
        // Positions in the table's region list (kept in key order).
        let mut at: Vec<usize> = named
            .iter()
            .filter_map(|r| t.regions.iter().position(|q| q.id == r.id))
            .collect();
        at.sort_unstable();
        let (lo, hi) = match (at.first(), at.last()) {
            (Some(&lo), Some(&hi)) if at.len() == named.len() => (lo, hi),
            _ => {
                let id = named.first().map_or(0, |r| r.id);
                return Err(ServerError::not_serving(id));
            }
        };
        let span = t.regions.get(lo..=hi).unwrap_or_default().to_vec();
        if span.len() != named.len() && !force {
            let gaps: Vec<String> = span
                .iter()
                .filter(|r| !named.iter().any(|n| n.id == r.id))
                .map(RegionInfo::name)
                .collect();
            let shown = gaps.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
            let (verb, more) = match gaps.len() {
                1 => ("is", String::new()),
                n if n > 3 => ("are", format!(" and {} more", n - 3)),
                _ => ("are", String::new()),
            };
            return Err(invalid(format!(
                "the regions are not adjacent: {shown}{more} {verb} between them (merge with \
                 force to include every region in between)"
            )));
        }
        for r in &span {
            let m = Manifest::load(&*self.fs, &self.region_dir(r))?.unwrap_or_default();
            if !m.references.is_empty() {
                return Err(invalid(format!(
                    "region {} still holds references to its parent's files; it can merge \
                     after its compaction",
                    r.name()
                )));
            }
        }
        Ok((t, span))
    }

    /// Closes every parent and writes the merged region's manifest of
    /// references to their files.
    fn write_merged(
        &self,
        parents: &[RegionInfo],
        holders: &[Arc<dyn crate::coordination::RegionServerAdmin>],
        merged: &RegionInfo,
    ) -> Result<()> {
        for (h, p) in holders.iter().zip(parents) {
            self.assignments.lock().remove(&p.id);
            h.close_region(p.id)?;
        }
        let mut with_manifests = Vec::with_capacity(parents.len());
        for p in parents {
            let m = Manifest::load(&*self.fs, &self.region_dir(p))?.unwrap_or_default();
            with_manifests.push((p.clone(), m));
        }
        reference::write_child(&*self.fs, &self.data_dir, &with_manifests, merged)?;
        // Each parent's close left the nonces of its recent operations
        // beside it; the merged region's opener learns every set, so a
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
