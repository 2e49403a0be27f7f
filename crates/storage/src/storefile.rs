//! Store files: the immutable sorted files a flush or a compaction writes
//! (HBase's HFile role), in ferrobase's own format (`docs/storefile-format.md`).
//!
//! ```text
//!  offset 0                                                     file length
//!  +---------+---------+-----+-------------+-------------+-----------+---------+
//!  | data    | data    | ... | Bloom       | block       | file info | trailer |
//!  | block 0 | block 1 |     | (optional)  | index       |           | 72 B    |
//!  +---------+---------+-----+-------------+-------------+-----------+---------+
//!  every block and section is framed and CRC32C-checked (see `block`);
//!  the trailer points at the sections and ends with the magic `FBSTORE1`.
//! ```
//!
//! Sub-modules, one concept each:
//! - `block`: the frame around every block/section (kind, codec, raw length,
//!   CRC32C), and the data block's restart-point footer;
//!   `block::builder` encodes entries into a block, `block::iterator` decodes
//!   and seeks inside one;
//! - `encoding`: the per-entry byte layouts of each DATA_BLOCK_ENCODING;
//! - `compression`: the block codecs (NONE, SNAPPY, LZ4, ZSTD, GZ);
//! - `bloom`: the Bloom filter and its on-disk hash;
//! - `index`: the single-level block index (offset, length, first/last key);
//! - `fileinfo`: [`FileInfo`] and its serialization;
//! - `trailer`: the fixed-size trailer;
//! - `bulk_name`: the names of bulk-loaded files, which carry the
//!   sequence id their cells are read with;
//! - `half`: readers restricted to a row range of a file (references);
//! - `writer`, `reader`, `scanner`: the public types.
//!
//! Nothing here applies deletes, versions or TTL (that is `crate::scanner`),
//! and no decoder indexes into bytes read from disk: every check failure is a
//! [`StorageError::Corrupt`](crate::StorageError::Corrupt) naming the file and
//! the byte offset of the bad block or section.

#![deny(clippy::indexing_slicing)]

mod block;
mod bloom;
mod bulk_name;
mod compression;
mod encoding;
mod fileinfo;
mod half;
mod index;
mod reader;
mod scanner;
mod trailer;
mod writer;

pub use bulk_name::{bulk_file_name, bulk_seq_id};
pub use fileinfo::FileInfo;
pub use half::{midkey_row, open_reference, open_reference_file};
pub use reader::{RowBounds, StoreFileReader};
pub use scanner::StoreFileScanner;
pub use writer::{RowRunCopy, StoreFileWriter};

/// The on-disk format version this build writes. Version 3 writes NONE
/// blocks as row runs (`encoding::Layout::RowRun`, block code 6); version 2
/// wrote them row-shared (code 5).
pub const FORMAT_VERSION: u32 = 3;
/// The oldest version this build reads: versions 1 and 2 differ only in
/// their NONE blocks (code 0, whole keys; code 5, row-shared), which are
/// still decoded.
pub const MIN_READ_VERSION: u32 = 1;

/// The last eight bytes of every store file.
pub const MAGIC: &[u8; 8] = b"FBSTORE1";

/// Largest uncompressed block or section we accept: bigger lengths in a
/// header are corruption, and refusing them keeps a bad length from turning
/// into a huge allocation. A block is BLOCKSIZE (≤ 16 MiB) plus at most one
/// cell, and HBase caps a cell at 10 MiB by default, so 1 GiB is generous.
pub(crate) const MAX_BLOCK_LEN: usize = 1 << 30;

/// A seek target parsed once, compared against many keys (index entries,
/// restart points, walked entries) with the same result as
/// [`ferrobase_types::key::compare`].
pub(crate) struct SeekTarget<'a> {
    raw: &'a [u8],
    parsed: Option<ferrobase_types::key::KeyRef<'a>>,
}

impl<'a> SeekTarget<'a> {
    pub fn new(raw: &'a [u8]) -> SeekTarget<'a> {
        SeekTarget {
            raw,
            parsed: ferrobase_types::key::KeyRef::parse(raw),
        }
    }

    /// True when `key` sorts before the target.
    pub fn is_after(&self, key: &[u8]) -> bool {
        let ord = match (ferrobase_types::key::KeyRef::parse(key), &self.parsed) {
            (Some(k), Some(t)) => k.cmp_hbase(t),
            _ => ferrobase_types::key::compare(key, self.raw),
        };
        ord == std::cmp::Ordering::Less
    }
}
