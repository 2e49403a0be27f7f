//! The recovered edits files one WAL split writes, by destination region
//! directory, under a memory budget: each file's edits are held encoded
//! until the budget is passed, then the largest file's go out to its
//! writer, which publishes the file only at the end of the split (whole,
//! or not at all). This module never reads a WAL.

use super::{RECOVERED_EDITS_DIR, WalEdit};
use crate::error::{Result, StorageError};
use crate::fs::Storage;
use crate::wal::{record, segment};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One recovered edits file being made: the edits not yet written out,
/// and its writer once some were.
#[derive(Default)]
struct Sink {
    buf: Vec<u8>,
    writer: Option<Box<dyn crate::fs::FileWriter>>,
    edits: u64,
}

/// The recovered edits files of one split, by destination directory, with
/// a bound on the bytes they hold in memory together.
pub(super) struct Sinks<'a> {
    fs: &'a dyn Storage,
    name: String,
    budget: usize,
    held: usize,
    by_dir: BTreeMap<PathBuf, Sink>,
}

impl<'a> Sinks<'a> {
    pub(super) fn new(fs: &'a dyn Storage, name: String, budget: usize) -> Sinks<'a> {
        Sinks {
            fs,
            name,
            budget,
            held: 0,
            by_dir: BTreeMap::new(),
        }
    }

    /// The recovered edits file `name` in region directory `dir`.
    fn path(dir: &Path, name: &str) -> PathBuf {
        dir.join(RECOVERED_EDITS_DIR).join(name)
    }

    pub(super) fn push(&mut self, dir: &Path, edit: &WalEdit) -> Result<()> {
        let path = Self::path(dir, &self.name);
        let sink = self.by_dir.entry(dir.to_path_buf()).or_default();
        let before = sink.buf.len();
        record::encode(edit, &mut sink.buf).map_err(|t| {
            StorageError::corrupt(
                self.fs.display(&path),
                0,
                format!("edit of {} bytes is too large", t.0),
            )
        })?;
        sink.edits += 1;
        self.held += sink.buf.len() - before;
        if self.held > self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Writes the largest buffer out to its file.
    fn spill(&mut self) -> Result<()> {
        let Some((dir, sink)) = self.by_dir.iter_mut().max_by_key(|(_, s)| s.buf.len()) else {
            return Ok(());
        };
        let path = Self::path(dir, &self.name);
        let writer = match &mut sink.writer {
            Some(w) => w,
            None => {
                let mut w = self.fs.create(&path)?;
                w.write_all(&segment::header())
                    .map_err(|e| StorageError::io(self.fs.display(&path), e))?;
                sink.writer.insert(w)
            }
        };
        writer
            .write_all(&sink.buf)
            .map_err(|e| StorageError::io(self.fs.display(&path), e))?;
        self.held -= sink.buf.len();
        sink.buf = Vec::new();
        Ok(())
    }

    /// Publishes every file (whole, or not at all); returns how many and
    /// the edits in them.
    pub(super) fn finish(self) -> Result<(usize, u64)> {
        let (mut files, mut edits) = (0, 0);
        for (dir, sink) in self.by_dir {
            let path = Self::path(&dir, &self.name);
            match sink.writer {
                // Small enough to have stayed in memory: one atomic put.
                None => {
                    let mut bytes = segment::header().to_vec();
                    bytes.extend_from_slice(&sink.buf);
                    self.fs.put(&path, &bytes)?;
                }
                Some(mut w) => {
                    w.write_all(&sink.buf)
                        .map_err(|e| StorageError::io(self.fs.display(&path), e))?;
                    w.finish()?;
                }
            }
            files += 1;
            edits += sink.edits;
        }
        Ok((files, edits))
    }
}
