//! A cell: one version of one column of one row, the unit HBase stores.
//!
//! This module owns the [`CellType`] codes (HBase's `KeyValue.Type` values,
//! so that type order matches HBase's) and the owned [`Cell`] that readers
//! hand back. It never decides visibility: deletes, versions and TTL are
//! applied by the storage layer's read path.

use bytes::Bytes;
use std::fmt;

/// The timestamp meaning "now, assigned by the server" (HBase's
/// `HConstants.LATEST_TIMESTAMP`, `Long.MAX_VALUE`).
pub const LATEST_TIMESTAMP: u64 = i64::MAX as u64;

/// What a cell is. The numeric codes are HBase's, and cells with the same
/// row, column and timestamp sort by code *descending*, so every delete
/// marker is seen before the put it masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum CellType {
    /// A value.
    Put = 4,
    /// Masks exactly one version (the given timestamp) of one column.
    Delete = 8,
    /// Masks one timestamp in every column of a family.
    DeleteFamilyVersion = 10,
    /// Masks every version of one column at or below the timestamp.
    DeleteColumn = 12,
    /// Masks every column of a family at or below the timestamp.
    DeleteFamily = 14,
}

impl CellType {
    /// Decodes a stored type byte; `None` for a byte no writer produces.
    pub fn from_code(code: u8) -> Option<CellType> {
        match code {
            4 => Some(CellType::Put),
            8 => Some(CellType::Delete),
            10 => Some(CellType::DeleteFamilyVersion),
            12 => Some(CellType::DeleteColumn),
            14 => Some(CellType::DeleteFamily),
            _ => None,
        }
    }

    /// The stored byte.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// True for every kind of delete marker.
    pub fn is_delete(self) -> bool {
        self != CellType::Put
    }

    /// HBase's name, as `hbase hfile -p` and the shell print it.
    pub fn name(self) -> &'static str {
        match self {
            CellType::Put => "Put",
            CellType::Delete => "Delete",
            CellType::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellType::DeleteColumn => "DeleteColumn",
            CellType::DeleteFamily => "DeleteFamily",
        }
    }
}

impl fmt::Display for CellType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An owned cell as returned by reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub row: Bytes,
    pub family: Bytes,
    pub qualifier: Bytes,
    /// Milliseconds since the epoch.
    pub timestamp: u64,
    pub cell_type: CellType,
    pub value: Bytes,
}

impl Cell {
    /// A put cell.
    pub fn put(
        row: impl Into<Bytes>,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: u64,
        value: impl Into<Bytes>,
    ) -> Cell {
        Cell {
            row: row.into(),
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp,
            cell_type: CellType::Put,
            value: value.into(),
        }
    }
}

impl fmt::Display for Cell {
    /// `row/family:qualifier/timestamp/Type/vlen=N`, as HBase prints a KeyValue.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::binary::to_string_binary as b;
        write!(
            f,
            "{}/{}:{}/{}/{}/vlen={}",
            b(&self.row),
            b(&self.family),
            b(&self.qualifier),
            self.timestamp,
            self.cell_type,
            self.value.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_codes_round_trip_and_order_deletes_first() {
        for t in [
            CellType::Put,
            CellType::Delete,
            CellType::DeleteFamilyVersion,
            CellType::DeleteColumn,
            CellType::DeleteFamily,
        ] {
            assert_eq!(CellType::from_code(t.code()), Some(t));
        }
        assert_eq!(CellType::from_code(0), None);
        assert!(CellType::DeleteFamily > CellType::Put);
    }

    #[test]
    fn display_escapes_binary() {
        let c = Cell::put(&b"r\x00"[..], "f", "q", 7, "value");
        assert_eq!(c.to_string(), "r\\x00/f:q/7/Put/vlen=5");
    }
}
