//! Point reads: `get*`, `getRow*`, `getRows*`, `getRowOrBefore`, through
//! [`ferrobase_client::Table::get_rows`].
//!
//! This module owns HBase's read semantics of the Thrift1 API: a `*Ts`
//! read sees cells with timestamps strictly below the given one
//! (`setTimeRange(0, ts)`); a row with no cells is left out of a
//! `list<TRowResult>`; a column is `family:qualifier`, and a bare family
//! (or `family:`) means every column of it. It never writes.

use super::Outcome;
use crate::error::ServiceError;
use crate::hbase_types::{ColumnName, TCell, TColumn, TRowResult};
use crate::protocol::{TType, Value};
use bytes::Bytes;
use ferrobase_client::{Connection, Get, RowResult, Scan};
use ferrobase_types::Cell;

/// The exclusive upper timestamp of a `*Ts` call; `None` when nothing can
/// be older than it (0).
pub(super) fn before(ts: i64) -> Result<Option<u64>, ServiceError> {
    match u64::try_from(ts) {
        Err(_) => Err(ServiceError::IllegalArgument(format!(
            "timestamp {ts} is negative"
        ))),
        Ok(0) => Ok(None),
        Ok(t) => Ok(Some(t)),
    }
}

/// Restricts a get to `columns` (absent or empty: every column).
fn with_columns(mut get: Get, columns: &[Bytes]) -> Get {
    for c in columns {
        let c = ColumnName::parse(c);
        get = match c.column() {
            Some(q) => get.column(c.family, q),
            None => get.family(c.family),
        };
    }
    get
}

fn tcell(c: &Cell) -> TCell {
    TCell {
        value: c.value.clone(),
        timestamp: i64::try_from(c.timestamp).unwrap_or(i64::MAX),
    }
}

/// A list of cells.
pub(super) fn tcells(cells: &[Cell]) -> Value {
    Value::List(
        TType::Struct,
        cells.iter().map(|c| tcell(c).to_value()).collect(),
    )
}

/// A row as `TRowResult` (HBase's `rowResultFromHBase`): a map of the
/// newest cell per column, or with `sorted` the cells as a list in column
/// order. `None` for a row without cells.
pub(super) fn row_result(r: &RowResult, sorted: bool) -> Option<TRowResult> {
    if r.is_empty() {
        return None;
    }
    let named = r
        .cells
        .iter()
        .map(|c| (ColumnName::join(&c.family, &c.qualifier), tcell(c)));
    let mut out = TRowResult {
        row: r.row.clone(),
        columns: None,
        sorted_columns: None,
    };
    if sorted {
        out.sorted_columns = Some(
            named
                .map(|(column_name, cell)| TColumn { column_name, cell })
                .collect(),
        );
    } else {
        let mut columns: Vec<(Bytes, TCell)> = Vec::with_capacity(r.cells.len());
        for (name, cell) in named {
            // Cells come newest first within a column: keep the first.
            if columns.last().is_none_or(|(last, _)| *last != name) {
                columns.push((name, cell));
            }
        }
        out.columns = Some(columns);
    }
    Some(out)
}

fn err(what: &str, table: &str) -> impl FnOnce(ferrobase_client::ClientError) -> ServiceError {
    let context = format!("{what} on table '{table}'");
    move |e| ServiceError::from_client(&context, e)
}

/// `get`, `getVer`, `getVerTs`: versions of one column (or family).
pub(super) async fn cells(
    c: &Connection,
    table: &str,
    row: Bytes,
    column: Bytes,
    versions: i32,
    ts: Option<i64>,
) -> Outcome {
    let versions = u32::try_from(versions)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| {
            ServiceError::IllegalArgument(format!("numVersions must be at least 1, got {versions}"))
        })?;
    let mut get = with_columns(Get::new(row), &[column]).versions(versions);
    if let Some(ts) = ts {
        match before(ts)? {
            Some(t) => get = get.time_range(0, t),
            None => return Ok(Some(tcells(&[]))),
        }
    }
    let r = c.table(table).get(get).await.map_err(err("get", table))?;
    Ok(Some(tcells(&r.cells)))
}

/// `getRow*` and `getRows*`: the newest cell of each column of `rows`.
pub(super) async fn rows(
    c: &Connection,
    table: &str,
    rows: Vec<Bytes>,
    columns: Option<Vec<Bytes>>,
    ts: Option<i64>,
) -> Outcome {
    if let Some(empty) = rows.iter().position(|r| r.is_empty()) {
        return Err(ServiceError::IllegalArgument(format!(
            "row key {empty} of the list is empty"
        )));
    }
    let mut get = with_columns(Get::new(Bytes::new()), columns.as_deref().unwrap_or(&[]));
    if let Some(ts) = ts {
        match before(ts)? {
            Some(t) => get = get.time_range(0, t),
            None => return Ok(Some(Value::List(TType::Struct, Vec::new()))),
        }
    }
    if rows.is_empty() {
        return Ok(Some(Value::List(TType::Struct, Vec::new())));
    }
    let results = c
        .table(table)
        .get_rows(rows, &get.spec)
        .await
        .map_err(err("get", table))?;
    Ok(Some(Value::List(
        TType::Struct,
        results
            .iter()
            .filter_map(|r| row_result(r, false))
            .map(|r| r.to_value())
            .collect(),
    )))
}

/// `getRowOrBefore`: the cells of `family` in the greatest row at or
/// before `row` (HBase 2 answers it with a one-row reversed scan too).
pub(super) async fn row_or_before(
    c: &Connection,
    table: &str,
    row: Bytes,
    family: Bytes,
) -> Outcome {
    let family = ColumnName::parse(&family).family;
    let scan = Scan::new()
        .start_row(row)
        .reversed(true)
        .family(family)
        .limit(1);
    let rows = c
        .table(table)
        .scan(scan)
        .collect()
        .await
        .map_err(err("getRowOrBefore", table))?;
    let cells = rows.first().map(|r| r.cells.as_slice()).unwrap_or(&[]);
    Ok(Some(tcells(cells)))
}
