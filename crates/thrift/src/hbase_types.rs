//! The structs and exceptions of HBase's Thrift1 IDL (`Hbase.thrift`),
//! with their field ids, converted to and from [`Value`] trees.
//!
//! ```text
//! TCell            1 value: binary    2 timestamp: i64
//! ColumnDescriptor 1 name  2 maxVersions i32 (3)  3 compression ("NONE")
//!                  4 inMemory  5 bloomFilterType ("NONE")
//!                  6 bloomFilterVectorSize  7 bloomFilterNbHashes
//!                  8 blockCacheEnabled (false)  9 timeToLive i32 (-1 / 2^31-1: forever)
//! TRegionInfo      1 startKey 2 endKey 3 id i64 4 name 5 version i8
//!                  6 serverName 7 port i32
//! Mutation         1 isDelete (false) 2 column 3 value 4 writeToWAL (true)
//! BatchMutation    1 row 2 mutations: list<Mutation>
//! TIncrement       1 table 2 row 3 column 4 ammount i64   (sic)
//! TColumn          1 columnName 2 cell: TCell
//! TRowResult       1 row 2 columns: map<binary,TCell> 3 sortedColumns: list<TColumn>
//! TScan            1 startRow 2 stopRow 3 timestamp 4 columns 5 caching
//!                  6 filterString 7 batchSize 8 sortColumns 9 reversed 10 cacheBlocks
//! TAppend          1 table 2 row 3 columns: list 4 values: list
//! IOError          1 message 2 canRetry     IllegalArgument / AlreadyExists: 1 message
//! ```
//!
//! Decoding is lenient the way generated code is: a missing or mistyped
//! field takes the IDL default. This module never talks to ferrobase and
//! never checks what a value means (see `service`).

use crate::protocol::{Struct, TType, Value};
use bytes::Bytes;

/// A cell value and its timestamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TCell {
    pub value: Bytes,
    pub timestamp: i64,
}

impl TCell {
    pub fn to_value(&self) -> Value {
        Value::Struct(
            Struct::new()
                .with(1, Value::Binary(self.value.clone()))
                .with(2, Value::I64(self.timestamp)),
        )
    }
}

/// A column family's attributes (HBase's `HColumnDescriptor` subset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnDescriptor {
    pub name: Bytes,
    pub max_versions: i32,
    pub compression: String,
    pub in_memory: bool,
    pub bloom_filter_type: String,
    pub bloom_filter_vector_size: i32,
    pub bloom_filter_nb_hashes: i32,
    pub block_cache_enabled: bool,
    pub time_to_live: i32,
}

fn text(s: &Struct, id: i16, default: &str) -> String {
    s.binary(id)
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_else(|| default.to_string())
}

impl ColumnDescriptor {
    pub fn from_struct(s: &Struct) -> ColumnDescriptor {
        ColumnDescriptor {
            name: s.binary(1).cloned().unwrap_or_default(),
            max_versions: s.i32(2).unwrap_or(3),
            compression: text(s, 3, "NONE"),
            in_memory: s.bool(4).unwrap_or(false),
            bloom_filter_type: text(s, 5, "NONE"),
            bloom_filter_vector_size: s.i32(6).unwrap_or(0),
            bloom_filter_nb_hashes: s.i32(7).unwrap_or(0),
            block_cache_enabled: s.bool(8).unwrap_or(false),
            time_to_live: s.i32(9).unwrap_or(i32::MAX),
        }
    }

    pub fn to_value(&self) -> Value {
        Value::Struct(
            Struct::new()
                .with(1, Value::Binary(self.name.clone()))
                .with(2, Value::I32(self.max_versions))
                .with(3, Value::binary(self.compression.clone()))
                .with(4, Value::Bool(self.in_memory))
                .with(5, Value::binary(self.bloom_filter_type.clone()))
                .with(6, Value::I32(self.bloom_filter_vector_size))
                .with(7, Value::I32(self.bloom_filter_nb_hashes))
                .with(8, Value::Bool(self.block_cache_enabled))
                .with(9, Value::I32(self.time_to_live)),
        )
    }
}

/// A region of a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TRegionInfo {
    pub start_key: Bytes,
    pub end_key: Bytes,
    pub id: i64,
    pub name: Bytes,
    pub version: i8,
    pub server_name: Bytes,
    pub port: i32,
}

impl TRegionInfo {
    pub fn to_value(&self) -> Value {
        Value::Struct(
            Struct::new()
                .with(1, Value::Binary(self.start_key.clone()))
                .with(2, Value::Binary(self.end_key.clone()))
                .with(3, Value::I64(self.id))
                .with(4, Value::Binary(self.name.clone()))
                .with(5, Value::Byte(self.version))
                .with(6, Value::Binary(self.server_name.clone()))
                .with(7, Value::I32(self.port)),
        )
    }
}

/// One put or delete of a column (`family:qualifier`) or family.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    pub is_delete: bool,
    pub column: Bytes,
    pub value: Option<Bytes>,
    pub write_to_wal: bool,
}

impl Mutation {
    pub fn from_struct(s: &Struct) -> Mutation {
        Mutation {
            is_delete: s.bool(1).unwrap_or(false),
            column: s.binary(2).cloned().unwrap_or_default(),
            value: s.binary(3).cloned(),
            write_to_wal: s.bool(4).unwrap_or(true),
        }
    }

    /// `list<Mutation>` field `id` (absent: none).
    pub fn list(s: &Struct, id: i16) -> Vec<Mutation> {
        s.structs(id)
            .unwrap_or_default()
            .into_iter()
            .map(Mutation::from_struct)
            .collect()
    }
}

/// The mutations of one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchMutation {
    pub row: Bytes,
    pub mutations: Vec<Mutation>,
}

impl BatchMutation {
    pub fn from_struct(s: &Struct) -> BatchMutation {
        BatchMutation {
            row: s.binary(1).cloned().unwrap_or_default(),
            mutations: Mutation::list(s, 2),
        }
    }
}

/// An increment of one column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TIncrement {
    pub table: Bytes,
    pub row: Bytes,
    pub column: Bytes,
    pub amount: i64,
}

impl TIncrement {
    pub fn from_struct(s: &Struct) -> TIncrement {
        TIncrement {
            table: s.binary(1).cloned().unwrap_or_default(),
            row: s.binary(2).cloned().unwrap_or_default(),
            column: s.binary(3).cloned().unwrap_or_default(),
            amount: s.i64(4).unwrap_or(0),
        }
    }
}

/// A column name and its cell (`TRowResult.sortedColumns`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TColumn {
    pub column_name: Bytes,
    pub cell: TCell,
}

/// One row's columns: as a map (`columns`) or, when the scan asked for
/// sorted columns, as a list in column order (`sortedColumns`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TRowResult {
    pub row: Bytes,
    pub columns: Option<Vec<(Bytes, TCell)>>,
    pub sorted_columns: Option<Vec<TColumn>>,
}

impl TRowResult {
    pub fn to_value(&self) -> Value {
        let columns = self.columns.as_ref().map(|cols| {
            Value::Map(
                TType::Binary,
                TType::Struct,
                cols.iter()
                    .map(|(name, cell)| (Value::Binary(name.clone()), cell.to_value()))
                    .collect(),
            )
        });
        let sorted = self.sorted_columns.as_ref().map(|cols| {
            Value::List(
                TType::Struct,
                cols.iter()
                    .map(|c| {
                        Value::Struct(
                            Struct::new()
                                .with(1, Value::Binary(c.column_name.clone()))
                                .with(2, c.cell.to_value()),
                        )
                    })
                    .collect(),
            )
        });
        Value::Struct(
            Struct::new()
                .with(1, Value::Binary(self.row.clone()))
                .with_opt(2, columns)
                .with_opt(3, sorted),
        )
    }
}

/// Scanner parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TScan {
    pub start_row: Option<Bytes>,
    pub stop_row: Option<Bytes>,
    pub timestamp: Option<i64>,
    pub columns: Option<Vec<Bytes>>,
    pub caching: Option<i32>,
    pub filter_string: Option<Bytes>,
    pub batch_size: Option<i32>,
    pub sort_columns: Option<bool>,
    pub reversed: Option<bool>,
    pub cache_blocks: Option<bool>,
}

impl TScan {
    pub fn from_struct(s: &Struct) -> TScan {
        TScan {
            start_row: s.binary(1).cloned(),
            stop_row: s.binary(2).cloned(),
            timestamp: s.i64(3),
            columns: s.binaries(4),
            caching: s.i32(5),
            filter_string: s.binary(6).cloned(),
            batch_size: s.i32(7),
            sort_columns: s.bool(8),
            reversed: s.bool(9),
            cache_blocks: s.bool(10),
        }
    }
}

/// Appends to columns of one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TAppend {
    pub table: Bytes,
    pub row: Bytes,
    pub columns: Vec<Bytes>,
    pub values: Vec<Bytes>,
}

impl TAppend {
    pub fn from_struct(s: &Struct) -> TAppend {
        TAppend {
            table: s.binary(1).cloned().unwrap_or_default(),
            row: s.binary(2).cloned().unwrap_or_default(),
            columns: s.binaries(3).unwrap_or_default(),
            values: s.binaries(4).unwrap_or_default(),
        }
    }
}

/// `IOError { 1: message, 2: canRetry }`.
pub fn io_error(message: &str, can_retry: bool) -> Value {
    Value::Struct(
        Struct::new()
            .with(1, Value::binary(message.to_string()))
            .with(2, Value::Bool(can_retry)),
    )
}

/// `IllegalArgument` and `AlreadyExists`: `{ 1: message }`.
pub fn message_exception(message: &str) -> Value {
    Value::Struct(Struct::new().with(1, Value::binary(message.to_string())))
}

/// Thrift's `TApplicationException` types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApplicationError {
    UnknownMethod = 1,
    InvalidMessageType = 2,
    InternalError = 6,
    ProtocolError = 7,
}

/// `TApplicationException { 1: message, 2: type }`.
pub fn application_exception(kind: ApplicationError, message: &str) -> Struct {
    Struct::new()
        .with(1, Value::binary(message.to_string()))
        .with(2, Value::I32(kind as i32))
}

/// A column name split HBase's way (`CellUtil.parseColumn`): at the first
/// `:`. `family` alone or `family:` names the whole family for reads and
/// deletes; a put needs `family:qualifier` (the qualifier may be empty
/// only when written as `family:`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnName {
    pub family: Bytes,
    /// `None` for a bare `family`; `Some(empty)` for `family:`.
    pub qualifier: Option<Bytes>,
}

impl ColumnName {
    pub fn parse(column: &Bytes) -> ColumnName {
        match column.iter().position(|&b| b == b':') {
            None => ColumnName {
                family: column.clone(),
                qualifier: None,
            },
            Some(i) => ColumnName {
                family: column.slice(..i),
                qualifier: Some(column.slice(i + 1..)),
            },
        }
    }

    /// The qualifier when this names one column (not a whole family).
    pub fn column(&self) -> Option<Bytes> {
        self.qualifier.clone().filter(|q| !q.is_empty())
    }

    /// `family:qualifier`, as results name columns.
    pub fn join(family: &[u8], qualifier: &[u8]) -> Bytes {
        let mut v = Vec::with_capacity(family.len() + qualifier.len() + 1);
        v.extend_from_slice(family);
        v.push(b':');
        v.extend_from_slice(qualifier);
        v.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_split_at_the_first_colon() {
        let c = ColumnName::parse(&Bytes::from_static(b"cf:a:b"));
        assert_eq!(&c.family[..], b"cf");
        assert_eq!(c.column(), Some(Bytes::from_static(b"a:b")));
        let f = ColumnName::parse(&Bytes::from_static(b"cf:"));
        assert_eq!((f.column(), f.qualifier.map(|q| q.len())), (None, Some(0)));
        assert_eq!(
            ColumnName::parse(&Bytes::from_static(b"cf")).qualifier,
            None
        );
        assert_eq!(&ColumnName::join(b"cf", b"q")[..], b"cf:q");
    }

    #[test]
    fn defaults_follow_the_idl() {
        let d = ColumnDescriptor::from_struct(&Struct::new().with(1, Value::binary("cf:")));
        assert_eq!(d.max_versions, 3);
        assert_eq!(d.compression, "NONE");
        assert!(!d.block_cache_enabled);
        let m = Mutation::from_struct(&Struct::new().with(2, Value::binary("cf:q")));
        assert!(m.write_to_wal && !m.is_delete && m.value.is_none());
        // A mistyped field reads as absent, as generated code skips it.
        let scan = TScan::from_struct(&Struct::new().with(5, Value::binary("x")));
        assert_eq!(scan.caching, None);
    }
}
