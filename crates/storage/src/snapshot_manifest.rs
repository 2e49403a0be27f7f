//! The snapshot manifest: what one table snapshot holds (HBase's
//! `SnapshotManifest`), and where snapshots live on a storage root.
//!
//! A snapshot is a list of store files by reference plus the table's
//! descriptor and region boundaries; its files are never copied. This
//! module owns the manifest's bytes, its name rules and the in-progress
//! markers; it never deletes or moves a store file (`crate::archive` does,
//! and consults the manifests here first).
//!
//! Layout, beside the data directory (`data/` under a root):
//!
//! ```text
//! .hbase-snapshot/<name>          a complete snapshot (replaced atomically, Storage::put)
//! .hbase-snapshot/.tmp/<name>     the marker of a snapshot being taken (put_new)
//! archive/<table>/<region>/<family>/<file>.sf
//!                                 store files a snapshot holds that no region lists any more
//! data/<table>/<region>/<family>/<file>.sf
//!                                 live store files (a snapshot names them by this path)
//! ```
//!
//! ```text
//! SNAPSHOT := "FBSNAPSHOT v1\n" JSON "\n" crc32c(JSON) as 8 hex digits "\n"
//! JSON     := {"name":"…", "table":"…", "created_ms":u64,
//!              "descriptor":{…table descriptor as in meta.json…},
//!              "regions":[{"info":{"id":u64,"table":"…","start_key":[…],"end_key":[…]},
//!                          "max_seq":u64,
//!                          "stores":{"<family>":["<file name>", … oldest first]}}]}
//! ```
//!
//! A file is named by the region that wrote it: `info.table`, `info.id`
//! and the family give its directory under `data/` (or `archive/` once the
//! region stopped listing it). `max_seq` is the highest sequence id in the
//! region's files, so a region rebuilt from the snapshot continues above it.
//!
//! The marker is created before any file is listed and removed only after
//! the manifest is written: a crash mid-snapshot leaves a marker and no
//! manifest (no snapshot), and while any marker exists nothing in the
//! archive is deleted.

use crate::error::{Result, StorageError};
use crate::fs::Storage;
use crate::region::RegionInfo;
use ferrobase_types::TableDescriptor;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const HEADER: &str = "FBSNAPSHOT v1\n";
/// The snapshot directory's name under the root (HBase's).
pub const SNAPSHOT_DIR: &str = ".hbase-snapshot";
/// The in-progress markers' directory inside [`SNAPSHOT_DIR`].
const IN_PROGRESS_DIR: &str = ".tmp";
/// The archive directory's name under the root (HBase's).
pub const ARCHIVE_DIR: &str = "archive";
/// Longest snapshot name accepted.
const MAX_NAME: usize = 255;

/// Where snapshots, the archive and the data live on one root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotLayout {
    /// `data/`: one directory per table.
    pub data_dir: PathBuf,
    /// `.hbase-snapshot/`.
    pub snapshot_dir: PathBuf,
    /// `archive/`: mirrors `data/`.
    pub archive_dir: PathBuf,
}

impl SnapshotLayout {
    /// The layout around a data directory: snapshots and the archive are
    /// its siblings.
    pub fn for_data_dir(data_dir: &Path) -> SnapshotLayout {
        let parent = data_dir.parent().unwrap_or(Path::new(""));
        SnapshotLayout {
            data_dir: data_dir.to_path_buf(),
            snapshot_dir: parent.join(SNAPSHOT_DIR),
            archive_dir: parent.join(ARCHIVE_DIR),
        }
    }

    fn manifest_path(&self, name: &str) -> PathBuf {
        self.snapshot_dir.join(name)
    }

    fn marker_path(&self, name: &str) -> PathBuf {
        self.snapshot_dir.join(IN_PROGRESS_DIR).join(name)
    }

    /// A live store file's path from its name relative to `data/`.
    pub fn live_path(&self, rel: &str) -> PathBuf {
        self.data_dir.join(rel)
    }

    /// An archived store file's path from its name relative to `data/`.
    pub fn archived_path(&self, rel: &str) -> PathBuf {
        self.archive_dir.join(rel)
    }
}

/// Checks a snapshot name by HBase's rules: letters, digits, `_`, `-` and
/// `.`, not starting with `.` (nor ending in `.tmp`, a local root's
/// temporary names).
pub fn validate_name(name: &str) -> Result<()> {
    let bad = |why: &str| {
        Err(StorageError::InvalidRequest(format!(
            "snapshot name '{name}' is invalid: {why}"
        )))
    };
    if name.is_empty() {
        return bad("it is empty");
    }
    if name.len() > MAX_NAME {
        return bad("it is longer than 255 bytes");
    }
    if name.starts_with('.') || name.ends_with(".tmp") {
        return bad("it may not start with '.' or end in '.tmp'");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return bad(&format!(
            "'{c}' is not allowed (letters, digits, '_', '-' and '.' are)"
        ));
    }
    Ok(())
}

/// One region as the snapshot holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotRegion {
    /// The region whose directory holds the files (its boundaries are the
    /// snapshot's).
    pub info: RegionInfo,
    /// Highest sequence id in its files.
    pub max_seq: u64,
    /// Family → file names, oldest first (as the region manifest lists
    /// them).
    pub stores: BTreeMap<String, Vec<String>>,
    /// The names in `stores` that are references to a parent region's
    /// file (a split's daughter not yet compacted), as its manifest has
    /// them: the snapshot holds the parent's file.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub references: BTreeMap<String, crate::region::reference::Reference>,
}

impl SnapshotRegion {
    /// `<table>/<region>/<family>/<file>` of each file, relative to `data/`
    /// (and to `archive/`); for a reference, the referenced file's.
    pub fn files(&self) -> impl Iterator<Item = (&str, String)> + '_ {
        self.stores.iter().flat_map(move |(family, names)| {
            names.iter().map(move |n| {
                let rel = match self.references.get(n) {
                    Some(r) => r.file.clone(),
                    None => store_file_rel(&self.info, family, n),
                };
                (family.as_str(), rel)
            })
        })
    }
}

/// A store file's name relative to `data/`: `<table>/<region>/<family>/<file>`.
pub fn store_file_rel(region: &RegionInfo, family: &str, file: &str) -> String {
    format!("{}/{}/{family}/{file}", region.table, region.dir_name())
}

/// See the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotManifest {
    pub name: String,
    pub table: String,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Seconds the snapshot lives after `created_ms` (HBase's snapshot
    /// TTL); 0: until deleted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ttl_secs: u64,
    pub descriptor: TableDescriptor,
    /// In row order.
    pub regions: Vec<SnapshotRegion>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl SnapshotManifest {
    /// True when the snapshot has a TTL and it has passed at `now_ms`
    /// (HBase's `SnapshotDescriptionUtils.isExpiredSnapshot`).
    pub fn expired_at(&self, now_ms: u64) -> bool {
        self.ttl_secs > 0
            && self
                .created_ms
                .saturating_add(self.ttl_secs.saturating_mul(1000))
                < now_ms
    }

    /// Every file the snapshot holds, relative to `data/`.
    pub fn files(&self) -> impl Iterator<Item = String> + '_ {
        self.regions
            .iter()
            .flat_map(|r| r.files().map(|(_, rel)| rel))
    }

    /// Writes the manifest atomically ([`Storage::put`]); a crash leaves
    /// no manifest or the whole one.
    pub fn store(&self, fs: &dyn Storage, layout: &SnapshotLayout) -> Result<()> {
        validate_name(&self.name)?;
        let out = crate::checksummed_json::encode(HEADER, self)
            .map_err(|e| StorageError::InvalidRequest(format!("snapshot encode: {e}")))?;
        fs.put(&layout.manifest_path(&self.name), &out)
    }

    /// The complete snapshot `name`; `None` when there is none.
    pub fn load(
        fs: &dyn Storage,
        layout: &SnapshotLayout,
        name: &str,
    ) -> Result<Option<SnapshotManifest>> {
        validate_name(name)?;
        let path = layout.manifest_path(name);
        let Some(bytes) = fs.read(&path)? else {
            return Ok(None);
        };
        decode(&bytes)
            .map(Some)
            .map_err(|(offset, what)| StorageError::corrupt(fs.display(&path), offset, what))
    }

    /// Removes the snapshot's manifest (its files stay until the archive
    /// cleaner finds nothing else holds them).
    pub fn delete(fs: &dyn Storage, layout: &SnapshotLayout, name: &str) -> Result<()> {
        validate_name(name)?;
        fs.delete(&layout.manifest_path(name))
    }
}

fn decode(bytes: &[u8]) -> std::result::Result<SnapshotManifest, (u64, String)> {
    crate::checksummed_json::decode(HEADER, "JSON", bytes)
}

/// Names of the complete snapshots, sorted.
pub fn list(fs: &dyn Storage, layout: &SnapshotLayout) -> Result<Vec<String>> {
    Ok(fs
        .list(&layout.snapshot_dir)?
        .into_iter()
        .filter(|n| validate_name(n).is_ok())
        .collect())
}

/// Every complete snapshot's manifest.
pub fn load_all(fs: &dyn Storage, layout: &SnapshotLayout) -> Result<Vec<SnapshotManifest>> {
    let mut all = Vec::new();
    for name in list(fs, layout)? {
        // Listed then gone: deleted meanwhile.
        if let Some(m) = SnapshotManifest::load(fs, layout, &name)? {
            all.push(m);
        }
    }
    Ok(all)
}

/// Marks snapshot `name` as being taken: `Ok(false)` when another one of
/// that name already is.
pub fn begin(fs: &dyn Storage, layout: &SnapshotLayout, name: &str) -> Result<bool> {
    validate_name(name)?;
    fs.put_new(&layout.marker_path(name), b"")
}

/// Removes the in-progress marker of `name` (after its manifest is written,
/// or when it failed).
pub fn end(fs: &dyn Storage, layout: &SnapshotLayout, name: &str) -> Result<()> {
    fs.delete(&layout.marker_path(name))
}

/// Snapshots being taken (their markers), sorted.
pub fn in_progress(fs: &dyn Storage, layout: &SnapshotLayout) -> Result<Vec<String>> {
    Ok(fs
        .list(&layout.snapshot_dir.join(IN_PROGRESS_DIR))?
        .into_iter()
        .filter(|n| validate_name(n).is_ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::LocalFs;
    use ferrobase_types::FamilyDescriptor;

    fn manifest(name: &str) -> SnapshotManifest {
        let info = RegionInfo::whole_table(7, "t");
        let mut stores = BTreeMap::new();
        stores.insert("f".to_string(), vec!["0000000000000001.sf".to_string()]);
        SnapshotManifest {
            name: name.into(),
            table: "t".into(),
            created_ms: 1,
            ttl_secs: 0,
            descriptor: TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()])
                .unwrap(),
            regions: vec![SnapshotRegion {
                info,
                max_seq: 9,
                stores,
                references: Default::default(),
            }],
        }
    }

    #[test]
    fn a_ttl_expires_after_its_seconds_and_is_kept_in_the_manifest() {
        let mut m = manifest("s");
        m.created_ms = 10_000;
        assert!(!m.expired_at(u64::MAX), "no TTL: never");
        m.ttl_secs = 5;
        assert!(!m.expired_at(15_000));
        assert!(m.expired_at(15_001));
        m.ttl_secs = u64::MAX;
        assert!(!m.expired_at(u64::MAX), "no overflow");
        // Written only when set; manifests without it read as "no TTL".
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFs::new(dir.path());
        let layout = SnapshotLayout::for_data_dir(Path::new("data"));
        m.ttl_secs = 5;
        m.store(&fs, &layout).unwrap();
        let back = SnapshotManifest::load(&fs, &layout, "s").unwrap().unwrap();
        assert_eq!(back.ttl_secs, 5);
        let plain = manifest("p");
        plain.store(&fs, &layout).unwrap();
        let raw = std::fs::read(dir.path().join(layout.manifest_path("p"))).unwrap();
        assert!(!String::from_utf8_lossy(&raw).contains("ttl_secs"));
        let back = SnapshotManifest::load(&fs, &layout, "p").unwrap().unwrap();
        assert_eq!(back.ttl_secs, 0);
    }

    #[test]
    fn round_trip_list_and_corruption_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFs::new(dir.path());
        let layout = SnapshotLayout::for_data_dir(Path::new("data"));
        assert_eq!(layout.snapshot_dir, Path::new(SNAPSHOT_DIR));
        let m = manifest("s1");
        assert!(begin(&fs, &layout, "s1").unwrap());
        assert!(!begin(&fs, &layout, "s1").unwrap(), "one marker per name");
        assert_eq!(in_progress(&fs, &layout).unwrap(), ["s1"]);
        assert!(
            list(&fs, &layout).unwrap().is_empty(),
            "a marker is no snapshot"
        );
        m.store(&fs, &layout).unwrap();
        end(&fs, &layout, "s1").unwrap();
        assert!(in_progress(&fs, &layout).unwrap().is_empty());
        assert_eq!(list(&fs, &layout).unwrap(), ["s1"]);
        assert_eq!(
            SnapshotManifest::load(&fs, &layout, "s1").unwrap(),
            Some(m.clone())
        );
        assert_eq!(
            m.files().collect::<Vec<_>>(),
            ["t/0000000000000007/f/0000000000000001.sf"]
        );

        let path = dir.path().join(SNAPSHOT_DIR).join("s1");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[20] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        let e = SnapshotManifest::load(&fs, &layout, "s1").unwrap_err();
        assert!(matches!(e, StorageError::Corrupt { .. }), "{e}");

        SnapshotManifest::delete(&fs, &layout, "s1").unwrap();
        assert!(list(&fs, &layout).unwrap().is_empty());
    }

    #[test]
    fn names_follow_hbase_rules() {
        for ok in ["s1", "a.b-c_d", "X"] {
            validate_name(ok).unwrap();
        }
        for (bad, says) in [
            ("", "empty"),
            (".x", "start with '.'"),
            ("x.tmp", "'.tmp'"),
            ("a/b", "'/' is not allowed"),
            ("a b", "' ' is not allowed"),
        ] {
            let e = validate_name(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
