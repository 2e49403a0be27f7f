//! The calls a server applies under the row lock and that are not
//! idempotent: `Increment`, `Append` and `checkAndMutate`.
//!
//! This module owns building them as HBase's client does: one `Mutate`
//! whose `MutationProto` carries the cells in the cell block and a nonce,
//! and whose request carries the connection's nonce group (and, for
//! checkAndMutate, the `Condition`). Every attempt of one call sends the
//! same nonce, so a server that saw the first attempt answers a retry
//! from its nonce table instead of applying it again. It never decides
//! what the values mean: the server adds, appends and checks.

use crate::connection::CLIENT_SERVICE;
use crate::error::{ClientError, Result};
use crate::results::CellSource;
use crate::table::Table;
use bytes::{Bytes, BytesMut};
use ferrobase_filter::{Comparator, CompareOp};
use ferrobase_hbase_wire::cellblock::CellCodec;
use ferrobase_hbase_wire::convert::filter::{comparator_to_pb, compare_op_to_pb};
use ferrobase_hbase_wire::convert::mutation::{MutationKind, mutation_to_pb};
use ferrobase_hbase_wire::pb;
use ferrobase_types::{Cell, CellType, RowMutation};

/// A checkAndMutate: apply `mutation` to `row` only when one column's
/// current value passes a test (HBase's `CheckAndMutate`).
///
/// The operator reads as HBase's does, "expected OP stored":
/// `if_matches(f, q, CompareOp::Less, "5")` passes when `5` is less than
/// the stored value. An empty expected value matches an absent column.
#[derive(Clone, Debug)]
pub struct CheckAndMutate {
    family: Bytes,
    qualifier: Bytes,
    op: CompareOp,
    expected: Bytes,
    time_range: Option<(u64, u64)>,
}

impl CheckAndMutate {
    /// Passes when `family:qualifier` holds exactly `value`.
    pub fn if_equals(
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        value: impl Into<Bytes>,
    ) -> CheckAndMutate {
        CheckAndMutate::if_matches(family, qualifier, CompareOp::Equal, value)
    }

    /// Passes when `family:qualifier` has no value.
    pub fn if_not_exists(family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> CheckAndMutate {
        CheckAndMutate::if_matches(family, qualifier, CompareOp::Equal, Bytes::new())
    }

    /// Passes when `value OP stored` holds.
    pub fn if_matches(
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        op: CompareOp,
        value: impl Into<Bytes>,
    ) -> CheckAndMutate {
        CheckAndMutate {
            family: family.into(),
            qualifier: qualifier.into(),
            op,
            expected: value.into(),
            time_range: None,
        }
    }

    /// Checks only the versions with timestamps in `[from, to)`.
    pub fn time_range(mut self, from: u64, to: u64) -> CheckAndMutate {
        self.time_range = Some((from, to));
        self
    }

    fn to_pb(&self, row: &Bytes) -> pb::Condition {
        pb::Condition {
            row: row.clone(),
            family: Some(self.family.clone()),
            qualifier: Some(self.qualifier.clone()),
            compare_type: Some(compare_op_to_pb(self.op)),
            comparator: Some(comparator_to_pb(&Comparator::Binary(
                self.expected.to_vec(),
            ))),
            time_range: self.time_range.map(|(from, to)| pb::TimeRange {
                from: Some(from),
                to: Some(to),
            }),
            filter: None,
        }
    }
}

/// Every cell of `m` is a put: Increment and Append carry put cells.
fn only_puts(m: &RowMutation, call: &str) -> Result<()> {
    if m.mutations().next().is_none() {
        return Err(ClientError::Invalid(format!("{call} with no columns")));
    }
    if m.mutations().any(|c| c.kind != CellType::Put) {
        return Err(ClientError::Invalid(format!(
            "{call} takes put cells only, not delete markers"
        )));
    }
    Ok(())
}

impl Table {
    /// Adds each `(family, qualifier, amount)` to its column (an absent
    /// column counts as 0) and returns the columns' new values, as
    /// 8-byte big-endian cells.
    pub async fn increment(
        &self,
        row: impl Into<Bytes>,
        columns: &[(Bytes, Bytes, i64)],
    ) -> Result<Vec<Cell>> {
        let mut m = RowMutation::new(row.into());
        for (family, qualifier, amount) in columns {
            m = m.put(
                family.clone(),
                qualifier.clone(),
                Bytes::copy_from_slice(&amount.to_be_bytes()),
            );
        }
        only_puts(&m, "increment")?;
        let (result, _) = self
            .nonced_mutate(MutationKind::Increment, &m, None)
            .await?;
        Ok(result)
    }

    /// Adds `amount` to one column and returns its new value (HBase's
    /// `incrementColumnValue`).
    pub async fn increment_column(
        &self,
        row: impl Into<Bytes>,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        amount: i64,
    ) -> Result<i64> {
        let (family, qualifier) = (family.into(), qualifier.into());
        let cells = self
            .increment(row, &[(family.clone(), qualifier.clone(), amount)])
            .await?;
        let cell = cells
            .iter()
            .find(|c| c.family == family && c.qualifier == qualifier)
            .ok_or_else(|| ClientError::Protocol("increment answered without its column".into()))?;
        let bytes: [u8; 8] = cell.value[..].try_into().map_err(|_| {
            ClientError::Protocol(format!(
                "increment answered a {}-byte value, not 8",
                cell.value.len()
            ))
        })?;
        Ok(i64::from_be_bytes(bytes))
    }

    /// Appends each put cell's value of `m` to its column's value and
    /// returns the columns' new values.
    pub async fn append(&self, m: &RowMutation) -> Result<Vec<Cell>> {
        only_puts(m, "append")?;
        let (result, _) = self.nonced_mutate(MutationKind::Append, m, None).await?;
        Ok(result)
    }

    /// Applies `m` (a Put, or a Delete as for [`mutate`](Self::mutate))
    /// only when `check` passes on `m`'s row; true when it was applied.
    pub async fn check_and_mutate(&self, check: &CheckAndMutate, m: &RowMutation) -> Result<bool> {
        let kind =
            if m.mutations().all(|c| c.kind == CellType::Put) && m.mutations().next().is_some() {
                MutationKind::Put
            } else if m.mutations().all(|c| c.kind != CellType::Put) {
                MutationKind::Delete
            } else {
                return Err(ClientError::Invalid(
                    "checkAndMutate of a mutation that mixes put cells and delete markers".into(),
                ));
            };
        let condition = check.to_pb(&m.row);
        let (_, processed) = self.nonced_mutate(kind, m, Some(condition)).await?;
        Ok(processed)
    }

    /// One `Mutate` with a fresh nonce, retried with that same nonce;
    /// the result's cells and the `processed` flag.
    async fn nonced_mutate(
        &self,
        kind: MutationKind,
        m: &RowMutation,
        condition: Option<pb::Condition>,
    ) -> Result<(Vec<Cell>, bool)> {
        let (group, nonce) = self.connection().inner.new_nonce();
        let mut block = BytesMut::new();
        let proto = mutation_to_pb(kind, m, Some(nonce), CellCodec::KeyValue, &mut block)?;
        let block = block.freeze();
        // A plain Mutate may leave `processed` out; a checked one says.
        let unsaid = condition.is_none();
        self.connection()
            .retrying(Some(self.name()), |_| {
                let (this, proto, block, row, condition) = (
                    self.clone(),
                    proto.clone(),
                    block.clone(),
                    m.row.clone(),
                    condition.clone(),
                );
                async move {
                    let loc = this.locate(&row).await?;
                    let req = pb::MutateRequest {
                        region: loc.specifier(),
                        mutation: proto,
                        condition,
                        nonce_group: Some(group),
                    };
                    let (resp, answer): (pb::MutateResponse, _) = this
                        .connection()
                        .call(&loc.server, CLIENT_SERVICE, "Mutate", &req, Some(&block), 0)
                        .await?;
                    let cells = match &resp.result {
                        Some(r) => CellSource::new(answer.as_ref()).result(r)?,
                        None => Vec::new(),
                    };
                    Ok((cells, resp.processed.unwrap_or(unsaid)))
                }
            })
            .await
    }
}
