//! KeyValue cell blocks: the cells of a call, after its messages, in
//! HBase's `KeyValueCodec` / `KeyValueCodecWithTags` format.
//!
//! This module owns that format: reading cells as borrowed slices of the
//! block (no copy, no allocation per cell), reading a mutation's cells
//! straight into a [`RowMutation`]'s cell runs, and writing cells. It never
//! decides what cells mean (a Put's cells may be an Increment's amounts:
//! the server knows from the `MutationProto`), and never panics or
//! allocates from a length it has not checked against the bytes present.
//!
//! Each cell, all integers big-endian:
//!
//! ```text
//! +----------------+-------------+---------------+-----------+-------------+
//! | i32 cell len L | i32 key len | i32 value len |    key    |    value    |  [tags]
//! +----------------+-------------+---------------+-----------+-------------+
//!                   \___________________ L bytes (a KeyValue) _____________/
//!
//! key  := i16 row len | row | u8 family len | family | qualifier | i64 timestamp | u8 type
//!         (the qualifier is what remains of the key: key len - 12 - row - family)
//! tags := u16 tags len | tags   (present when L > 8 + key len + value len;
//!                                written only by KeyValueCodecWithTags, and
//!                                only for cells that have tags)
//! ```
//!
//! Type codes are `KeyValue.Type`'s: Minimum = 0, Put = 4, Delete = 8,
//! DeleteFamilyVersion = 10, DeleteColumn = 12, DeleteFamily = 14,
//! Maximum = 255. A block is cells back to back; its length comes from the
//! call's `CellBlockMeta`, and the messages say how many cells belong to
//! each mutation or result.

use crate::exception::{ExceptionClass, HBaseException};
use crate::pb;
use bytes::{BufMut, Bytes, BytesMut};
use ferrobase_types::{Cell, CellRun, CellType, Durability, RowMutation};

/// Class name of HBase's `KeyValueCodec` (the Java client's default).
pub const KEY_VALUE_CODEC: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";
/// Class name of HBase's `KeyValueCodecWithTags`.
pub const KEY_VALUE_CODEC_WITH_TAGS: &str = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags";

/// Bytes of a key besides row, family and qualifier: row length (2),
/// family length (1), timestamp (8), type (1).
const KEY_INFRASTRUCTURE: usize = 12;
/// Bytes of a KeyValue besides key and value: the two lengths.
const KV_INFRASTRUCTURE: usize = 8;

/// The cell codec a connection uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CellCodec {
    /// `KeyValueCodec`: tags are never written.
    KeyValue,
    /// `KeyValueCodecWithTags`: a cell's tags are written when it has any.
    KeyValueWithTags,
}

impl CellCodec {
    /// The Java class name a `ConnectionHeader` carries.
    pub fn class_name(self) -> &'static str {
        match self {
            CellCodec::KeyValue => KEY_VALUE_CODEC,
            CellCodec::KeyValueWithTags => KEY_VALUE_CODEC_WITH_TAGS,
        }
    }

    /// The codec named by a Java class name.
    pub fn from_class_name(name: &str) -> Option<CellCodec> {
        match name {
            KEY_VALUE_CODEC => Some(CellCodec::KeyValue),
            KEY_VALUE_CODEC_WITH_TAGS => Some(CellCodec::KeyValueWithTags),
            _ => None,
        }
    }

    /// The codec a connection header asks for: `Ok(None)` when it names
    /// none (every cell then travels inside the messages), HBase's
    /// `UnsupportedCellCodecException` for an unknown codec and
    /// `UnsupportedCompressionCodecException` for any compressor.
    pub fn from_connection_header(
        header: &pb::ConnectionHeader,
    ) -> Result<Option<CellCodec>, HBaseException> {
        let codec = match header.cell_block_codec_class.as_deref() {
            None | Some("") => return Ok(None),
            Some(name) => CellCodec::from_class_name(name).ok_or_else(|| {
                HBaseException::new(
                    ExceptionClass::UnsupportedCellCodec,
                    format!(
                        "cell block codec {name} is not supported; use {KEY_VALUE_CODEC} or {KEY_VALUE_CODEC_WITH_TAGS}"
                    ),
                )
            })?,
        };
        match header.cell_block_compressor_class.as_deref() {
            None | Some("") => Ok(Some(codec)),
            Some(name) => Err(HBaseException::new(
                ExceptionClass::UnsupportedCompressionCodec,
                format!(
                    "cell block compressor {name} is not supported; send cell blocks uncompressed"
                ),
            )),
        }
    }

    fn writes_tags(self) -> bool {
        self == CellCodec::KeyValueWithTags
    }
}

/// A KeyValue's type byte (HBase's `KeyValue.Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum KeyValueType {
    /// A search key sorting after every real cell; never stored.
    Minimum = 0,
    Put = 4,
    Delete = 8,
    DeleteFamilyVersion = 10,
    DeleteColumn = 12,
    DeleteFamily = 14,
    /// A search key sorting before every real cell; never stored.
    Maximum = 255,
}

impl KeyValueType {
    /// The type for a code, if HBase defines one.
    pub fn from_code(code: u8) -> Option<KeyValueType> {
        Some(match code {
            0 => KeyValueType::Minimum,
            4 => KeyValueType::Put,
            8 => KeyValueType::Delete,
            10 => KeyValueType::DeleteFamilyVersion,
            12 => KeyValueType::DeleteColumn,
            14 => KeyValueType::DeleteFamily,
            255 => KeyValueType::Maximum,
            _ => return None,
        })
    }

    /// The byte on the wire.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The stored cell type; `None` for Minimum and Maximum.
    pub fn cell_type(self) -> Option<CellType> {
        CellType::from_code(self.code())
    }
}

impl From<CellType> for KeyValueType {
    fn from(t: CellType) -> KeyValueType {
        match t {
            CellType::Put => KeyValueType::Put,
            CellType::Delete => KeyValueType::Delete,
            CellType::DeleteFamilyVersion => KeyValueType::DeleteFamilyVersion,
            CellType::DeleteColumn => KeyValueType::DeleteColumn,
            CellType::DeleteFamily => KeyValueType::DeleteFamily,
        }
    }
}

/// A cell block that does not parse, or cells that cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed cell block at byte {offset}: {what}")]
#[non_exhaustive]
pub struct CellBlockError {
    /// Offset in the block of the cell that is wrong (for encoding: the
    /// offset it would have had).
    pub offset: usize,
    pub what: &'static str,
}

/// One cell of a block, borrowed from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyValueRef<'a> {
    pub row: &'a [u8],
    pub family: &'a [u8],
    pub qualifier: &'a [u8],
    /// Milliseconds; `i64::MAX` (ferrobase's `LATEST_TIMESTAMP`) means
    /// "the server's clock".
    pub timestamp: u64,
    pub kv_type: KeyValueType,
    pub value: &'a [u8],
    /// Empty when the cell has none.
    pub tags: &'a [u8],
}

fn be_u32(b: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?))
}

fn be_u16(b: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(..2)?.try_into().ok()?))
}

/// A Java `int` length: negative is refused.
fn java_len(b: &[u8]) -> Option<usize> {
    let v = be_u32(b)?;
    if v > i32::MAX as u32 {
        return None;
    }
    Some(v as usize)
}

/// Parses one KeyValue of exactly `kv.len()` bytes; `Err(what)`.
fn parse_key_value(kv: &[u8]) -> Result<KeyValueRef<'_>, &'static str> {
    let key_len = kv
        .get(..4)
        .and_then(java_len)
        .ok_or("negative key length")?;
    let value_len = kv
        .get(4..8)
        .and_then(java_len)
        .ok_or("negative value length")?;
    let key_end = KV_INFRASTRUCTURE
        .checked_add(key_len)
        .ok_or("key length overflows")?;
    let value_end = key_end
        .checked_add(value_len)
        .ok_or("value length overflows")?;
    if value_end > kv.len() {
        return Err("key and value lengths run past the cell");
    }
    if key_len < KEY_INFRASTRUCTURE {
        return Err("key shorter than its fixed fields");
    }
    let key = kv
        .get(KV_INFRASTRUCTURE..key_end)
        .ok_or("key past the cell")?;
    let value = kv.get(key_end..value_end).ok_or("value past the cell")?;
    let tags = match kv.len() - value_end {
        0 => &[][..],
        1 => return Err("one stray byte after the value"),
        _ => {
            let rest = kv.get(value_end..).unwrap_or_default();
            let tags_len = be_u16(rest).ok_or("truncated tags length")? as usize;
            if rest.len() != 2 + tags_len {
                return Err("tags length does not match the cell length");
            }
            rest.get(2..).unwrap_or_default()
        }
    };
    let row_len = be_u16(key).ok_or("truncated row length")?;
    if row_len > i16::MAX as u16 {
        return Err("negative row length");
    }
    let row_end = 2 + row_len as usize;
    let row = key.get(2..row_end).ok_or("row runs past the key")?;
    let family_len = *key.get(row_end).ok_or("truncated family length")? as usize;
    let family_end = row_end + 1 + family_len;
    let family = key
        .get(row_end + 1..family_end)
        .ok_or("family runs past the key")?;
    // The rest of the key: qualifier, then timestamp (8) and type (1).
    let qualifier_end = key
        .len()
        .checked_sub(9)
        .filter(|&e| e >= family_end)
        .ok_or("row and family run into the timestamp")?;
    let qualifier = key
        .get(family_end..qualifier_end)
        .ok_or("qualifier past the key")?;
    let ts_bytes: [u8; 8] = key
        .get(qualifier_end..qualifier_end + 8)
        .and_then(|b| b.try_into().ok())
        .ok_or("truncated timestamp")?;
    let code = *key.get(qualifier_end + 8).ok_or("truncated type")?;
    let kv_type = KeyValueType::from_code(code).ok_or("unknown KeyValue type code")?;
    Ok(KeyValueRef {
        row,
        family,
        qualifier,
        timestamp: u64::from_be_bytes(ts_bytes),
        kv_type,
        value,
        tags,
    })
}

/// Reads the cells of a block in order. Cells are borrowed from the block;
/// [`read_mutation`](Self::read_mutation) reads a mutation's cells into
/// cell runs.
#[derive(Clone, Debug)]
pub struct CellBlockReader<'a> {
    block: &'a Bytes,
    pos: usize,
}

impl<'a> CellBlockReader<'a> {
    /// A reader at the start of `block`.
    pub fn new(block: &'a Bytes) -> CellBlockReader<'a> {
        CellBlockReader { block, pos: 0 }
    }

    /// Offset of the next cell.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// True when every cell has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.block.len()
    }

    fn err(&self, what: &'static str) -> CellBlockError {
        CellBlockError {
            offset: self.pos,
            what,
        }
    }

    /// The next cell, or `None` at the end of the block.
    pub fn next_cell(&mut self) -> Result<Option<KeyValueRef<'a>>, CellBlockError> {
        let block: &'a [u8] = self.block;
        let Some(rest) = block.get(self.pos..).filter(|r| !r.is_empty()) else {
            return Ok(None);
        };
        let len = match rest.get(..4) {
            Some(b) => java_len(b).ok_or_else(|| self.err("negative cell length"))?,
            None => return Err(self.err("truncated cell length")),
        };
        let kv = rest
            .get(4..)
            .and_then(|r| r.get(..len))
            .ok_or_else(|| self.err("cell length runs past the block"))?;
        let cell = parse_key_value(kv).map_err(|what| self.err(what))?;
        self.pos += 4 + len;
        Ok(Some(cell))
    }

    /// The next cell, which must exist: a message announced it.
    fn announced(&mut self) -> Result<KeyValueRef<'a>, CellBlockError> {
        self.next_cell()?
            .ok_or_else(|| self.err("the block ends before every announced cell was read"))
    }

    /// Skips `count` cells.
    pub fn skip_cells(&mut self, count: usize) -> Result<(), CellBlockError> {
        for _ in 0..count {
            self.announced()?;
        }
        Ok(())
    }

    /// A zero-copy `Bytes` of a slice this reader returned.
    pub fn bytes_of(&self, part: &[u8]) -> Bytes {
        if part.is_empty() {
            return Bytes::new();
        }
        self.block.slice_ref(part)
    }

    /// Reads the next `count` cells, a Put's or a Delete's, into a
    /// [`RowMutation`]: each run of cells of one family becomes one
    /// [`CellRun`] (one copy of the cells' bytes, no per-cell object). The
    /// cells must name one row and be stored types (not Minimum or
    /// Maximum); `count` 0 gives a mutation of no cells with an empty row.
    pub fn read_mutation(
        &mut self,
        count: usize,
        durability: Durability,
    ) -> Result<RowMutation, CellBlockError> {
        let mut mutation: Option<RowMutation> = None;
        let mut family: &[u8] = &[];
        let mut run = CellRun::new();
        for _ in 0..count {
            let at = self.pos;
            let kv = self.announced()?;
            let kind = kv.kv_type.cell_type().ok_or(CellBlockError {
                offset: at,
                what: "a mutation's cell has type Minimum or Maximum",
            })?;
            let m = mutation.get_or_insert_with(|| {
                RowMutation::new(self.bytes_of(kv.row)).with_durability(durability)
            });
            if kv.row != &m.row[..] {
                return Err(CellBlockError {
                    offset: at,
                    what: "the cells of one mutation name different rows",
                });
            }
            if kv.family != family || run.is_empty() {
                if !run.is_empty() {
                    m.push_family(self.bytes_of(family), std::mem::take(&mut run));
                }
                family = kv.family;
            }
            run.push(kv.qualifier, kv.timestamp, kind, kv.value);
        }
        let mut m =
            mutation.unwrap_or_else(|| RowMutation::new(Bytes::new()).with_durability(durability));
        if !run.is_empty() {
            m.push_family(self.bytes_of(family), run);
        }
        Ok(m)
    }

    /// Reads the next `count` cells as owned [`Cell`]s sharing the block's
    /// buffer (a client's result).
    pub fn read_cells(&mut self, count: usize) -> Result<Vec<Cell>, CellBlockError> {
        let mut cells = Vec::with_capacity(count.min(self.block.len() / 16 + 1));
        for _ in 0..count {
            let at = self.pos;
            let kv = self.announced()?;
            cells.push(self.to_cell(&kv, at)?);
        }
        Ok(cells)
    }

    fn to_cell(&self, kv: &KeyValueRef<'_>, at: usize) -> Result<Cell, CellBlockError> {
        Ok(Cell {
            row: self.bytes_of(kv.row),
            family: self.bytes_of(kv.family),
            qualifier: self.bytes_of(kv.qualifier),
            timestamp: kv.timestamp,
            cell_type: kv.kv_type.cell_type().ok_or(CellBlockError {
                offset: at,
                what: "cell type Minimum or Maximum is not a stored cell",
            })?,
            value: self.bytes_of(kv.value),
        })
    }
}

impl<'a> Iterator for CellBlockReader<'a> {
    type Item = Result<KeyValueRef<'a>, CellBlockError>;

    /// Yields each cell; after an error, nothing more.
    fn next(&mut self) -> Option<Self::Item> {
        match self.next_cell() {
            Ok(Some(c)) => Some(Ok(c)),
            Ok(None) => None,
            Err(e) => {
                self.pos = self.block.len();
                Some(Err(e))
            }
        }
    }
}

/// Every cell of `block` as owned [`Cell`]s sharing its buffer.
pub fn decode_cells(block: &Bytes) -> Result<Vec<Cell>, CellBlockError> {
    let mut reader = CellBlockReader::new(block);
    let mut cells = Vec::new();
    loop {
        let at = reader.pos;
        match reader.next_cell()? {
            None => return Ok(cells),
            Some(kv) => cells.push(reader.to_cell(&kv, at)?),
        }
    }
}

/// Bytes one cell takes in a block, its 4-byte length included.
pub fn encoded_len(
    codec: CellCodec,
    row: usize,
    family: usize,
    qualifier: usize,
    value: usize,
    tags: usize,
) -> usize {
    let tags = if codec.writes_tags() && tags > 0 {
        2 + tags
    } else {
        0
    };
    4 + KV_INFRASTRUCTURE + KEY_INFRASTRUCTURE + row + family + qualifier + value + tags
}

/// The parts of one cell to write.
#[derive(Clone, Copy, Debug)]
pub struct CellParts<'a> {
    pub row: &'a [u8],
    pub family: &'a [u8],
    pub qualifier: &'a [u8],
    pub timestamp: u64,
    pub kv_type: KeyValueType,
    pub value: &'a [u8],
    pub tags: &'a [u8],
}

/// Appends one cell. Fails, writing nothing, when a part is longer than
/// the format allows (row 32767 bytes, family 255, tags 65535, the whole
/// cell 2^31 - 1).
pub fn encode_key_value(
    out: &mut BytesMut,
    codec: CellCodec,
    c: &CellParts<'_>,
) -> Result<(), CellBlockError> {
    let err = |what| CellBlockError {
        offset: out.len(),
        what,
    };
    if c.row.len() > i16::MAX as usize {
        return Err(err("row longer than 32767 bytes"));
    }
    let family_len =
        u8::try_from(c.family.len()).map_err(|_| err("family longer than 255 bytes"))?;
    let tags = if codec.writes_tags() { c.tags } else { &[] };
    let tags_len = u16::try_from(tags.len()).map_err(|_| err("tags longer than 65535 bytes"))?;
    let key_len = KEY_INFRASTRUCTURE + c.row.len() + c.family.len() + c.qualifier.len();
    let total = encoded_len(
        codec,
        c.row.len(),
        c.family.len(),
        c.qualifier.len(),
        c.value.len(),
        tags.len(),
    ) - 4;
    if total > i32::MAX as usize {
        return Err(err("cell longer than 2^31 - 1 bytes"));
    }
    out.reserve(4 + total);
    out.put_u32(total as u32);
    out.put_u32(key_len as u32);
    out.put_u32(c.value.len() as u32);
    out.put_u16(c.row.len() as u16);
    out.put_slice(c.row);
    out.put_u8(family_len);
    out.put_slice(c.family);
    out.put_slice(c.qualifier);
    out.put_u64(c.timestamp);
    out.put_u8(c.kv_type.code());
    out.put_slice(c.value);
    if tags_len > 0 {
        out.put_u16(tags_len);
        out.put_slice(tags);
    }
    Ok(())
}

/// Appends cells (a server's results); returns how many were written.
pub fn encode_cells<'c>(
    out: &mut BytesMut,
    codec: CellCodec,
    cells: impl IntoIterator<Item = &'c Cell>,
) -> Result<usize, CellBlockError> {
    let mut n = 0;
    for c in cells {
        encode_key_value(
            out,
            codec,
            &CellParts {
                row: &c.row,
                family: &c.family,
                qualifier: &c.qualifier,
                timestamp: c.timestamp,
                kv_type: c.cell_type.into(),
                value: &c.value,
                tags: &[],
            },
        )?;
        n += 1;
    }
    Ok(n)
}

/// Appends a mutation's cells (a client's Put or Delete); returns how many
/// were written, the `associated_cell_count` of its `MutationProto`.
pub fn encode_mutation(
    out: &mut BytesMut,
    codec: CellCodec,
    m: &RowMutation,
) -> Result<usize, CellBlockError> {
    let mut n = 0;
    for c in m.mutations() {
        encode_key_value(
            out,
            codec,
            &CellParts {
                row: &m.row,
                family: c.family,
                qualifier: c.qualifier,
                timestamp: c.timestamp,
                kv_type: c.kind.into(),
                value: c.value,
                tags: &[],
            },
        )?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests;
