//! Mutations: what a client asks to change in one row.
//!
//! A [`RowMutation`] is HBase's `Put`, `Delete` and `RowMutations` in one
//! type: any mix of puts and deletes on one row, applied atomically (all
//! cells get one sequence id and become visible together). This module owns
//! validation of client input (empty row, oversize row/family/cell); it
//! never assigns timestamps or sequence ids (the region does).

use crate::cell::{CellType, LATEST_TIMESTAMP};
use crate::durability::Durability;
use crate::key::{MAX_FAMILY_LEN, MAX_ROW_LEN};
use bytes::Bytes;

/// One change to one column (or, for family deletes, one family).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    pub family: Bytes,
    /// Empty for `DeleteFamily` and `DeleteFamilyVersion`.
    pub qualifier: Bytes,
    /// [`LATEST_TIMESTAMP`] means "assigned by the server".
    pub timestamp: u64,
    pub kind: CellType,
    /// Empty for deletes.
    pub value: Bytes,
}

/// Everything wrong a client can send in a mutation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MutationError {
    #[error("row key is empty; every cell needs a non-empty row key")]
    EmptyRow,
    #[error("row key is {len} bytes; the maximum is {MAX_ROW_LEN}")]
    RowTooLong { len: usize },
    #[error("mutation of row has no cells")]
    NoCells,
    #[error("family name is empty")]
    EmptyFamily,
    #[error("family name is {len} bytes; the maximum is {MAX_FAMILY_LEN}")]
    FamilyTooLong { len: usize },
    #[error("cell is {size} bytes; the maximum (hbase.client.keyvalue.maxsize) is {max}")]
    CellTooLarge { size: usize, max: usize },
    #[error("timestamp {0} is out of range; timestamps are milliseconds below 2^63")]
    BadTimestamp(u64),
}

/// An atomic set of changes to one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowMutation {
    pub row: Bytes,
    pub mutations: Vec<Mutation>,
    pub durability: Durability,
}

impl RowMutation {
    /// An empty mutation of `row`.
    pub fn new(row: impl Into<Bytes>) -> RowMutation {
        RowMutation {
            row: row.into(),
            mutations: Vec::new(),
            durability: Durability::UseDefault,
        }
    }

    /// Sets the durability.
    pub fn with_durability(mut self, durability: Durability) -> RowMutation {
        self.durability = durability;
        self
    }

    /// Adds a put with a server-assigned timestamp.
    pub fn put(
        self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        value: impl Into<Bytes>,
    ) -> Self {
        self.put_at(family, qualifier, LATEST_TIMESTAMP, value)
    }

    /// Adds a put at an explicit timestamp.
    pub fn put_at(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: u64,
        value: impl Into<Bytes>,
    ) -> Self {
        self.mutations.push(Mutation {
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp,
            kind: CellType::Put,
            value: value.into(),
        });
        self
    }

    /// Adds a delete of one version: the given timestamp, or the newest one
    /// when `timestamp` is [`LATEST_TIMESTAMP`] (HBase's `addColumn`).
    pub fn delete_version(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: u64,
    ) -> Self {
        self.push_delete(family.into(), qualifier.into(), timestamp, CellType::Delete);
        self
    }

    /// Adds a delete of every version at or below `timestamp` (HBase's `addColumns`).
    pub fn delete_column(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: u64,
    ) -> Self {
        self.push_delete(
            family.into(),
            qualifier.into(),
            timestamp,
            CellType::DeleteColumn,
        );
        self
    }

    /// Adds a delete of every column of a family at or below `timestamp`.
    pub fn delete_family(mut self, family: impl Into<Bytes>, timestamp: u64) -> Self {
        self.push_delete(
            family.into(),
            Bytes::new(),
            timestamp,
            CellType::DeleteFamily,
        );
        self
    }

    /// Adds a delete of exactly `timestamp` in every column of a family.
    pub fn delete_family_version(mut self, family: impl Into<Bytes>, timestamp: u64) -> Self {
        self.push_delete(
            family.into(),
            Bytes::new(),
            timestamp,
            CellType::DeleteFamilyVersion,
        );
        self
    }

    fn push_delete(&mut self, family: Bytes, qualifier: Bytes, timestamp: u64, kind: CellType) {
        self.mutations.push(Mutation {
            family,
            qualifier,
            timestamp,
            kind,
            value: Bytes::new(),
        });
    }

    /// Bytes this mutation takes on the wire and in the WAL, roughly: the row
    /// once plus each cell's column and value (DESIGN rule 6; the client's
    /// write buffer counts this, not a heap size).
    pub fn encoded_size(&self) -> usize {
        self.row.len()
            + 4
            + self
                .mutations
                .iter()
                .map(|m| m.family.len() + m.qualifier.len() + m.value.len() + 12)
                .sum::<usize>()
    }

    /// Checks client input. `max_cell_size` is `hbase.client.keyvalue.maxsize`
    /// (0 disables the check, as in HBase).
    pub fn validate(&self, max_cell_size: usize) -> Result<(), MutationError> {
        if self.row.is_empty() {
            return Err(MutationError::EmptyRow);
        }
        if self.row.len() > MAX_ROW_LEN {
            return Err(MutationError::RowTooLong {
                len: self.row.len(),
            });
        }
        if self.mutations.is_empty() {
            return Err(MutationError::NoCells);
        }
        for m in &self.mutations {
            if m.family.is_empty() {
                return Err(MutationError::EmptyFamily);
            }
            if m.family.len() > MAX_FAMILY_LEN {
                return Err(MutationError::FamilyTooLong {
                    len: m.family.len(),
                });
            }
            if m.timestamp > LATEST_TIMESTAMP {
                return Err(MutationError::BadTimestamp(m.timestamp));
            }
            let size = self.row.len()
                + m.family.len()
                + m.qualifier.len()
                + m.value.len()
                + crate::key::KEY_OVERHEAD;
            if max_cell_size > 0 && size > max_cell_size {
                return Err(MutationError::CellTooLarge {
                    size,
                    max: max_cell_size,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_problem() {
        assert_eq!(
            RowMutation::new("").put("f", "q", "v").validate(0),
            Err(MutationError::EmptyRow)
        );
        assert_eq!(
            RowMutation::new("r").validate(0),
            Err(MutationError::NoCells)
        );
        assert_eq!(
            RowMutation::new("r").put("", "q", "v").validate(0),
            Err(MutationError::EmptyFamily)
        );
        let big = RowMutation::new("r").put("f", "q", vec![0u8; 100]);
        assert!(matches!(
            big.validate(50),
            Err(MutationError::CellTooLarge { .. })
        ));
        assert_eq!(big.validate(0), Ok(()));
        let long = RowMutation::new(vec![1u8; MAX_ROW_LEN + 1]).put("f", "q", "v");
        assert!(matches!(
            long.validate(0),
            Err(MutationError::RowTooLong { .. })
        ));
        let msg = MutationError::CellTooLarge { size: 11, max: 10 }.to_string();
        assert!(msg.contains("hbase.client.keyvalue.maxsize"));
    }

    #[test]
    fn builders_set_kinds() {
        let m = RowMutation::new("r")
            .put("f", "a", "1")
            .delete_version("f", "b", LATEST_TIMESTAMP)
            .delete_column("f", "c", 5)
            .delete_family("g", 7)
            .delete_family_version("g", 8);
        let kinds: Vec<_> = m.mutations.iter().map(|x| x.kind).collect();
        assert_eq!(
            kinds,
            vec![
                CellType::Put,
                CellType::Delete,
                CellType::DeleteColumn,
                CellType::DeleteFamily,
                CellType::DeleteFamilyVersion
            ]
        );
        assert!(m.encoded_size() > 5);
    }
}
