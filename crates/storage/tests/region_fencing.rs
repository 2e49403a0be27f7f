//! A region's previous owner, paused while another server opened the
//! region (a higher manifest epoch), must not delete what the new owner's
//! manifest names: its compaction keeps its inputs and reports `Fenced`,
//! and its late manifest is ignored by readers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use ferrobase_storage::fs::LocalFs;
use ferrobase_storage::region::manifest::Manifest;
use ferrobase_storage::{Engine, RegionInfo, StorageError};
use ferrobase_types::{FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use std::path::{Path, PathBuf};

/// The directory holding the region's manifest.
fn region_dir(root: &Path) -> PathBuf {
    fn walk(d: &Path) -> Option<PathBuf> {
        for e in std::fs::read_dir(d).ok()? {
            let p = e.ok()?.path();
            if p.file_name()?.to_str()?.starts_with("MANIFEST") {
                return p.parent().map(Path::to_path_buf);
            }
            if p.is_dir()
                && let Some(found) = walk(&p)
            {
                return Some(found);
            }
        }
        None
    }
    walk(root).expect("a region directory with a manifest")
}

#[test]
fn a_superseded_owner_keeps_compaction_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let table = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
    let settings = Settings {
        memory_size: 256 << 20,
        // No background minor compaction: three flushes must stay three
        // files until the test's own compaction (with the default of 3, one
        // could merge them first on a busy machine, and did once in CI).
        compaction_min: 100,
        ..Settings::default()
    };
    let engine = Engine::open(dir.path(), settings).unwrap();
    let r = engine
        .open_region(&table, RegionInfo::whole_table(1, "t"))
        .unwrap();
    for i in 0..3 {
        r.mutate(RowMutation::new(format!("row{i}")).put("f", "q", "v"))
            .unwrap();
        r.flush(true).unwrap();
    }
    let rdir = region_dir(dir.path());
    let before = Manifest::load(&LocalFs::as_given(), &rdir)
        .unwrap()
        .unwrap();
    let files = before.stores.get("f").cloned().unwrap_or_default();
    assert_eq!(files.len(), 3);

    // Another server opens the region while this one is paused.
    let (seen, epoch) = Manifest::claim(&LocalFs::as_given(), &rdir).unwrap();
    assert_eq!(seen, before);
    assert!(epoch >= 2);

    let e = r
        .compact(true)
        .expect_err("a superseded owner must not finish");
    assert!(matches!(e, StorageError::Fenced(_)), "{e}");
    // The new owner's manifest is the one readers see, and every file it
    // names is still there.
    assert_eq!(
        Manifest::load(&LocalFs::as_given(), &rdir).unwrap(),
        Some(before)
    );
    for f in &files {
        assert!(rdir.join("f").join(f).exists(), "{f} was deleted");
    }
}
