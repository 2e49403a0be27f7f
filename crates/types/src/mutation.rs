//! Mutations: what a client asks to change in one row.
//!
//! A [`RowMutation`] is HBase's `Put`, `Delete` and `RowMutations` in one
//! type: any mix of puts and deletes on one row, applied atomically (all
//! cells get one sequence id and become visible together). Its cells are
//! kept per family as encoded [`CellRun`]s, the layout of the wire and the
//! WAL, so a wide row moves between client, wire and server as a few
//! buffers instead of a struct and three shared buffers per cell. This
//! module owns validation of client input (empty row, oversize
//! row/family/cell); it never assigns timestamps or sequence ids (the
//! region does).

use crate::cell::{CellType, LATEST_TIMESTAMP};
use crate::cell_run::{CellRun, RunCell};
use crate::durability::Durability;
use crate::key::{MAX_FAMILY_LEN, MAX_ROW_LEN};
use bytes::Bytes;

/// One change to one column (or, for family deletes, one family), borrowed
/// from its [`RowMutation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mutation<'a> {
    pub family: &'a Bytes,
    /// Empty for `DeleteFamily` and `DeleteFamilyVersion`.
    pub qualifier: &'a [u8],
    /// [`LATEST_TIMESTAMP`] means "assigned by the server".
    pub timestamp: u64,
    pub kind: CellType,
    /// Empty for deletes.
    pub value: &'a [u8],
}

/// The cells of one family in a [`RowMutation`]. A mutation may hold two
/// groups of one family (puts to `a`, then `b`, then `a` again); the
/// region merges them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyCells {
    pub family: Bytes,
    pub cells: CellRun,
}

/// Everything wrong a client can send in a mutation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
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
    pub durability: Durability,
    /// HBase's `(nonce group, nonce)` of the client operation this applies
    /// (an Increment or Append), logged with the edit so that a retry of it
    /// is recognised after a failover or restart; `None`: untagged.
    pub nonce: Option<(u64, u64)>,
    families: Vec<FamilyCells>,
}

impl RowMutation {
    /// An empty mutation of `row`.
    pub fn new(row: impl Into<Bytes>) -> RowMutation {
        RowMutation {
            row: row.into(),
            durability: Durability::UseDefault,
            nonce: None,
            families: Vec::new(),
        }
    }

    /// The cells, one group per run of consecutive cells of one family.
    pub fn families(&self) -> &[FamilyCells] {
        &self.families
    }

    /// Moves row, durability and family groups out.
    pub fn into_parts(self) -> (Bytes, Durability, Vec<FamilyCells>) {
        (self.row, self.durability, self.families)
    }

    /// Every cell, in the order added.
    pub fn mutations(&self) -> impl Iterator<Item = Mutation<'_>> {
        self.families.iter().flat_map(|f| {
            f.cells.iter().map(move |c: RunCell<'_>| Mutation {
                family: &f.family,
                qualifier: c.qualifier,
                timestamp: c.timestamp,
                kind: c.kind,
                value: c.value,
            })
        })
    }

    /// Number of cells.
    pub fn len(&self) -> usize {
        self.families.iter().map(|f| f.cells.len()).sum()
    }

    /// True when the mutation has no cell.
    pub fn is_empty(&self) -> bool {
        self.families.iter().all(|f| f.cells.is_empty())
    }

    /// Appends a group of cells of `family` (decoders; the group may be
    /// empty, which validation then refuses if nothing else is there).
    pub fn push_family(&mut self, family: Bytes, cells: CellRun) {
        self.families.push(FamilyCells { family, cells });
    }

    /// Appends one cell; consecutive cells of one family share a group.
    pub fn push(
        &mut self,
        family: Bytes,
        qualifier: &[u8],
        timestamp: u64,
        kind: CellType,
        value: &[u8],
    ) {
        match self.families.last_mut() {
            Some(last) if last.family == family => {
                last.cells.push(qualifier, timestamp, kind, value);
            }
            _ => {
                let mut cells = CellRun::new();
                cells.push(qualifier, timestamp, kind, value);
                self.families.push(FamilyCells { family, cells });
            }
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
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Self {
        self.put_at(family, qualifier, LATEST_TIMESTAMP, value)
    }

    /// Adds a put at an explicit timestamp.
    pub fn put_at(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl AsRef<[u8]>,
        timestamp: u64,
        value: impl AsRef<[u8]>,
    ) -> Self {
        self.push(
            family.into(),
            qualifier.as_ref(),
            timestamp,
            CellType::Put,
            value.as_ref(),
        );
        self
    }

    /// Adds a delete of one version: the given timestamp, or the newest one
    /// when `timestamp` is [`LATEST_TIMESTAMP`] (HBase's `addColumn`).
    pub fn delete_version(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl AsRef<[u8]>,
        timestamp: u64,
    ) -> Self {
        self.push(
            family.into(),
            qualifier.as_ref(),
            timestamp,
            CellType::Delete,
            b"",
        );
        self
    }

    /// Adds a delete of every version at or below `timestamp` (HBase's `addColumns`).
    pub fn delete_column(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl AsRef<[u8]>,
        timestamp: u64,
    ) -> Self {
        self.push(
            family.into(),
            qualifier.as_ref(),
            timestamp,
            CellType::DeleteColumn,
            b"",
        );
        self
    }

    /// Adds a delete of every column of a family at or below `timestamp`.
    pub fn delete_family(mut self, family: impl Into<Bytes>, timestamp: u64) -> Self {
        self.push(family.into(), b"", timestamp, CellType::DeleteFamily, b"");
        self
    }

    /// Adds a delete of exactly `timestamp` in every column of a family.
    pub fn delete_family_version(mut self, family: impl Into<Bytes>, timestamp: u64) -> Self {
        self.push(
            family.into(),
            b"",
            timestamp,
            CellType::DeleteFamilyVersion,
            b"",
        );
        self
    }

    /// Bytes this mutation takes on the wire and in the WAL, roughly: the row
    /// once plus each cell's column and value (docs/architecture.md, design
    /// rule 6; the client's write buffer counts this, not a heap size).
    pub fn encoded_size(&self) -> usize {
        self.row.len()
            + 4
            + self
                .families
                .iter()
                .map(|f| f.family.len() + 4 + f.cells.as_bytes().len())
                .sum::<usize>()
    }

    /// Checks client input. `max_cell_size` is `hbase.client.keyvalue.maxsize`
    /// (0 disables the check, as in HBase).
    pub fn validate(&self, max_cell_size: usize) -> Result<(), MutationError> {
        self.validate_row()?;
        for m in self.mutations() {
            check_cell(
                self.row.len(),
                m.family.len(),
                m.qualifier,
                m.timestamp,
                m.value,
                max_cell_size,
            )?;
        }
        Ok(())
    }

    /// The checks of [`validate`](Self::validate) on the row and its
    /// families, for a caller that checks each cell itself (with
    /// [`check_cell`]) in a pass it makes anyway.
    pub fn validate_row(&self) -> Result<(), MutationError> {
        if self.row.is_empty() {
            return Err(MutationError::EmptyRow);
        }
        if self.row.len() > MAX_ROW_LEN {
            return Err(MutationError::RowTooLong {
                len: self.row.len(),
            });
        }
        if self.is_empty() {
            return Err(MutationError::NoCells);
        }
        for f in &self.families {
            if f.cells.is_empty() {
                continue;
            }
            if f.family.is_empty() {
                return Err(MutationError::EmptyFamily);
            }
            if f.family.len() > MAX_FAMILY_LEN {
                return Err(MutationError::FamilyTooLong {
                    len: f.family.len(),
                });
            }
        }
        Ok(())
    }
}

/// The per-cell checks of [`RowMutation::validate`]: a timestamp below
/// 2^63 and a cell no larger than `max_cell_size` (0: unlimited).
pub fn check_cell(
    row_len: usize,
    family_len: usize,
    qualifier: &[u8],
    timestamp: u64,
    value: &[u8],
    max_cell_size: usize,
) -> Result<(), MutationError> {
    if timestamp > LATEST_TIMESTAMP {
        return Err(MutationError::BadTimestamp(timestamp));
    }
    let size = row_len + family_len + qualifier.len() + value.len() + crate::key::KEY_OVERHEAD;
    if max_cell_size > 0 && size > max_cell_size {
        return Err(MutationError::CellTooLarge {
            size,
            max: max_cell_size,
        });
    }
    Ok(())
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
        let kinds: Vec<_> = m.mutations().map(|x| x.kind).collect();
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
