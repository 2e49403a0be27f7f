//! References (HBase's `Reference` files): how a split's daughters and a
//! merge's merged region read their parents' store files without copying
//! them.
//!
//! A reference is an entry of the child region's manifest, not a file: it
//! names a parent's store file (relative to `data/`) and the rows of it
//! the child serves. The child's manifest is written whole and atomically
//! before the meta names the child, so a child's file set (references
//! included) always changes in one step, and a crash leaves either no
//! child manifest or a complete one.
//!
//! ```text
//! MANIFEST JSON (region/manifest.rs) gains one optional member:
//!   "stores":     {"f": ["0000000000000003.00000000000000a1.ref", "0000000000000007.sf"]}
//!   "references": {"0000000000000003.00000000000000a1.ref":
//!                    {"file": "t/00000000000000a1/f/0000000000000003.sf",
//!                     "start_row": [98],          bytes as numbers, as in meta.json;
//!                     "end_row": []}}             empty: open (here: from "b" to the end)
//! name := <parent file name without ".sf"> "." <parent region dir> ".ref"
//! ```
//!
//! A split writes, per family and per parent file, one reference into
//! each daughter: the bottom one bounded by `[parent start, split row)`,
//! the top one by `[split row, parent end)` (the daughters' ranges). A
//! merge writes one reference per file of each parent, bounded by that
//! parent's range. The child serves them through half readers
//! (`crate::storefile::open_reference`), compacts them into files of its
//! own at its first compaction (queued as soon as it opens), and never
//! deletes a referenced file: the master's janitor removes a parent's
//! directory once no child's manifest names it (and the archive keeps what
//! snapshots hold). A region holding references is neither split nor
//! merged again until that compaction, so a reference always names a
//! real file.
//!
//! A table cloned or restored from a snapshot uses the same entries as
//! *links* to the snapshot's files, which may live in another table's
//! directory or in the archive; its link hold keeps them
//! (`crate::file_link`, which also finds and follows them).
//!
//! This module never deletes anything.

use super::info::RegionInfo;
use super::manifest::Manifest;
use crate::error::{Result, StorageError};
use crate::fs::Storage;
use crate::storefile::RowBounds;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The extension of a reference's name in a manifest.
pub const REFERENCE_EXT: &str = "ref";

/// One reference: rows `[start_row, end_row)` of `file` (empty: open).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The referenced store file, `<table>/<region>/<family>/<file>`
    /// relative to `data/`.
    pub file: String,
    pub start_row: Vec<u8>,
    pub end_row: Vec<u8>,
}

impl Reference {
    /// The row bounds a half reader serves.
    pub fn bounds(&self) -> RowBounds {
        RowBounds {
            start: self.start_row.clone(),
            end: self.end_row.clone(),
        }
    }

    /// The region directory name (16 hex digits) holding the file.
    pub fn region_dir(&self) -> Option<&str> {
        self.file.split('/').nth(1)
    }
}

/// The manifest name of a reference to `parent`'s file `file`.
pub fn reference_name(parent: &RegionInfo, file: &str) -> String {
    let stem = file
        .strip_suffix(&format!(".{}", super::STORE_FILE_EXT))
        .unwrap_or(file);
    format!("{stem}.{}.{REFERENCE_EXT}", parent.dir_name())
}

/// The rows both ranges hold (empty bounds are open).
fn intersect(a: &RegionInfo, b: &RegionInfo) -> (Vec<u8>, Vec<u8>) {
    let start = a.start_key.clone().max(b.start_key.clone());
    let end = match (a.end_key.is_empty(), b.end_key.is_empty()) {
        (true, _) => b.end_key.clone(),
        (false, true) => a.end_key.clone(),
        (false, false) => a.end_key.clone().min(b.end_key.clone()),
    };
    (start, end)
}

/// The manifest of `child`, which serves its `parents`' files (each given
/// with its final manifest) by reference: per family, the parents' files
/// oldest first, each bounded by the rows parent and child share. Its
/// sequence ids start above every parent's.
pub fn child_manifest(parents: &[(RegionInfo, Manifest)], child: &RegionInfo) -> Result<Manifest> {
    let mut m = Manifest::default();
    for (parent, pm) in parents {
        if !pm.references.is_empty() {
            return Err(StorageError::InvalidRequest(format!(
                "region {} still holds references to its own parents' files; it can split or \
                 merge after its next compaction",
                parent.name()
            )));
        }
        m.max_seq = m.max_seq.max(pm.max_seq).max(pm.flushed_seq);
        let (start_row, end_row) = intersect(parent, child);
        for (family, files) in &pm.stores {
            let list = m.stores.entry(family.clone()).or_default();
            for file in files {
                let name = reference_name(parent, file);
                m.references.insert(
                    name.clone(),
                    Reference {
                        file: format!("{}/{}/{family}/{file}", parent.table, parent.dir_name()),
                        start_row: start_row.clone(),
                        end_row: end_row.clone(),
                    },
                );
                list.push(name);
            }
        }
    }
    m.flushed_seq = m.max_seq;
    Ok(m)
}

/// Writes `child`'s directory under `data_dir`: its manifest of
/// references to `parents`' files ([`child_manifest`]), in one atomic
/// write. The child's first owner claims the next epoch over it.
pub fn write_child(
    fs: &dyn Storage,
    data_dir: &Path,
    parents: &[(RegionInfo, Manifest)],
    child: &RegionInfo,
) -> Result<()> {
    let m = child_manifest(parents, child)?;
    let dir = data_dir.join(&child.table).join(child.dir_name());
    fs.create_dir_all(&dir)?;
    for family in m.stores.keys() {
        fs.create_dir_all(&dir.join(family))?;
    }
    m.store(fs, &dir, 1)
}

/// True when `m` holds a reference to a file of the region directory
/// `region_dir` (16 hex digits).
pub fn refers_to(m: &Manifest, region_dir: &str) -> bool {
    m.references
        .values()
        .any(|r| r.region_dir() == Some(region_dir))
}

/// The references of `m` listed in its stores, by name.
pub fn listed(m: &Manifest) -> BTreeMap<&str, &Reference> {
    m.stores
        .values()
        .flatten()
        .filter_map(|n| m.references.get(n).map(|r| (n.as_str(), r)))
        .collect()
}
