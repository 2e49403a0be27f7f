//! Snapshot commands: snapshot, list_snapshots, list_table_snapshots,
//! delete_snapshot, clone_snapshot, restore_snapshot (HBase's `snapshots`
//! group), snapshot_cleanup_switch and snapshot_cleanup_enabled (in
//! HBase's `tools`).
//!
//! Each is one Admin call; the master does the work (flush, manifest,
//! archive). This module only checks arguments and lays out the listing
//! as HBase's shell does.

use super::{Reply, arity, table_name};
use crate::format::iso_timestamp;
use crate::session::Shell;
use crate::value::{Dict, Value};
use crate::{ShellError, arg_err};

/// The snapshot name, the argument at `index`.
fn snapshot_name(command: &str, args: &[Value], index: usize) -> Result<String, ShellError> {
    match args.get(index) {
        None => arg_err(format!("{command} needs a snapshot name")),
        Some(v @ (Value::Str(_) | Value::Word(_))) => v.text("snapshot name"),
        Some(v) => arg_err(format!(
            "snapshot name must be a string, not {}",
            v.describe()
        )),
    }
}

/// `snapshot 'table', 'name'[, {TTL => seconds, SKIP_FLUSH => bool,
/// MAX_FILESIZE => n}]`. SKIP_FLUSH and MAX_FILESIZE are accepted as
/// HBase's shell takes them and change nothing: a snapshot always holds
/// every acknowledged write.
pub async fn snapshot(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("snapshot", args, 2..=3)?;
    let table = table_name("snapshot", args)?;
    let name = snapshot_name("snapshot", args, 1)?;
    let ttl = match args.get(2) {
        None => None,
        Some(Value::Dict(pairs)) => {
            let d = Dict::new(pairs);
            d.check_keys("snapshot", &["TTL", "SKIP_FLUSH", "MAX_FILESIZE"])?;
            if let Some(v) = d.get("SKIP_FLUSH") {
                v.boolean("SKIP_FLUSH")?;
            }
            if let Some(v) = d.get("MAX_FILESIZE") {
                v.uint("MAX_FILESIZE")?;
            }
            d.get("TTL").map(|v| v.uint("TTL")).transpose()?
        }
        Some(v) => {
            return arg_err(format!(
                "snapshot takes a dict of options after the name, not {}",
                v.describe()
            ));
        }
    };
    match ttl {
        Some(ttl) => shell.admin.snapshot_with_ttl(&table, &name, ttl).await?,
        None => shell.admin.snapshot(&table, &name).await?,
    };
    Ok(Reply::timed())
}

/// `snapshot_cleanup_switch true|false`: prints and returns the state
/// before.
pub async fn snapshot_cleanup_switch(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("snapshot_cleanup_switch", args, 1..=1)?;
    let on = match args.first() {
        Some(v) => v.boolean("the snapshot cleanup switch")?,
        None => return arg_err("snapshot_cleanup_switch needs true or false"),
    };
    let prev = shell.admin.snapshot_cleanup_switch(on).await?;
    out.push_str(&format!(" Previous snapshot cleanup state : {prev}\n"));
    Ok(Reply::value(prev.to_string()))
}

/// `snapshot_cleanup_enabled`: prints and returns the switch's state.
pub async fn snapshot_cleanup_enabled(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("snapshot_cleanup_enabled", args, 0..=0)?;
    let on = shell.admin.snapshot_cleanup_enabled().await?;
    out.push_str(&format!(" {on}\n"));
    Ok(Reply::value(on.to_string()))
}

/// `list_snapshots ['regex']`: `SNAPSHOT  TABLE + CREATION TIME`, the time
/// as Ruby's `Time#to_s` prints it (UTC here).
pub async fn list_snapshots(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("list_snapshots", args, 0..=1)?;
    let pattern = match args.first() {
        Some(v) => Some(v.text("the snapshot name pattern")?),
        None => None,
    };
    let snapshots = shell.admin.list_snapshots(pattern.as_deref()).await?;
    Ok(print_snapshots(shell, &snapshots, out))
}

/// `list_table_snapshots 'tableRegex'[, 'snapshotRegex']`: the snapshots
/// of the tables whose names the first pattern matches whole (Java's
/// `Pattern.matches`, as HBase's shell), laid out as `list_snapshots`.
pub async fn list_table_snapshots(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("list_table_snapshots", args, 1..=2)?;
    let table_pattern = args
        .first()
        .map(|v| v.text("the table name pattern"))
        .transpose()?
        .unwrap_or_default();
    // The pattern alone first, so an error shows the user's text; then
    // anchored at both ends for a whole match.
    let tables = match regex::Regex::new(&table_pattern)
        .and_then(|_| regex::Regex::new(&format!("^(?:{table_pattern})$")))
    {
        Ok(re) => re,
        Err(e) => return arg_err(format!("bad table name pattern '{table_pattern}': {e}")),
    };
    let pattern = match args.get(1) {
        Some(v) => Some(v.text("the snapshot name pattern")?),
        None => None,
    };
    let mut snapshots = shell.admin.list_snapshots(pattern.as_deref()).await?;
    snapshots.retain(|s| tables.is_match(&s.table));
    Ok(print_snapshots(shell, &snapshots, out))
}

/// The `SNAPSHOT  TABLE + CREATION TIME` listing and its return value.
fn print_snapshots(
    shell: &mut Shell,
    snapshots: &[ferrobase_client::SnapshotDescription],
    out: &mut String,
) -> Reply {
    shell.fmt.header("SNAPSHOT", "TABLE + CREATION TIME", out);
    for s in snapshots {
        let iso = iso_timestamp(s.created_ms);
        let time = iso.get(..19).unwrap_or(&iso).replace('T', " ");
        shell
            .fmt
            .row(&s.name, &format!("{} ({time} +0000)", s.table), out);
    }
    crate::format::rows(snapshots.len() as u64, out);
    let quoted: Vec<String> = snapshots
        .iter()
        .map(|s| format!("\"{}\"", s.name))
        .collect();
    Reply::value(format!("[{}]", quoted.join(", ")))
}

/// `delete_snapshot 'name'`.
pub async fn delete_snapshot(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("delete_snapshot", args, 1..=1)?;
    let name = snapshot_name("delete_snapshot", args, 0)?;
    shell.admin.delete_snapshot(&name).await?;
    Ok(Reply::timed())
}

/// `clone_snapshot 'name', 'table'`.
pub async fn clone_snapshot(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("clone_snapshot", args, 2..=2)?;
    let name = snapshot_name("clone_snapshot", args, 0)?;
    let table = match &args[1] {
        v @ (Value::Str(_) | Value::Word(_)) => v.text("table name")?,
        v => {
            return arg_err(format!("table name must be a string, not {}", v.describe()));
        }
    };
    shell.admin.clone_snapshot(&name, &table).await?;
    Ok(Reply::timed())
}

/// `restore_snapshot 'name'` (the table must be disabled).
pub async fn restore_snapshot(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("restore_snapshot", args, 1..=1)?;
    let name = snapshot_name("restore_snapshot", args, 0)?;
    shell.admin.restore_snapshot(&name).await?;
    Ok(Reply::timed())
}
