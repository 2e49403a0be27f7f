//! The master's region operations: locating a table's regions, and flush,
//! compact and split requests by table or region name, which it routes to
//! the servers holding the regions. A split is by reference
//! (`crate::split`); the parent's files stay until the janitor
//! (`super::janitor`) finds no daughter reading them. Regions split by
//! size (`split_oversized`) and, when turned on, by load (`split_hot`).

use super::*;
use crate::crash_point;
use crate::meta::ParentRegion;

/// How long a region's request rate is measured before a load-based split
/// decides on it: long enough that a burst does not split a region.
pub const LOAD_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

impl Master {
    /// Where the table's regions are online.
    pub fn locate(&self, name: &str) -> Result<Vec<pb::RegionLocation>> {
        let t = self.table(name)?;
        if !t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableDisabled,
                format!("table '{name}' is disabled"),
            ));
        }
        Ok(self.locations(&t))
    }

    /// Whether the table is enabled, and its regions with where they are
    /// online (no server while it is disabled): what `hbase:meta` shows.
    pub fn table_regions(&self, name: &str) -> Result<(bool, Vec<pb::RegionLocation>)> {
        let t = self.table(name)?;
        let mut regions = self.locations(&t);
        if !t.enabled {
            for r in &mut regions {
                r.server.clear();
            }
        }
        Ok((t.enabled, regions))
    }

    pub(super) fn locations(&self, t: &TableMeta) -> Vec<pb::RegionLocation> {
        let a = self.assignments.lock();
        t.regions
            .iter()
            .map(|r| pb::RegionLocation {
                region_id: r.id,
                table: r.table.clone(),
                start_key: r.start_key.clone().into(),
                end_key: r.end_key.clone().into(),
                server: a.get(&r.id).cloned().unwrap_or_default(),
            })
            .collect()
    }

    fn targets(&self, target: &str) -> Result<Vec<u64>> {
        if let Some(t) = self.meta.table(target) {
            if !t.enabled {
                return Err(ServerError::new(
                    ErrorCode::TableDisabled,
                    format!("table '{target}' is disabled"),
                ));
            }
            return Ok(t.regions.iter().map(|r| r.id).collect());
        }
        match target.parse::<u64>() {
            Ok(id) if self.assignments.lock().contains_key(&id) => Ok(vec![id]),
            _ => Err(ServerError::no_table(target)),
        }
    }

    /// Flushes a table's (or one region's) memstores and waits.
    pub fn flush(&self, target: &str) -> Result<()> {
        for id in self.targets(target)? {
            self.holder(id)?.flush_region(id)?;
        }
        Ok(())
    }

    /// Compacts a table (or one region) and waits.
    pub fn compact(&self, target: &str, major: bool) -> Result<()> {
        for id in self.targets(target)? {
            self.holder(id)?.compact_region(id, major)?;
        }
        Ok(())
    }

    /// Splits a region in two: `target` is a table (the region holding
    /// `point`, or the largest region) or a region id as text; without a
    /// point, the region's middle row by bytes.
    pub fn split(&self, target: &str, point: Option<Vec<u8>>) -> Result<()> {
        let _ddl = self.ddl.lock();
        if self.stopping.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ServerError::new(
                ErrorCode::RegionNotServing,
                "the master is stopping",
            ));
        }
        let (t, parent) = self.split_target(target, point.as_deref())?;
        if let Some(p) = &point
            && (!parent.contains_row(p) || p == &parent.start_key)
        {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "split point is not inside region {} (or is its start key)",
                    parent.name()
                ),
            ));
        }
        let server = self.holder(parent.id)?;
        let point = match point {
            Some(p) => p,
            None => server.split_point(&t.descriptor, &parent)?,
        };
        let table = t.descriptor.name.clone();
        let daughters = self.meta.update(|m| {
            let lower = RegionInfo {
                id: m.allocate_region_id(),
                table: table.clone(),
                start_key: parent.start_key.clone(),
                end_key: point.clone(),
            };
            let upper = RegionInfo {
                id: m.allocate_region_id(),
                table: table.clone(),
                start_key: point.clone(),
                end_key: parent.end_key.clone(),
            };
            Ok([lower, upper])
        })?;
        if let Err(e) = server.split_region(&t.descriptor, &parent, &daughters) {
            let _ = server.abort_split(&t.descriptor, &parent);
            // Never named by the meta: nothing reads these directories.
            for d in &daughters {
                let _ = self
                    .fs
                    .delete_all(&self.data_dir.join(&table).join(d.dir_name()));
            }
            return Err(e);
        }
        // One meta write switches the parent for its daughters and hands
        // the parent's files to the janitor.
        let published = self.meta.update(|m| {
            let entry = m
                .tables
                .get_mut(&table)
                .ok_or_else(|| ServerError::no_table(&table))?;
            let i = entry
                .regions
                .iter()
                .position(|r| r.id == parent.id)
                .ok_or_else(|| ServerError::not_serving(parent.id))?;
            entry.regions.splice(i..=i, daughters.iter().cloned());
            entry.parents.push(ParentRegion {
                info: parent.clone(),
                children: daughters.iter().map(|d| d.id).collect(),
            });
            entry.retire(parent.id);
            Ok(())
        });
        if let Err(e) = published {
            let _ = server.abort_split(&t.descriptor, &parent);
            return Err(e);
        }
        crash_point::reached("split-after-meta");
        self.region_changes[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.assignments.lock().remove(&parent.id);
        for d in &daughters {
            server.open_region(&t.descriptor, d)?;
            self.assignments.lock().insert(d.id, server.address());
        }
        crash_point::reached("split-after-open");
        tracing::info!(parent = %parent.name(), point = ?point, "split region by reference");
        Ok(())
    }

    fn split_target(&self, target: &str, point: Option<&[u8]>) -> Result<(TableMeta, RegionInfo)> {
        let meta = self.meta.snapshot();
        let found = match meta.tables.get(target) {
            Some(t) => {
                let region = match point {
                    Some(p) => t.regions.iter().find(|r| r.contains_row(p)).cloned(),
                    None => {
                        let load = self.cluster_status();
                        let size = |id: u64| {
                            load.servers
                                .iter()
                                .flat_map(|s| &s.regions)
                                .find(|r| r.region_id == id)
                                .map(|r| r.store_file_bytes + r.memstore_bytes)
                                .unwrap_or(0)
                        };
                        t.regions.iter().max_by_key(|r| size(r.id)).cloned()
                    }
                };
                region.map(|r| (t.clone(), r))
            }
            None => target.parse::<u64>().ok().and_then(|id| {
                meta.tables.values().find_map(|t| {
                    t.regions
                        .iter()
                        .find(|r| r.id == id)
                        .map(|r| (t.clone(), r.clone()))
                })
            }),
        };
        let (t, r) = found.ok_or_else(|| ServerError::no_table(target))?;
        if !t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableDisabled,
                format!("table '{}' is disabled", t.descriptor.name),
            ));
        }
        Ok((t, r))
    }

    /// Load-based splits (Bigtable's): each region's requests (rows read
    /// plus rows written) are counted over windows of `LOAD_WINDOW` (10 s); a
    /// region that served more than `threshold` per second over its last
    /// window splits at the row its server sampled as halving its requests
    /// (`RegionLoad.load_split_point`). A region its server gave no point
    /// for (too few samples, one hot row) is left alone. Returns how many
    /// split.
    pub fn split_hot(&self, threshold: u64) -> usize {
        if threshold == 0 {
            return 0;
        }
        let load = self.cluster_status();
        let assigned: Vec<u64> = self.assignments.lock().keys().copied().collect();
        let now = std::time::Instant::now();
        let mut hot = Vec::new();
        {
            let mut windows = self.load_windows.lock();
            let live: std::collections::HashSet<u64> = load
                .servers
                .iter()
                .flat_map(|s| &s.regions)
                .map(|r| r.region_id)
                .collect();
            windows.retain(|id, _| live.contains(id));
            for r in load.servers.iter().flat_map(|s| &s.regions) {
                let count = r.read_requests + r.write_requests;
                let (since, base) = *windows.entry(r.region_id).or_insert((now, count));
                let elapsed = now.duration_since(since);
                if elapsed < LOAD_WINDOW {
                    continue;
                }
                windows.insert(r.region_id, (now, count));
                let rate = count.saturating_sub(base) as f64 / elapsed.as_secs_f64();
                if rate > threshold as f64
                    && assigned.contains(&r.region_id)
                    && let Some(point) = &r.load_split_point
                {
                    hot.push((r.region_id, r.name.clone(), point.to_vec(), rate));
                }
            }
        }
        let mut split = 0;
        for (id, name, point, rate) in hot {
            match self.split(&id.to_string(), Some(point)) {
                Ok(()) => {
                    tracing::info!(region = %name, rate = rate as u64, "load-based split");
                    split += 1;
                }
                Err(e) => tracing::debug!(region = %name, error = %e, "no load-based split"),
            }
        }
        split
    }

    /// Splits every region whose store files pass `max_filesize`
    /// (`hbase.hregion.max.filesize`); returns how many were split.
    pub fn split_oversized(&self, max_filesize: u64) -> usize {
        let mut split = 0;
        let load = self.cluster_status();
        let assigned: Vec<u64> = self.assignments.lock().keys().copied().collect();
        for r in load.servers.iter().flat_map(|s| &s.regions) {
            if r.store_file_bytes > max_filesize && assigned.contains(&r.region_id) {
                match self.split(&r.region_id.to_string(), None) {
                    Ok(()) => split += 1,
                    Err(e) => tracing::debug!(region = %r.name, error = %e, "no automatic split"),
                }
            }
        }
        split
    }
}
