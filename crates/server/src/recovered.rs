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
use ferrobase_storage::wal::{LoggedNonce, split};
use ferrobase_types::{Durability, RowMutation};

/// Rows applied per batch.
const BATCH: usize = 256;

/// Applies and removes the region's recovered edits; returns the nonces of
/// the client operations they carried, with `known` (those the region's
/// own WAL replay found). Edits without cells carry only a nonce: an
/// operation already flushed, of a parent region, or handed over by a
/// clean close (`split::write_nonces`).
///
/// Before the files go, every nonce still within the grace period is
/// written back beside the region as one file of its own: this server's
/// WAL does not log an edit without cells, and a flush may soon retire the
/// segments holding the others, so if this server died before the
/// client's retry came, the next opener learns them from that file.
pub(crate) fn replay(region: &Region, known: Vec<LoggedNonce>) -> Result<Vec<LoggedNonce>> {
    let fs = &**region.fs();
    let files = split::recovered_files(fs, region.dir())?;
    let mut applied = 0u64;
    let mut nonces = known;
    for file in &files {
        let mut batch: Vec<RowMutation> = Vec::with_capacity(BATCH);
        let mut result = Ok(());
        split::read_recovered(fs, file, &mut |edit| {
            // The cells keep the timestamps of their first write, not this
            // replay's clock.
            nonces.extend(edit.logged_nonce());
            let edit = edit.into_resolved();
            let mut m = RowMutation::new(edit.row).with_durability(Durability::SyncWal);
            m.nonce = edit.nonce;
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
    nonces.retain(crate::nonces::within_grace);
    if !nonces.is_empty() {
        split::write_nonces(fs, region.dir(), region.info().id, &unique_name(), &nonces)?;
    }
    for file in &files {
        split::remove_recovered(fs, file)?;
    }
    if !files.is_empty() {
        tracing::info!(region = %region.info().name(), edits = applied, files = files.len(), "replayed recovered edits");
    }
    Ok(nonces)
}

/// A name no other nonces file of the region has: a file not yet replayed
/// (its opener failed) is never overwritten.
pub(crate) fn unique_name() -> String {
    static FILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "{}-{}-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis()),
        std::process::id(),
        FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}
