//! The region manifest: which store files are live, published atomically,
//! and which process owns the region (its *epoch*).
//!
//! One small file per region and owner, `MANIFEST.<epoch>`, replaced whole
//! and atomically ([`Storage::put`]: write-temp, fsync, rename, fsync the
//! directory on a local root; one PUT on S3). A crash leaves either the
//! old or the new file set, never a mix; files not named by the manifest
//! are leftovers of an interrupted flush or compaction and are deleted at
//! open.
//!
//! ```text
//! MANIFEST := "FBMANIFEST v1\n" JSON "\n" crc32c(JSON) as 8 hex digits "\n"
//! JSON     := {"flushed_seq":u64, "max_seq":u64, "next_file_id":u64,
//!              "stores":{"<family>":["<file name>", … newest last]},
//!              ["references":{"<name>":{"file", "start_row", "end_row"}}]}
//! ```
//! A name in `stores` that `references` maps is a reference to a parent
//! region's file (`super::reference`), not a file of this directory.
//! One manifest per region rather than one per store: a flush publishes
//! every family's new file and the flushed sequence id in one rename, so
//! replay never has to reconcile stores that disagree.
//!
//! Epochs fence a previous owner that is paused rather than dead (its
//! regions reopened elsewhere, see `docs/failover.md`). Opening a region
//! [`claim`](Manifest::claim)s epoch E+1 over the highest E present:
//!
//! ```text
//! new owner                               old owner (epoch E, resumed)
//! 1 create EPOCH.E+1 (put_new)            publish MANIFEST.E (ignored by
//! 2 read the highest MANIFEST.*              readers: the highest epoch wins)
//! 3 write MANIFEST.E+1                    superseded(E)? yes → delete nothing
//! 4 remove lower MANIFEST.* / EPOCH.*
//! ```
//!
//! An old owner deletes compaction inputs only after publishing and then
//! seeing no higher epoch. If it saw none, the new owner's step 1 came
//! later, so its step 2 read the old owner's published manifest, which no
//! longer names those inputs. `MANIFEST` without an epoch (earlier
//! versions) is epoch 0.

use crate::error::{Result, StorageError};
use crate::fs::Storage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

const HEADER: &str = "FBMANIFEST v1\n";
/// The manifest's file name prefix inside a region directory (`MANIFEST`
/// alone: epoch 0).
pub const FILE_NAME: &str = "MANIFEST";
/// Marker of an epoch being claimed.
const EPOCH_PREFIX: &str = "EPOCH";

/// `MANIFEST.<epoch>` (20 digits, so names sort by epoch).
pub fn file_name(epoch: u64) -> String {
    if epoch == 0 {
        FILE_NAME.to_string()
    } else {
        format!("{FILE_NAME}.{epoch:020}")
    }
}

/// Epochs of the manifests and claim markers in `dir`: `(manifests, markers)`.
fn epochs(fs: &dyn Storage, dir: &Path) -> Result<(Vec<u64>, Vec<u64>)> {
    let (mut manifests, mut markers) = (Vec::new(), Vec::new());
    for name in fs.list(dir)? {
        let name = name.as_str();
        if name == FILE_NAME {
            manifests.push(0);
        } else if let Some(n) = name.strip_prefix("MANIFEST.").and_then(|n| n.parse().ok()) {
            manifests.push(n);
        } else if let Some(n) = name.strip_prefix("EPOCH.").and_then(|n| n.parse().ok()) {
            markers.push(n);
        }
    }
    Ok((manifests, markers))
}

fn marker_name(epoch: u64) -> String {
    format!("{EPOCH_PREFIX}.{epoch:020}")
}

/// The live state of a region's files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Every edit with a sequence id ≤ this is in a store file.
    pub flushed_seq: u64,
    /// Largest sequence id in any store file.
    pub max_seq: u64,
    pub next_file_id: u64,
    /// Family → file names, oldest first.
    pub stores: BTreeMap<String, Vec<String>>,
    /// The names in `stores` that are references to a parent region's
    /// files (`super::reference`), with what each one reads.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub references: BTreeMap<String, super::reference::Reference>,
}

impl Manifest {
    /// Reads the manifest of the highest epoch in `dir`; `Ok(None)` when
    /// the region is new.
    pub fn load(fs: &dyn Storage, dir: &Path) -> Result<Option<Manifest>> {
        let (manifests, _) = epochs(fs, dir)?;
        let Some(epoch) = manifests.into_iter().max() else {
            return Ok(None);
        };
        let path = dir.join(file_name(epoch));
        let Some(text) = fs.read(&path)? else {
            return Ok(None);
        };
        Self::decode(&text)
            .map(Some)
            .map_err(|(offset, what)| StorageError::corrupt(fs.display(&path), offset, what))
    }

    /// Takes ownership of the region in `dir` for a new epoch (module
    /// docs): returns the current manifest and the new epoch, whose
    /// manifest is already written.
    pub fn claim(fs: &dyn Storage, dir: &Path) -> Result<(Manifest, u64)> {
        let (manifests, markers) = epochs(fs, dir)?;
        let epoch = manifests.iter().chain(&markers).max().map_or(1, |e| e + 1);
        let marker = dir.join(marker_name(epoch));
        if !fs.put_new(&marker, b"")? {
            return Err(StorageError::Fenced(format!(
                "{}: another server claimed epoch {epoch} of this region at the same time",
                fs.display(&marker)
            )));
        }
        let manifest = Self::load(fs, dir)?.unwrap_or_default();
        manifest.store(fs, dir, epoch)?;
        let (manifests, markers) = epochs(fs, dir)?;
        // Best effort: a leftover lower epoch is ignored by readers.
        for e in manifests.into_iter().filter(|e| *e < epoch) {
            let _ = fs.delete(&dir.join(file_name(e)));
        }
        for e in markers.into_iter().filter(|e| *e <= epoch) {
            let _ = fs.delete(&dir.join(marker_name(e)));
        }
        Ok((manifest, epoch))
    }

    /// True when an owner with a higher epoch than `epoch` has claimed the
    /// region in `dir` (this owner must delete nothing more there).
    pub fn superseded(fs: &dyn Storage, dir: &Path, epoch: u64) -> Result<bool> {
        let (manifests, markers) = epochs(fs, dir)?;
        Ok(manifests.iter().chain(&markers).any(|e| *e > epoch))
    }

    fn decode(text: &[u8]) -> std::result::Result<Manifest, (u64, String)> {
        crate::checksummed_json::decode(HEADER, "manifest JSON", text)
    }

    /// Atomically replaces `dir/MANIFEST.<epoch>` with this manifest.
    pub fn store(&self, fs: &dyn Storage, dir: &Path, epoch: u64) -> Result<()> {
        let out = crate::checksummed_json::encode(HEADER, self)
            .map_err(|e| StorageError::InvalidRequest(format!("manifest encode: {e}")))?;
        fs.put(&dir.join(file_name(epoch)), &out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::LocalFs;
    use std::fs;

    #[test]
    fn round_trip_and_corruption_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let l = &LocalFs::as_given();
        assert_eq!(Manifest::load(l, dir.path()).unwrap(), None);
        let mut m = Manifest {
            flushed_seq: 42,
            max_seq: 50,
            next_file_id: 3,
            ..Manifest::default()
        };
        m.stores
            .insert("f".into(), vec!["0000000000000001.sf".into()]);
        m.store(l, dir.path(), 0).unwrap();
        assert_eq!(Manifest::load(l, dir.path()).unwrap(), Some(m));

        let path = dir.path().join(FILE_NAME);
        let mut bytes = fs::read(&path).unwrap();
        for i in 0..bytes.len() {
            bytes[i] ^= 0x01;
            fs::write(&path, &bytes).unwrap();
            match Manifest::load(l, dir.path()) {
                Err(StorageError::Corrupt { path: p, .. }) => assert!(p.ends_with(FILE_NAME)),
                // A flip inside the hex checksum's case or the final newline can
                // leave an equivalent file; anything else must be an error.
                Ok(Some(x)) => assert_eq!(x.flushed_seq, 42),
                other => panic!("byte {i}: {other:?}"),
            }
            bytes[i] ^= 0x01;
        }
    }

    #[test]
    fn a_newer_owner_wins_and_fences_the_older_one() {
        let dir = tempfile::tempdir().unwrap();
        let l = &LocalFs::as_given();
        let d = dir.path();
        // An earlier version's region: `MANIFEST` is epoch 0.
        let mut m = Manifest::default();
        m.stores
            .insert("f".into(), vec!["1.sf".into(), "2.sf".into()]);
        m.store(l, d, 0).unwrap();
        let (got, a) = Manifest::claim(l, d).unwrap();
        assert_eq!((got.clone(), a), (m.clone(), 1));
        assert!(!d.join(FILE_NAME).exists(), "lower epochs are removed");
        assert!(!Manifest::superseded(l, d, a).unwrap());

        // B takes over while A is paused.
        let (seen_by_b, b) = Manifest::claim(l, d).unwrap();
        assert_eq!(b, 2);
        assert_eq!(seen_by_b, m);
        assert!(Manifest::superseded(l, d, a).unwrap());
        assert!(!Manifest::superseded(l, d, b).unwrap());

        // A resumes and publishes a compaction: readers still see B's.
        let mut late = m.clone();
        late.stores.insert("f".into(), vec!["3.sf".into()]);
        late.store(l, d, a).unwrap();
        assert_eq!(Manifest::load(l, d).unwrap(), Some(m));

        // The next owner starts above every epoch present.
        let (_, c) = Manifest::claim(l, d).unwrap();
        assert_eq!(c, 3);
        assert!(Manifest::superseded(l, d, b).unwrap());
    }
}
