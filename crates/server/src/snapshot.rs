//! Table snapshots, the master's half: take, list, delete, clone and
//! restore (HBase's `SnapshotManager`), on whatever storage root the master
//! runs on. docs/snapshots.md tells the whole story.
//!
//! ```text
//! snapshot t s   marker .hbase-snapshot/.tmp/s ─► flush every region (enabled table)
//!                ─► read each region's manifest ─► write .hbase-snapshot/s ─► drop the marker
//! clone s t2     t2's link hold gains the snapshot's files ─► new region ids, each a
//!                manifest of links to them ─► add t2 to the meta (the switch) ─► assign
//!                (each region's first compaction rewrites its links as its own files)
//! restore s      (t disabled) new regions as for a clone ─► meta: t's regions and
//!                descriptor are the snapshot's (the switch) ─► retire t's old regions
//! delete s       remove .hbase-snapshot/s ─► clean the archive
//! expire         (a chore) every snapshot whose TTL has passed: delete it
//! ```
//!
//! A snapshot's TTL (HBase's): seconds it lives after it was taken, from
//! the request or `hbase.master.snapshot.ttl`; 0 is forever. Once it has
//! passed, a clone or restore of it is refused (`SNAPSHOT_EXPIRED`, HBase's
//! `SnapshotTTLExpiredException`) and the cleaner, every
//! `hbase.master.cleaner.snapshot.interval` unless `snapshot_cleanup_switch`
//! turned it off, deletes it.
//!
//! Every call runs under the master's DDL lock, so two snapshot calls, or a
//! snapshot call and a drop or split, never interleave. Store files are
//! shared by reference: a snapshot names the table's files, and a clone or
//! restore's regions link to the snapshot's (`ferrobase_storage::file_link`),
//! held by the new table's link hold until its regions have compacted them
//! into files of their own and the janitor releases it. This module never
//! deletes a store file itself: `ferrobase_storage::archive` decides.

use crate::error::{Result, ServerError};
use crate::master::Master;
use ferrobase_proto::{ErrorCode, pb};
use ferrobase_storage::RegionInfo;
use ferrobase_storage::archive;
use ferrobase_storage::file_link;
use ferrobase_storage::region::manifest::Manifest;
use ferrobase_storage::region::reference::{self, Reference};
use ferrobase_storage::snapshot_manifest::{
    self, SnapshotLayout, SnapshotManifest, SnapshotRegion,
};
use ferrobase_types::TableDescriptor;
use std::collections::BTreeMap;

fn io(what: &str) -> impl FnOnce(ferrobase_storage::StorageError) -> ServerError + '_ {
    move |e| match e {
        ferrobase_storage::StorageError::InvalidRequest(m) => {
            ServerError::new(ErrorCode::InvalidRequest, m)
        }
        e => ServerError::from(e).prefixed(what),
    }
}

impl ServerError {
    fn prefixed(self, what: &str) -> ServerError {
        ServerError::new(self.code, format!("{what}: {}", self.message))
    }
}

fn no_snapshot(name: &str) -> ServerError {
    ServerError::new(
        ErrorCode::SnapshotNotFound,
        format!("snapshot '{name}' does not exist"),
    )
}

fn describe(m: &SnapshotManifest) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: m.name.clone(),
        table: m.table.clone(),
        created_ms: m.created_ms,
        ttl_secs: m.ttl_secs,
    }
}

/// The snapshot TTL settings the master runs with, and the cleaner's last
/// pass.
#[derive(Debug, Default)]
pub struct TtlChore {
    /// `hbase.master.snapshot.ttl`.
    pub default_ttl_secs: u64,
    /// `hbase.master.cleaner.snapshot.interval`; 0 until configured (the
    /// cleaner then does not run).
    pub interval_ms: u64,
    last: Option<std::time::Instant>,
}

impl Master {
    /// Where snapshots and the archive live beside the data directory.
    pub(crate) fn snapshot_layout(&self) -> SnapshotLayout {
        SnapshotLayout::for_data_dir(&self.data_dir)
    }

    /// The snapshot TTL settings (`hbase.master.snapshot.ttl`,
    /// `hbase.master.cleaner.snapshot.interval`).
    pub fn configure_snapshots(&self, settings: &ferrobase_types::Settings) {
        let mut c = self.snapshot_ttl.lock();
        c.default_ttl_secs = settings.snapshot_ttl_secs;
        c.interval_ms = settings.snapshot_cleaner_interval_ms;
    }

    /// Takes snapshot `name` of `table`: everything acknowledged before the
    /// call is in it (an enabled table's regions are flushed first). It
    /// lives `hbase.master.snapshot.ttl` seconds (0: until deleted).
    pub fn snapshot(&self, table: &str, name: &str) -> Result<pb::SnapshotDescription> {
        self.snapshot_with_ttl(table, name, None)
    }

    /// [`snapshot`](Self::snapshot) with its own TTL in seconds (`None`:
    /// the default; 0: until deleted).
    pub fn snapshot_with_ttl(
        &self,
        table: &str,
        name: &str,
        ttl_secs: Option<u64>,
    ) -> Result<pb::SnapshotDescription> {
        let ttl_secs = ttl_secs.unwrap_or_else(|| self.snapshot_ttl.lock().default_ttl_secs);
        let _ddl = self.ddl.lock();
        let layout = self.snapshot_layout();
        let fs = &*self.fs;
        snapshot_manifest::validate_name(name).map_err(io("snapshot"))?;
        let t = self.table(table)?;
        if SnapshotManifest::load(fs, &layout, name)
            .map_err(io("reading the snapshots"))?
            .is_some()
        {
            return Err(ServerError::new(
                ErrorCode::SnapshotExists,
                format!("snapshot '{name}' already exists"),
            ));
        }
        if !snapshot_manifest::begin(fs, &layout, name).map_err(io("starting the snapshot"))? {
            return Err(ServerError::new(
                ErrorCode::SnapshotExists,
                format!("snapshot '{name}' is being taken"),
            ));
        }
        let taken = self.take(&t, name, ttl_secs, &layout);
        // The marker goes only after the manifest is written (or the
        // snapshot failed): `archive` relies on that order.
        if let Err(e) = snapshot_manifest::end(fs, &layout, name) {
            tracing::warn!(snapshot = name, error = %e, "could not remove the in-progress marker");
        }
        // Files compactions archived while the marker stood, which the
        // snapshot does not name (or all of them, when it failed), go now.
        self.clean_archive();
        let m = taken?;
        tracing::info!(
            snapshot = name,
            table,
            regions = m.regions.len(),
            "took snapshot"
        );
        Ok(describe(&m))
    }

    fn take(
        &self,
        t: &crate::meta::TableMeta,
        name: &str,
        ttl_secs: u64,
        layout: &SnapshotLayout,
    ) -> Result<SnapshotManifest> {
        if t.enabled {
            for r in &t.regions {
                self.holder(r.id)?.flush_region(r.id)?;
            }
        }
        let families: Vec<&str> = t
            .descriptor
            .families
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        let mut regions = Vec::with_capacity(t.regions.len());
        for r in &t.regions {
            let dir = self.data_dir.join(&r.table).join(r.dir_name());
            let m = Manifest::load(&*self.fs, &dir)
                .map_err(io("reading a region manifest"))?
                .unwrap_or_default();
            // A deleted family's files may still be listed by the region
            // manifest until its next publish; they are not the table's.
            let stores: BTreeMap<String, Vec<String>> = m
                .stores
                .into_iter()
                .filter(|(f, files)| families.contains(&f.as_str()) && !files.is_empty())
                .collect();
            // A daughter not yet compacted reads its parent's files: the
            // snapshot names (and so holds) those.
            let references = m
                .references
                .into_iter()
                .filter(|(n, _)| stores.values().flatten().any(|s| s == n))
                .collect();
            regions.push(SnapshotRegion {
                info: r.clone(),
                max_seq: m.max_seq.max(m.flushed_seq),
                stores,
                references,
            });
        }
        let manifest = SnapshotManifest {
            name: name.to_string(),
            table: t.descriptor.name.clone(),
            created_ms: now_ms(),
            ttl_secs,
            descriptor: t.descriptor.clone(),
            regions,
        };
        manifest
            .store(&*self.fs, layout)
            .map_err(io("writing the snapshot"))?;
        Ok(manifest)
    }

    /// Complete snapshots, by name; with `regex`, those whose whole name
    /// matches it (HBase's `list_snapshots 'regex'`).
    pub fn list_snapshots(&self, regex: Option<&str>) -> Result<Vec<pb::SnapshotDescription>> {
        let pattern = match regex.filter(|r| !r.is_empty()) {
            Some(r) => Some(regex::Regex::new(&format!("^(?:{r})$")).map_err(|e| {
                ServerError::new(
                    ErrorCode::InvalidRequest,
                    format!("invalid snapshot name pattern '{r}': {e}"),
                )
            })?),
            None => None,
        };
        let all = snapshot_manifest::load_all(&*self.fs, &self.snapshot_layout())
            .map_err(io("reading the snapshots"))?;
        Ok(all
            .iter()
            .filter(|m| pattern.as_ref().is_none_or(|p| p.is_match(&m.name)))
            .map(describe)
            .collect())
    }

    /// Snapshot `name`'s name, table and time.
    pub fn describe_snapshot(&self, name: &str) -> Result<pb::SnapshotDescription> {
        Ok(describe(&self.load_snapshot(name)?))
    }

    fn load_snapshot(&self, name: &str) -> Result<SnapshotManifest> {
        SnapshotManifest::load(&*self.fs, &self.snapshot_layout(), name)
            .map_err(io("reading the snapshot"))?
            .ok_or_else(|| no_snapshot(name))
    }

    /// Snapshot `name`, refused when its TTL has passed (what a clone or
    /// restore reads).
    fn live_snapshot(&self, name: &str) -> Result<SnapshotManifest> {
        let m = self.load_snapshot(name)?;
        if m.expired_at(now_ms()) {
            return Err(ServerError::new(
                ErrorCode::SnapshotExpired,
                format!(
                    "TTL for snapshot '{name}' has already expired ({} s after it was taken); \
                     it cannot be cloned or restored",
                    m.ttl_secs
                ),
            ));
        }
        Ok(m)
    }

    /// Deletes every snapshot whose TTL has passed; returns their names.
    pub fn delete_expired_snapshots(&self) -> Result<Vec<String>> {
        let _ddl = self.ddl.lock();
        let layout = self.snapshot_layout();
        let now = now_ms();
        let mut deleted = Vec::new();
        for m in
            snapshot_manifest::load_all(&*self.fs, &layout).map_err(io("reading the snapshots"))?
        {
            if !m.expired_at(now) {
                continue;
            }
            SnapshotManifest::delete(&*self.fs, &layout, &m.name)
                .map_err(io("deleting an expired snapshot"))?;
            tracing::info!(snapshot = %m.name, ttl_secs = m.ttl_secs, "deleted an expired snapshot");
            deleted.push(m.name);
        }
        if !deleted.is_empty() {
            self.clean_archive();
        }
        Ok(deleted)
    }

    /// The expired-snapshot cleaner as a chore: runs when its interval has
    /// passed and `snapshot_cleanup_switch` is on; errors are logged (the
    /// next pass retries).
    pub fn snapshot_cleaner_chore(&self) {
        {
            let mut c = self.snapshot_ttl.lock();
            let due = c.interval_ms > 0
                && c.last.is_none_or(|at| {
                    at.elapsed() >= std::time::Duration::from_millis(c.interval_ms)
                });
            if !due {
                return;
            }
            c.last = Some(std::time::Instant::now());
        }
        if !self.switch_on(crate::master::Switch::SnapshotCleanup) {
            return;
        }
        if let Err(e) = self.delete_expired_snapshots() {
            tracing::warn!(error = %e, "expired-snapshot cleaner pass incomplete");
        }
    }

    /// Deletes snapshot `name`; its files that no other snapshot holds and
    /// no table lists are deleted.
    pub fn delete_snapshot(&self, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        self.load_snapshot(name)?;
        SnapshotManifest::delete(&*self.fs, &self.snapshot_layout(), name)
            .map_err(io("deleting the snapshot"))?;
        self.clean_archive();
        tracing::info!(snapshot = name, "deleted snapshot");
        Ok(())
    }

    /// Creates table `table` holding snapshot `name`'s rows, schema and
    /// region boundaries, independent of the snapshot's table.
    pub fn clone_snapshot(&self, name: &str, table: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let m = self.live_snapshot(name)?;
        if self.exists(table) {
            return Err(ServerError::new(
                ErrorCode::TableExists,
                format!("table '{table}' already exists; clone snapshot '{name}' to a new name"),
            ));
        }
        self.clone_into(&m, table)
    }

    fn clone_into(&self, m: &SnapshotManifest, table: &str) -> Result<()> {
        let mut descriptor = TableDescriptor::new(table, m.descriptor.families.clone())?;
        descriptor.durability = m.descriptor.durability;
        descriptor.values = m.descriptor.values.clone();
        let regions = self.materialize(m, &descriptor)?;
        let added = self.meta.update(|s| {
            if s.tables.contains_key(table) {
                return Err(ServerError::new(
                    ErrorCode::TableExists,
                    format!("table '{table}' already exists"),
                ));
            }
            let t = crate::meta::TableMeta {
                descriptor: descriptor.clone(),
                enabled: true,
                regions: regions.clone(),
                parents: Vec::new(),
                retired: Default::default(),
            };
            s.tables.insert(table.to_string(), t.clone());
            Ok(t)
        });
        let t = match added {
            Ok(t) => t,
            Err(e) => {
                self.discard(table, &regions);
                return Err(e);
            }
        };
        tracing::info!(snapshot = %m.name, table, "cloned snapshot");
        self.assign(&t)
    }

    /// Replaces the rows, schema and regions of the snapshot's table (which
    /// must be disabled) with the snapshot's; the table stays disabled. A
    /// table that no longer exists is created from the snapshot, as HBase
    /// does.
    pub fn restore_snapshot(&self, name: &str) -> Result<()> {
        let _ddl = self.ddl.lock();
        let m = self.live_snapshot(name)?;
        let table = m.table.clone();
        let Some(t) = self.meta.table(&table) else {
            return self.clone_into(&m, &table);
        };
        if t.enabled {
            return Err(ServerError::new(
                ErrorCode::TableNotDisabled,
                format!(
                    "table '{table}' is enabled; disable it before restoring snapshot '{name}'"
                ),
            ));
        }
        let regions = self.materialize(&m, &m.descriptor)?;
        let switched = self.meta.update(|s| {
            let entry = s
                .tables
                .get_mut(&table)
                .ok_or_else(|| ServerError::no_table(&table))?;
            entry.descriptor = m.descriptor.clone();
            entry.regions = regions.clone();
            entry.parents.clear();
            Ok(())
        });
        if let Err(e) = switched {
            self.discard(&table, &regions);
            return Err(e);
        }
        // The old regions' files go through the archive: other snapshots
        // (this one too, when it was taken of them) may hold them.
        self.remove_data(&table, &t.regions)?;
        self.remove_data(&table, &t.parent_infos())?;
        tracing::info!(snapshot = name, table, "restored snapshot");
        Ok(())
    }

    /// New regions of `descriptor`'s table with the snapshot's boundaries
    /// and links to its files, each with a manifest; not yet in the meta.
    fn materialize(
        &self,
        m: &SnapshotManifest,
        descriptor: &TableDescriptor,
    ) -> Result<Vec<RegionInfo>> {
        let table = descriptor.name.clone();
        // Held before any manifest links them, while the snapshot (kept by
        // the DDL lock) still holds them too.
        file_link::hold(&*self.fs, &self.snapshot_layout(), &table, m.files())
            .map_err(io("holding the snapshot's files for the new table"))?;
        let ids = self.meta.update(|s| {
            Ok((0..m.regions.len().max(1))
                .map(|_| s.allocate_region_id())
                .collect::<Vec<_>>())
        })?;
        let mut regions = Vec::with_capacity(ids.len());
        let built = (|| {
            let whole = [SnapshotRegion {
                info: RegionInfo::whole_table(0, &m.table),
                max_seq: 0,
                stores: BTreeMap::new(),
                references: BTreeMap::new(),
            }];
            let source = if m.regions.is_empty() {
                &whole[..]
            } else {
                &m.regions[..]
            };
            for (sr, id) in source.iter().zip(&ids) {
                let info = RegionInfo {
                    id: *id,
                    table: table.clone(),
                    start_key: sr.info.start_key.clone(),
                    end_key: sr.info.end_key.clone(),
                };
                regions.push(info.clone());
                self.materialize_region(m, sr, &info, descriptor)?;
            }
            Ok(())
        })();
        if let Err(e) = built {
            self.discard(&table, &regions);
            return Err(e);
        }
        Ok(regions)
    }

    fn materialize_region(
        &self,
        m: &SnapshotManifest,
        sr: &SnapshotRegion,
        info: &RegionInfo,
        descriptor: &TableDescriptor,
    ) -> Result<()> {
        let layout = self.snapshot_layout();
        let dir = self.data_dir.join(&info.table).join(info.dir_name());
        let mut manifest = Manifest {
            flushed_seq: sr.max_seq,
            max_seq: sr.max_seq,
            ..Manifest::default()
        };
        for family in &descriptor.families {
            let Some(names) = sr.stores.get(&family.name) else {
                continue;
            };
            // Every file is linked, not copied (`file_link`): a reference
            // bounded by the region's rows, to the snapshot's file where
            // it is. A daughter's reference to its parent's file stays
            // one, with its own bounds.
            let mut linked = Vec::with_capacity(names.len());
            for source in names {
                let (name, link) = match sr.references.get(source) {
                    Some(r) => (source.clone(), r.clone()),
                    None => (
                        reference::reference_name(&sr.info, source),
                        Reference {
                            file: snapshot_manifest::store_file_rel(&sr.info, &family.name, source),
                            start_row: sr.info.start_key.clone(),
                            end_row: sr.info.end_key.clone(),
                        },
                    ),
                };
                if archive::locate(&*self.fs, &layout, &link.file)
                    .map_err(io("locating a snapshot's file"))?
                    .is_none()
                {
                    return Err(ServerError::new(
                        ErrorCode::Io,
                        format!("snapshot '{}': its file {} is missing", m.name, link.file),
                    ));
                }
                manifest.references.insert(name.clone(), link);
                linked.push(name);
            }
            manifest.stores.insert(family.name.clone(), linked);
        }
        manifest
            .store(&*self.fs, &dir, 0)
            .map_err(io("writing a region manifest"))
    }

    /// Removes regions built for a clone or restore that did not happen
    /// (never listed in the meta, never in a snapshot).
    fn discard(&self, table: &str, regions: &[RegionInfo]) {
        for r in regions {
            let dir = self.data_dir.join(table).join(r.dir_name());
            if let Err(e) = self.fs.delete_all(&dir) {
                tracing::warn!(dir = %self.fs.display(&dir), error = %e, "could not remove an unused region");
            }
        }
    }

    /// Deletes archived files no snapshot holds; failures are logged (they
    /// leave files for the next run, never lose one).
    pub(crate) fn clean_archive(&self) {
        match archive::clean(&*self.fs, &self.snapshot_layout()) {
            Ok(r) if r.deleted > 0 => {
                tracing::info!(deleted = r.deleted, kept = r.kept, "cleaned the archive");
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "could not clean the archive"),
        }
    }

    /// At the start of an active master: no snapshot is being taken, so
    /// markers left by a crash are dropped (they held the archive), then
    /// the archive is cleaned.
    pub(crate) fn recover_snapshots(&self) {
        let (fs, layout) = (&*self.fs, self.snapshot_layout());
        match snapshot_manifest::in_progress(fs, &layout) {
            Ok(names) => {
                for name in names {
                    tracing::info!(snapshot = %name, "dropping an interrupted snapshot");
                    if let Err(e) = snapshot_manifest::end(fs, &layout, &name) {
                        tracing::warn!(snapshot = %name, error = %e, "could not drop the marker");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not list snapshots in progress"),
        }
        self.clean_archive();
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
