//! Read commands: get, scan, count. Options are HBase's (`COLUMNS`,
//! `VERSIONS`, `TIMESTAMP`, `TIMERANGE`, `FILTER`, `STARTROW`, `STOPROW`,
//! `ROWPREFIXFILTER`, `LIMIT`, `REVERSED`, `INTERVAL`, `CACHE`).
//!
//! Filter strings go to the server as typed: this module never evaluates
//! or rewrites a filter.

use super::{Reply, arity, parse_column, table_name};
use crate::format::{cell_text, column, rows};
use crate::session::Shell;
use crate::value::{Dict, Value};
use crate::{ShellError, arg_err};
use ferrobase_client::{Get, Scan};
use ferrobase_types::binary::to_string_binary;

const GET_KEYS: &[&str] = &[
    "COLUMN",
    "COLUMNS",
    "VERSIONS",
    "TIMESTAMP",
    "TIMERANGE",
    "FILTER",
];
const SCAN_KEYS: &[&str] = &[
    "STARTROW",
    "STOPROW",
    "ROWPREFIXFILTER",
    "COLUMNS",
    "COLUMN",
    "LIMIT",
    "VERSIONS",
    "TIMESTAMP",
    "TIMERANGE",
    "REVERSED",
    "FILTER",
    "CACHE",
];
const COUNT_KEYS: &[&str] = &["INTERVAL", "CACHE", "FILTER"];

/// A family, and a qualifier when one column is meant.
type ColumnSpec = (Vec<u8>, Option<Vec<u8>>);

/// `(family, qualifier?)` of each column spec in `v` (a string or array).
fn columns(v: &Value) -> Result<Vec<ColumnSpec>, ShellError> {
    v.list()
        .iter()
        .map(|c| {
            let spec = c.bytes("COLUMNS")?;
            let (f, q) = parse_column(&spec);
            if f.is_empty() {
                return arg_err(format!(
                    "bad column '{}': the family is empty",
                    to_string_binary(&spec)
                ));
            }
            Ok((f, q))
        })
        .collect()
}

fn time_range(v: &Value) -> Result<(u64, u64), ShellError> {
    match v {
        Value::Array(a) if a.len() == 2 => {
            Ok((a[0].uint("TIMERANGE start")?, a[1].uint("TIMERANGE end")?))
        }
        other => arg_err(format!(
            "TIMERANGE must be [min, max], not {}",
            other.describe()
        )),
    }
}

fn versions(v: &Value) -> Result<u32, ShellError> {
    let n = v.uint("VERSIONS")?;
    u32::try_from(n).map_err(|_| ShellError::Argument(format!("VERSIONS {n} is too large")))
}

/// The options dict of a read (a missing one is an empty dict).
fn options<'a>(
    command: &str,
    v: Option<&'a Value>,
    valid: &[&str],
) -> Result<Dict<'a>, ShellError> {
    let d = match v {
        None => Dict::new(&[]),
        Some(Value::Dict(p)) => Dict::new(p),
        Some(other) => {
            return arg_err(format!(
                "{command} options must be a dict, not {}",
                other.describe()
            ));
        }
    };
    d.check_keys(command, valid)?;
    Ok(d)
}

pub async fn get(shell: &mut Shell, args: &[Value], out: &mut String) -> Result<Reply, ShellError> {
    arity("get", args, 2..=usize::MAX)?;
    let table = table_name("get", args)?;
    let mut g = Get::new(args[1].bytes("row")?);
    let mut specs = Vec::new();
    for a in &args[2..] {
        match a {
            Value::Dict(_) => {
                let d = options("get", Some(a), GET_KEYS)?;
                for key in ["COLUMN", "COLUMNS"] {
                    if let Some(c) = d.get(key) {
                        specs.extend(columns(c)?);
                    }
                }
                if let Some(v) = d.get("VERSIONS") {
                    g = g.versions(versions(v)?);
                }
                if let Some(v) = d.get("TIMESTAMP") {
                    g = g.timestamp(v.uint("TIMESTAMP")?);
                }
                if let Some(v) = d.get("TIMERANGE") {
                    let (lo, hi) = time_range(v)?;
                    g = g.time_range(lo, hi);
                }
                if let Some(v) = d.get("FILTER") {
                    g = g.filter(v.text("FILTER")?);
                }
            }
            other => specs.extend(columns(other)?),
        }
    }
    for (f, q) in specs {
        g = match q {
            Some(q) => g.column(f, q),
            None => g.family(f),
        };
    }
    let r = shell.conn.table(&table).get(g).await?;
    shell.fmt.header("COLUMN", "CELL", out);
    for c in &r.cells {
        shell.fmt.row(&column(c), &cell_text(c), out);
    }
    // HBase 2's shell counts the row, not its cells.
    rows(u64::from(!r.cells.is_empty()), out);
    Ok(Reply::timed())
}

/// A scan from the options dict shared by scan and count.
fn build_scan(d: &Dict<'_>) -> Result<(Scan, u64), ShellError> {
    let mut s = Scan::new();
    if let Some(v) = d.get("STARTROW") {
        s = s.start_row(v.bytes("STARTROW")?);
    }
    if let Some(v) = d.get("STOPROW") {
        s = s.stop_row(v.bytes("STOPROW")?);
    }
    if let Some(v) = d.get("ROWPREFIXFILTER") {
        s = s.row_prefix(v.bytes("ROWPREFIXFILTER")?);
    }
    for key in ["COLUMN", "COLUMNS"] {
        if let Some(c) = d.get(key) {
            for (f, q) in columns(c)? {
                s = match q {
                    Some(q) => s.column(f, q),
                    None => s.family(f),
                };
            }
        }
    }
    let mut limit = 0;
    if let Some(v) = d.get("LIMIT") {
        limit = v.uint("LIMIT")?;
        s = s.limit(limit);
    }
    if let Some(v) = d.get("VERSIONS") {
        s = s.versions(versions(v)?);
    }
    if let Some(v) = d.get("TIMESTAMP") {
        s = s.timestamp(v.uint("TIMESTAMP")?);
    }
    if let Some(v) = d.get("TIMERANGE") {
        let (lo, hi) = time_range(v)?;
        s = s.time_range(lo, hi);
    }
    if let Some(v) = d.get("REVERSED") {
        s = s.reversed(v.boolean("REVERSED")?);
    }
    if let Some(v) = d.get("FILTER") {
        s = s.filter(v.text("FILTER")?);
    }
    if let Some(v) = d.get("CACHE") {
        let n = v.uint("CACHE")?;
        s = s.caching(u32::try_from(n).unwrap_or(u32::MAX));
    }
    Ok((s, limit))
}

pub async fn scan(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("scan", args, 1..=2)?;
    let table = table_name("scan", args)?;
    let d = options("scan", args.get(1), SCAN_KEYS)?;
    let (s, _) = build_scan(&d)?;
    let mut scanner = shell.conn.table(&table).scan(s);
    shell.fmt.header("ROW", "COLUMN+CELL", out);
    let mut n = 0u64;
    while let Some(r) = scanner.next().await? {
        let row = to_string_binary(&r.row);
        for c in &r.cells {
            shell.fmt.row(
                &row,
                &format!("column={}, {}", column(c), cell_text(c)),
                out,
            );
        }
        n += 1;
    }
    rows(n, out);
    Ok(Reply::timed())
}

pub async fn count(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("count", args, 1..=2)?;
    let table = table_name("count", args)?;
    let d = options("count", args.get(1), COUNT_KEYS)?;
    let interval = match d.get("INTERVAL") {
        Some(v) => v.uint("INTERVAL")?.max(1),
        None => 1000,
    };
    let (mut s, _) = build_scan(&d)?;
    if d.get("FILTER").is_none() {
        // As HBase's count: one cell per row is enough to count it.
        s = s.filter("FirstKeyOnlyFilter()");
    }
    if s.caching == 0 {
        s = s.caching(10);
    }
    let mut scanner = shell.conn.table(&table).scan(s);
    let mut n = 0u64;
    while let Some(r) = scanner.next().await? {
        n += 1;
        if n.is_multiple_of(interval) {
            out.push_str(&format!(
                "Current count: {n}, row: {}\n",
                to_string_binary(&r.row)
            ));
        }
    }
    rows(n, out);
    Ok(Reply::value(n.to_string()))
}
