//! The janitor (HBase's `CatalogJanitor`): removes the files of regions
//! split or merged away once no region reads them by reference.
//!
//! A split or merge leaves its parents in the meta's `parents` list with
//! the ids of the regions made from them. Each pass, under the DDL lock:
//!
//! ```text
//! for each parent P of each table:
//!   any child still in the meta whose manifest names a reference into P's directory?
//!     yes ─► keep P (the child's first compaction rewrites its references)
//!     no  ─► retire P's directory (archive::retire_dir: files a snapshot holds go to
//!            archive/, the rest are deleted) ─► drop P from the meta's parents
//! ```
//!
//! A child no longer in the meta was itself split or merged, which needs
//! it free of references, so it reads nothing of P. A crash between the
//! two steps leaves P listed with its directory partly or wholly gone; the
//! next pass retires what is left and drops it. Files a snapshot holds are
//! kept in the archive, so a snapshot of a daughter taken while it still
//! held references restores from them.
//!
//! The same pass sweeps *unused* region directories: a directory under a
//! table in the meta that is neither one of its regions nor a parent. A
//! split or merge writes its new regions' directories before the meta
//! write that publishes them, so a crash between the two leaves them
//! behind. Every step that creates region directories (create, split,
//! merge, truncate, clone, restore) holds the DDL lock the janitor holds,
//! so no directory being made right now is mistaken for one left behind.
//!
//! Last, the pass shrinks each *link hold* (a table cloned or restored
//! from a snapshot reads the snapshot's files by reference,
//! `ferrobase_storage::file_link`) to the files the table's regions still
//! reference, and deletes holds nothing needs any more (the regions'
//! first compactions rewrote their links, or the table is gone), so the
//! archive cleaner can free those files.
//!
//! This module never deletes a file itself: `ferrobase_storage::archive`
//! decides, and it never touches a region the meta lists.

use super::*;
use crate::crash_point;
use ferrobase_storage::file_link;
use ferrobase_storage::region::manifest::Manifest;
use ferrobase_storage::region::reference;

impl Master {
    /// One janitor pass; returns how many parents' files it removed.
    pub fn run_janitor(&self) -> Result<usize> {
        let _ddl = self.ddl.lock();
        let meta = self.meta.snapshot();
        let mut removed = 0;
        for (name, t) in &meta.tables {
            for p in &t.parents {
                if self.still_referenced(t, p)? {
                    continue;
                }
                self.remove_data(name, std::slice::from_ref(&p.info))?;
                crash_point::reached("janitor-after-delete");
                self.meta.update(|m| {
                    if let Some(entry) = m.tables.get_mut(name) {
                        entry.parents.retain(|q| q.info.id != p.info.id);
                    }
                    Ok(())
                })?;
                tracing::info!(parent = %p.info.name(), "janitor removed a split or merge parent");
                removed += 1;
            }
            removed += self.sweep_unused(name, t)?;
        }
        self.region_changes[2].fetch_add(removed as u64, std::sync::atomic::Ordering::Relaxed);
        self.release_link_holds(&meta)?;
        Ok(removed)
    }

    /// Shrinks each link hold (`ferrobase_storage::file_link`) to the files
    /// its table's regions still read by reference, deleting holds no
    /// region needs (every link compacted away, or the table gone), then
    /// cleans the archive if any hold changed. Returns how many holds were
    /// deleted.
    pub fn release_link_holds(&self, meta: &crate::meta::MetaState) -> Result<usize> {
        let layout = self.snapshot_layout();
        let failed = |what: &str, e: ferrobase_storage::StorageError| {
            ServerError::new(ErrorCode::Io, format!("janitor: {what}: {e}"))
        };
        let holds = file_link::load_all(&*self.fs, &layout)
            .map_err(|e| failed("reading the link holds", e))?;
        let (mut changed, mut released) = (false, 0);
        for mut hold in holds {
            let mut still = std::collections::BTreeSet::new();
            if let Some(t) = meta.tables.get(&hold.table) {
                for r in t.regions.iter().chain(t.parents.iter().map(|p| &p.info)) {
                    let dir = self.data_dir.join(&r.table).join(r.dir_name());
                    let m = Manifest::load(&*self.fs, &dir)
                        .map_err(|e| failed(&format!("reading {}", r.name()), e))?;
                    for link in m.iter().flat_map(|m| m.references.values()) {
                        if hold.files.contains(&link.file) {
                            still.insert(link.file.clone());
                        }
                    }
                }
            }
            if still == hold.files {
                continue;
            }
            changed = true;
            if still.is_empty() {
                released += 1;
                tracing::info!(table = %hold.table, "released the files a clone or restore linked");
            }
            hold.files = still;
            hold.store(&*self.fs, &layout)
                .map_err(|e| failed(&format!("updating {}'s link hold", hold.table), e))?;
        }
        if changed {
            self.clean_archive();
        }
        Ok(released)
    }

    /// Retires the directories under `table` that name no region or parent
    /// of it in the meta (see the module docs); returns how many.
    fn sweep_unused(&self, table: &str, t: &TableMeta) -> Result<usize> {
        let known: std::collections::HashSet<String> = t
            .regions
            .iter()
            .chain(t.parents.iter().map(|p| &p.info))
            .map(RegionInfo::dir_name)
            .collect();
        let table_dir = self.data_dir.join(table);
        let entries = self.fs.list(&table_dir).map_err(|e| {
            ServerError::new(ErrorCode::Io, format!("janitor: listing {table}: {e}"))
        })?;
        let layout = self.snapshot_layout();
        let mut swept = 0;
        for entry in entries {
            // Region directories are 16 hex digits; leave anything else.
            let region_dir = entry.len() == 16 && entry.bytes().all(|b| b.is_ascii_hexdigit());
            if !region_dir || known.contains(&entry) {
                continue;
            }
            archive::retire_dir(&*self.fs, &layout, &table_dir.join(&entry)).map_err(|e| {
                ServerError::new(ErrorCode::Io, format!("janitor: removing {entry}: {e}"))
            })?;
            tracing::info!(%table, dir = %entry, "janitor removed an unused region directory");
            swept += 1;
        }
        Ok(swept)
    }

    /// True when a child of `p` in the meta still names a reference into
    /// `p`'s directory.
    fn still_referenced(&self, t: &TableMeta, p: &crate::meta::ParentRegion) -> Result<bool> {
        let parent_dir = p.info.dir_name();
        for child in t.regions.iter().filter(|r| p.children.contains(&r.id)) {
            let dir = self.data_dir.join(&child.table).join(child.dir_name());
            let m = Manifest::load(&*self.fs, &dir).map_err(|e| {
                ServerError::new(
                    ErrorCode::Io,
                    format!("janitor: reading {}: {e}", child.name()),
                )
            })?;
            if m.is_some_and(|m| reference::refers_to(&m, &parent_dir)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The janitor's pass as a chore, unless `catalogjanitor_switch` turned
    /// it off: errors are logged (a later pass retries; nothing is lost by
    /// waiting).
    pub fn janitor_chore(&self) {
        if !self.switch_on(Switch::CatalogJanitor) {
            return;
        }
        match self.run_janitor() {
            Ok(0) => {}
            Ok(n) => tracing::debug!(parents = n, "janitor pass"),
            Err(e) => tracing::warn!(error = %e, "janitor pass incomplete"),
        }
    }
}
