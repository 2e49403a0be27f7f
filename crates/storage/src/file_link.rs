//! Links (HBase's `HFileLink` and `FileLink`): how a table cloned or
//! restored from a snapshot reads the snapshot's store files where they
//! are, instead of copying them.
//!
//! A link is a reference (`crate::region::reference`) in a new region's
//! manifest naming a snapshot's file by its path under `data/`, bounded by
//! the region's rows. The file belongs to another region (of the source
//! table, or of the table's own regions a restore replaced), so two things
//! must hold while the link exists, and this module owns both:
//!
//! 1. **The file is kept.** Each table reading links has a *link hold*,
//!    one small file that [`crate::archive::Holds`] counts like a snapshot:
//!    a retired linked file moves to `archive/` instead of being deleted,
//!    and the archive cleaner keeps it.
//! 2. **Reads follow the file into the archive.** When the source region
//!    compacts or drops the file, `archive::retire` moves it; a local or
//!    HDFS rename leaves open handles working, but an S3 move is a copy and
//!    a delete, so a [`FollowingRead`] re-opens the file under `archive/`
//!    when a read finds it gone.
//!
//! ```text
//! .hbase-snapshot/.links/<table>     the link hold of <table> (replaced whole, Storage::put)
//! LINKS := "FBLINKS v1\n" JSON "\n" crc32c(JSON) as 8 hex digits "\n"
//! JSON  := {"table":"…", "files":["<table>/<region>/<family>/<file>", …]}
//!
//! clone / restore (master, DDL lock)          janitor pass (master, DDL lock)
//!  1 add the snapshot's files to the hold       for each hold: files still named by a
//!  2 write the new regions' manifests (links)   reference of the table's regions?
//!  3 one meta update publishes the regions        shrink the hold to them; none (or no
//!                                                 such table) ─► delete it, clean the archive
//! region open: each link resolved in data/, else archive/ (FollowingRead)
//! region's first compaction: the links rewritten as files of its own
//! ```
//!
//! Step 1 happens while the snapshot itself still holds the files (the
//! DDL lock keeps it from being deleted), so no file is ever unheld
//! between the two. The janitor only shrinks a hold to what the table's
//! region manifests still reference: outside the DDL lock a table's
//! references only go away (a compaction rewrites them; a region holding
//! references is never split or merged), so what it reads can only be
//! more than what is needed.
//!
//! This module never deletes a store file: `crate::archive` does.

use crate::error::{Result, StorageError};
use crate::fs::{RandomRead, Storage};
use crate::snapshot_manifest::SnapshotLayout;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::RwLock;

const HEADER: &str = "FBLINKS v1\n";
/// The link holds' directory inside the snapshot directory.
const LINKS_DIR: &str = ".links";

/// The files one table reads by link, kept while it does.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkHold {
    pub table: String,
    /// Store files, relative to `data/`.
    pub files: BTreeSet<String>,
}

fn hold_path(layout: &SnapshotLayout, table: &str) -> PathBuf {
    layout.snapshot_dir.join(LINKS_DIR).join(table)
}

impl LinkHold {
    /// The hold of `table`; `None` when it has none.
    pub fn load(
        fs: &dyn Storage,
        layout: &SnapshotLayout,
        table: &str,
    ) -> Result<Option<LinkHold>> {
        let path = hold_path(layout, table);
        let Some(bytes) = fs.read(&path)? else {
            return Ok(None);
        };
        crate::checksummed_json::decode(HEADER, "JSON", &bytes)
            .map(Some)
            .map_err(|(offset, what)| StorageError::corrupt(fs.display(&path), offset, what))
    }

    /// Writes the hold atomically ([`Storage::put`]); an empty hold is
    /// deleted instead.
    pub fn store(&self, fs: &dyn Storage, layout: &SnapshotLayout) -> Result<()> {
        let path = hold_path(layout, &self.table);
        if self.files.is_empty() {
            return fs.delete(&path);
        }
        let out = crate::checksummed_json::encode(HEADER, self)
            .map_err(|e| StorageError::InvalidRequest(format!("link hold encode: {e}")))?;
        fs.put(&path, &out)
    }

    /// Removes `table`'s hold (its files stay until the archive cleaner
    /// finds nothing else holds them).
    pub fn delete(fs: &dyn Storage, layout: &SnapshotLayout, table: &str) -> Result<()> {
        fs.delete(&hold_path(layout, table))
    }
}

/// Adds `files` to `table`'s hold (creating it): call before writing any
/// manifest that links them.
pub fn hold(
    fs: &dyn Storage,
    layout: &SnapshotLayout,
    table: &str,
    files: impl IntoIterator<Item = String>,
) -> Result<()> {
    let mut h = LinkHold::load(fs, layout, table)?.unwrap_or_else(|| LinkHold {
        table: table.to_string(),
        files: BTreeSet::new(),
    });
    let before = h.files.len();
    h.files.extend(files);
    if h.files.len() == before && before > 0 {
        return Ok(());
    }
    h.store(fs, layout)
}

/// Every table's hold.
pub fn load_all(fs: &dyn Storage, layout: &SnapshotLayout) -> Result<Vec<LinkHold>> {
    let mut all = Vec::new();
    for table in fs.list(&layout.snapshot_dir.join(LINKS_DIR))? {
        // Listed then gone: released meanwhile.
        if let Some(h) = LinkHold::load(fs, layout, &table)? {
            all.push(h);
        }
    }
    Ok(all)
}

/// Where the linked file `rel` (relative to `data/`) is now: its region's
/// directory, else the archive; an error naming it when it is in neither.
pub fn locate(fs: &dyn Storage, layout: &SnapshotLayout, rel: &str) -> Result<PathBuf> {
    crate::archive::locate(fs, layout, rel)?.ok_or_else(|| {
        StorageError::io(
            fs.display(&layout.live_path(rel)),
            io::Error::new(
                io::ErrorKind::NotFound,
                "a linked store file is in neither data/ nor archive/",
            ),
        )
    })
}

/// Opens the linked file `rel` wherever it is, for reads that follow it
/// into the archive: the reader and the path it was found at.
pub fn open(
    fs: &Arc<dyn Storage>,
    layout: &SnapshotLayout,
    rel: &str,
) -> Result<(Arc<dyn RandomRead>, PathBuf)> {
    let at = locate(&**fs, layout, rel)?;
    let archived = layout.archived_path(rel);
    let inner = fs.open(&at)?;
    if at == archived {
        // Archived files do not move again.
        return Ok((inner, at));
    }
    let reader = FollowingRead {
        fs: fs.clone(),
        archived,
        len: inner.len(),
        inner: RwLock::new((inner, false)),
    };
    Ok((Arc::new(reader), at))
}

/// A positional reader of a linked file under `data/` that, when a read
/// finds the file gone (moved to the archive by a copy and a delete on an
/// object store), re-opens it under `archive/` once and reads there from
/// then on. The bytes are the same: store files never change once
/// written.
#[derive(Debug)]
pub struct FollowingRead {
    fs: Arc<dyn Storage>,
    archived: PathBuf,
    len: u64,
    /// The current reader, and whether it is the archived file's.
    inner: RwLock<(Arc<dyn RandomRead>, bool)>,
}

impl FollowingRead {
    fn current(&self) -> (Arc<dyn RandomRead>, bool) {
        let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
        (g.0.clone(), g.1)
    }

    /// Switches to the archived file; an error when it is not there
    /// either.
    fn follow(&self) -> io::Result<Arc<dyn RandomRead>> {
        let archived = self.fs.open(&self.archived).map_err(|e| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "linked store file gone from data/, and {}: {e}",
                    self.fs.display(&self.archived)
                ),
            )
        })?;
        tracing::debug!(file = %self.fs.display(&self.archived), "a linked store file moved to the archive; reading it there");
        let mut g = self.inner.write().unwrap_or_else(|p| p.into_inner());
        *g = (archived.clone(), true);
        Ok(archived)
    }

    /// True once reads go to the archived file.
    pub fn following(&self) -> bool {
        self.current().1
    }
}

impl RandomRead for FollowingRead {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let (inner, archived) = self.current();
        match inner.read_exact_at(buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && !archived => {
                self.follow()?.read_exact_at(buf, offset)
            }
            r => r,
        }
    }

    fn len(&self) -> u64 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::LocalFs;
    use std::path::Path;

    fn setup() -> (tempfile::TempDir, Arc<dyn Storage>, SnapshotLayout) {
        let dir = tempfile::tempdir().unwrap();
        let fs: Arc<dyn Storage> = Arc::new(LocalFs::new(dir.path()));
        let layout = SnapshotLayout::for_data_dir(Path::new("data"));
        (dir, fs, layout)
    }

    #[test]
    fn holds_grow_round_trip_and_vanish_when_empty() {
        let (_d, fs, layout) = setup();
        assert!(LinkHold::load(&*fs, &layout, "t2").unwrap().is_none());
        hold(&*fs, &layout, "t2", ["t/a/f/1.sf".to_string()]).unwrap();
        hold(&*fs, &layout, "t2", ["t/b/f/2.sf".to_string()]).unwrap();
        let h = LinkHold::load(&*fs, &layout, "t2").unwrap().unwrap();
        assert_eq!(
            h.files.iter().map(String::as_str).collect::<Vec<_>>(),
            ["t/a/f/1.sf", "t/b/f/2.sf"]
        );
        assert_eq!(load_all(&*fs, &layout).unwrap(), vec![h.clone()]);
        let empty = LinkHold {
            files: BTreeSet::new(),
            ..h
        };
        empty.store(&*fs, &layout).unwrap();
        assert!(LinkHold::load(&*fs, &layout, "t2").unwrap().is_none());
        assert!(load_all(&*fs, &layout).unwrap().is_empty());
    }

    #[test]
    fn a_corrupt_hold_is_named() {
        let (_d, fs, layout) = setup();
        hold(&*fs, &layout, "t2", ["t/a/f/1.sf".to_string()]).unwrap();
        let path = hold_path(&layout, "t2");
        let mut bytes = fs.read(&path).unwrap().unwrap();
        let n = bytes.len();
        bytes[n - 12] ^= 1;
        fs.put(&path, &bytes).unwrap();
        let e = LinkHold::load(&*fs, &layout, "t2").unwrap_err().to_string();
        assert!(e.contains(".links/t2"), "{e}");
    }

    /// A reader of a file an object store moved away: every read is
    /// `NotFound`, as a ranged GET of a deleted object is.
    #[derive(Debug)]
    struct Gone;
    impl RandomRead for Gone {
        fn read_exact_at(&self, _: &mut [u8], _: u64) -> io::Result<()> {
            Err(io::Error::new(io::ErrorKind::NotFound, "no such key"))
        }
        fn len(&self) -> u64 {
            10
        }
    }

    #[test]
    fn reads_follow_a_file_moved_to_the_archive() {
        let (_d, fs, layout) = setup();
        let rel = "t/0000000000000001/f/0000000000000001.sf";
        fs.put(&layout.live_path(rel), b"0123456789").unwrap();
        let (r, at) = open(&fs, &layout, rel).unwrap();
        assert_eq!(at, layout.live_path(rel));
        let mut buf = [0u8; 4];
        r.read_exact_at(&mut buf, 2).unwrap();
        assert_eq!(&buf, b"2345");

        // The move an object store makes: a copy, then a delete; the open
        // reader's next read finds the key gone and follows.
        crate::fs::copy_file(&*fs, &layout.live_path(rel), &layout.archived_path(rel)).unwrap();
        fs.delete(&layout.live_path(rel)).unwrap();
        let moved = FollowingRead {
            fs: fs.clone(),
            archived: layout.archived_path(rel),
            len: 10,
            inner: RwLock::new((Arc::new(Gone), false)),
        };
        assert!(!moved.following());
        moved.read_exact_at(&mut buf, 6).unwrap();
        assert_eq!(&buf, b"6789");
        assert!(moved.following());

        // Found in the archive at open when it is already there.
        let (_, at) = open(&fs, &layout, rel).unwrap();
        assert_eq!(at, layout.archived_path(rel));

        // Gone from both: the read names the archived path.
        fs.delete(&layout.archived_path(rel)).unwrap();
        let lost = FollowingRead {
            fs: fs.clone(),
            archived: layout.archived_path(rel),
            len: 10,
            inner: RwLock::new((Arc::new(Gone), false)),
        };
        let e = lost.read_exact_at(&mut buf, 0).unwrap_err().to_string();
        assert!(e.contains("archive/t/0000000000000001"), "{e}");
        let e = open(&fs, &layout, rel).unwrap_err().to_string();
        assert!(e.contains("neither data/ nor archive/"), "{e}");
    }
}
