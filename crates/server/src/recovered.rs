//! Recovered edits, the region server's half of failover: before a region
//! that was on a dead server serves, the edits the master split out of that
//! server's WAL (`<region>/recovered.edits/*.wal`) are applied again.
//!
//! They go through the region's normal write path with SYNC_WAL, each with
//! its original timestamps and cell types, so they land in this server's
//! WAL before the file is deleted: a crash at any point leaves them either
//! in the file or in this WAL (at worst applied twice, which changes
//! nothing: the same cells at the same timestamps). The region is flushed
//! after, so this WAL does not carry them long. This module never picks
//! which region to open: the master does.

use crate::error::Result;
use ferrobase_storage::Region;
use ferrobase_storage::wal::split;
use ferrobase_types::{Durability, RowMutation};

/// Rows applied per batch.
const BATCH: usize = 256;

/// Applies and removes the region's recovered edits; returns the nonces of
/// the client operations they carried (they stay in the edits, so this
/// server's WAL logs them again).
pub(crate) fn replay(region: &Region) -> Result<Vec<(u64, u64)>> {
    let fs = &**region.fs();
    let files = split::recovered_files(fs, region.dir())?;
    let mut applied = 0u64;
    let mut nonces = Vec::new();
    for file in &files {
        let mut batch: Vec<RowMutation> = Vec::with_capacity(BATCH);
        let mut result = Ok(());
        split::read_recovered(fs, file, &mut |edit| {
            // The cells keep the timestamps of their first write, not this
            // replay's clock.
            let edit = edit.into_resolved();
            let mut m = RowMutation::new(edit.row).with_durability(Durability::SyncWal);
            m.nonce = edit.nonce;
            nonces.extend(edit.nonce);
            for fam in edit.families {
                m.push_family(fam.family, fam.cells);
            }
            if m.is_empty() {
                return Ok(());
            }
            batch.push(m);
            applied += 1;
            if batch.len() >= BATCH {
                region.mutate_owned(std::mem::take(&mut batch))?;
            }
            Ok(())
        })?;
        if !batch.is_empty() {
            result = region.mutate_owned(batch);
        }
        result?;
    }
    if applied > 0 {
        region.flush(true)?;
    }
    for file in &files {
        split::remove_recovered(fs, file)?;
    }
    if !files.is_empty() {
        tracing::info!(region = %region.info().name(), edits = applied, files = files.len(), "replayed recovered edits");
    }
    Ok(nonces)
}
