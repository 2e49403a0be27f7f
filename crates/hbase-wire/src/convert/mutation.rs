//! A `MutationProto` and its cells ⇄ ferrobase's [`RowMutation`], and
//! results' cells ⇄ `Result` messages.
//!
//! The Java client sends a Put's or Delete's cells in the call's cell block
//! (the message then holds the row, the type and `associated_cell_count`),
//! or, on a connection without a cell codec, inline as `ColumnValue`s. This
//! module owns reading either form into a [`RowMutation`] (cell-block cells
//! go straight into cell runs) and writing the cell-block form for a Rust
//! client. It never applies a mutation: what an Increment's or Append's
//! cells mean, and which families a whole-row Delete covers, is the
//! server's business.

use super::{ConvertError, durability_from_pb, durability_to_pb, time_range_from_pb};
use crate::cellblock::{CellBlockReader, CellCodec, encode_cells, encode_mutation};
use crate::pb;
use bytes::{Bytes, BytesMut};
use ferrobase_types::{Cell, CellType, LATEST_TIMESTAMP, RowMutation};

/// What a `MutationProto` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MutationKind {
    Put,
    Delete,
    /// Cells are Put cells whose values are 8-byte big-endian amounts.
    Increment,
    /// Cells are Put cells whose values are appended.
    Append,
}

impl MutationKind {
    fn from_pb(code: Option<i32>) -> Result<MutationKind, ConvertError> {
        use pb::mutation_proto::MutationType as T;
        let code = code.ok_or_else(|| ConvertError::invalid("mutation", "has no mutate_type"))?;
        Ok(match T::try_from(code) {
            Ok(T::Put) => MutationKind::Put,
            Ok(T::Delete) => MutationKind::Delete,
            Ok(T::Increment) => MutationKind::Increment,
            Ok(T::Append) => MutationKind::Append,
            Err(_) => {
                return Err(ConvertError::invalid(
                    "mutation",
                    format!("unknown mutate_type {code}"),
                ));
            }
        })
    }

    fn to_pb(self) -> i32 {
        use pb::mutation_proto::MutationType as T;
        (match self {
            MutationKind::Put => T::Put,
            MutationKind::Delete => T::Delete,
            MutationKind::Increment => T::Increment,
            MutationKind::Append => T::Append,
        }) as i32
    }
}

/// A decoded `MutationProto`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireMutation {
    pub kind: MutationKind,
    /// The cells: a Put's values, a Delete's markers, an Increment's
    /// amounts or an Append's suffixes (the latter two as Put cells).
    pub mutation: RowMutation,
    /// The mutation's own timestamp ([`LATEST_TIMESTAMP`] when unset): a
    /// Delete with no cells deletes the whole row at or below it.
    pub timestamp: u64,
    /// Set for Increment and Append so a retried call is applied once.
    pub nonce: Option<u64>,
    /// `[from, to)` of an Increment's or Append's read, when given.
    pub time_range: Option<(u64, u64)>,
    /// Client attributes (e.g. TTL, visibility), passed through.
    pub attributes: Vec<pb::NameBytesPair>,
}

impl WireMutation {
    /// True for a Delete that names no family: the server deletes every
    /// family of the row at or below [`timestamp`](Self::timestamp).
    pub fn is_whole_row_delete(&self) -> bool {
        self.kind == MutationKind::Delete && self.mutation.is_empty()
    }
}

fn delete_kind(code: Option<i32>) -> Result<CellType, ConvertError> {
    use pb::mutation_proto::DeleteType as D;
    let code = code.unwrap_or(D::DeleteMultipleVersions as i32);
    Ok(match D::try_from(code) {
        Ok(D::DeleteOneVersion) => CellType::Delete,
        Ok(D::DeleteMultipleVersions) => CellType::DeleteColumn,
        Ok(D::DeleteFamily) => CellType::DeleteFamily,
        Ok(D::DeleteFamilyVersion) => CellType::DeleteFamilyVersion,
        Err(_) => {
            return Err(ConvertError::invalid(
                "delete",
                format!("unknown delete_type {code}"),
            ));
        }
    })
}

/// Decodes a mutation. Cells announced by `associated_cell_count` are read
/// from `cells` (the call's cell block, positioned at this mutation's
/// first cell); without a count, the inline `ColumnValue`s are used.
pub fn mutation_from_pb(
    m: &pb::MutationProto,
    cells: Option<&mut CellBlockReader<'_>>,
) -> Result<WireMutation, ConvertError> {
    let kind = MutationKind::from_pb(m.mutate_type)?;
    let durability = durability_from_pb(m.durability.unwrap_or(0))?;
    let timestamp = m.timestamp.unwrap_or(LATEST_TIMESTAMP);
    let announced = usize::try_from(m.associated_cell_count.unwrap_or(0))
        .map_err(|_| ConvertError::invalid("mutation", "negative associated_cell_count"))?;
    let mutation = if announced > 0 {
        let reader = cells.ok_or_else(|| {
            ConvertError::invalid("mutation", "announces cells but the call has no cell block")
        })?;
        let mut rm = reader.read_mutation(announced, durability)?;
        match &m.row {
            Some(row) if *row != rm.row => {
                return Err(ConvertError::invalid(
                    "mutation",
                    "its cells name another row than the message",
                ));
            }
            Some(row) => rm.row = row.clone(),
            None => {}
        }
        rm
    } else {
        let row = m.row.clone().unwrap_or_default();
        let mut rm = RowMutation::new(row).with_durability(durability);
        for cv in &m.column_value {
            for qv in &cv.qualifier_value {
                let ts = qv.timestamp.unwrap_or(timestamp);
                let (cell_type, value) = if kind == MutationKind::Delete {
                    (delete_kind(qv.delete_type)?, &[][..])
                } else {
                    (CellType::Put, qv.value.as_deref().unwrap_or_default())
                };
                rm.push(
                    cv.family.clone(),
                    qv.qualifier.as_deref().unwrap_or_default(),
                    ts,
                    cell_type,
                    value,
                );
            }
        }
        rm
    };
    Ok(WireMutation {
        kind,
        mutation,
        timestamp,
        nonce: m.nonce,
        time_range: m
            .time_range
            .as_ref()
            .map(|t| time_range_from_pb(Some(t)))
            .transpose()?,
        attributes: m.attribute.clone(),
    })
}

/// Writes a mutation's cells into `cell_block` and returns its message
/// (row, type, durability, `associated_cell_count`), as the Java client
/// does on a connection with a cell codec.
pub fn mutation_to_pb(
    kind: MutationKind,
    m: &RowMutation,
    nonce: Option<u64>,
    codec: CellCodec,
    cell_block: &mut BytesMut,
) -> Result<pb::MutationProto, ConvertError> {
    let n = encode_mutation(cell_block, codec, m)?;
    Ok(pb::MutationProto {
        row: Some(m.row.clone()),
        mutate_type: Some(kind.to_pb()),
        timestamp: Some(LATEST_TIMESTAMP),
        durability: Some(durability_to_pb(m.durability)),
        associated_cell_count: Some(i32::try_from(n).unwrap_or(i32::MAX)),
        nonce,
        ..Default::default()
    })
}

/// Writes a result's cells into `cell_block` and returns the `Result`
/// message that announces them (a server's Get, Scan or Multi answer).
pub fn result_to_pb(
    cells: &[Cell],
    codec: CellCodec,
    cell_block: &mut BytesMut,
) -> Result<pb::Result, ConvertError> {
    let n = encode_cells(cell_block, codec, cells)?;
    Ok(pb::Result {
        associated_cell_count: Some(i32::try_from(n).unwrap_or(i32::MAX)),
        ..Default::default()
    })
}

/// A cell as an inline protobuf `Cell` (connections without a cell codec).
pub fn cell_to_pb(c: &Cell) -> pb::Cell {
    pb::Cell {
        row: Some(c.row.clone()),
        family: Some(c.family.clone()),
        qualifier: Some(c.qualifier.clone()),
        timestamp: Some(c.timestamp),
        cell_type: Some(i32::from(c.cell_type.code())),
        value: Some(c.value.clone()),
        tags: None,
    }
}

/// An inline protobuf `Cell` as a [`Cell`].
pub fn cell_from_pb(c: &pb::Cell) -> Result<Cell, ConvertError> {
    let code = c.cell_type.unwrap_or(pb::CellType::Put as i32);
    let cell_type = u8::try_from(code)
        .ok()
        .and_then(CellType::from_code)
        .ok_or_else(|| {
            ConvertError::invalid(
                "cell",
                format!("cell type {code} is not a stored cell type"),
            )
        })?;
    let b = |v: &Option<Bytes>| v.clone().unwrap_or_default();
    Ok(Cell {
        row: b(&c.row),
        family: b(&c.family),
        qualifier: b(&c.qualifier),
        timestamp: c.timestamp.unwrap_or(LATEST_TIMESTAMP),
        cell_type,
        value: b(&c.value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrobase_types::Durability;

    fn qv(
        q: &str,
        v: &str,
        ts: Option<u64>,
        delete: Option<i32>,
    ) -> pb::mutation_proto::column_value::QualifierValue {
        pb::mutation_proto::column_value::QualifierValue {
            qualifier: Some(Bytes::from(q.to_string())),
            value: Some(Bytes::from(v.to_string())),
            timestamp: ts,
            delete_type: delete,
            tags: None,
        }
    }

    #[test]
    fn cell_block_put_round_trips() {
        let m = RowMutation::new("r")
            .with_durability(Durability::SkipWal)
            .put("f", "a", "1")
            .put_at("g", "b", 7, "2");
        let mut block = BytesMut::new();
        let proto =
            mutation_to_pb(MutationKind::Put, &m, None, CellCodec::KeyValue, &mut block).unwrap();
        assert_eq!(proto.associated_cell_count, Some(2));
        let block = block.freeze();
        let mut reader = CellBlockReader::new(&block);
        let w = mutation_from_pb(&proto, Some(&mut reader)).unwrap();
        assert_eq!(w.kind, MutationKind::Put);
        assert_eq!(w.mutation, m);
        assert!(!w.is_whole_row_delete());
        // Without the block the announced cells are missing.
        assert!(mutation_from_pb(&proto, None).is_err());
        // Cells of another row than the message names.
        let mut other = proto.clone();
        other.row = Some(Bytes::from_static(b"x"));
        let mut reader = CellBlockReader::new(&block);
        assert!(
            mutation_from_pb(&other, Some(&mut reader))
                .unwrap_err()
                .to_string()
                .contains("another row")
        );
    }

    #[test]
    fn inline_mutations_take_the_mutation_timestamp() {
        use pb::mutation_proto::DeleteType as D;
        let proto = pb::MutationProto {
            row: Some(Bytes::from_static(b"r")),
            mutate_type: Some(pb::mutation_proto::MutationType::Delete as i32),
            timestamp: Some(100),
            column_value: vec![pb::mutation_proto::ColumnValue {
                family: Bytes::from_static(b"f"),
                qualifier_value: vec![
                    qv("a", "", None, Some(D::DeleteOneVersion as i32)),
                    qv("b", "", Some(5), None),
                    qv("", "", None, Some(D::DeleteFamily as i32)),
                    qv("", "", Some(9), Some(D::DeleteFamilyVersion as i32)),
                ],
            }],
            ..Default::default()
        };
        let w = mutation_from_pb(&proto, None).unwrap();
        let expected = RowMutation::new("r")
            .delete_version("f", "a", 100)
            .delete_column("f", "b", 5)
            .delete_family("f", 100)
            .delete_family_version("f", 9);
        assert_eq!(w.mutation, expected);
        let inc = pb::MutationProto {
            row: Some(Bytes::from_static(b"r")),
            mutate_type: Some(pb::mutation_proto::MutationType::Increment as i32),
            nonce: Some(77),
            column_value: vec![pb::mutation_proto::ColumnValue {
                family: Bytes::from_static(b"f"),
                qualifier_value: vec![qv("n", "\0\0\0\0\0\0\0\x01", None, None)],
            }],
            time_range: Some(pb::TimeRange {
                from: Some(1),
                to: None,
            }),
            ..Default::default()
        };
        let w = mutation_from_pb(&inc, None).unwrap();
        assert_eq!(
            (w.kind, w.nonce, w.time_range),
            (
                MutationKind::Increment,
                Some(77),
                Some((1, i64::MAX as u64))
            )
        );
        assert_eq!(
            w.mutation.mutations().next().unwrap().timestamp,
            LATEST_TIMESTAMP
        );
    }

    #[test]
    fn a_delete_without_columns_is_a_whole_row_delete() {
        let proto = pb::MutationProto {
            row: Some(Bytes::from_static(b"r")),
            mutate_type: Some(pb::mutation_proto::MutationType::Delete as i32),
            timestamp: Some(50),
            ..Default::default()
        };
        let w = mutation_from_pb(&proto, None).unwrap();
        assert!(w.is_whole_row_delete());
        assert_eq!(w.timestamp, 50);
        let no_type = pb::MutationProto::default();
        assert!(
            mutation_from_pb(&no_type, None)
                .unwrap_err()
                .to_string()
                .contains("mutate_type")
        );
    }

    #[test]
    fn results_and_inline_cells() {
        let cells = vec![Cell::put("r", "f", "q", 3, "v")];
        let mut block = BytesMut::new();
        let r = result_to_pb(&cells, CellCodec::KeyValue, &mut block).unwrap();
        assert_eq!(r.associated_cell_count, Some(1));
        assert_eq!(
            crate::cellblock::decode_cells(&block.freeze()).unwrap(),
            cells
        );
        assert_eq!(cell_from_pb(&cell_to_pb(&cells[0])).unwrap(), cells[0]);
        let mut bad = cell_to_pb(&cells[0]);
        bad.cell_type = Some(255);
        assert!(cell_from_pb(&bad).is_err());
    }
}
