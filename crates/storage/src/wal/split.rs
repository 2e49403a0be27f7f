//! WAL split: the edits a dead region server left in its WAL directory,
//! regrouped by region as "recovered edits" files that the region's next
//! owner replays before it serves.
//!
//! ```text
//! wal/<dead server>/wal-…01.log  ─┐  read every segment in order
//! wal/<dead server>/wal-…02.log  ─┘  (no lock taken, nothing written there)
//!        │ group by region, keep seq > region's flushed seq (its MANIFEST)
//!        ▼
//! data/<table>/<region>/recovered.edits/<dead server>.wal   one per region
//! ```
//!
//! Edits are filtered as they are read and held encoded, per destination,
//! up to a memory budget (64 MiB); past it the largest destination's edits
//! go out to its file, which stays invisible until the split finishes, so
//! a WAL of any size splits in bounded memory.
//!
//! A recovered edits file has the segment format (header, then checksummed
//! records) and is published atomically ([`Storage::put`]), so a reader
//! finds it whole or not at all: any damage in
//! it is corruption. In the dead server's WAL only the last segment may end
//! in a torn record (the crash cut a write short); that tail was never
//! acknowledged and is dropped; damage anywhere else is an error, never
//! skipped. This module never deletes a WAL directory (the master does,
//! once every region's file is durable) and never opens a region.

use super::WalEdit;
use super::reader::{Next, Opened, SegmentReader};
use super::{record, segment};
use crate::error::{Result, StorageError};
use crate::fs::Storage;
use crate::region::manifest::Manifest;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod sinks;
use sinks::Sinks;

/// Directory, inside a region's directory, of its recovered edits.
pub const RECOVERED_EDITS_DIR: &str = "recovered.edits";
/// Extension of a recovered edits file.
pub const RECOVERED_EDITS_EXT: &str = "wal";

/// What a split did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SplitReport {
    /// Segments read.
    pub segments: usize,
    /// Edits read (all regions).
    pub edits: u64,
    /// Edits written to recovered edits files (newer than the flush).
    pub recovered: u64,
    /// Regions that got a recovered edits file.
    pub regions: usize,
    /// Regions the WAL names but `region_dir` did not know (dropped, split
    /// or merged away).
    pub unknown_regions: usize,
    /// Nonces of such regions' edits kept for the regions now holding
    /// their rows ([`split_wal_dir_routed`]).
    pub routed_nonces: u64,
    /// A torn tail of the last segment that was dropped.
    pub torn_tail: Option<String>,
}

/// Calls `f` for every edit in the segments of `wal_dir`, in order. A torn
/// tail of the last segment ends reading (and is returned); any other
/// damage is [`StorageError::Corrupt`].
pub fn read_wal_dir(
    fs: &dyn Storage,
    wal_dir: &Path,
    f: &mut dyn FnMut(WalEdit) -> Result<()>,
) -> Result<(usize, Option<String>)> {
    let segments = segment::list(fs, wal_dir)?;
    let last = segments.len().saturating_sub(1);
    for (i, (_, path)) in segments.iter().enumerate() {
        if let Some(torn) = read_file(fs, path, Kind::Segment { last: i == last }, f)? {
            return Ok((segments.len(), Some(torn)));
        }
    }
    Ok((segments.len(), None))
}

/// What [`read_file`] reads.
#[derive(Clone, Copy)]
enum Kind {
    /// A WAL segment (a log, chunked on S3); the last one of a dead
    /// server's WAL may end in a torn record.
    Segment { last: bool },
    /// A recovered edits file: an ordinary file, written whole by `put`.
    Recovered,
}

/// Reads one segment-format file; a torn tail of the last segment ends
/// reading (and is returned) instead of failing.
fn read_file(
    fs: &dyn Storage,
    at: &Path,
    kind: Kind,
    f: &mut dyn FnMut(WalEdit) -> Result<()>,
) -> Result<Option<String>> {
    let tolerate_tail = matches!(kind, Kind::Segment { last: true });
    let shown = PathBuf::from(fs.display(at));
    let path = shown.as_path();
    let stream = if let Kind::Segment { .. } = kind {
        fs.open_log(at)?
    } else {
        let bytes = fs.read(at)?.ok_or_else(|| {
            StorageError::io(
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            )
        })?;
        let len = bytes.len() as u64;
        (
            Box::new(std::io::Cursor::new(bytes)) as Box<dyn std::io::Read + Send>,
            len,
        )
    };
    let mut reader = match SegmentReader::open(path, stream, None)? {
        Opened::Reader(r) => r,
        // Empty: never a header, so never an acknowledged edit (segments
        // are created with their header durable before any append). On S3
        // that is also a fenced writer's late batches (`fs::s3`), which
        // can sit before later segments, so it is skipped wherever it is.
        Opened::Short(0) => return Ok(None),
        Opened::Short(_) if tolerate_tail => return Ok(Some("segment without header".into())),
        Opened::Short(len) => {
            return Err(StorageError::corrupt(
                path,
                0,
                format!("file of {len} bytes is shorter than its header"),
            ));
        }
        Opened::BadHeader(why) => return Err(StorageError::corrupt(path, 0, why)),
    };
    loop {
        match reader.next()? {
            Next::End => return Ok(None),
            Next::Record { offset } => {
                let edit =
                    record::decode(&Bytes::copy_from_slice(reader.payload()), reader.version())
                        .ok_or_else(|| {
                            StorageError::corrupt(
                                path,
                                offset,
                                "record passes its CRC but is not a valid edit",
                            )
                        })?;
                f(edit)?;
            }
            Next::Bad { offset, reason } if tolerate_tail => {
                let torn = format!("{}: {reason} at offset {offset}", path.display());
                tracing::warn!(%torn, "WAL split: dropping the torn tail of the last segment");
                return Ok(Some(torn));
            }
            Next::Bad { offset, reason } => {
                return Err(StorageError::corrupt(path, offset, reason));
            }
        }
    }
}

/// Splits the WAL in `wal_dir` (of the server called `server`): for each
/// region, the edits newer than its manifest's flushed sequence id go to
/// `<region dir>/recovered.edits/<server>.wal`. `region_dir` maps a region
/// id to its directory, `None` for a region that no longer exists.
/// Idempotent: a second split of the same directory rewrites the same files.
pub fn split_wal_dir(
    fs: &dyn Storage,
    wal_dir: &Path,
    server: &str,
    region_dir: &dyn Fn(u64) -> Option<PathBuf>,
) -> Result<SplitReport> {
    split_wal_dir_routed(fs, wal_dir, server, region_dir, &|_, _| None)
}

/// For an edit of a region that no longer exists (its id) and its row,
/// the region now holding the row: its id and directory.
pub type Successor<'a> = &'a dyn Fn(u64, &[u8]) -> Option<(u64, PathBuf)>;

/// [`split_wal_dir`] that also keeps the nonces of regions split or merged
/// away: for an edit of a region `region_dir` does not know, `successor`
/// gives the region that now holds the edit's row (its id and directory),
/// `None` when there is none (a dropped table). The edit's cells are not
/// needed there (a region is closed, so flushed, before it splits or
/// merges, and its children read its files), but a client may still retry
/// the operation it carried: its nonce goes, in an edit without cells, to
/// that region's recovered edits, as for a flushed edit.
pub fn split_wal_dir_routed(
    fs: &dyn Storage,
    wal_dir: &Path,
    server: &str,
    region_dir: &dyn Fn(u64) -> Option<PathBuf>,
    successor: Successor<'_>,
) -> Result<SplitReport> {
    split_buffered(
        fs,
        (wal_dir, server),
        region_dir,
        successor,
        SPLIT_BUFFER_BYTES,
    )
}

/// Encoded edits a split holds in memory at most (HBase's
/// `hbase.regionserver.hlog.splitlog.buffersize` is 128 MiB): past it the
/// largest destination's edits are written out to its file, which stays
/// open (invisible until finished) for the rest of the split.
const SPLIT_BUFFER_BYTES: usize = 64 << 20;

/// [`split_wal_dir_routed`] holding at most about `budget` bytes of
/// encoded edits in memory, whatever the size of the WAL.
fn split_buffered(
    fs: &dyn Storage,
    (wal_dir, server): (&Path, &str),
    region_dir: &dyn Fn(u64) -> Option<PathBuf>,
    successor: Successor<'_>,
    budget: usize,
) -> Result<SplitReport> {
    let mut report = SplitReport::default();
    // Each region's directory and flushed sequence id, looked up once.
    let mut regions: BTreeMap<u64, Option<(PathBuf, u64)>> = BTreeMap::new();
    let mut sinks = Sinks::new(fs, format!("{server}.{RECOVERED_EDITS_EXT}"), budget);
    let mut unknown = std::collections::BTreeSet::new();
    let (segments, torn) = read_wal_dir(fs, wal_dir, &mut |edit| {
        report.edits += 1;
        let region = match regions.get(&edit.region_id) {
            Some(known) => known.clone(),
            None => {
                let found = match region_dir(edit.region_id) {
                    Some(dir) => {
                        let flushed = Manifest::load(fs, &dir)?
                            .map(|m| m.flushed_seq)
                            .unwrap_or(0);
                        Some((dir, flushed))
                    }
                    None => None,
                };
                regions.insert(edit.region_id, found.clone());
                found
            }
        };
        match region {
            // A region split or merged away: its cells are not needed (it
            // was closed, so flushed, first, and its children read its
            // files), but a client may still retry the operation the edit
            // carried: its nonce goes, in an edit without cells, to the
            // region now holding the row.
            None => {
                unknown.insert(edit.region_id);
                if edit.nonce.is_some()
                    && let Some((id, dir)) = successor(edit.region_id, &edit.row)
                {
                    report.routed_nonces += 1;
                    sinks.push(
                        &dir,
                        &WalEdit {
                            region_id: id,
                            families: Vec::new(),
                            ..edit
                        },
                    )?;
                }
            }
            Some((dir, flushed)) if edit.seq > flushed => sinks.push(&dir, &edit)?,
            // A flushed edit needs no replay, but the client may still
            // retry the operation it carried (its answer died with the
            // server): keep its nonce, in an edit without cells, so the new
            // owner answers the retry instead of applying it twice.
            Some((dir, _)) if edit.nonce.is_some() => sinks.push(
                &dir,
                &WalEdit {
                    families: Vec::new(),
                    ..edit
                },
            )?,
            Some(_) => {}
        }
        Ok(())
    })?;
    report.segments = segments;
    report.torn_tail = torn;
    report.unknown_regions = unknown.len();
    let (files, edits) = sinks.finish()?;
    report.regions = files;
    report.recovered = edits;
    Ok(report)
}

/// Prefix of the recovered edits files that hold only nonces: left by a
/// clean close (the region's recent operations, for its next opener) and
/// by an open (what it learned, in case its server dies before a retry).
pub const NONCES_FILE_PREFIX: &str = "nonces-";

/// Writes `nonces` (of rows of the region `region_id` in `region_dir`) as
/// a recovered edits file of edits without cells, named
/// `nonces-<name>.wal`: the region's next opener, on any server, replays it
/// as it replays a dead server's edits, so it learns them before it serves
/// and removes the file. Published whole and atomically ([`Storage::put`]).
pub fn write_nonces(
    fs: &dyn Storage,
    region_dir: &Path,
    region_id: u64,
    name: &str,
    nonces: &[super::LoggedNonce],
) -> Result<()> {
    let edits: Vec<WalEdit> = nonces
        .iter()
        .map(|n| WalEdit {
            region_id,
            seq: 0,
            row: n.row.clone(),
            families: Vec::new(),
            now: n.at_ms,
            nonce: Some(n.nonce),
        })
        .collect();
    let name = format!("{NONCES_FILE_PREFIX}{name}.{RECOVERED_EDITS_EXT}");
    write_recovered(fs, region_dir, &name, &edits)
}

/// Copies the files [`write_nonces`] left in `from` (a region merged
/// away) to `to` (the merged region), so the merged region's opener
/// learns both parents' nonces; returns how many. `from` keeps its copies
/// (it is read again only if the merge is undone, then it needs them).
pub fn copy_nonces(fs: &dyn Storage, from: &Path, to: &Path) -> Result<usize> {
    let mut copied = 0;
    for file in recovered_files(fs, from)? {
        let Some(name) = file.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if !name.starts_with(NONCES_FILE_PREFIX) {
            continue;
        }
        if let Some(bytes) = fs.read(&file)? {
            fs.put(&to.join(RECOVERED_EDITS_DIR).join(name), &bytes)?;
            copied += 1;
        }
    }
    Ok(copied)
}

fn write_recovered(
    fs: &dyn Storage,
    region_dir: &Path,
    name: &str,
    edits: &[WalEdit],
) -> Result<()> {
    let path = region_dir.join(RECOVERED_EDITS_DIR).join(name);
    let mut buf = segment::header().to_vec();
    for e in edits {
        record::encode(e, &mut buf).map_err(|t| {
            StorageError::corrupt(
                fs.display(&path),
                0,
                format!("edit of {} bytes is too large", t.0),
            )
        })?;
    }
    fs.put(&path, &buf)
}

/// The recovered edits files of the region in `region_dir`, oldest name
/// first (empty when there are none).
pub fn recovered_files(fs: &dyn Storage, region_dir: &Path) -> Result<Vec<PathBuf>> {
    let dir = region_dir.join(RECOVERED_EDITS_DIR);
    let suffix = format!(".{RECOVERED_EDITS_EXT}");
    Ok(fs
        .list(&dir)?
        .into_iter()
        .filter(|name| name.ends_with(&suffix))
        .map(|name| dir.join(name))
        .collect())
}

/// Calls `f` for every edit of one recovered edits file, in order.
pub fn read_recovered(
    fs: &dyn Storage,
    path: &Path,
    f: &mut dyn FnMut(WalEdit) -> Result<()>,
) -> Result<()> {
    read_file(fs, path, Kind::Recovered, f).map(|_| ())
}

/// Removes a replayed recovered edits file, durably.
pub fn remove_recovered(fs: &dyn Storage, path: &Path) -> Result<()> {
    fs.delete(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::LocalFs;
    use crate::wal::WalFamily;
    use crate::wal::{Wal, WalOptions};
    use ferrobase_types::{CellRun, CellType, Durability};

    fn edit(region_id: u64, seq: u64) -> WalEdit {
        WalEdit {
            nonce: None,
            now: ferrobase_types::LATEST_TIMESTAMP,
            region_id,
            seq,
            row: Bytes::from(format!("row-{seq}")),
            families: vec![WalFamily {
                family: Bytes::from_static(b"f"),
                cells: CellRun::single(b"q", seq, CellType::Put, b"v"),
            }],
        }
    }

    #[test]
    fn a_small_memory_budget_writes_the_same_files() {
        let tmp = tempfile::tempdir().unwrap();
        let l = &LocalFs::as_given();
        let wal_dir = tmp.path().join("wal");
        {
            let wal = Wal::open(&wal_dir, WalOptions::default()).unwrap();
            // Three regions' edits interleaved, some with nonces.
            let edits: Vec<WalEdit> = (1..=600)
                .map(|seq| WalEdit {
                    nonce: (seq % 7 == 0).then_some((3, seq)),
                    ..edit(seq % 3 + 1, seq)
                })
                .collect();
            wal.append(&edits, Durability::SyncWal).unwrap();
        }
        let mut results = Vec::new();
        for (name, budget) in [("big", usize::MAX), ("small", 1024)] {
            let root = tmp.path().join(name);
            let dirs = |id: u64| Some(root.join(format!("r{id}")));
            let report =
                split_buffered(l, (&wal_dir, "rs-a"), &dirs, &|_, _| None, budget).unwrap();
            assert_eq!(
                (report.edits, report.recovered, report.regions),
                (600, 600, 3)
            );
            let mut got = Vec::new();
            for id in 1..=3 {
                let files = recovered_files(l, &root.join(format!("r{id}"))).unwrap();
                assert_eq!(files.len(), 1, "{name}: one file for r{id}, no temp left");
                read_recovered(l, &files[0], &mut |e| {
                    got.push((e.region_id, e.seq, e.nonce, e.families.len()));
                    Ok(())
                })
                .unwrap();
            }
            results.push(got);
        }
        assert_eq!(results[0].len(), 600);
        assert_eq!(results[0], results[1]);
    }

    #[test]
    fn flushed_edits_keep_their_nonces_without_cells() {
        let tmp = tempfile::tempdir().unwrap();
        let l = &LocalFs::as_given();
        let wal_dir = tmp.path().join("wal");
        {
            let wal = Wal::open(&wal_dir, WalOptions::default()).unwrap();
            let edits: Vec<WalEdit> = (1..=4)
                .map(|seq| WalEdit {
                    // Odd edits are client increments with a nonce.
                    nonce: (seq % 2 == 1).then_some((7, seq)),
                    ..edit(1, seq)
                })
                .collect();
            wal.append(&edits, Durability::SyncWal).unwrap();
        }
        let r1 = tmp.path().join("r1");
        std::fs::create_dir_all(&r1).unwrap();
        Manifest {
            flushed_seq: 3,
            ..Manifest::default()
        }
        .store(l, &r1, 0)
        .unwrap();
        let dirs = |_: u64| Some(r1.clone());
        split_wal_dir(l, &wal_dir, "rs-a", &dirs).unwrap();
        let files = recovered_files(l, &r1).unwrap();
        let mut got = Vec::new();
        read_recovered(l, &files[0], &mut |e| {
            got.push((e.seq, e.nonce, e.families.len()));
            Ok(())
        })
        .unwrap();
        // Flushed 1 and 3 carry nonces: kept without cells; flushed 2 has
        // none: dropped; 4 is not flushed: kept whole.
        assert_eq!(
            got,
            vec![(1, Some((7, 1)), 0), (3, Some((7, 3)), 0), (4, None, 1)]
        );
    }

    #[test]
    fn nonces_of_a_region_split_away_go_to_the_daughter_holding_the_row() {
        let tmp = tempfile::tempdir().unwrap();
        let l = &LocalFs::as_given();
        let wal_dir = tmp.path().join("wal");
        {
            let wal = Wal::open(&wal_dir, WalOptions::default()).unwrap();
            let edits: Vec<WalEdit> = [("a", 1), ("p", 2), ("z", 3)]
                .into_iter()
                .map(|(row, seq)| WalEdit {
                    // Parent 1's increments; "z" carries no nonce.
                    nonce: (row != "z").then_some((7, seq)),
                    row: Bytes::from(row),
                    ..edit(1, seq)
                })
                .collect();
            wal.append(&edits, Durability::SyncWal).unwrap();
        }
        let (lo, hi) = (tmp.path().join("lo"), tmp.path().join("hi"));
        // Region 1 is gone; rows before "m" are now in 2, the rest in 3.
        let successor = |id: u64, row: &[u8]| {
            assert_eq!(id, 1);
            Some(if row < b"m".as_slice() {
                (2, lo.clone())
            } else {
                (3, hi.clone())
            })
        };
        let report = split_wal_dir_routed(l, &wal_dir, "rs-a", &|_| None, &successor).unwrap();
        assert_eq!((report.unknown_regions, report.routed_nonces), (1, 2));
        let read = |dir: &Path| {
            let mut got = Vec::new();
            for f in recovered_files(l, dir).unwrap() {
                read_recovered(l, &f, &mut |e| {
                    got.push((e.region_id, e.row.clone(), e.nonce, e.families.len()));
                    Ok(())
                })
                .unwrap();
            }
            got
        };
        assert_eq!(read(&lo), vec![(2, Bytes::from("a"), Some((7, 1)), 0)]);
        assert_eq!(read(&hi), vec![(3, Bytes::from("p"), Some((7, 2)), 0)]);
        // Without a successor (the plain split) they are dropped.
        let plain = tmp.path().join("plain-wal");
        std::fs::rename(&wal_dir, &plain).unwrap();
        for d in [&lo, &hi] {
            std::fs::remove_dir_all(d).unwrap();
        }
        let report = split_wal_dir(l, &plain, "rs-a", &|_| None).unwrap();
        assert_eq!((report.unknown_regions, report.routed_nonces), (1, 0));
        assert!(recovered_files(l, &lo).unwrap().is_empty());
    }

    #[test]
    fn a_closed_regions_nonces_are_copied_to_its_merged_region() {
        let tmp = tempfile::tempdir().unwrap();
        let l = &LocalFs::as_given();
        let (parent, merged) = (tmp.path().join("p"), tmp.path().join("m"));
        let logged = crate::wal::LoggedNonce {
            nonce: (5, 6),
            row: Bytes::from("r"),
            at_ms: 1_000,
        };
        write_nonces(l, &parent, 4, "x", std::slice::from_ref(&logged)).unwrap();
        assert_eq!(copy_nonces(l, &parent, &merged).unwrap(), 1);
        for dir in [&parent, &merged] {
            let files = recovered_files(l, dir).unwrap();
            assert_eq!(files.len(), 1);
            let mut got = Vec::new();
            read_recovered(l, &files[0], &mut |e| {
                got.push(e.logged_nonce());
                Ok(())
            })
            .unwrap();
            assert_eq!(got, vec![Some(logged.clone())]);
        }
    }

    #[test]
    fn splits_by_region_skipping_flushed_and_unknown_regions() {
        let tmp = tempfile::tempdir().unwrap();
        let l = &LocalFs::as_given();
        let wal_dir = tmp.path().join("wal");
        {
            let wal = Wal::open(&wal_dir, WalOptions::default()).unwrap();
            let mut edits = Vec::new();
            for seq in 1..=5 {
                for region in [1u64, 2, 3] {
                    edits.push(edit(region, seq));
                }
            }
            wal.append(&edits, Durability::SyncWal).unwrap();
            // Dropped without close would also do: a crash leaves the same.
        }
        let r1 = tmp.path().join("r1");
        let r2 = tmp.path().join("r2");
        std::fs::create_dir_all(&r2).unwrap();
        Manifest {
            flushed_seq: 3,
            ..Manifest::default()
        }
        .store(l, &r2, 0)
        .unwrap();
        let dirs = |id: u64| match id {
            1 => Some(r1.clone()),
            2 => Some(r2.clone()),
            _ => None,
        };
        let report = split_wal_dir(l, &wal_dir, "rs-a", &dirs).unwrap();
        assert_eq!(report.edits, 15);
        assert_eq!(report.recovered, 5 + 2);
        assert_eq!(report.unknown_regions, 1);
        let files = recovered_files(l, &r2).unwrap();
        assert_eq!(files.len(), 1);
        let mut seqs = Vec::new();
        read_recovered(l, &files[0], &mut |e| {
            assert_eq!(e.region_id, 2);
            seqs.push(e.seq);
            Ok(())
        })
        .unwrap();
        assert_eq!(seqs, vec![4, 5]);
        // Idempotent: splitting again rewrites the same file.
        split_wal_dir(l, &wal_dir, "rs-a", &dirs).unwrap();
        assert_eq!(recovered_files(l, &r1).unwrap().len(), 1);
        remove_recovered(l, &files[0]).unwrap();
        assert!(recovered_files(l, &r2).unwrap().is_empty());
    }
}
