//! The meta store: table descriptors, enabled state and region list of
//! every table, namespaces and permissions, persisted in one file under the data directory.
//!
//! Every change is written whole and atomically (the storage root's `put`:
//! temp file, fsync, rename, fsync the directory on a local root; one PUT
//! on S3), so a crash leaves the old or the new meta, never a mix. This module never opens regions; the master does.

use crate::error::{Result, ServerError};
use ferrobase_proto::ErrorCode;
use ferrobase_storage::RegionInfo;
use ferrobase_storage::fs::Storage;
use ferrobase_types::TableDescriptor;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// File name of the meta under the data directory.
pub const META_FILE: &str = "meta.json";

/// One table's entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TableMeta {
    pub descriptor: TableDescriptor,
    pub enabled: bool,
    /// Regions in row order.
    pub regions: Vec<RegionInfo>,
    /// Regions split or merged away whose files their children may still
    /// read by reference: the janitor (`master::janitor`) removes each one
    /// once no child refers to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<ParentRegion>,
    /// Regions split or merged away, by id, with when (Unix milliseconds),
    /// for the nonce grace period (longer than the janitor keeps them in
    /// `parents`): a dead server's WAL may still hold their edits, whose
    /// nonces the WAL split gives to the regions now holding the rows.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub retired: BTreeMap<u64, u64>,
}

impl TableMeta {
    /// Records `id` as split or merged away now, and forgets those retired
    /// longer ago than the nonce grace period.
    pub fn retire(&mut self, id: u64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let grace = u64::try_from(crate::nonces::GRACE_PERIOD.as_millis()).unwrap_or(u64::MAX);
        self.retired.retain(|_, at| now.saturating_sub(*at) < grace);
        self.retired.insert(id, now);
    }

    /// The region now holding `row`.
    pub fn region_of(&self, row: &[u8]) -> Option<&RegionInfo> {
        self.regions.iter().find(|r| r.contains_row(row))
    }

    /// The regions in `parents`.
    pub fn parent_infos(&self) -> Vec<RegionInfo> {
        self.parents.iter().map(|p| p.info.clone()).collect()
    }
}

/// A region split or merged away, and the regions made from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParentRegion {
    pub info: RegionInfo,
    /// Ids of the daughters (split) or of the merged region.
    pub children: Vec<u64>,
}

/// Everything the meta holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MetaState {
    pub next_region_id: u64,
    pub tables: BTreeMap<String, TableMeta>,
    /// Namespaces created by users, with their configuration; `default`
    /// and `hbase` always exist and are not listed here.
    #[serde(default)]
    pub namespaces: BTreeMap<String, BTreeMap<String, String>>,
    /// Permissions granted (HBase's `hbase:acl`), see [`crate::acl`].
    #[serde(default)]
    pub acl: crate::acl::AclState,
    /// `snapshot_cleanup_switch false`: expired snapshots are kept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub snapshot_cleanup_off: bool,
    /// `balance_switch false`: the periodic balancer does not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub balancer_off: bool,
    /// `catalogjanitor_switch false`: the janitor's chore does not run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub janitor_off: bool,
}

impl MetaState {
    /// A fresh region id.
    pub fn allocate_region_id(&mut self) -> u64 {
        self.next_region_id += 1;
        self.next_region_id
    }
}

/// The persisted meta.
pub struct MetaStore {
    fs: Arc<dyn Storage>,
    path: PathBuf,
    state: Mutex<MetaState>,
}

fn io_err(e: ferrobase_storage::StorageError) -> ServerError {
    ServerError::new(ErrorCode::Io, format!("meta: {e}"))
}

impl MetaStore {
    /// Loads the meta in `dir`, or starts an empty one.
    pub fn open(fs: Arc<dyn Storage>, dir: &Path) -> Result<MetaStore> {
        fs.create_dir_all(dir).map_err(io_err)?;
        let path = dir.join(META_FILE);
        let state = match fs.read(&path).map_err(io_err)? {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                ServerError::new(
                    ErrorCode::Corruption,
                    format!("meta {} does not parse: {e}", fs.display(&path)),
                )
            })?,
            None => MetaState::default(),
        };
        Ok(MetaStore {
            fs,
            path,
            state: Mutex::new(state),
        })
    }

    /// A copy of the current state.
    pub fn snapshot(&self) -> MetaState {
        self.state.lock().clone()
    }

    /// Reads part of the current state without copying the rest.
    pub fn read<R>(&self, f: impl FnOnce(&MetaState) -> R) -> R {
        f(&self.state.lock())
    }

    /// One table's entry.
    pub fn table(&self, name: &str) -> Option<TableMeta> {
        self.state.lock().tables.get(name).cloned()
    }

    /// Applies `change` to a copy, persists it, then publishes it; on any
    /// error the meta is unchanged.
    pub fn update<R>(&self, change: impl FnOnce(&mut MetaState) -> Result<R>) -> Result<R> {
        let mut st = self.state.lock();
        let mut next = st.clone();
        let r = change(&mut next)?;
        self.persist(&next)?;
        *st = next;
        Ok(r)
    }

    /// Replaces the meta file atomically (the storage's `put`).
    fn persist(&self, state: &MetaState) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(state)
            .map_err(|e| ServerError::new(ErrorCode::Internal, e.to_string()))?;
        self.fs.put(&self.path, &bytes).map_err(io_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::FamilyDescriptor;

    #[test]
    fn survives_reopen_and_failed_updates_change_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let m = MetaStore::open(
            Arc::new(ferrobase_storage::fs::LocalFs::as_given()),
            dir.path(),
        )
        .unwrap();
        m.update(|s| {
            let id = s.allocate_region_id();
            let d = TableDescriptor::new("t", vec![FamilyDescriptor::new("f").unwrap()]).unwrap();
            s.tables.insert(
                "t".into(),
                TableMeta {
                    descriptor: d,
                    enabled: true,
                    regions: vec![RegionInfo::whole_table(id, "t")],
                    parents: Vec::new(),
                    retired: BTreeMap::new(),
                },
            );
            Ok(())
        })
        .unwrap();
        let r: Result<()> = m.update(|s| {
            s.tables.clear();
            Err(ServerError::new(ErrorCode::Internal, "no"))
        });
        assert!(r.is_err());
        drop(m);
        let m = MetaStore::open(
            Arc::new(ferrobase_storage::fs::LocalFs::as_given()),
            dir.path(),
        )
        .unwrap();
        assert_eq!(m.table("t").unwrap().regions[0].id, 1);
    }
}
