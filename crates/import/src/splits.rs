//! Input files cut into *splits* on line boundaries, so several readers
//! share a large file (Hadoop's `TextInputFormat` rule): a split is a byte
//! range `[start, end)`, and it owns every line whose first byte lies in
//! it. Its reader skips the partial line at `start` (the previous split
//! owns it) and reads past `end` to finish its last line.
//!
//! Line numbers are counted per split; the rejects file turns them into
//! file line numbers once every split is done (`crate::rejects`). A line
//! ends at `\n`; a `\r` before it is dropped.
//!
//! This module reads bytes only; it never parses a line.

use crate::ImportError;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// One reader's share of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Index of the file in the import's file list.
    pub file: usize,
    pub path: PathBuf,
    /// Index of this split among its file's splits.
    pub index: usize,
    pub start: u64,
    pub end: u64,
}

/// Cuts every file into splits of about `split_size` bytes (at least one
/// per file; an empty file gets one empty split).
pub fn plan(files: &[PathBuf], split_size: u64) -> Result<Vec<Split>, ImportError> {
    let split_size = split_size.max(1);
    let mut out = Vec::new();
    for (file, path) in files.iter().enumerate() {
        let meta = std::fs::metadata(path).map_err(|e| ImportError::io(path, e))?;
        if !meta.is_file() {
            return Err(ImportError::Invalid(format!(
                "{} is not a file",
                path.display()
            )));
        }
        let len = meta.len();
        let n = len.div_ceil(split_size).max(1);
        for index in 0..n {
            out.push(Split {
                file,
                path: path.clone(),
                index: index as usize,
                start: len * index / n,
                end: len * (index + 1) / n,
            });
        }
    }
    Ok(out)
}

/// Reads the lines a [`Split`] owns.
pub struct SplitReader {
    input: BufReader<File>,
    path: PathBuf,
    /// Offset of the next byte `input` returns.
    pos: u64,
    end: u64,
    buf: Vec<u8>,
}

impl SplitReader {
    pub fn open(split: &Split) -> Result<SplitReader, ImportError> {
        let io = |e| ImportError::io(&split.path, e);
        let mut input = BufReader::with_capacity(1 << 20, File::open(&split.path).map_err(io)?);
        let mut pos = split.start;
        if split.start > 0 {
            // The byte before `start` tells whether a line starts at
            // `start`: skip through the first line break from there.
            input.seek(SeekFrom::Start(split.start - 1)).map_err(io)?;
            let mut skipped = Vec::new();
            let n = input.read_until(b'\n', &mut skipped).map_err(io)?;
            pos = split.start - 1 + n as u64;
        }
        Ok(SplitReader {
            input,
            path: split.path.clone(),
            pos,
            end: split.end,
            buf: Vec::new(),
        })
    }

    /// The offset of the next line's first byte.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// The next line without its line break, and the bytes it took
    /// (line break included); `None` past the split.
    pub fn next_line(&mut self) -> Result<Option<(&[u8], u64)>, ImportError> {
        if self.pos >= self.end {
            return Ok(None);
        }
        self.buf.clear();
        let n = self
            .input
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| ImportError::io(&self.path, e))?;
        if n == 0 {
            return Ok(None);
        }
        self.pos += n as u64;
        let mut line = &self.buf[..];
        if let Some(l) = line.strip_suffix(b"\n") {
            line = l;
            if let Some(l) = line.strip_suffix(b"\r") {
                line = l;
            }
        }
        Ok(Some((line, n as u64)))
    }
}

/// Total bytes of the files.
pub fn total_bytes(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// `path` shown in messages.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(splits: &[Split]) -> Vec<Vec<String>> {
        splits
            .iter()
            .map(|s| {
                let mut r = SplitReader::open(s).unwrap();
                let mut out = Vec::new();
                while let Some((l, _)) = r.next_line().unwrap() {
                    out.push(String::from_utf8_lossy(l).to_string());
                }
                out
            })
            .collect()
    }

    #[test]
    fn every_line_is_read_once_whatever_the_split_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        let text = "a\nbb\r\n\nccc\ndddd\ne";
        std::fs::write(&path, text).unwrap();
        let want: Vec<String> = ["a", "bb", "", "ccc", "dddd", "e"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for size in 1..=20 {
            let splits = plan(std::slice::from_ref(&path), size).unwrap();
            let got: Vec<String> = lines_of(&splits).into_iter().flatten().collect();
            assert_eq!(got, want, "split size {size}");
        }
        let empty = dir.path().join("empty.txt");
        std::fs::write(&empty, "").unwrap();
        let splits = plan(&[empty], 10).unwrap();
        assert_eq!(splits.len(), 1);
        assert!(lines_of(&splits)[0].is_empty());
        assert!(plan(&[dir.path().to_path_buf()], 10).is_err());
    }
}
