//! The store file archive (HBase's `HFileArchiver` and the snapshot-aware
//! `HFileCleaner`): every store file a region, compaction or DDL call
//! drops goes through [`retire`], which deletes it unless a snapshot
//! holds it, and then moves it to `archive/` instead; [`clean`] deletes
//! archived files once no snapshot holds them.
//!
//! This module owns the decision "delete or archive" and the archive's
//! contents. It must never delete a file a complete snapshot names, nor
//! anything in the archive while a snapshot is being taken.
//!
//! ```text
//! data/<table>/<region>/<family>/<file>.sf      retire: held? ──no──► delete
//!                                                        └─yes─► archive/<table>/<region>/<family>/<file>.sf
//! archive/…/<file>.sf                            clean:  held by no snapshot, none in progress ─► delete
//! ```
//!
//! "Held" means: named by a complete snapshot or by a table's link hold (a
//! clone or restore still reads it, `crate::file_link`), or any snapshot is
//! being taken (its marker exists: it may be about to name the file). Why the
//! orders below are safe (every step reads the storage root, which is
//! strongly consistent on both backends):
//!
//! - A snapshot writes its marker, *then* reads the region manifests. A
//!   retiring caller publishes the manifest without the file, *then*
//!   loads [`Holds`]. If it saw no marker, the marker came later, so the
//!   snapshot read the new manifest and cannot name the file.
//! - [`clean`] lists the archive, *then* loads [`Holds`] (markers before
//!   manifests; a marker goes only after its manifest is written). A file
//!   listed was archived before the listing; a snapshot naming it either
//!   still has its marker then (nothing is deleted) or is complete and
//!   read.
//!
//! A snapshot references a file by its path under `data/`; [`locate`]
//! finds it there or in the archive.

use crate::error::Result;
use crate::fs::{self, Storage};
use crate::snapshot_manifest::{self, SnapshotLayout};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What the snapshots on a root hold, read once for a batch of retirements.
#[derive(Debug, Default)]
pub struct Holds {
    files: HashSet<String>,
    in_progress: bool,
}

impl Holds {
    /// Reads the in-progress markers, then every complete snapshot, then
    /// the link holds of tables cloned or restored from snapshots
    /// (`crate::file_link`).
    pub fn load(fs: &dyn Storage, layout: &SnapshotLayout) -> Result<Holds> {
        let in_progress = !snapshot_manifest::in_progress(fs, layout)?.is_empty();
        let mut files = HashSet::new();
        for m in snapshot_manifest::load_all(fs, layout)? {
            files.extend(m.files());
        }
        for h in crate::file_link::load_all(fs, layout)? {
            files.extend(h.files);
        }
        Ok(Holds { files, in_progress })
    }

    /// True when the file (relative to `data/`) must be kept.
    pub fn holds(&self, rel: &str) -> bool {
        self.in_progress || self.files.contains(rel)
    }

    /// True when a snapshot is being taken.
    pub fn in_progress(&self) -> bool {
        self.in_progress
    }
}

/// What [`retire`] did with a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retired {
    Deleted,
    Archived,
}

/// `path` relative to the data directory, `/`-separated; `None` when it is
/// not under it.
fn rel_to(layout: &SnapshotLayout, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(&layout.data_dir).ok()?;
    let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
    Some(parts.join("/"))
}

/// Drops the store file at `path` (under `data/`): moved to the archive
/// when `holds` says a snapshot may need it, deleted otherwise. A file
/// outside `data/` is deleted.
pub fn retire(
    fs: &dyn Storage,
    layout: &SnapshotLayout,
    holds: &Holds,
    path: &Path,
) -> Result<Retired> {
    match rel_to(layout, path) {
        Some(rel) if holds.holds(&rel) => {
            fs.rename(path, &layout.archived_path(&rel))?;
            tracing::debug!(file = %fs.display(path), "archived a store file a snapshot holds");
            Ok(Retired::Archived)
        }
        _ => {
            fs.delete(path)?;
            Ok(Retired::Deleted)
        }
    }
}

/// Drops a whole region (or family) directory under `data/`: every file in
/// it and in its subdirectories one level down goes through [`retire`],
/// then the directory goes. Used by drop, truncate, restore and split.
pub fn retire_dir(fs: &dyn Storage, layout: &SnapshotLayout, dir: &Path) -> Result<()> {
    let holds = Holds::load(fs, layout)?;
    if holds.in_progress || !holds.files.is_empty() {
        let is_store_file = |n: &str| n.ends_with(&format!(".{}", crate::region::STORE_FILE_EXT));
        for entry in fs.list(dir)? {
            let sub = dir.join(&entry);
            if is_store_file(&entry) {
                // A family directory given directly.
                retire(fs, layout, &holds, &sub)?;
            } else if !(entry.starts_with("MANIFEST")
                || entry.starts_with("EPOCH")
                || entry.ends_with(".tmp"))
            {
                // A family directory (or recovered.edits, which holds no
                // store file).
                for name in fs.list(&sub)? {
                    if is_store_file(&name) {
                        retire(fs, layout, &holds, &sub.join(name))?;
                    }
                }
            }
        }
    }
    fs.delete_all(dir)
}

/// Where a snapshot's file (relative to `data/`) is now: its region's
/// directory, or the archive. `None` when it is in neither.
pub fn locate(fs: &dyn Storage, layout: &SnapshotLayout, rel: &str) -> Result<Option<PathBuf>> {
    for path in [layout.live_path(rel), layout.archived_path(rel)] {
        if fs.exists(&path)? {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Copies a snapshot's file (relative to `data/`) to `to`, wherever it is.
/// A file archived while it was being read is read again from the archive.
pub fn copy_held(
    fs: &dyn Storage,
    layout: &SnapshotLayout,
    rel: &str,
    to: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<u64> {
    copy_held_to(fs, layout, rel, fs, to, progress)
}

/// [`copy_held`] onto another root (an export).
pub fn copy_held_to(
    fs: &dyn Storage,
    layout: &SnapshotLayout,
    rel: &str,
    dst: &dyn Storage,
    to: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<u64> {
    let live = layout.live_path(rel);
    match fs::copy_between(fs, &live, dst, to, progress) {
        Ok(n) => Ok(n),
        Err(first) => {
            let archived = layout.archived_path(rel);
            if !fs.exists(&archived)? {
                return Err(first);
            }
            fs::copy_between(fs, &archived, dst, to, progress)
        }
    }
}

/// What [`clean`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CleanReport {
    /// Archived files still held by a snapshot.
    pub kept: u64,
    /// Archived files deleted.
    pub deleted: u64,
    /// True when a snapshot was being taken, so nothing was deleted.
    pub skipped: bool,
}

/// Every archived file: `(path, name relative to data/)`. The archive is
/// `<table>/<region>/<family>/<file>`, four levels.
fn archived(fs: &dyn Storage, layout: &SnapshotLayout) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for table in fs.list(&layout.archive_dir)? {
        let tdir = layout.archive_dir.join(&table);
        for region in fs.list(&tdir)? {
            let rdir = tdir.join(&region);
            for family in fs.list(&rdir)? {
                let fdir = rdir.join(&family);
                for file in fs.list(&fdir)? {
                    let rel = format!("{table}/{region}/{family}/{file}");
                    out.push((fdir.join(&file), rel));
                }
            }
        }
    }
    Ok(out)
}

/// Deletes archived files no snapshot holds (nothing while a snapshot is
/// being taken), and directories it leaves empty.
pub fn clean(fs: &dyn Storage, layout: &SnapshotLayout) -> Result<CleanReport> {
    let files = archived(fs, layout)?;
    let holds = Holds::load(fs, layout)?;
    let mut report = CleanReport {
        skipped: holds.in_progress,
        ..CleanReport::default()
    };
    if holds.in_progress {
        report.kept = files.len() as u64;
        return Ok(report);
    }
    let mut tables = HashSet::new();
    for (path, rel) in files {
        if holds.files.contains(&rel) {
            report.kept += 1;
        } else {
            fs.delete(&path)?;
            report.deleted += 1;
        }
        if let Some(table) = rel.split('/').next() {
            tables.insert(table.to_string());
        }
    }
    // A table directory whose files all went is removed whole (an object
    // store has no directories; a local root keeps the empty ones
    // otherwise).
    let remaining = archived(fs, layout)?;
    for table in tables {
        let prefix = format!("{table}/");
        if !remaining.iter().any(|(_, rel)| rel.starts_with(&prefix)) {
            fs.delete_all(&layout.archive_dir.join(&table))?;
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::LocalFs;
    use crate::region::RegionInfo;
    use crate::snapshot_manifest::{SnapshotManifest, SnapshotRegion};
    use ferrobase_types::{FamilyDescriptor, TableDescriptor};
    use std::collections::BTreeMap;

    fn snapshot(name: &str, files: &[&str]) -> SnapshotManifest {
        let mut stores = BTreeMap::new();
        stores.insert(
            "f".to_string(),
            files.iter().map(|s| s.to_string()).collect(),
        );
        SnapshotManifest {
            name: name.into(),
            table: "t".into(),
            created_ms: 0,
            ttl_secs: 0,
            descriptor: TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()])
                .unwrap(),
            regions: vec![SnapshotRegion {
                info: RegionInfo::whole_table(1, "t"),
                max_seq: 0,
                stores,
                references: Default::default(),
            }],
        }
    }

    #[test]
    fn retire_archives_held_files_and_clean_frees_them_when_released() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFs::new(dir.path());
        let layout = SnapshotLayout::for_data_dir(Path::new("data"));
        let fdir = Path::new("data/t/0000000000000001/f");
        for n in ["1.sf", "2.sf", "3.sf"] {
            fs.put(&fdir.join(n), n.as_bytes()).unwrap();
        }
        snapshot("a", &["1.sf", "2.sf"])
            .store(&fs, &layout)
            .unwrap();
        snapshot("b", &["2.sf"]).store(&fs, &layout).unwrap();

        let holds = Holds::load(&fs, &layout).unwrap();
        assert_eq!(
            retire(&fs, &layout, &holds, &fdir.join("1.sf")).unwrap(),
            Retired::Archived
        );
        assert_eq!(
            retire(&fs, &layout, &holds, &fdir.join("3.sf")).unwrap(),
            Retired::Deleted
        );
        assert!(!fs.exists(&fdir.join("3.sf")).unwrap());
        let rel1 = "t/0000000000000001/f/1.sf";
        assert_eq!(
            locate(&fs, &layout, rel1).unwrap(),
            Some(layout.archived_path(rel1))
        );
        // Dropping the region keeps 2.sf (held) in the archive.
        retire_dir(&fs, &layout, Path::new("data/t/0000000000000001")).unwrap();
        assert!(
            fs.exists(&layout.archived_path("t/0000000000000001/f/2.sf"))
                .unwrap()
        );
        assert_eq!(
            clean(&fs, &layout).unwrap(),
            CleanReport {
                kept: 2,
                deleted: 0,
                skipped: false
            }
        );

        // Deleting "a" frees 1.sf; 2.sf stays for "b".
        SnapshotManifest::delete(&fs, &layout, "a").unwrap();
        assert_eq!(clean(&fs, &layout).unwrap().deleted, 1);
        assert_eq!(locate(&fs, &layout, rel1).unwrap(), None);
        let mut copied = 0;
        copy_held(
            &fs,
            &layout,
            "t/0000000000000001/f/2.sf",
            Path::new("x/2.sf"),
            &mut |n| copied += n,
        )
        .unwrap();
        assert_eq!(fs.read(Path::new("x/2.sf")).unwrap().unwrap(), b"2.sf");
        assert_eq!(copied, 4);

        // While a snapshot is being taken nothing archived is deleted.
        SnapshotManifest::delete(&fs, &layout, "b").unwrap();
        assert!(snapshot_manifest::begin(&fs, &layout, "c").unwrap());
        assert!(clean(&fs, &layout).unwrap().skipped);
        snapshot_manifest::end(&fs, &layout, "c").unwrap();
        assert_eq!(clean(&fs, &layout).unwrap().deleted, 1);
        assert!(!fs.exists(&layout.archive_dir.join("t")).unwrap());
    }

    #[test]
    fn without_snapshots_retire_deletes() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFs::new(dir.path());
        let layout = SnapshotLayout::for_data_dir(Path::new("data"));
        let p = Path::new("data/t/0000000000000001/f/1.sf");
        fs.put(p, b"x").unwrap();
        let holds = Holds::load(&fs, &layout).unwrap();
        assert_eq!(retire(&fs, &layout, &holds, p).unwrap(), Retired::Deleted);
        assert!(fs.list(&layout.archive_dir).unwrap().is_empty());
    }
}
