//! Bulk load calls of a [`Table`] (HBase's `PrepareBulkLoad`,
//! `BulkLoadHFile` and `CleanupBulkLoad`): ask a region server for a
//! staging directory on the cluster's storage root, hand a region the
//! sorted store files written there, remove the directory.
//!
//! The client never writes or reads store files here (the import tool
//! does, with the storage crate) and never retries a load that names the
//! wrong region: the caller regroups its files along the regions as they
//! are now ([`Table::region_locations`]) and loads again.

use crate::connection::RegionLocation;
use crate::error::{ClientError, Result};
use crate::table::Table;
use ferrobase_proto::ErrorCode;
use ferrobase_proto::pb;
use std::sync::Arc;

/// A staging directory a region server made for one bulk load.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagingDir {
    /// The directory, on the cluster's storage root: absolute on a local
    /// data directory, relative to the root otherwise.
    pub path: String,
    /// The storage root, for messages.
    pub root: String,
    /// The region server that made it.
    pub server: String,
    /// The region the request named (cleanup goes to it too).
    pub region_id: u64,
}

/// What a region reported after adopting files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BulkLoaded {
    /// The sequence id the loaded cells read with.
    pub seq_id: u64,
    pub entries: u64,
    pub bytes: u64,
}

impl Table {
    /// Every region of the table sorted by start key; `refresh` asks the
    /// master again instead of using the location cache.
    pub async fn region_locations(&self, refresh: bool) -> Result<Arc<Vec<RegionLocation>>> {
        if refresh {
            self.inner.invalidate(&self.name);
        }
        let mut regions = (*self.inner.regions(&self.name).await?).clone();
        regions.sort_by(|a, b| a.start_key.cmp(&b.start_key));
        Ok(Arc::new(regions))
    }

    /// A new staging directory from the server of the table's first region.
    pub async fn prepare_bulk_load(&self) -> Result<StagingDir> {
        let table = self.name.clone();
        self.inner
            .retry(&self.name, || {
                let (inner, table) = (self.inner.clone(), table.clone());
                async move {
                    let loc = inner.locate(&table, b"").await?;
                    let r = inner
                        .region_server(&loc.server)?
                        .prepare_bulk_load(pb::PrepareBulkLoadRequest {
                            region_id: loc.region_id,
                        })
                        .await?
                        .into_inner();
                    Ok(StagingDir {
                        path: r.staging_dir,
                        root: r.root,
                        server: loc.server,
                        region_id: loc.region_id,
                    })
                }
            })
            .await
    }

    /// Hands `region` the store files `files` (`(family, path)` inside a
    /// staging directory); the region adopts all of them or none. A
    /// busy server is retried; any other error (the region moved or split,
    /// a file crosses its boundary) is returned for the caller to regroup.
    pub async fn bulk_load(
        &self,
        region: &RegionLocation,
        files: &[(String, String)],
    ) -> Result<BulkLoaded> {
        let request = pb::BulkLoadRequest {
            region_id: region.region_id,
            files: files
                .iter()
                .map(|(family, path)| pb::BulkLoadFile {
                    family: family.clone(),
                    path: path.clone(),
                })
                .collect(),
        };
        let mut attempt = 0;
        loop {
            let sent = async {
                let r = self
                    .inner
                    .region_server(&region.server)?
                    .bulk_load(request.clone())
                    .await?
                    .into_inner();
                Ok::<_, ClientError>(BulkLoaded {
                    seq_id: r.seq_id,
                    entries: r.entries,
                    bytes: r.bytes,
                })
            }
            .await;
            match sent {
                Err(e)
                    if matches!(
                        e.code(),
                        Some(ErrorCode::ServerBusy | ErrorCode::RegionTooBusy)
                    ) && attempt < self.inner.settings.client_retries =>
                {
                    tokio::time::sleep(self.inner.backoff(attempt)).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Removes a staging directory and whatever is left in it.
    pub async fn cleanup_bulk_load(&self, staging: &StagingDir) -> Result<()> {
        self.inner
            .region_server(&staging.server)?
            .cleanup_bulk_load(pb::CleanupBulkLoadRequest {
                region_id: staging.region_id,
                staging_dir: staging.path.clone(),
            })
            .await?;
        Ok(())
    }
}
