//! [`StoreFileWriter`]: writes one store file sequentially, block by block,
//! through a [`FileWriter`] of the storage root, then the Bloom filter,
//! block index, file info and trailer.
//!
//! The writer owns the checks on its input (every key parses, belongs to the
//! file's family and arrives in internal order) so that readers can rely on
//! them. The file appears at its name, whole and durable, only when
//! [`finish`](StoreFileWriter::finish) returns (the storage's guarantee); a
//! writer dropped without `finish` leaves nothing a reader could open.

mod row;
mod stats;
mod verbatim;

pub use verbatim::RowRunCopy;

use self::stats::EntryStats;
use super::MAX_BLOCK_LEN;
use super::block::builder::BlockBuilder;
use super::block::{self, BlockKind};
use super::bloom::{self, BloomBuilder};
use super::compression::{self, Compressor};
use super::fileinfo::{FileInfo, key_text};
use super::index::IndexBuilder;
use super::trailer::{Section, Trailer};
use crate::error::{Result, StorageError};
use crate::fs::pipelined::PipelinedWriter;
use crate::fs::{FileWriter, LocalFs, Storage};
use ferrobase_types::key::{self, KeyRef};
use ferrobase_types::{BloomType, CellType, Compression, DataBlockEncoding, FamilyDescriptor};
use std::cmp::Ordering;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The type code of a put, the commonest cell: checked before any other.
const PUT: u8 = CellType::Put as u8;
/// Bytes of a key that are timestamp and type (not the column part).
const TS_TYPE_LEN: usize = 9;
/// Room reserved for an entry's varints and flags when checking the block
/// size limit.
const ENTRY_SLACK: usize = 64;

/// See the module docs.
pub struct StoreFileWriter {
    /// The file as shown in messages.
    path: PathBuf,
    out: Box<dyn FileWriter>,
    /// Bytes handed to `out` so far (the next block's offset).
    pos: u64,
    family: String,
    blocksize: usize,
    encoding: DataBlockEncoding,
    compression: Compression,
    bloom_type: BloomType,
    block: BlockBuilder,
    block_first_key: Vec<u8>,
    compressor: Compressor,
    index: IndexBuilder,
    bloom: Option<BloomBuilder>,
    // Statistics for the file info.
    first_key: Vec<u8>,
    last_key: Vec<u8>,
    /// `last_key` parsed: (row length, family length, qualifier length,
    /// timestamp, type code); `None` before the first entry. Kept so each
    /// append parses one key, not two.
    last_parts: Option<(usize, usize, usize, u64, u8)>,
    last_seq: u64,
    /// The row `begin_row` opened: (row length, whether the last entry is
    /// of this row); `row_key` holds its row and family part of a key.
    open_row: Option<(usize, bool)>,
    row_key: Vec<u8>,
    stats: EntryStats,
    blocks: u64,
    uncompressed_bytes: u64,
}

impl StoreFileWriter {
    /// Creates (or replaces) the local file `path`; see [`create_on`](Self::create_on).
    pub fn create(
        path: &Path,
        family: &FamilyDescriptor,
        expected_entries: u64,
    ) -> Result<StoreFileWriter> {
        Self::create_on(&LocalFs::as_given(), path, family, expected_entries)
    }

    /// Creates (or replaces) `path` on `fs`. Uses the family's BLOCKSIZE,
    /// DATA_BLOCK_ENCODING, COMPRESSION and BLOOMFILTER; `expected_entries`
    /// sizes the Bloom filter (an overestimate is folded away at finish; an
    /// underestimate raises its false-positive rate).
    pub fn create_on(
        fs: &dyn Storage,
        path: &Path,
        family: &FamilyDescriptor,
        expected_entries: u64,
    ) -> Result<StoreFileWriter> {
        let path_shown = PathBuf::from(fs.display(path));
        // Blocks are written by a thread of their own: a flush is one thread
        // per store, and its write(2) copies need not wait in line with it.
        let out: Box<dyn FileWriter> =
            Box::new(PipelinedWriter::new(fs.create(path)?, &path_shown)?);
        let path = &path_shown;
        let blocksize = (family.blocksize as usize).clamp(1, MAX_BLOCK_LEN / 2);
        let compressor =
            Compressor::new(family.compression).map_err(|e| StorageError::io(path, e))?;
        let bloom = match family.bloomfilter {
            BloomType::None => None,
            BloomType::Row => Some(BloomBuilder::new(BloomType::Row, expected_entries)),
            // Rows and columns: up to two keys per entry.
            BloomType::RowCol => Some(BloomBuilder::new(
                BloomType::RowCol,
                expected_entries.saturating_mul(2),
            )),
        };
        Ok(StoreFileWriter {
            path: path.to_path_buf(),
            out,
            pos: 0,
            family: family.name.clone(),
            blocksize,
            encoding: family.data_block_encoding,
            compression: family.compression,
            bloom_type: family.bloomfilter,
            block: BlockBuilder::new(family.data_block_encoding, blocksize + blocksize / 4),
            block_first_key: Vec::new(),
            compressor,
            index: IndexBuilder::default(),
            bloom,
            first_key: Vec::new(),
            last_key: Vec::new(),
            last_parts: None,
            last_seq: 0,
            open_row: None,
            row_key: Vec::new(),
            stats: EntryStats::default(),
            blocks: 0,
            uncompressed_bytes: 0,
        })
    }

    /// Appends one entry. Entries must arrive in internal order
    /// ([`compare_entries`](crate::iter::compare_entries)); a key that does not parse, names another
    /// family or arrives out of order is an `InvalidRequest`.
    pub fn append(&mut self, key: &[u8], seq: u64, value: &[u8]) -> Result<()> {
        let k = KeyRef::parse(key).ok_or_else(|| {
            StorageError::InvalidRequest(format!(
                "store file {}: unparseable key {}",
                self.path.display(),
                ferrobase_types::binary::to_string_binary(key)
            ))
        })?;
        if k.family != self.family.as_bytes() {
            return Err(StorageError::InvalidRequest(format!(
                "store file {} of family '{}' got a cell of family '{}'",
                self.path.display(),
                self.family,
                ferrobase_types::binary::to_string_binary(k.family)
            )));
        }
        if key.len() + value.len() + ENTRY_SLACK > MAX_BLOCK_LEN {
            return Err(StorageError::InvalidRequest(format!(
                "cell {} of {} bytes is too large for a store file block",
                key_text(key),
                key.len() + value.len()
            )));
        }
        let (new_row, new_col) = match self.last_parts.and_then(|p| self.last_ref(p)) {
            None => (true, true),
            Some(last) => {
                // One row comparison serves both the order check and the
                // bloom's "new row" (a flush appends ~50 cells per row of
                // `wide53`, each repeating its 64-byte row).
                let row_order = last.row.cmp(k.row);
                let same_col = row_order == Ordering::Equal
                    && last.family == k.family
                    && last.qualifier == k.qualifier;
                let order = row_order
                    .then_with(|| key::short_cmp(last.family, k.family))
                    .then_with(|| last.qualifier.cmp(k.qualifier))
                    .then_with(|| k.timestamp.cmp(&last.timestamp))
                    .then_with(|| k.type_code.cmp(&last.type_code))
                    .then_with(|| seq.cmp(&self.last_seq));
                if order == Ordering::Greater {
                    return Err(StorageError::InvalidRequest(format!(
                        "store file {}: entry {} (seq {seq}) is out of order after {} (seq {})",
                        self.path.display(),
                        key_text(key),
                        key_text(&self.last_key),
                        self.last_seq
                    )));
                }
                (row_order != Ordering::Equal, !same_col)
            }
        };
        // A cell appended by key ends any row `begin_row` opened.
        self.open_row = None;
        self.before_add((key, value.len()), k.row.len(), new_row, new_col)?;
        self.add_to_block(key, seq, value, !new_row);
        // Within a row only the column part changes: copy just that.
        let row_end = 2 + k.row.len();
        if new_row || self.last_key.len() < row_end {
            self.last_key.clear();
            self.last_key.extend_from_slice(key);
        } else {
            self.last_key.truncate(row_end);
            self.last_key
                .extend_from_slice(key.get(row_end..).unwrap_or_default());
        }
        let parts = (
            k.row.len(),
            k.family.len(),
            k.qualifier.len(),
            k.timestamp,
            k.type_code,
        );
        self.account(parts, seq, key.len(), value.len())
    }

    /// Before an entry goes into the block: the Bloom filter's keys, and
    /// finishing the block if the entry would overflow it (`last_key` is
    /// still the previous entry, the block's last).
    #[inline]
    fn before_add(
        &mut self,
        (key, value_len): (&[u8], usize),
        row_len: usize,
        new_row: bool,
        new_col: bool,
    ) -> Result<()> {
        if let Some(b) = &mut self.bloom {
            if new_row {
                b.add(key.get(2..2 + row_len).unwrap_or_default(), bloom::SEED_ROW);
            }
            if new_col && self.bloom_type == BloomType::RowCol {
                // The column part of the encoded key is the ROWCOL key.
                b.add(
                    key.get(..key.len().saturating_sub(TS_TYPE_LEN))
                        .unwrap_or_default(),
                    bloom::SEED_COL,
                );
            }
        }
        if !self.block.is_empty()
            && self.block.size_estimate() + key.len() + value_len + ENTRY_SLACK > MAX_BLOCK_LEN
        {
            self.flush_block()?;
        }
        Ok(())
    }

    #[inline]
    fn add_to_block(&mut self, key: &[u8], seq: u64, value: &[u8], same_row: bool) {
        if self.block.is_empty() {
            self.block_first_key.clear();
            self.block_first_key.extend_from_slice(key);
        }
        self.block.add(key, seq, value, same_row);
        if self.stats.entries == 0 {
            self.first_key = key.to_vec();
        }
    }

    /// After an entry went into the block: the file's statistics, and
    /// finishing the block once it reached BLOCKSIZE.
    #[inline]
    fn account(
        &mut self,
        parts: (usize, usize, usize, u64, u8),
        seq: u64,
        key_len: usize,
        value_len: usize,
    ) -> Result<()> {
        let (_, _, _, timestamp, type_code) = parts;
        self.last_parts = Some(parts);
        self.last_seq = seq;
        self.stats
            .add((seq, timestamp, type_code), key_len, value_len);
        if self.block.size_estimate() >= self.blocksize {
            self.flush_block()?;
        }
        Ok(())
    }

    /// `last_key` as a [`KeyRef`] from its remembered parts (see
    /// [`key::encode_into`] for the layout).
    fn last_ref(
        &self,
        (row, family, qualifier, timestamp, type_code): (usize, usize, usize, u64, u8),
    ) -> Option<KeyRef<'_>> {
        let k = &self.last_key;
        let family_start = 2 + row + 1;
        let qualifier_start = family_start + family;
        Some(KeyRef {
            row: k.get(2..2 + row)?,
            family: k.get(family_start..qualifier_start)?,
            qualifier: k.get(qualifier_start..qualifier_start + qualifier)?,
            timestamp,
            type_code,
        })
    }

    /// Entries appended so far.
    pub fn entries(&self) -> u64 {
        self.stats.entries
    }

    /// Bytes written so far (finished blocks; the open block is not counted).
    pub fn bytes_written(&self) -> u64 {
        self.pos
    }

    fn flush_block(&mut self) -> Result<()> {
        let raw = self.block.finish();
        let raw_len = raw.len();
        let (codec, stored) = self
            .compressor
            .compress(raw)
            .map_err(|e| StorageError::io(&self.path, e))?;
        let len = write_frame(
            &mut self.out,
            &self.path,
            BlockKind::Data,
            codec,
            raw_len,
            stored,
        )?;
        self.index
            .add(self.pos, len, &self.block_first_key, &self.last_key);
        self.pos += len;
        self.blocks += 1;
        self.uncompressed_bytes += raw_len as u64;
        self.block.reset();
        Ok(())
    }

    fn write_section(&mut self, kind: BlockKind, payload: &[u8]) -> Result<Section> {
        // Readers refuse larger sections; fail now rather than write a file
        // nobody can open.
        if payload.len() > MAX_BLOCK_LEN {
            return Err(StorageError::InvalidRequest(format!(
                "store file {}: {} of {} bytes exceeds the {MAX_BLOCK_LEN}-byte limit (raise BLOCKSIZE)",
                self.path.display(),
                kind.name(),
                payload.len()
            )));
        }
        let none = compression::code(Compression::None);
        let len = write_frame(
            &mut self.out,
            &self.path,
            kind,
            none,
            payload.len(),
            payload,
        )?;
        let s = Section {
            offset: self.pos,
            len,
        };
        self.pos += len;
        Ok(s)
    }

    /// Writes the last block, the Bloom filter, the block index, the file
    /// info and the trailer, then publishes the file (durable, at its name).
    pub fn finish(mut self) -> Result<FileInfo> {
        if !self.block.is_empty() {
            self.flush_block()?;
        }
        let data_len = self.pos;
        let (bloom_section, bloom_keys) = match self.bloom.take() {
            Some(b) => {
                let keys = b.keys();
                (self.write_section(BlockKind::Bloom, &b.finish())?, keys)
            }
            None => (
                Section {
                    offset: data_len,
                    len: 0,
                },
                0,
            ),
        };
        let index = std::mem::take(&mut self.index).finish();
        let index_section = self.write_section(BlockKind::Index, &index)?;
        let st = self.stats;
        let empty = st.entries == 0;
        let mut info = FileInfo {
            entries: st.entries,
            avg_key_len: st.key_bytes.checked_div(st.entries).unwrap_or(0),
            avg_value_len: st.value_bytes.checked_div(st.entries).unwrap_or(0),
            first_key: std::mem::take(&mut self.first_key),
            last_key: self.last_key.clone(),
            max_seq_id: st.max_seq,
            min_seq_id: if empty { 0 } else { st.min_seq },
            min_timestamp: if empty { 0 } else { st.min_ts },
            max_timestamp: st.max_ts,
            compression: self.compression,
            encoding: self.encoding,
            bloom: self.bloom_type,
            blocks: self.blocks,
            length: 0,
            delete_markers: st.delete_markers,
            family: self.family.clone(),
            blocksize: self.blocksize as u64,
            bloom_keys,
            uncompressed_bytes: self.uncompressed_bytes,
        };
        let info_section = self.write_section(BlockKind::FileInfo, &info.encode())?;
        let trailer = Trailer {
            data_len,
            bloom: bloom_section,
            index: index_section,
            info: info_section,
            version: super::FORMAT_VERSION,
        };
        let path = self.path;
        self.out
            .write_all(&trailer.encode())
            .map_err(|e| StorageError::io(&path, e))?;
        info.length = self.pos + super::trailer::TRAILER_LEN as u64;
        self.out.finish()?;
        Ok(info)
    }
}

/// Writes one frame (header, stored payload, CRC) and returns its length.
fn write_frame(
    out: &mut Box<dyn FileWriter>,
    path: &Path,
    kind: BlockKind,
    codec: u8,
    raw_len: usize,
    stored: &[u8],
) -> Result<u64> {
    let header = block::header(kind, codec, raw_len);
    let crc = block::frame_crc(&header, stored);
    let io = |e| StorageError::io(path, e);
    out.write_all(&header).map_err(io)?;
    out.write_all(stored).map_err(io)?;
    out.write_all(&crc.to_le_bytes()).map_err(io)?;
    Ok((header.len() + stored.len() + 4) as u64)
}
