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
mod tests {
    use super::*;
    use ferrobase_types::LATEST_TIMESTAMP;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

    fn seeded(cases: u32) -> TestRunner {
        TestRunner::new_with_rng(
            Config {
                cases,
                ..Config::default()
            },
            TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]),
        )
    }

    fn parts<'a>(
        row: &'a [u8],
        family: &'a [u8],
        qualifier: &'a [u8],
        ts: u64,
        t: KeyValueType,
        value: &'a [u8],
    ) -> CellParts<'a> {
        CellParts {
            row,
            family,
            qualifier,
            timestamp: ts,
            kv_type: t,
            value,
            tags: &[],
        }
    }

    #[test]
    fn golden_key_value() {
        let mut out = BytesMut::new();
        encode_key_value(
            &mut out,
            CellCodec::KeyValue,
            &parts(b"r", b"f", b"q", 1, KeyValueType::Put, b"v"),
        )
        .unwrap();
        let expected: &[u8] = &[
            0, 0, 0, 24, // cell length: 8 + key 15 + value 1
            0, 0, 0, 15, // key length: 2 + 1 + 1 + 1 + 1 + 8 + 1
            0, 0, 0, 1, // value length
            0, 1, b'r', // row length, row
            1, b'f', // family length, family
            b'q', // qualifier (the rest of the key)
            0, 0, 0, 0, 0, 0, 0, 1,    // timestamp
            4,    // type Put
            b'v', // value
        ];
        assert_eq!(&out[..], expected);
        let block = out.freeze();
        let kv = CellBlockReader::new(&block).next_cell().unwrap().unwrap();
        assert_eq!(
            (
                kv.row,
                kv.family,
                kv.qualifier,
                kv.timestamp,
                kv.kv_type,
                kv.value,
                kv.tags
            ),
            (
                &b"r"[..],
                &b"f"[..],
                &b"q"[..],
                1,
                KeyValueType::Put,
                &b"v"[..],
                &[][..]
            )
        );
    }

    #[test]
    fn golden_key_value_with_tags() {
        let mut c = parts(
            b"r",
            b"f",
            b"",
            LATEST_TIMESTAMP,
            KeyValueType::DeleteFamily,
            b"",
        );
        c.tags = &[1, 0, 1, b'x'];
        let mut with = BytesMut::new();
        encode_key_value(&mut with, CellCodec::KeyValueWithTags, &c).unwrap();
        let expected: &[u8] = &[
            0, 0, 0, 28, // 8 + key 14 + value 0 + tags 2 + 4
            0, 0, 0, 14, // key: 2 + 1 + 1 + 1 + 0 + 8 + 1
            0, 0, 0, 0, // no value
            0, 1, b'r', 1, b'f', // row, family, empty qualifier
            0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // LATEST_TIMESTAMP
            14,   // DeleteFamily
            0, 4, 1, 0, 1, b'x', // tags length, tags
        ];
        assert_eq!(&with[..], expected);
        let block = with.freeze();
        let kv = CellBlockReader::new(&block).next_cell().unwrap().unwrap();
        assert_eq!(kv.tags, &[1, 0, 1, b'x']);
        // KeyValueCodec never writes tags.
        let mut without = BytesMut::new();
        encode_key_value(&mut without, CellCodec::KeyValue, &c).unwrap();
        assert_eq!(without.len(), 4 + 22);
    }

    #[test]
    fn codecs_by_class_name_and_header() {
        for c in [CellCodec::KeyValue, CellCodec::KeyValueWithTags] {
            assert_eq!(CellCodec::from_class_name(c.class_name()), Some(c));
        }
        let mut h = pb::ConnectionHeader::default();
        assert_eq!(CellCodec::from_connection_header(&h).unwrap(), None);
        h.cell_block_codec_class = Some(KEY_VALUE_CODEC_WITH_TAGS.into());
        assert_eq!(
            CellCodec::from_connection_header(&h).unwrap(),
            Some(CellCodec::KeyValueWithTags)
        );
        h.cell_block_compressor_class = Some("org.apache.hadoop.io.compress.GzipCodec".into());
        let e = CellCodec::from_connection_header(&h).unwrap_err();
        assert_eq!(e.class, ExceptionClass::UnsupportedCompressionCodec);
        assert!(e.message.contains("GzipCodec"));
        h.cell_block_codec_class = Some("org.apache.hadoop.hbase.codec.MessageCodec".into());
        let e = CellCodec::from_connection_header(&h).unwrap_err();
        assert_eq!(e.class, ExceptionClass::UnsupportedCellCodec);
        assert!(e.message.contains("MessageCodec"));
    }

    #[test]
    fn a_mutation_reads_into_one_run_per_family_group() {
        let mut out = BytesMut::new();
        let cells = [
            (&b"f"[..], &b"a"[..], KeyValueType::Put, &b"1"[..]),
            (b"f", b"b", KeyValueType::Put, b"2"),
            (b"g", b"c", KeyValueType::DeleteColumn, b""),
            (b"f", b"", KeyValueType::DeleteFamily, b""),
        ];
        for (f, q, t, v) in cells {
            encode_key_value(&mut out, CellCodec::KeyValue, &parts(b"row", f, q, 5, t, v)).unwrap();
        }
        // A second mutation's cell follows.
        encode_key_value(
            &mut out,
            CellCodec::KeyValue,
            &parts(b"next", b"f", b"q", 1, KeyValueType::Put, b""),
        )
        .unwrap();
        let block = out.freeze();
        let mut r = CellBlockReader::new(&block);
        let m = r.read_mutation(4, Durability::AsyncWal).unwrap();
        let expected = RowMutation::new("row")
            .with_durability(Durability::AsyncWal)
            .put_at("f", "a", 5, "1")
            .put_at("f", "b", 5, "2")
            .delete_column("g", "c", 5)
            .delete_family("f", 5);
        assert_eq!(m, expected);
        assert_eq!(m.families().len(), 3);
        // Row and family share the block's buffer.
        assert!(block.as_ptr_range().contains(&m.row.as_ptr()));
        assert!(
            block
                .as_ptr_range()
                .contains(&m.families()[0].family.as_ptr())
        );
        let next = r.read_mutation(1, Durability::UseDefault).unwrap();
        assert_eq!(&next.row[..], b"next");
        assert!(r.is_empty());
        // Announced cells that are not there.
        let e = CellBlockReader::new(&block)
            .read_mutation(6, Durability::UseDefault)
            .unwrap_err();
        assert!(e.what.contains("different rows"), "{e}");
        let mut r = CellBlockReader::new(&block);
        r.skip_cells(5).unwrap();
        let e = r.read_mutation(1, Durability::UseDefault).unwrap_err();
        assert!(e.what.contains("ends before"), "{e}");
    }

    #[test]
    fn search_key_types_are_not_cells() {
        let mut out = BytesMut::new();
        encode_key_value(
            &mut out,
            CellCodec::KeyValue,
            &parts(b"r", b"f", b"q", 1, KeyValueType::Maximum, b""),
        )
        .unwrap();
        let block = out.freeze();
        let kv = CellBlockReader::new(&block).next_cell().unwrap().unwrap();
        assert_eq!(kv.kv_type, KeyValueType::Maximum);
        assert_eq!(kv.kv_type.cell_type(), None);
        assert!(decode_cells(&block).is_err());
        assert!(
            CellBlockReader::new(&block)
                .read_mutation(1, Durability::UseDefault)
                .is_err()
        );
        for code in [0u8, 4, 8, 10, 12, 14, 255] {
            assert_eq!(KeyValueType::from_code(code).unwrap().code(), code);
        }
        assert_eq!(KeyValueType::from_code(5), None);
    }

    #[test]
    fn oversize_parts_are_refused_before_writing() {
        let mut out = BytesMut::new();
        let long_row = vec![0u8; 40_000];
        let e = encode_key_value(
            &mut out,
            CellCodec::KeyValue,
            &parts(&long_row, b"f", b"", 1, KeyValueType::Put, b""),
        )
        .unwrap_err();
        assert!(e.what.contains("row"));
        let long_family = vec![b'f'; 256];
        assert!(
            encode_key_value(
                &mut out,
                CellCodec::KeyValue,
                &parts(b"r", &long_family, b"", 1, KeyValueType::Put, b"")
            )
            .is_err()
        );
        assert!(out.is_empty());
    }

    #[test]
    fn bad_lengths_are_typed_errors() {
        let mut good = BytesMut::new();
        encode_key_value(
            &mut good,
            CellCodec::KeyValue,
            &parts(b"row", b"f", b"q", 1, KeyValueType::Put, b"value"),
        )
        .unwrap();
        let good = good.freeze();
        // Every truncation fails cleanly.
        for cut in 1..good.len() {
            let b = good.slice(..cut);
            assert!(CellBlockReader::new(&b).next_cell().is_err(), "cut {cut}");
        }
        let with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut v = good.to_vec();
            f(&mut v);
            let b = Bytes::from(v);
            CellBlockReader::new(&b).next_cell().unwrap_err().what
        };
        // A 2 GB cell length: no allocation, an error.
        assert_eq!(
            with(&|v| v[..4].copy_from_slice(&0x8000_0000u32.to_be_bytes())),
            "negative cell length"
        );
        assert_eq!(
            with(&|v| v[..4].copy_from_slice(&0x7fff_ffffu32.to_be_bytes())),
            "cell length runs past the block"
        );
        assert_eq!(
            with(&|v| v[4..8].copy_from_slice(&0xffff_fff0u32.to_be_bytes())),
            "negative key length"
        );
        assert_eq!(
            with(&|v| v[4..8].copy_from_slice(&100u32.to_be_bytes())),
            "key and value lengths run past the cell"
        );
        assert_eq!(
            with(&|v| v[4..8].copy_from_slice(&5u32.to_be_bytes())),
            "key shorter than its fixed fields"
        );
        assert_eq!(
            with(&|v| v[12..14].copy_from_slice(&0x8000u16.to_be_bytes())),
            "negative row length"
        );
        assert_eq!(
            with(&|v| v[12..14].copy_from_slice(&200u16.to_be_bytes())),
            "row runs past the key"
        );
        assert_eq!(with(&|v| v[17] = 200), "family runs past the key");
        assert_eq!(
            with(&|v| *v.iter_mut().rev().nth(5).unwrap() = 3),
            "unknown KeyValue type code"
        );
    }

    #[test]
    fn cells_round_trip() {
        let cell = (
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::collection::vec(any::<u8>(), 0..20),
            proptest::collection::vec(any::<u8>(), 0..40),
            any::<u64>(),
            prop_oneof![
                Just(KeyValueType::Put),
                Just(KeyValueType::Delete),
                Just(KeyValueType::DeleteColumn),
                Just(KeyValueType::DeleteFamily),
                Just(KeyValueType::DeleteFamilyVersion),
                Just(KeyValueType::Minimum),
                Just(KeyValueType::Maximum),
            ],
            proptest::collection::vec(any::<u8>(), 0..300),
            proptest::collection::vec(any::<u8>(), 0..30),
        );
        let strategy = (proptest::collection::vec(cell, 0..20), any::<bool>());
        seeded(256)
            .run(&strategy, |(cells, tags)| {
                let codec = if tags {
                    CellCodec::KeyValueWithTags
                } else {
                    CellCodec::KeyValue
                };
                let mut out = BytesMut::new();
                let mut expected_len = 0;
                for (row, family, qualifier, ts, t, value, tag) in &cells {
                    let p = CellParts {
                        row,
                        family,
                        qualifier,
                        timestamp: *ts,
                        kv_type: *t,
                        value,
                        tags: tag,
                    };
                    encode_key_value(&mut out, codec, &p).unwrap();
                    expected_len += encoded_len(
                        codec,
                        row.len(),
                        family.len(),
                        qualifier.len(),
                        value.len(),
                        tag.len(),
                    );
                }
                prop_assert_eq!(out.len(), expected_len);
                let block = out.freeze();
                let back: Vec<_> = CellBlockReader::new(&block)
                    .collect::<Result<_, _>>()
                    .unwrap();
                prop_assert_eq!(back.len(), cells.len());
                for (kv, (row, family, qualifier, ts, t, value, tag)) in back.iter().zip(&cells) {
                    prop_assert_eq!(kv.row, &row[..]);
                    prop_assert_eq!(kv.family, &family[..]);
                    prop_assert_eq!(kv.qualifier, &qualifier[..]);
                    prop_assert_eq!(kv.timestamp, *ts);
                    prop_assert_eq!(kv.kv_type, *t);
                    prop_assert_eq!(kv.value, &value[..]);
                    prop_assert_eq!(kv.tags, if tags { &tag[..] } else { &[][..] });
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn results_round_trip_through_cells() {
        let cells = vec![
            Cell::put("r", "f", "a", 3, "x"),
            Cell {
                cell_type: CellType::DeleteColumn,
                ..Cell::put("r", "g", "b", 2, "")
            },
        ];
        let mut out = BytesMut::new();
        assert_eq!(
            encode_cells(&mut out, CellCodec::KeyValue, &cells).unwrap(),
            2
        );
        let block = out.freeze();
        assert_eq!(decode_cells(&block).unwrap(), cells);
        assert_eq!(CellBlockReader::new(&block).read_cells(2).unwrap(), cells);
        let m = RowMutation::new("r")
            .put("f", "q", "v")
            .delete_family("g", 9);
        let mut out = BytesMut::new();
        assert_eq!(
            encode_mutation(&mut out, CellCodec::KeyValue, &m).unwrap(),
            2
        );
        let block = out.freeze();
        assert_eq!(
            CellBlockReader::new(&block)
                .read_mutation(2, Durability::UseDefault)
                .unwrap(),
            m
        );
    }

    #[test]
    fn garbage_never_panics() {
        let strategy = (proptest::collection::vec(any::<u8>(), 0..400), 0usize..20);
        seeded(3000)
            .run(&strategy, |(bytes, n)| {
                let b = Bytes::from(bytes);
                for c in CellBlockReader::new(&b) {
                    if c.is_err() {
                        break;
                    }
                }
                let _ = decode_cells(&b);
                let _ = CellBlockReader::new(&b).read_mutation(n, Durability::UseDefault);
                let _ = CellBlockReader::new(&b).read_cells(n);
                Ok(())
            })
            .unwrap();
    }
}
