//! Replay: hand a region its edits above a sequence id, in file order.
//!
//! Buffered bytes are written first, then the writer's position is read
//! under its lock, so replay reads only complete, written records even
//! while appends continue. Segments without edits of the region above
//! `after_seq` (per the tracker) are not opened at all. Every record's CRC
//! is checked again; a failure is [`StorageError::Corrupt`], never skipped.
//! Replay never writes, truncates or deletes.

use super::WalEdit;
use super::reader::{Next, Opened, SegmentReader};
use super::record;
use super::tracker::Tracker;
use super::writer::Writer;
use crate::error::{Result, StorageError};
use crate::fs::Storage;
use bytes::Bytes;
use std::path::PathBuf;

pub(crate) fn replay(
    fs: &dyn Storage,
    writer: &Writer,
    tracker: &Tracker,
    region_id: u64,
    after_seq: u64,
    f: &mut dyn FnMut(WalEdit) -> Result<()>,
) -> Result<u64> {
    writer.flush(false)?;
    let segments = writer.with_position(|id, len| tracker.to_read(region_id, after_seq, (id, len)));
    let mut delivered = 0;
    for seg in segments {
        let shown = PathBuf::from(fs.display(&seg.path));
        let path = &shown;
        let file = match fs.open_log(&seg.path) {
            Ok(file) => file,
            // Deleted as obsolete since we listed it: every edit in it is
            // flushed, so there is nothing to replay.
            Err(StorageError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound && !tracker.contains(seg.id) =>
            {
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut reader = match SegmentReader::open(path, file, seg.limit)? {
            Opened::Reader(r) => r,
            Opened::Short(len) => {
                return Err(StorageError::corrupt(
                    path,
                    0,
                    format!("segment of {len} bytes is shorter than its header"),
                ));
            }
            Opened::BadHeader(why) => return Err(StorageError::corrupt(path, 0, why)),
        };
        loop {
            let offset = match reader.next()? {
                Next::End => break,
                Next::Bad { offset, reason } => {
                    return Err(StorageError::corrupt(path, offset, reason));
                }
                Next::Record { offset } => offset,
            };
            let version = reader.version();
            let payload = reader.payload();
            let not_an_edit = || {
                StorageError::corrupt(
                    path,
                    offset,
                    "record passes its CRC but is not a valid edit",
                )
            };
            let (region, seq) = record::peek_region_seq(payload).ok_or_else(not_an_edit)?;
            if region != region_id || seq <= after_seq {
                continue;
            }
            // One copy per delivered edit: its cells share it, and it pins
            // only this edit's bytes, not the segment's.
            let edit = record::decode(&Bytes::copy_from_slice(payload), version)
                .ok_or_else(not_an_edit)?;
            f(edit)?;
            delivered += 1;
        }
    }
    Ok(delivered)
}
