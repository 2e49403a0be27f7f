//! What `Wal::open` does with the segments a previous process left:
//! validate every record, repair a torn tail of the last segment, and
//! rebuild each segment's region → max seq map so truncation keeps working
//! after a restart.
//!
//! The rule: only the *last* segment may end in a damaged record, and only
//! when no valid record follows the damage (a write cut short by a crash).
//! That tail is truncated and reported. Any other bad record is
//! [`StorageError::Corrupt`] naming file and offset; it is never skipped,
//! because skipping would silently drop acknowledged edits.

use super::reader::{Next, Opened, SegmentReader};
use super::record::{self, MARKER};
use super::segment;
use crate::error::{Result, StorageError};
use crate::fs::Storage;
use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What open found in the WAL directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// Segments present before open (the new one excluded).
    pub segments_found: usize,
    /// Valid records (edits) in them.
    pub records: u64,
    /// Highest sequence id among them (0 if none); new seqs must exceed it.
    pub max_seq: u64,
    /// The damaged tail cut off the last segment, if any.
    pub truncated: Option<TruncatedTail>,
}

/// A torn tail that open removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TruncatedTail {
    pub path: PathBuf,
    /// Where the file now ends: the start of the first bad record.
    pub offset: u64,
    /// Bytes removed.
    pub bytes: u64,
    /// What was wrong with the first bad record.
    pub reason: String,
}

impl fmt::Display for OpenReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} WAL segment(s), {} record(s), max seq {}",
            self.segments_found, self.records, self.max_seq
        )?;
        if let Some(t) = &self.truncated {
            write!(
                f,
                "; truncated torn tail of {}: {} byte(s) at offset {} ({})",
                t.path.display(),
                t.bytes,
                t.offset,
                t.reason
            )?;
        }
        Ok(())
    }
}

/// An old segment and the highest seq of every region in it.
pub(crate) struct OldSegment {
    pub id: u64,
    pub path: PathBuf,
    pub regions: HashMap<u64, u64>,
}

/// The client nonces the old segments' edits carry, by region, each with
/// its edit's sequence id: a region that flushed an edit before the crash
/// does not replay it, but a client may still retry the operation.
pub(crate) type OldNonces = HashMap<u64, Vec<(u64, super::LoggedNonce)>>;

/// Scans every segment of `dir` in order.
pub(crate) fn recover(
    fs: &dyn Storage,
    dir: &Path,
) -> Result<(Vec<OldSegment>, OpenReport, OldNonces)> {
    let found = segment::list(fs, dir)?;
    let mut report = OpenReport {
        segments_found: found.len(),
        ..OpenReport::default()
    };
    let mut segments = Vec::with_capacity(found.len());
    let mut nonces = OldNonces::new();
    let last = found.len().saturating_sub(1);
    for (i, (id, path)) in found.into_iter().enumerate() {
        if let Some(regions) = scan(fs, &path, i == last, &mut report, &mut nonces)? {
            segments.push(OldSegment { id, path, regions });
        }
    }
    Ok((segments, report, nonces))
}

/// Validates one segment; `None` when it was an unfinished last segment
/// that had to be removed.
fn scan(
    fs: &dyn Storage,
    at: &Path,
    is_last: bool,
    report: &mut OpenReport,
    nonces: &mut OldNonces,
) -> Result<Option<HashMap<u64, u64>>> {
    let shown = PathBuf::from(fs.display(at));
    let path = shown.as_path();
    let mut reader = match SegmentReader::open(path, fs.open_log(at)?, None)? {
        Opened::Reader(r) => r,
        Opened::BadHeader(why) => return Err(StorageError::corrupt(path, 0, why)),
        Opened::Short(len) if is_last => {
            // Creation was cut short before its header was synced: it holds
            // no record, so removing it loses nothing.
            remove_unfinished(fs, at, len, report)?;
            return Ok(None);
        }
        Opened::Short(len) => {
            return Err(StorageError::corrupt(
                path,
                0,
                format!(
                    "segment of {len} bytes is shorter than its header, and it is not the last segment"
                ),
            ));
        }
    };
    let mut regions = HashMap::new();
    loop {
        match reader.next()? {
            Next::Record { offset } => {
                let Some((region, seq, tagged)) =
                    record::validate_tagged(reader.payload(), reader.version())
                else {
                    // The CRC matched, so these are the bytes we wrote: a
                    // decoder mismatch, never a torn write. Do not truncate.
                    return Err(StorageError::corrupt(
                        path,
                        offset,
                        "record passes its CRC but is not a valid edit",
                    ));
                };
                let max = regions.entry(region).or_insert(seq);
                *max = (*max).max(seq);
                // Only edits carrying a nonce are decoded (increments,
                // appends, checked mutations): their row and time.
                if tagged
                    && let Some(n) = record::decode(
                        &bytes::Bytes::copy_from_slice(reader.payload()),
                        reader.version(),
                    )
                    .and_then(|e| e.logged_nonce())
                {
                    nonces.entry(region).or_default().push((seq, n));
                }
                report.records += 1;
                report.max_seq = report.max_seq.max(seq);
            }
            Next::End => return Ok(Some(regions)),
            Next::Bad { offset, reason } if is_last => {
                if let Some(next) = find_valid_record_after(fs, at, offset)? {
                    return Err(StorageError::corrupt(
                        path,
                        offset,
                        format!(
                            "{reason}; a valid record follows at offset {next}, so this is not a torn tail"
                        ),
                    ));
                }
                let bytes = reader.end() - offset;
                fs.truncate_log(at, offset)?;
                tracing::warn!(
                    path = %path.display(), offset, bytes, %reason,
                    "WAL: truncated torn tail of the last segment"
                );
                report.truncated = Some(TruncatedTail {
                    path: path.to_path_buf(),
                    offset,
                    bytes,
                    reason,
                });
                return Ok(Some(regions));
            }
            Next::Bad { offset, reason } => {
                return Err(StorageError::corrupt(
                    path,
                    offset,
                    format!("{reason} (not the last segment, so not a torn tail)"),
                ));
            }
        }
    }
}

/// Offset of the first complete, checksummed frame starting after
/// `offset`, if any. Reads the rest of the file: this only runs when the
/// last segment is damaged, and the rest is usually a few bytes.
fn find_valid_record_after(fs: &dyn Storage, path: &Path, offset: u64) -> Result<Option<u64>> {
    let io = |e| StorageError::io(fs.display(path), e);
    let (mut file, _) = fs.open_log(path)?;
    std::io::copy(&mut (&mut file).take(offset + 1), &mut std::io::sink()).map_err(io)?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).map_err(io)?;
    let found = tail
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == MARKER)
        .find(|&(i, _)| record::valid_frame_len(tail.get(i..).unwrap_or_default()).is_some())
        .map(|(i, _)| offset + 1 + i as u64);
    Ok(found)
}

fn remove_unfinished(fs: &dyn Storage, at: &Path, len: u64, report: &mut OpenReport) -> Result<()> {
    fs.delete_log(at)?;
    let path = PathBuf::from(fs.display(at));
    let path = path.as_path();
    let reason = "segment shorter than its header (creation cut short); removed".to_string();
    tracing::warn!(path = %path.display(), len, "WAL: {reason}");
    report.truncated = Some(TruncatedTail {
        path: path.to_path_buf(),
        offset: 0,
        bytes: len,
        reason,
    });
    Ok(())
}
