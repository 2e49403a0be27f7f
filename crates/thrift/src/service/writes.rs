//! Writes: `mutateRow*`, `mutateRows*`, `deleteAll*`, increments,
//! `append`, `checkAndPut`, as ferrobase [`RowMutation`]s.
//!
//! This module owns HBase's write semantics of the Thrift1 API: a
//! mutation's `timestamp` applies to all its cells (default: the server's
//! clock); a delete of `family:qualifier` removes every version at or below
//! it, a delete of a bare family (or `family:`) the whole family; a put
//! needs `family:qualifier`; `writeToWAL = false` is `SKIP_WAL`. Like
//! HBase's handler it applies a row's deletes before its puts (`mutateRow`)
//! and a batch's puts before its deletes (`mutateRows`). It never reads
//! except where the call returns values.

use super::Outcome;
use crate::error::ServiceError;
use crate::hbase_types::{BatchMutation, ColumnName, Mutation, TAppend, TIncrement};
use crate::protocol::Value;
use bytes::Bytes;
use ferrobase_client::{Connection, Get};
use ferrobase_types::{Durability, LATEST_TIMESTAMP, RowMutation};

fn err(what: &str, table: &str) -> impl FnOnce(ferrobase_client::ClientError) -> ServiceError {
    let context = format!("{what} on table '{table}'");
    move |e| ServiceError::from_client(&context, e)
}

/// The timestamp of a `*Ts` write, or the server's clock.
fn timestamp(ts: Option<i64>) -> Result<u64, ServiceError> {
    match ts {
        None => Ok(LATEST_TIMESTAMP),
        Some(t) => u64::try_from(t)
            .map_err(|_| ServiceError::IllegalArgument(format!("timestamp {t} is negative"))),
    }
}

fn table_name(b: &Bytes) -> Result<String, ServiceError> {
    String::from_utf8(b.to_vec()).map_err(|_| {
        ServiceError::IllegalArgument(format!(
            "table name {:?} is not UTF-8",
            String::from_utf8_lossy(b)
        ))
    })
}

fn column(c: &Bytes) -> Result<ColumnName, ServiceError> {
    let col = ColumnName::parse(c);
    if col.family.is_empty() {
        return Err(ServiceError::IllegalArgument(format!(
            "column '{}' has no family; columns are family:qualifier",
            String::from_utf8_lossy(c)
        )));
    }
    Ok(col)
}

/// One row's mutations split into (deletes, puts); `None` for a kind the
/// row has none of.
fn build_row(
    row: &Bytes,
    mutations: &[Mutation],
    ts: u64,
) -> Result<(Option<RowMutation>, Option<RowMutation>), ServiceError> {
    if row.is_empty() {
        return Err(ServiceError::IllegalArgument("row key is empty".into()));
    }
    let (mut deletes, mut puts) = (RowMutation::new(row.clone()), RowMutation::new(row.clone()));
    let (mut n_deletes, mut n_puts) = (0, 0);
    for m in mutations {
        let col = column(&m.column)?;
        if m.is_delete {
            n_deletes += 1;
            deletes = match col.column() {
                Some(q) => deletes.delete_column(col.family, q, ts),
                None => deletes.delete_family(col.family, ts),
            };
            if !m.write_to_wal {
                deletes = deletes.with_durability(Durability::SkipWal);
            }
        } else {
            let Some(q) = col.qualifier else {
                return Err(ServiceError::IllegalArgument(format!(
                    "a put needs a column family:qualifier, got '{}'",
                    String::from_utf8_lossy(&m.column)
                )));
            };
            n_puts += 1;
            puts = puts.put_at(col.family, q, ts, m.value.clone().unwrap_or_default());
            if !m.write_to_wal {
                puts = puts.with_durability(Durability::SkipWal);
            }
        }
    }
    Ok((
        (n_deletes > 0).then_some(deletes),
        (n_puts > 0).then_some(puts),
    ))
}

pub(super) async fn mutate_row(
    c: &Connection,
    table: &str,
    row: Bytes,
    mutations: &[Mutation],
    ts: Option<i64>,
) -> Outcome {
    let (deletes, puts) = build_row(&row, mutations, timestamp(ts)?)?;
    let t = c.table(table);
    for m in [deletes, puts].into_iter().flatten() {
        t.mutate(m).await.map_err(err("mutateRow", table))?;
    }
    Ok(None)
}

pub(super) async fn mutate_rows(
    c: &Connection,
    table: &str,
    batches: &[BatchMutation],
    ts: Option<i64>,
) -> Outcome {
    let ts = timestamp(ts)?;
    let (mut all_deletes, mut all_puts) = (Vec::new(), Vec::new());
    for b in batches {
        let (deletes, puts) = build_row(&b.row, &b.mutations, ts)?;
        all_deletes.extend(deletes);
        all_puts.extend(puts);
    }
    let t = c.table(table);
    for group in [all_puts, all_deletes] {
        if group.is_empty() {
            continue;
        }
        for r in t.batch(&group).await {
            r.map_err(err("mutateRows", table))?;
        }
    }
    Ok(None)
}

pub(super) async fn atomic_increment(
    c: &Connection,
    table: &str,
    row: Bytes,
    column_name: Bytes,
    amount: i64,
) -> Outcome {
    let col = column(&column_name)?;
    let n = c
        .table(table)
        .increment(row, col.family, col.qualifier.unwrap_or_default(), amount)
        .await
        .map_err(err("atomicIncrement", table))?;
    Ok(Some(Value::I64(n)))
}

/// `deleteAll*` (one column or family) and `deleteAllRow*` (`column`
/// `None`: every family of the table).
pub(super) async fn delete_all(
    c: &Connection,
    table: &str,
    row: Bytes,
    column_name: Option<Bytes>,
    ts: Option<i64>,
) -> Outcome {
    let ts = timestamp(ts)?;
    let mut m = RowMutation::new(row);
    match column_name {
        Some(name) => {
            let col = column(&name)?;
            m = match col.column() {
                Some(q) => m.delete_column(col.family, q, ts),
                None => m.delete_family(col.family, ts),
            };
        }
        None => {
            let d = c
                .admin()
                .describe(table)
                .await
                .map_err(err("deleteAllRow", table))?;
            for f in &d.descriptor.families {
                m = m.delete_family(Bytes::copy_from_slice(f.name.as_bytes()), ts);
            }
        }
    }
    c.table(table)
        .delete(m)
        .await
        .map_err(err("deleteAll", table))?;
    Ok(None)
}

pub(super) async fn increments(c: &Connection, increments: &[TIncrement]) -> Outcome {
    for inc in increments {
        let table = table_name(&inc.table)?;
        let col = column(&inc.column)?;
        if inc.row.is_empty() {
            return Err(ServiceError::IllegalArgument("row key is empty".into()));
        }
        c.table(&table)
            .increment(
                inc.row.clone(),
                col.family,
                col.qualifier.unwrap_or_default(),
                inc.amount,
            )
            .await
            .map_err(err("increment", &table))?;
    }
    Ok(None)
}

/// `append`: appends each value to its column (one column at a time),
/// then answers with the columns' current cells.
pub(super) async fn append(c: &Connection, a: &TAppend) -> Outcome {
    let table = table_name(&a.table)?;
    if a.columns.len() != a.values.len() {
        return Err(ServiceError::IllegalArgument(format!(
            "append has {} columns but {} values",
            a.columns.len(),
            a.values.len()
        )));
    }
    if a.row.is_empty() {
        return Err(ServiceError::IllegalArgument("row key is empty".into()));
    }
    let t = c.table(&table);
    let mut get = Get::new(a.row.clone());
    for (name, value) in a.columns.iter().zip(&a.values) {
        let col = column(name)?;
        let q = col.qualifier.unwrap_or_default();
        t.append(a.row.clone(), col.family.clone(), q.clone(), value.clone())
            .await
            .map_err(err("append", &table))?;
        get = get.column(col.family, q);
    }
    if a.columns.is_empty() {
        return Ok(Some(super::reads::tcells(&[])));
    }
    let r = t.get(get).await.map_err(err("append", &table))?;
    Ok(Some(super::reads::tcells(&r.cells)))
}

pub(super) async fn check_and_put(
    c: &Connection,
    table: &str,
    row: Bytes,
    column_name: Bytes,
    expected: Option<Bytes>,
    put: &Mutation,
) -> Outcome {
    let col = column(&column_name)?;
    let put = Mutation {
        is_delete: false,
        ..put.clone()
    };
    let (_, puts) = build_row(&row, std::slice::from_ref(&put), LATEST_TIMESTAMP)?;
    let puts =
        puts.ok_or_else(|| ServiceError::IllegalArgument("checkAndPut without a put".into()))?;
    let applied = c
        .table(table)
        .check_and_mutate(
            col.family,
            col.qualifier.unwrap_or_default(),
            expected,
            puts,
        )
        .await
        .map_err(err("checkAndPut", table))?;
    Ok(Some(Value::Bool(applied)))
}
