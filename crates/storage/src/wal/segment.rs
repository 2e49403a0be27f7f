//! Segment files: their names, their header, creating one durably and
//! listing a directory's segments in creation order.
//!
//! A segment is `wal-<20-digit id>.log`; ids only grow, so name order is
//! creation order. It starts with a 12-byte header:
//!
//! ```text
//! +------------------+-------------+
//! | magic "FBWALSEG" | version u32 |   then records back to back
//! +------------------+-------------+
//! ```
//!
//! This module never reads or writes records and never deletes files.

use crate::error::Result;
use crate::fs::{LogWriter, Storage};
use std::path::{Path, PathBuf};

/// First 8 bytes of every segment.
pub(crate) const MAGIC: &[u8; 8] = b"FBWALSEG";
/// The format version this code writes (see `record` for what changed).
pub(crate) const VERSION: u32 = 3;
/// The oldest format version this code still reads.
pub(crate) const MIN_READ_VERSION: u32 = 1;
/// Magic + version.
pub(crate) const HEADER_LEN: u64 = 12;

const PREFIX: &str = "wal-";
const SUFFIX: &str = ".log";

/// The file name of segment `id`.
pub(crate) fn file_name(id: u64) -> String {
    format!("{PREFIX}{id:020}{SUFFIX}")
}

/// The id in a segment file name; `None` for any other file.
pub(crate) fn parse_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Every segment in `dir`, sorted by id.
pub(crate) fn list(fs: &dyn Storage, dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for name in fs.list(dir)? {
        if let Some(id) = parse_name(&name) {
            out.push((id, dir.join(name)));
        }
    }
    out.sort_unstable_by_key(|(id, _)| *id);
    Ok(out)
}

/// The header bytes.
pub(crate) fn header() -> [u8; HEADER_LEN as usize] {
    let mut h = [0u8; HEADER_LEN as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// What the first bytes of an existing segment say.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HeaderCheck {
    /// A readable segment of this format version.
    Ok(u32),
    /// Shorter than a header: a segment whose creation was cut short.
    Short,
    Bad(String),
}

/// Checks a segment's leading bytes (up to [`HEADER_LEN`] of them).
pub(crate) fn check_header(bytes: &[u8]) -> HeaderCheck {
    let mut c = crate::codec::Cursor::new(bytes);
    let (Some(magic), Some(version)) = (c.bytes(MAGIC.len()), c.u32_le()) else {
        return HeaderCheck::Short;
    };
    if magic != MAGIC {
        return HeaderCheck::Bad(format!(
            "bad segment magic {} (expected {})",
            ferrobase_types::binary::to_string_binary(magic),
            ferrobase_types::binary::to_string_binary(MAGIC)
        ));
    }
    if !(MIN_READ_VERSION..=VERSION).contains(&version) {
        return HeaderCheck::Bad(format!(
            "unsupported WAL format version {version} (this build reads {MIN_READ_VERSION} to {VERSION})"
        ));
    }
    HeaderCheck::Ok(version)
}

/// Creates segment `id` with its header, durably (the storage syncs the
/// header and the directory entry), so a crash never leaves a segment the
/// next open cannot name.
pub(crate) fn create(
    fs: &dyn Storage,
    dir: &Path,
    id: u64,
) -> Result<(Box<dyn LogWriter>, PathBuf)> {
    let path = dir.join(file_name(id));
    let log = fs.create_log(&path, &header())?;
    Ok((log, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_id_and_parse_back() {
        assert_eq!(file_name(42), "wal-00000000000000000042.log");
        assert_eq!(parse_name(&file_name(u64::MAX)), Some(u64::MAX));
        assert!(file_name(9) < file_name(10));
        for bad in [
            "wal-1.log",
            "wal-0000000000000000004x.log",
            "LOCK",
            "wal-00000000000000000042.log.tmp",
        ] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn header_checks() {
        let h = header();
        assert_eq!(check_header(&h), HeaderCheck::Ok(VERSION));
        assert_eq!(check_header(&h[..5]), HeaderCheck::Short);
        let mut v1 = h;
        v1[8] = 1;
        assert_eq!(check_header(&v1), HeaderCheck::Ok(1));
        let mut v2 = h;
        v2[8] = 2;
        assert_eq!(check_header(&v2), HeaderCheck::Ok(2));
        let mut v4 = h;
        v4[8] = 4;
        assert!(matches!(check_header(&v4), HeaderCheck::Bad(m) if m.contains("version 4")));
        let mut v0 = h;
        v0[8] = 0;
        assert!(matches!(check_header(&v0), HeaderCheck::Bad(m) if m.contains("version 0")));
        assert!(matches!(check_header(&[0; 12]), HeaderCheck::Bad(m) if m.contains("magic")));
    }
}
