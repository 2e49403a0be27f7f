//! Sequential, checked reading of one segment's records.
//!
//! The reader streams (it never loads a whole segment), checks the header,
//! then each frame's marker, length and CRC. A frame that fails a check is
//! reported as [`Next::Bad`] with its offset; deciding whether that is a
//! torn tail or corruption is the caller's business (`recovery`,
//! `replay`). It never writes, truncates or decodes edits.

use super::record::{self, FRAME_HEADER_LEN};
use super::segment::{self, HEADER_LEN, HeaderCheck};
use crate::error::{Result, StorageError};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// What the next read found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// A frame whose CRC matches; its payload is [`SegmentReader::payload`].
    Record { offset: u64 },
    /// Clean end: the limit was reached exactly at a frame boundary.
    End,
    /// A frame starting at `offset` failed a check.
    Bad { offset: u64, reason: String },
}

/// A segment as found on disk.
pub(crate) enum Opened {
    Reader(SegmentReader),
    /// Shorter than a header (file length given).
    Short(u64),
    BadHeader(String),
}

/// Reads one segment front to back.
pub(crate) struct SegmentReader {
    path: PathBuf,
    reader: BufReader<Box<dyn Read + Send>>,
    pos: u64,
    end: u64,
    payload: Vec<u8>,
    version: u32,
}

impl SegmentReader {
    /// Reads the stream `(file, len)` (named `path` in errors) up to
    /// `limit` bytes, or to its end.
    pub(crate) fn open(
        path: &Path,
        (file, len): (Box<dyn Read + Send>, u64),
        limit: Option<u64>,
    ) -> Result<Opened> {
        let io = |e| StorageError::io(path, e);
        let end = limit.map_or(len, |l| l.min(len));
        let mut reader = BufReader::with_capacity(256 << 10, file);
        if end < HEADER_LEN {
            return Ok(Opened::Short(len));
        }
        let mut header = [0u8; HEADER_LEN as usize];
        reader.read_exact(&mut header).map_err(io)?;
        let version = match segment::check_header(&header) {
            HeaderCheck::Ok(version) => version,
            HeaderCheck::Short => return Ok(Opened::Short(len)),
            HeaderCheck::Bad(why) => return Ok(Opened::BadHeader(why)),
        };
        Ok(Opened::Reader(SegmentReader {
            path: path.to_path_buf(),
            reader,
            pos: HEADER_LEN,
            end,
            payload: Vec::new(),
            version,
        }))
    }

    /// Bytes this reader covers.
    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    /// The segment's format version (how to decode its payloads).
    pub(crate) fn version(&self) -> u32 {
        self.version
    }

    /// The payload of the last [`Next::Record`].
    pub(crate) fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// Reads the next frame. I/O failures are errors; format failures are
    /// [`Next::Bad`]; after `Bad` the reader must not be used again.
    pub(crate) fn next(&mut self) -> Result<Next> {
        let offset = self.pos;
        let left = self.end.saturating_sub(offset);
        if left == 0 {
            return Ok(Next::End);
        }
        let bad = |reason: String| Ok(Next::Bad { offset, reason });
        if left < FRAME_HEADER_LEN as u64 {
            return bad(format!(
                "truncated record header ({left} bytes before end of file)"
            ));
        }
        let mut h = [0u8; FRAME_HEADER_LEN];
        self.reader
            .read_exact(&mut h)
            .map_err(|e| StorageError::io(&self.path, e))?;
        let header = match record::parse_header(&h) {
            Ok(header) => header,
            Err(e) => return bad(e.to_string()),
        };
        let room = left - FRAME_HEADER_LEN as u64;
        if header.len as u64 > room {
            // Checked before reading, so a garbage length never allocates.
            return bad(format!(
                "record of {} bytes runs past end of file ({room} bytes left)",
                header.len
            ));
        }
        self.payload.clear();
        let got = (&mut self.reader)
            .take(header.len as u64)
            .read_to_end(&mut self.payload)
            .map_err(|e| StorageError::io(&self.path, e))?;
        if got != header.len {
            return bad(format!(
                "record of {} bytes cut short at {got} bytes",
                header.len
            ));
        }
        if !record::crc_ok(&header, &self.payload) {
            return bad(format!("CRC mismatch in record of {} bytes", header.len));
        }
        self.pos = offset + (FRAME_HEADER_LEN + header.len) as u64;
        Ok(Next::Record { offset })
    }
}
