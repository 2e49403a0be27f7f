//! [`StoreFileReader`]: an open store file. Opening reads and checks the
//! trailer, file info, block index and Bloom filter (all kept in memory);
//! data blocks are read on demand with positional reads, so one reader
//! serves any number of concurrent scanners without a lock.
//!
//! Block path: block cache → else `read_at` the frame, check its CRC,
//! decompress, and (if asked) insert the *decompressed but still encoded*
//! payload into the cache: compressed families cache decompressed blocks,
//! encoded families cache encoded blocks (docs/architecture.md, design
//! rule 8, HBase's rule).
//!
//! The reader never trusts a length or offset from disk before checking it
//! against the file size and the other sections, and reports every failed
//! check as `Corrupt` with the file path and the offset of the bad block or
//! section.

use super::block::{self, BlockKind};
use super::bloom::{self, BloomFilter};
use super::fileinfo::FileInfo;
use super::index::BlockIndex;
use super::scanner::StoreFileScanner;
use super::trailer::{Section, TRAILER_LEN, Trailer};
use super::{MAX_BLOCK_LEN, block::FRAME_OVERHEAD};
use crate::cache::BlockCache;
use crate::error::{Result, StorageError};
use crate::fs::{LocalFs, RandomRead, Storage};
use bytes::Bytes;
use ferrobase_types::{BloomType, Compression};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Source of process-unique reader ids (the block cache key prefix). Ids are
/// never reused, so a cached block can never be mistaken for another file's.
static NEXT_READER_ID: AtomicU64 = AtomicU64::new(1);

/// See the module docs.
#[derive(Debug)]
pub struct StoreFileReader {
    /// The path on its storage root (its name identifies it).
    path: PathBuf,
    /// The file as shown in messages.
    shown: PathBuf,
    file: Arc<dyn RandomRead>,
    id: u64,
    size: u64,
    info: FileInfo,
    /// The trailer's format version (how NONE blocks are laid out).
    version: u32,
    index: BlockIndex,
    bloom: Option<BloomFilter>,
    cache: Option<Arc<BlockCache>>,
    /// The sequence id every cell is read with, for a bulk-loaded file
    /// (its name says it: `super::bulk_name`).
    bulk_seq: Option<u64>,
    /// The name the region's manifest lists this reader under: the file's
    /// own name, or a reference's name.
    name: String,
    /// A reference's row range: only these rows of the file are served
    /// (`super::half`).
    bounds: Option<RowBounds>,
}

/// Rows `[start, end)` of a file (empty: open), as a reference reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowBounds {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
}

impl RowBounds {
    /// True when `row` is inside the bounds.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= self.start.as_slice() && (self.end.is_empty() || row < self.end.as_slice())
    }
}

impl StoreFileReader {
    /// Opens the local file `path`; see [`open_on`](Self::open_on).
    pub fn open(path: &Path, cache: Option<Arc<BlockCache>>) -> Result<Arc<StoreFileReader>> {
        Self::open_on(&LocalFs::as_given(), path, cache)
    }

    /// Opens `path` on `fs` and checks everything but the data blocks.
    pub fn open_on(
        fs: &dyn Storage,
        at: &Path,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Arc<StoreFileReader>> {
        Self::open_whole(fs, at, cache).map(Arc::new)
    }

    /// [`open_on`](Self::open_on), not yet shared.
    pub(crate) fn open_whole(
        fs: &dyn Storage,
        at: &Path,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<StoreFileReader> {
        let file = fs.open(at)?;
        Self::from_file(file, at, PathBuf::from(fs.display(at)), cache)
    }

    /// Reads the trailer, file info, index and Bloom filter of the opened
    /// `file`, found at `at` (shown in messages as `shown`).
    pub(crate) fn from_file(
        file: Arc<dyn RandomRead>,
        at: &Path,
        shown: PathBuf,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<StoreFileReader> {
        let path = shown.as_path();
        let size = file.len();
        if size < TRAILER_LEN as u64 {
            return Err(StorageError::corrupt(
                path,
                0,
                format!(
                    "file is {size} bytes, shorter than the {TRAILER_LEN}-byte store file trailer"
                ),
            ));
        }
        let trailer_at = size - TRAILER_LEN as u64;
        let mut buf = vec![0; TRAILER_LEN];
        read_exact(&*file, path, &mut buf, trailer_at)?;
        let trailer = Trailer::decode(&buf, size)
            .map_err(|(off, what)| StorageError::corrupt(path, off, what))?;

        // File info first: it says which compression, encoding and Bloom
        // type the other sections must agree with.
        let info_bytes = read_section(&*file, path, trailer.info, BlockKind::FileInfo)?;
        let info = FileInfo::decode(&info_bytes, size).map_err(|w| {
            StorageError::corrupt(path, trailer.info.offset, format!("file info: {w}"))
        })?;

        let index_bytes = read_section(&*file, path, trailer.index, BlockKind::Index)?;
        let index = BlockIndex::parse(&index_bytes, trailer.data_len)
            .map_err(|w| StorageError::corrupt(path, trailer.index.offset, w))?;
        if index.len() as u64 != info.blocks {
            return Err(StorageError::corrupt(
                path,
                trailer.index.offset,
                format!(
                    "block index lists {} blocks, file info says {}",
                    index.len(),
                    info.blocks
                ),
            ));
        }

        let bloom = match (info.bloom, trailer.bloom.len) {
            (BloomType::None, 0) => None,
            (BloomType::None, _) | (_, 0) => {
                return Err(StorageError::corrupt(
                    path,
                    trailer.bloom.offset,
                    format!(
                        "file info says Bloom {} but the Bloom section is {} bytes",
                        info.bloom, trailer.bloom.len
                    ),
                ));
            }
            (kind, _) => {
                let bytes = read_section(&*file, path, trailer.bloom, BlockKind::Bloom)?;
                let f = BloomFilter::parse(&bytes).map_err(|w| {
                    StorageError::corrupt(path, trailer.bloom.offset, format!("Bloom filter: {w}"))
                })?;
                if f.keys() != info.bloom_keys {
                    return Err(StorageError::corrupt(
                        path,
                        trailer.bloom.offset,
                        format!(
                            "Bloom filter holds {} keys, file info says {}",
                            f.keys(),
                            info.bloom_keys
                        ),
                    ));
                }
                if f.kind() != kind {
                    return Err(StorageError::corrupt(
                        path,
                        trailer.bloom.offset,
                        format!("Bloom filter is {}, file info says {kind}", f.kind()),
                    ));
                }
                Some(f)
            }
        };
        let bulk_seq = at
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(super::bulk_name::bulk_seq_id);
        let mut info = info;
        if let Some(seq) = bulk_seq {
            info.max_seq_id = seq;
            info.min_seq_id = seq;
        }
        let name = at
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        Ok(StoreFileReader {
            bulk_seq,
            name,
            bounds: None,
            path: at.to_path_buf(),
            shown,
            file,
            id: NEXT_READER_ID.fetch_add(1, Ordering::Relaxed),
            size,
            info,
            version: trailer.version,
            index,
            bloom,
            cache,
        })
    }

    /// The sequence id a bulk-loaded file's cells are read with (`None`
    /// for a flush or compaction output, whose cells carry their own).
    pub fn bulk_seq_id(&self) -> Option<u64> {
        self.bulk_seq
    }

    /// The file info; for a bulk-loaded file, its sequence ids are the
    /// load's.
    pub fn info(&self) -> &FileInfo {
        &self.info
    }

    /// The name the region's manifest lists this reader under.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A reference's row range (`None`: the whole file is served).
    pub fn bounds(&self) -> Option<&RowBounds> {
        self.bounds.as_ref()
    }

    /// True when this reader serves a reference to another region's file.
    pub fn is_reference(&self) -> bool {
        self.bounds.is_some()
    }

    /// The store file format version the file was written in.
    pub fn format_version(&self) -> u32 {
        self.version
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// File length in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// This reader's block-cache key prefix.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Bytes of the in-memory Bloom filter (0 without one).
    pub fn bloom_size_bytes(&self) -> usize {
        self.bloom.as_ref().map_or(0, BloomFilter::size_bytes)
    }

    /// False only when the Bloom filter proves `row` absent (ROW and ROWCOL
    /// files both hold every row).
    pub fn might_contain_row(&self, row: &[u8]) -> bool {
        if self.bounds.as_ref().is_some_and(|b| !b.contains(row)) {
            return false;
        }
        match &self.bloom {
            Some(b) => b.may_contain(row, bloom::SEED_ROW),
            None => true,
        }
    }

    /// For ROWCOL files, false when the column is proven absent; for ROW
    /// files the row check; true without a filter.
    pub fn might_contain_column(&self, row: &[u8], family: &[u8], qualifier: &[u8]) -> bool {
        if self.bounds.as_ref().is_some_and(|b| !b.contains(row)) {
            return false;
        }
        match &self.bloom {
            Some(b) if b.kind() == BloomType::RowCol => {
                bloom::with_column_key(row, family, qualifier, |k| {
                    b.may_contain(k, bloom::SEED_COL)
                })
            }
            Some(b) => b.may_contain(row, bloom::SEED_ROW),
            None => true,
        }
    }

    /// A cursor over the file. `cache_blocks`: whether blocks it reads enter
    /// the block cache (false for compactions and BLOCKCACHE=false
    /// families); blocks already cached are used either way.
    pub fn scanner(self: &Arc<Self>, cache_blocks: bool) -> StoreFileScanner {
        StoreFileScanner::new(self.clone(), cache_blocks)
    }

    /// Drops this file's blocks from the cache (the file is being deleted).
    /// Removes exactly the blocks the index lists, without walking the cache.
    pub fn evict_from_cache(&self) {
        if let Some(c) = &self.cache {
            for h in self.index.handles() {
                c.evict_block(self.id, h.offset);
            }
        }
    }

    /// Makes this reader serve only `bounds` of its file, under the
    /// manifest name `name` (`super::half` computes the half's statistics).
    pub(crate) fn restrict(
        mut self,
        name: String,
        bounds: RowBounds,
        info: FileInfo,
        size: u64,
    ) -> StoreFileReader {
        self.name = name;
        self.bounds = Some(bounds);
        self.info = info;
        self.size = size;
        self
    }

    /// The bytes of the whole file (a reference's [`size`](Self::size) is
    /// its half's share).
    pub fn file_size(&self) -> u64 {
        self.file.len()
    }

    pub(crate) fn index(&self) -> &BlockIndex {
        &self.index
    }

    /// The decoded payload of data block `i` (from the cache when present).
    pub(crate) fn read_block(&self, i: usize, cache_blocks: bool) -> Result<Bytes> {
        let h = self.index.handle(i).ok_or_else(|| {
            StorageError::corrupt(
                &self.shown,
                0,
                format!("data block {i} is not in the block index"),
            )
        })?;
        if let Some(c) = &self.cache
            && let Some(b) = c.get(self.id, h.offset)
        {
            return Ok(b);
        }
        // The index bounded `h.len` by MAX_BLOCK_LEN + FRAME_OVERHEAD at open.
        let mut frame = vec![0; h.len as usize];
        read_exact(&*self.file, &self.shown, &mut frame, h.offset)?;
        let payload =
            block::decode_frame(frame, BlockKind::Data, self.info.compression).map_err(|w| {
                StorageError::corrupt(&self.shown, h.offset, format!("data block {i}: {w}"))
            })?;
        if cache_blocks && let Some(c) = &self.cache {
            c.insert(self.id, h.offset, payload.clone());
        }
        Ok(payload)
    }
}

/// `read_exact_at`, with a short read (the file shrank under us) reported as
/// corruption at that offset.
fn read_exact(file: &dyn RandomRead, path: &Path, buf: &mut [u8], offset: u64) -> Result<()> {
    file.read_exact_at(buf, offset).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            StorageError::corrupt(
                path,
                offset,
                format!(
                    "{} bytes at this offset run past the end of the file",
                    buf.len()
                ),
            )
        } else {
            StorageError::io(path, e)
        }
    })
}

/// Reads and checks one section (never compressed).
fn read_section(file: &dyn RandomRead, path: &Path, s: Section, kind: BlockKind) -> Result<Bytes> {
    if s.len < FRAME_OVERHEAD as u64 || s.len > (MAX_BLOCK_LEN + FRAME_OVERHEAD) as u64 {
        return Err(StorageError::corrupt(
            path,
            s.offset,
            format!("{} of {} bytes", kind.name(), s.len),
        ));
    }
    let mut buf = vec![0; s.len as usize];
    read_exact(file, path, &mut buf, s.offset)?;
    block::decode_frame(buf, kind, Compression::None)
        .map_err(|w| StorageError::corrupt(path, s.offset, w))
}
