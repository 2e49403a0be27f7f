//! `checkAndMutate` as HBase defines it: a column condition (HBase's
//! operator order, an empty expected value meaning "absent") or a filter
//! condition, checked and applied under the row lock. Never decodes
//! frames; `Mutate` and `Multi` hand it decoded mutations.

use super::*;

/// A checked call's condition (HBase's `preCheckAndPut`): READ and WRITE
/// on the checked column; a filter condition reads the row, so it needs
/// READ on the table.
pub(super) fn check_condition(
    rs: &RegionServer,
    region: u64,
    c: &Condition,
    access: &Access,
) -> Result<(), HBaseException> {
    if !access.checked() {
        return Ok(());
    }
    let table = table_of(rs, region)?;
    match c {
        Condition::Column(check) => access.require_column_all(
            "checkAndMutate",
            &table,
            (&check.family, &check.qualifier),
            &[Action::Read, Action::Write],
        ),
        Condition::Filter(..) => access.require_table("checkAndMutate", &table, &[Action::Read]),
    }
    .map_err(exception)
}

/// A `Condition`'s column, time range and test, with HBase's semantics
/// (`HRegion.checkAndMutate`): an empty expected value matches an absent
/// column (or an empty value) unless the operator is NOT_EQUAL, and the
/// operator reads "expected OP stored".
pub(super) struct Check {
    pub(super) family: Bytes,
    pub(super) qualifier: Bytes,
    pub(super) time_range: (u64, u64),
    pub(super) op: CompareOp,
    pub(super) comparator: Comparator,
    pub(super) expected_empty: bool,
}

impl Check {
    pub(super) fn of(c: &pb::Condition) -> Result<Check, HBaseException> {
        let family = c
            .family
            .clone()
            .ok_or_else(|| do_not_retry("checkAndMutate condition names no family"))?;
        let op = compare_op_from_pb(c.compare_type.unwrap_or(pb::CompareType::Equal as i32))
            .map_err(convert)?;
        let comparator = c
            .comparator
            .as_ref()
            .ok_or_else(|| do_not_retry("checkAndMutate condition has no comparator"))
            .and_then(|c| comparator_from_pb(c).map_err(convert))?;
        let expected_empty = match &comparator {
            Comparator::Binary(v) | Comparator::BinaryPrefix(v) => v.is_empty(),
            _ => false,
        };
        let time_range = match &c.time_range {
            Some(t) => time_range_from_pb(Some(t)).map_err(convert)?,
            None => (0, u64::MAX),
        };
        Ok(Check {
            family,
            qualifier: c.qualifier.clone().unwrap_or_default(),
            time_range,
            op,
            comparator,
            expected_empty,
        })
    }

    pub(super) fn passes(&self, current: Option<&Cell>) -> bool {
        let not_equal = self.op == CompareOp::NotEqual;
        match current {
            None => self.expected_empty && !not_equal,
            Some(c) if self.expected_empty => c.value.is_empty() != not_equal,
            Some(c) => self.op.keeps(self.comparator.order(&c.value).reverse()),
        }
    }
}

/// What a checked mutation tests: one column, or a filter the row must
/// pass (some cell left after filtering).
pub(super) enum Condition {
    Column(Check),
    Filter(Arc<Filter>, (u64, u64)),
}

impl Condition {
    pub(super) fn of(c: &pb::Condition) -> Result<Condition, HBaseException> {
        match &c.filter {
            Some(f) => {
                let filter = filter_of(Some(f))?.ok_or_else(|| do_not_retry("empty filter"))?;
                let time_range = match &c.time_range {
                    Some(t) => time_range_from_pb(Some(t)).map_err(convert)?,
                    None => (0, u64::MAX),
                };
                Ok(Condition::Filter(filter, time_range))
            }
            None => Check::of(c).map(Condition::Column),
        }
    }

    /// True when the condition holds for `row` now (the caller holds the
    /// row lock).
    pub(super) fn holds(
        &self,
        rs: &RegionServer,
        region: u64,
        row: &Bytes,
    ) -> Result<bool, HBaseException> {
        let r = rs.region(region).map_err(exception)?;
        match self {
            Condition::Column(check) => {
                crate::region_server::require_family(&r, &check.family).map_err(exception)?;
                let mut g = Get::new(row.clone());
                g.add_column(check.family.clone(), check.qualifier.clone());
                g.time_range = check.time_range;
                let cells = r.get(&g).map_err(|e| exception(e.into()))?;
                Ok(check.passes(cells.first()))
            }
            Condition::Filter(filter, (from, to)) => {
                let spec = fpb::ReadSpec {
                    min_timestamp: *from,
                    max_timestamp: if *to >= LATEST_TIMESTAMP { 0 } else { *to },
                    ..Default::default()
                };
                let rows = read_path::get_rows(
                    rs,
                    region,
                    std::slice::from_ref(row),
                    Some(&spec),
                    Some(filter.clone()),
                    None,
                )
                .map_err(exception)?;
                Ok(rows.iter().any(|(_, cells)| !cells.is_empty()))
            }
        }
    }
}

/// What a checked call does when its condition holds.
pub(super) enum Checked {
    /// Puts and Deletes of the row, as one batch.
    Mutations(Vec<RowMutation>),
    /// An Increment (false) or Append (true) whose new cells come back.
    ReadModifyWrite(RowMutation, bool),
}

/// Runs `action` on `row` if `condition` holds, under the row lock.
/// Returns whether it held, and an Increment's or Append's new cells.
pub(super) fn check_and(
    rs: &RegionServer,
    region: u64,
    row: &Bytes,
    condition: Option<&Condition>,
    action: Checked,
) -> Result<(bool, Option<Vec<Cell>>), HBaseException> {
    let _guard = rs.lock_row(region, row);
    if let Some(c) = condition
        && !c.holds(rs, region, row)?
    {
        return Ok((false, None));
    }
    match action {
        Checked::Mutations(ms) => {
            if !ms.is_empty() {
                rs.region(region)
                    .map_err(exception)?
                    .mutate_owned(ms)
                    .map_err(|e| exception(e.into()))?;
            }
            Ok((true, None))
        }
        Checked::ReadModifyWrite(m, append) => rs
            .read_modify_write_locked(region, m, append)
            .map(|cells| (true, Some(cells)))
            .map_err(exception),
    }
}

/// [`check_and`] of a call tagged `(group, nonce)` (nonce 0: none), once
/// per pair as `RegionServer::checked_once` runs gRPC's: a retry gets the
/// first outcome without checking again, and a retry of an applied
/// Increment or Append the row's current cells of its columns.
pub(super) fn check_and_once(
    rs: &RegionServer,
    region: u64,
    row: &Bytes,
    condition: Option<&Condition>,
    mut action: Checked,
    (manager, group, nonce): (&ServerNonces, u64, u64),
) -> Result<(bool, Option<Vec<Cell>>), HBaseException> {
    let table = table_of(rs, region)?;
    match manager.start_on(group, nonce, &table, row) {
        Start::Duplicate => match &action {
            Checked::ReadModifyWrite(m, _) => rs
                .current_cells(region, m)
                .map(|cells| (true, Some(cells)))
                .map_err(exception),
            Checked::Mutations(_) => Ok((true, None)),
        },
        Start::DuplicateFailedCheck => Ok((false, None)),
        Start::Proceed => {
            if nonce != 0 {
                // Logged with the edits: a server replaying them knows the
                // call applied.
                match &mut action {
                    Checked::Mutations(ms) => {
                        for m in ms {
                            m.nonce = Some((group, nonce));
                        }
                    }
                    Checked::ReadModifyWrite(m, _) => m.nonce = Some((group, nonce)),
                }
            }
            let done = check_and(rs, region, row, condition, action);
            match &done {
                Ok((true, _)) => {
                    manager.end(group, nonce, true);
                    crate::crash_point::reached("check-and-mutate-after-apply");
                }
                Ok((false, _)) => manager.end_failed_check(group, nonce),
                Err(_) => manager.end(group, nonce, false),
            }
            done
        }
    }
}
