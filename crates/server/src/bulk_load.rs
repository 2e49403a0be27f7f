//! The region server's half of a bulk load (HBase's `PrepareBulkLoad`,
//! `BulkLoadHFile` and `CleanupBulkLoad` calls of `ClientService`).
//!
//! - prepare: a new, empty staging directory under `staging/` next to the
//!   data directory, on the same storage root, so adopting a file is a
//!   rename (a copy only on object stores);
//! - load: the files of one region, checked and adopted by the region in
//!   one manifest change (`ferrobase_storage::region` bulk load);
//! - cleanup: the staging directory removed with whatever is left in it.
//!
//! Only paths under the staging directory are accepted: a bulk load never
//! moves a file of the data directory, the WAL or a snapshot.

use crate::error::{Result, ServerError};
use crate::region_server::RegionServer;
use ferrobase_proto::ErrorCode;
use ferrobase_proto::pb;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The directory of bulk-load staging directories, beside `data/`.
pub const STAGING_DIR: &str = "staging";

static NEXT_STAGING: AtomicU64 = AtomicU64::new(0);

impl RegionServer {
    /// The root of every staging directory on this server's storage root.
    fn staging_root(&self) -> PathBuf {
        self.engine()
            .data_dir()
            .parent()
            .unwrap_or_else(|| Path::new(""))
            .join(STAGING_DIR)
    }

    /// `path` if it names something strictly inside the staging root,
    /// with no `..`; an `InvalidRequest` otherwise.
    fn staged(&self, path: &str) -> Result<PathBuf> {
        let p = PathBuf::from(path);
        let root = self.staging_root();
        let inside = p
            .strip_prefix(&root)
            .ok()
            .filter(|rest| !rest.as_os_str().is_empty())
            .is_some_and(|rest| rest.components().all(|c| matches!(c, Component::Normal(_))));
        if !inside {
            return Err(ServerError::new(
                ErrorCode::InvalidRequest,
                format!(
                    "bulk load path '{path}' is not inside the staging directory {}",
                    self.engine().fs().display(&root)
                ),
            ));
        }
        Ok(p)
    }

    /// A new staging directory for a bulk load into the table of
    /// `region_id` (a region online here).
    pub fn prepare_bulk_load(&self, region_id: u64) -> Result<pb::PrepareBulkLoadResponse> {
        let region = self.region(region_id)?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let name = format!(
            "{}-{nanos:x}-{}-{}",
            region.info().table.replace(':', "_"),
            std::process::id(),
            NEXT_STAGING.fetch_add(1, Ordering::Relaxed)
        );
        let dir = self.staging_root().join(name);
        let fs = self.engine().fs();
        fs.create_dir_all(&dir)?;
        Ok(pb::PrepareBulkLoadResponse {
            staging_dir: dir.to_string_lossy().into_owned(),
            root: fs.url(),
        })
    }

    /// Adopts the staged files of `req` into its region (one manifest
    /// change).
    pub fn bulk_load(&self, req: pb::BulkLoadRequest) -> Result<pb::BulkLoadResponse> {
        let region = self.region(req.region_id)?;
        let files = req
            .files
            .iter()
            .map(|f| Ok((f.family.clone(), self.staged(&f.path)?)))
            .collect::<Result<Vec<_>>>()?;
        let out = region.bulk_load(&files).map_err(|e| {
            let e = ServerError::from(e);
            ServerError::new(
                e.code,
                format!(
                    "bulk load into region {}: {}",
                    region.info().name(),
                    e.message
                ),
            )
        })?;
        tracing::info!(
            region = %region.info().name(),
            files = out.files.len(),
            entries = out.entries,
            seq_id = out.seq_id,
            "bulk loaded store files"
        );
        Ok(pb::BulkLoadResponse {
            seq_id: out.seq_id,
            entries: out.entries,
            bytes: out.bytes,
        })
    }

    /// Removes a staging directory [`prepare_bulk_load`](Self::prepare_bulk_load)
    /// made, and whatever is left in it.
    pub fn cleanup_bulk_load(&self, req: pb::CleanupBulkLoadRequest) -> Result<()> {
        let dir = self.staged(&req.staging_dir)?;
        self.engine().fs().delete_all(&dir)?;
        Ok(())
    }
}
