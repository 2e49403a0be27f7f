//! Half-file readers (HBase's `HalfStoreFileReader`): a reader over the
//! rows `[start, end)` of another region's store file, which is how a
//! daughter of a split (or a merged region) serves its parent's files
//! without copying them (`crate::region::reference`).
//!
//! The reader is an ordinary [`StoreFileReader`] restricted to its bounds:
//! its scanner seeks no lower than the first row and ends at the end row;
//! the Bloom filter answers "absent" outside the bounds and the parent
//! file's answer inside them; its file info reports the half's own first
//! and last keys (read from at most two blocks at open), and entry count
//! and size estimated from the share of blocks the half spans, so key
//! range checks, `keep_file` and compaction selection treat the half as a
//! file of its own. The block cache keys blocks by reader, so a half's
//! cached blocks are its own.
//!
//! This module never writes and never deletes a file.

use super::reader::{RowBounds, StoreFileReader};
use crate::cache::BlockCache;
use crate::error::{Result, StorageError};
use crate::fs::{RandomRead, Storage};
use crate::iter::CellIterator;
use ferrobase_types::key;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Opens the file `at` restricted to `bounds`, listed in its region's
/// manifest as `name`.
pub fn open_reference(
    fs: &dyn Storage,
    at: &Path,
    name: &str,
    bounds: RowBounds,
    cache: Option<Arc<BlockCache>>,
) -> Result<Arc<StoreFileReader>> {
    restrict(StoreFileReader::open_whole(fs, at, cache)?, name, bounds)
}

/// [`open_reference`] of a file already opened (a linked file,
/// `crate::file_link::open`), found at `at`.
pub fn open_reference_file(
    file: Arc<dyn RandomRead>,
    at: &Path,
    shown: PathBuf,
    name: &str,
    bounds: RowBounds,
    cache: Option<Arc<BlockCache>>,
) -> Result<Arc<StoreFileReader>> {
    restrict(
        StoreFileReader::from_file(file, at, shown, cache)?,
        name,
        bounds,
    )
}

fn restrict(whole: StoreFileReader, name: &str, bounds: RowBounds) -> Result<Arc<StoreFileReader>> {
    let whole = Arc::new(whole);
    let (info, size) = half_stats(&whole, &bounds)?;
    let whole = Arc::try_unwrap(whole).map_err(|w| {
        StorageError::InvalidRequest(format!(
            "{}: reader still shared while opening a reference",
            w.path().display()
        ))
    })?;
    Ok(Arc::new(whole.restrict(
        name.to_string(),
        bounds,
        info,
        size,
    )))
}

/// The half's file info (first and last keys, estimated entries) and
/// estimated size.
fn half_stats(whole: &Arc<StoreFileReader>, bounds: &RowBounds) -> Result<(super::FileInfo, u64)> {
    let mut info = whole.info().clone();
    let empty = |mut info: super::FileInfo| {
        info.entries = 0;
        info.first_key.clear();
        info.last_key.clear();
        info.blocks = 0;
        (info, 0)
    };
    if info.entries == 0 {
        return Ok(empty(info));
    }
    // First key: the first entry at or after the start row.
    let mut s = whole.scanner(false);
    if bounds.start.is_empty() {
        s.seek_to_first()?;
    } else {
        s.seek(&key::first_on_row(&bounds.start))?;
    }
    let first = match s.valid() {
        true if key::row_of(s.key()).is_some_and(|r| bounds.contains(r)) => s.key().to_vec(),
        _ => return Ok(empty(info)),
    };
    // Last key: the last entry before the end row.
    let index = whole.index();
    let last = if bounds.end.is_empty() {
        info.last_key.clone()
    } else {
        let end_key = key::first_on_row(&bounds.end);
        match index.find(&end_key) {
            None => info.last_key.clone(),
            Some(b) => {
                let mut last = (b > 0).then(|| index.last_key(b - 1).to_vec());
                s.seek(index.first_key(b))?;
                while s.valid() && key::compare(s.key(), &end_key) == std::cmp::Ordering::Less {
                    last = Some(s.key().to_vec());
                    s.next()?;
                }
                match last {
                    Some(l) => l,
                    None => return Ok(empty(info)),
                }
            }
        }
    };
    if key::compare(&last, &first) == std::cmp::Ordering::Less {
        return Ok(empty(info));
    }
    // Entries and bytes: the whole file's, scaled by the blocks spanned.
    let blocks = index.len().max(1) as u64;
    let from = index.find(&first).unwrap_or(0) as u64;
    let to = index.find(&last).map_or(blocks - 1, |i| i as u64);
    let spanned = (to.saturating_sub(from) + 1).min(blocks);
    info.entries = (info.entries * spanned / blocks).max(1);
    info.blocks = spanned;
    info.first_key = first;
    info.last_key = last;
    let size = (whole.size() * spanned / blocks).max(1);
    Ok((info, size))
}

/// The row a split of `reader`'s file would start its upper half with:
/// the first row of the middle data block (HBase's midkey, from the block
/// index alone). `None` for a file of fewer than two blocks.
pub fn midkey_row(reader: &StoreFileReader) -> Option<Vec<u8>> {
    let index = reader.index();
    if index.len() < 2 {
        return None;
    }
    key::row_of(index.first_key(index.len() / 2)).map(<[u8]>::to_vec)
}
