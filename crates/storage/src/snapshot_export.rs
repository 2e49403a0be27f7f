//! Copying a snapshot to another storage root (HBase's `ExportSnapshot`):
//! its store files into the destination's archive, then its manifest, so
//! the destination's master can clone or restore it.
//!
//! This module reads the source root and writes the destination; it never
//! changes the source (a running server may keep serving it) and never
//! overwrites a snapshot the destination already has.
//!
//! ```text
//! source                                   destination
//! .hbase-snapshot/<name> ──(read)          .hbase-snapshot/.tmp/<name>   1. marker (the archive
//! data/<rel> or archive/<rel> ──copy──►    archive/<rel>                 2.  cleaner keeps files)
//!                                          .hbase-snapshot/<name>        3. manifest (atomic)
//!                                          marker removed                4.
//! ```
//!
//! A crash before step 3 leaves no snapshot at the destination; the files
//! copied so far are kept (the marker holds the archive) and skipped by a
//! second export, which takes the marker over (a file already there with
//! the right length is not copied again). A master starting on the
//! destination drops the marker and cleans the archive, so an export into
//! a root must not overlap a master's start there.

use crate::archive;
use crate::error::{Result, StorageError};
use crate::fs::Storage;
use crate::snapshot_manifest::{self, SnapshotLayout, SnapshotManifest};

/// What an export copied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExportReport {
    pub files: u64,
    /// Files already at the destination (an earlier, interrupted export).
    pub skipped: u64,
    pub bytes: u64,
}

/// Exports snapshot `name` from `src` to `dst`. `progress(done, total)` is
/// called with bytes as they are copied.
pub fn export(
    (src, src_layout): (&dyn Storage, &SnapshotLayout),
    (dst, dst_layout): (&dyn Storage, &SnapshotLayout),
    name: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExportReport> {
    let manifest = SnapshotManifest::load(src, src_layout, name)?.ok_or_else(|| {
        StorageError::InvalidRequest(format!("snapshot '{name}' does not exist in {}", src.url()))
    })?;
    if SnapshotManifest::load(dst, dst_layout, name)?.is_some() {
        return Err(StorageError::InvalidRequest(format!(
            "snapshot '{name}' already exists in {}",
            dst.url()
        )));
    }
    // Sizes first: the progress bar needs the total.
    let mut files = Vec::new();
    for rel in manifest.files() {
        let path = archive::locate(src, src_layout, &rel)?.ok_or_else(|| {
            StorageError::InvalidRequest(format!(
                "snapshot '{name}': its file {rel} is in neither {} nor {}",
                src.display(&src_layout.live_path(&rel)),
                src.display(&src_layout.archived_path(&rel))
            ))
        })?;
        let len = src.open(&path)?.len();
        files.push((rel, len));
    }
    let total: u64 = files.iter().map(|f| f.1).sum();
    // A marker already there is an export of this name that was killed
    // (a failed one removes its marker): this one resumes it. One export
    // per name at a time is the caller's to keep.
    if !snapshot_manifest::begin(dst, dst_layout, name)? {
        tracing::info!(snapshot = name, "resuming an interrupted export");
    }
    let copied = copy_all(src, src_layout, dst, dst_layout, &files, total, progress)
        .and_then(|report| manifest.store(dst, dst_layout).map(|()| report));
    // The marker goes after the manifest (or the failure): `archive`.
    let ended = snapshot_manifest::end(dst, dst_layout, name);
    let report = copied?;
    ended?;
    Ok(report)
}

fn copy_all(
    src: &dyn Storage,
    src_layout: &SnapshotLayout,
    dst: &dyn Storage,
    dst_layout: &SnapshotLayout,
    files: &[(String, u64)],
    total: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExportReport> {
    let mut report = ExportReport::default();
    let mut done = 0;
    for (rel, len) in files {
        let to = dst_layout.archived_path(rel);
        let present = dst.exists(&to)? && dst.open(&to)?.len() == *len;
        if present {
            report.skipped += 1;
            done += len;
            progress(done, total);
            continue;
        }
        let n = archive::copy_held_to(src, src_layout, rel, dst, &to, &mut |n| {
            done += n;
            progress(done, total);
        })?;
        report.files += 1;
        report.bytes += n;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::LocalFs;
    use crate::region::RegionInfo;
    use crate::snapshot_manifest::SnapshotRegion;
    use ferrobase_types::{FamilyDescriptor, TableDescriptor};
    use std::collections::BTreeMap;
    use std::path::Path;

    #[test]
    fn export_copies_files_then_the_manifest_and_resumes() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (src, dst) = (LocalFs::new(a.path()), LocalFs::new(b.path()));
        let layout = SnapshotLayout::for_data_dir(Path::new("data"));
        let info = RegionInfo::whole_table(3, "t");
        // One file live, one archived.
        src.put(Path::new("data/t/0000000000000003/f/1.sf"), b"one")
            .unwrap();
        src.put(Path::new("archive/t/0000000000000003/f/2.sf"), b"two!")
            .unwrap();
        let mut stores = BTreeMap::new();
        stores.insert("f".to_string(), vec!["1.sf".into(), "2.sf".into()]);
        let m = SnapshotManifest {
            name: "s".into(),
            table: "t".into(),
            created_ms: 5,
            ttl_secs: 0,
            descriptor: TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()])
                .unwrap(),
            regions: vec![SnapshotRegion {
                info,
                max_seq: 1,
                stores,
                references: Default::default(),
            }],
        };
        m.store(&src, &layout).unwrap();

        // A first export that copied 1.sf and was killed (its marker
        // left): resumed, 1.sf skipped.
        dst.put(Path::new("archive/t/0000000000000003/f/1.sf"), b"one")
            .unwrap();
        assert!(snapshot_manifest::begin(&dst, &layout, "s").unwrap());
        let mut seen = Vec::new();
        let r = export((&src, &layout), (&dst, &layout), "s", &mut |d, t| {
            seen.push((d, t))
        })
        .unwrap();
        assert_eq!(
            r,
            ExportReport {
                files: 1,
                skipped: 1,
                bytes: 4
            }
        );
        assert_eq!(seen.last(), Some(&(7, 7)));
        assert_eq!(
            SnapshotManifest::load(&dst, &layout, "s").unwrap(),
            Some(m.clone())
        );
        assert!(
            snapshot_manifest::in_progress(&dst, &layout)
                .unwrap()
                .is_empty()
        );
        // The destination's cleaner keeps what the exported snapshot holds.
        assert_eq!(archive::clean(&dst, &layout).unwrap().kept, 2);

        let again = export((&src, &layout), (&dst, &layout), "s", &mut |_, _| {});
        assert!(again.unwrap_err().to_string().contains("already exists"));
        let missing = export((&src, &layout), (&dst, &layout), "nope", &mut |_, _| {});
        assert!(missing.unwrap_err().to_string().contains("does not exist"));
    }
}
