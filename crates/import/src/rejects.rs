//! The rejects file: every bad line of an import, with where it was and
//! why, in input order:
//!
//! ```text
//! <file>:<line number>\t<reason>\t<the line as read>
//! ```
//!
//! Line numbers start at 1. Readers of different splits of a file do not
//! know at which line their split starts, so each writes a part file of
//! split-local line numbers ([`RejectsPart`]); [`merge`] then adds the
//! line counts of the splits before it and concatenates the parts into
//! the rejects file, removing them. A part is created only when its split
//! has a bad line.

use crate::ImportError;
use crate::line::BadLine;
use crate::splits::Split;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The bad lines of one split, with split-local line numbers.
pub struct RejectsPart {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    pub count: u64,
}

impl RejectsPart {
    /// A part of the rejects file `rejects` for split number `n`.
    pub fn new(rejects: &Path, n: usize) -> RejectsPart {
        let mut name = rejects.as_os_str().to_owned();
        name.push(format!(".part-{n}"));
        RejectsPart {
            path: PathBuf::from(name),
            out: None,
            count: 0,
        }
    }

    /// Records bad line `local_line` (1-based within the split).
    pub fn add(&mut self, local_line: u64, why: &BadLine, line: &[u8]) -> Result<(), ImportError> {
        let io = |e| ImportError::io(&self.path, e);
        if self.out.is_none() {
            self.out = Some(BufWriter::new(File::create(&self.path).map_err(io)?));
        }
        if let Some(out) = &mut self.out {
            write!(out, "{local_line}\t{why}\t").map_err(io)?;
            out.write_all(line).map_err(io)?;
            out.write_all(b"\n").map_err(io)?;
        }
        self.count += 1;
        Ok(())
    }

    /// Flushes the part; its path if it holds anything.
    pub fn finish(self) -> Result<Option<PathBuf>, ImportError> {
        match self.out {
            None => Ok(None),
            Some(mut out) => {
                out.flush().map_err(|e| ImportError::io(&self.path, e))?;
                Ok(Some(self.path))
            }
        }
    }
}

/// One finished split: how many lines it owned and its part, if any.
pub struct SplitDone {
    pub split: Split,
    pub lines: u64,
    pub part: Option<PathBuf>,
}

/// Writes the rejects file from the parts of `done` (any order) and
/// removes the parts; returns the bad lines written.
pub fn merge(rejects: &Path, done: &mut [SplitDone]) -> Result<u64, ImportError> {
    done.sort_by_key(|d| (d.split.file, d.split.index));
    let io = |e| ImportError::io(rejects, e);
    let mut out = BufWriter::new(File::create(rejects).map_err(io)?);
    let mut written = 0;
    let mut base = 0u64;
    let mut file = usize::MAX;
    for d in done.iter() {
        if d.split.file != file {
            file = d.split.file;
            base = 0;
        }
        if let Some(part) = &d.part {
            let reader = BufReader::new(File::open(part).map_err(|e| ImportError::io(part, e))?);
            for entry in reader.split(b'\n') {
                let entry = entry.map_err(|e| ImportError::io(part, e))?;
                let Some(tab) = entry.iter().position(|&b| b == b'\t') else {
                    continue;
                };
                let local: u64 = std::str::from_utf8(&entry[..tab])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                write!(out, "{}:{}", d.split.path.display(), base + local).map_err(io)?;
                out.write_all(&entry[tab..]).map_err(io)?;
                out.write_all(b"\n").map_err(io)?;
                written += 1;
            }
            std::fs::remove_file(part).map_err(|e| ImportError::io(part, e))?;
        }
        base += d.lines;
    }
    out.flush().map_err(io)?;
    Ok(written)
}

/// Removes whatever parts `done` names (an import that failed).
pub fn discard(done: &[SplitDone]) {
    for p in done.iter().filter_map(|d| d.part.as_ref()) {
        let _ = std::fs::remove_file(p);
    }
}
