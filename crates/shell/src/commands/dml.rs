//! Write commands: put, delete, deleteall, incr, get_counter, append.
//!
//! Row, column and value arguments are bytes exactly as typed (double
//! quotes resolve `\xNN`); this module maps them onto row mutations and
//! never reads more than a counter needs.

use super::{Reply, arity, parse_column, table_name};
use crate::session::Shell;
use crate::value::Value;
use crate::{ShellError, arg_err};
use ferrobase_client::Get;
use ferrobase_types::binary::to_string_binary;
use ferrobase_types::{LATEST_TIMESTAMP, RowMutation};

/// `f:q` split into family and qualifier (a column, not a family).
fn column(v: &Value) -> Result<(Vec<u8>, Vec<u8>), ShellError> {
    let spec = v.bytes("column")?;
    match parse_column(&spec) {
        (f, Some(q)) if !f.is_empty() => Ok((f, q)),
        _ => arg_err(format!(
            "column must be 'family:qualifier', not '{}'",
            to_string_binary(&spec)
        )),
    }
}

/// An optional timestamp argument (a trailing attributes dict is refused).
fn timestamp(args: &[Value], i: usize) -> Result<u64, ShellError> {
    match args.get(i) {
        None => Ok(LATEST_TIMESTAMP),
        Some(Value::Dict(_)) => {
            arg_err("operation attributes (ATTRIBUTES, TTL, VISIBILITY) are not supported")
        }
        Some(v) => v.uint("timestamp"),
    }
}

pub async fn put(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("put", args, 4..=5)?;
    let table = table_name("put", args)?;
    let row = args[1].bytes("row")?;
    let (f, q) = column(&args[2])?;
    let value = args[3].bytes("value")?;
    let ts = timestamp(args, 4)?;
    shell
        .conn
        .table(&table)
        .put(RowMutation::new(row).put_at(f, q, ts, value))
        .await?;
    Ok(Reply::timed())
}

pub async fn delete(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("delete", args, 3..=4)?;
    let table = table_name("delete", args)?;
    let row = args[1].bytes("row")?;
    let (f, q) = column(&args[2])?;
    let ts = timestamp(args, 3)?;
    shell
        .conn
        .table(&table)
        .delete(RowMutation::new(row).delete_column(f, q, ts))
        .await?;
    Ok(Reply::timed())
}

pub async fn deleteall(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("deleteall", args, 2..=4)?;
    let table = table_name("deleteall", args)?;
    let row = args[1].bytes("row")?;
    let ts = timestamp(args, 3)?;
    let mut m = RowMutation::new(row);
    let spec = match args.get(2) {
        Some(v) => v.bytes("column")?,
        None => Vec::new(),
    };
    if spec.is_empty() {
        let d = shell.admin.describe(&table).await?;
        for f in &d.descriptor.families {
            m = m.delete_family(f.name.clone().into_bytes(), ts);
        }
    } else {
        match parse_column(&spec) {
            (f, None) => m = m.delete_family(f, ts),
            (f, Some(q)) => m = m.delete_column(f, q, ts),
        }
    }
    shell.conn.table(&table).delete(m).await?;
    Ok(Reply::timed())
}

pub async fn incr(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("incr", args, 3..=4)?;
    let table = table_name("incr", args)?;
    let row = args[1].bytes("row")?;
    let (f, q) = column(&args[2])?;
    let amount = match args.get(3) {
        Some(v) => v.int("increment")?,
        None => 1,
    };
    let n = shell
        .conn
        .table(&table)
        .increment(row, f, q, amount)
        .await?;
    out.push_str(&format!("COUNTER VALUE = {n}\n"));
    Ok(Reply::timed())
}

pub async fn get_counter(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("get_counter", args, 3..=3)?;
    let table = table_name("get_counter", args)?;
    let row = args[1].bytes("row")?;
    let (f, q) = column(&args[2])?;
    let r = shell
        .conn
        .table(&table)
        .get(Get::new(row).column(f.clone(), q.clone()))
        .await?;
    match r.value(&f, &q) {
        None => out.push_str("No counter found at specified coordinates\n"),
        Some(v) => {
            let arr: [u8; 8] = v[..].try_into().map_err(|_| {
                ShellError::Argument(format!(
                    "the value '{}' is {} bytes, not an 8-byte counter",
                    to_string_binary(v),
                    v.len()
                ))
            })?;
            out.push_str(&format!("COUNTER VALUE = {}\n", i64::from_be_bytes(arr)));
        }
    }
    Ok(Reply::timed())
}

pub async fn append(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("append", args, 4..=4)?;
    let table = table_name("append", args)?;
    let row = args[1].bytes("row")?;
    let (f, q) = column(&args[2])?;
    let value = args[3].bytes("value")?;
    let v = shell.conn.table(&table).append(row, f, q, value).await?;
    out.push_str(&format!("CURRENT VALUE = {}\n", to_string_binary(&v)));
    Ok(Reply::timed())
}
