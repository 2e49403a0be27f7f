//! The master's chores and region placement, HBase's tools group:
//! balancer, balance_switch, balancer_enabled, catalogjanitor_run,
//! catalogjanitor_switch, catalogjanitor_enabled, compaction_switch,
//! compaction_state, move,
//! list_deadservers, and show_filters.
//!
//! Each is one Admin call (show_filters none); the output is laid out as
//! HBase 2's shell prints it. This module only checks arguments.

use super::{Reply, arity};
use crate::session::Shell;
use crate::value::Value;
use crate::{ShellError, arg_err};

/// A boolean argument at `index`.
fn switch_arg(command: &str, args: &[Value]) -> Result<bool, ShellError> {
    arity(command, args, 1..=1)?;
    match args.first() {
        Some(v) => v.boolean(&format!("{command}'s argument")),
        None => arg_err(format!("{command} needs true or false")),
    }
}

/// One line of a value, as HBase's `formatter.row([v.to_s])`.
fn line(out: &mut String, v: impl std::fmt::Display) {
    out.push_str(&format!(" {v}\n"));
}

/// `balancer ['force']`: one balancer pass; prints whether it ran (it
/// always does when asked by name, whatever the switch).
pub async fn balancer(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("balancer", args, 0..=1)?;
    if let Some(v) = args.first() {
        let force = v.text("balancer's argument")?;
        if force != "force" {
            return arg_err(format!("Invalid argument {force}."));
        }
    }
    shell.admin.balance().await?;
    line(out, true);
    Ok(Reply::value("true"))
}

/// `balance_switch true|false`.
pub async fn balance_switch(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    let on = switch_arg("balance_switch", args)?;
    let prev = shell.admin.balance_switch(on).await?;
    line(out, format!("Previous balancer state : {prev}"));
    Ok(Reply::value(prev.to_string()))
}

/// `balancer_enabled`.
pub async fn balancer_enabled(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("balancer_enabled", args, 0..=0)?;
    let on = shell.admin.balancer_enabled().await?;
    line(out, on);
    Ok(Reply::value(on.to_string()))
}

/// `catalogjanitor_run`: returns how many parents and unused region
/// directories the pass removed.
pub async fn catalogjanitor_run(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("catalogjanitor_run", args, 0..=0)?;
    let n = shell.admin.run_catalog_janitor().await?;
    Ok(Reply::value(n.to_string()))
}

/// `catalogjanitor_switch true|false`: prints the state before.
pub async fn catalogjanitor_switch(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    let on = switch_arg("catalogjanitor_switch", args)?;
    let prev = shell.admin.catalog_janitor_switch(on).await?;
    line(out, prev);
    Ok(Reply::value(prev.to_string()))
}

/// `catalogjanitor_enabled`.
pub async fn catalogjanitor_enabled(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("catalogjanitor_enabled", args, 0..=0)?;
    let on = shell.admin.catalog_janitor_enabled().await?;
    line(out, on);
    Ok(Reply::value(on.to_string()))
}

/// `compaction_switch true|false`: a `SERVER | PREV_STATE` table, one row
/// per region server (HBase's second argument, a list of servers, is not
/// taken: every server switches).
pub async fn compaction_switch(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    let on = switch_arg("compaction_switch", args)?;
    let servers = shell.admin.compaction_switch(on).await?;
    shell.fmt.header("SERVER", "PREV_STATE", out);
    for (server, prev) in &servers {
        shell.fmt.row(server, &prev.to_string(), out);
    }
    crate::format::rows(servers.len() as u64, out);
    Ok(Reply::timed())
}

/// `compaction_state 't'`: NONE, MINOR, MAJOR or MAJOR_AND_MINOR, what
/// runs in the table's regions now (HBase's `getCompactionState`).
pub async fn compaction_state(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("compaction_state", args, 1..=1)?;
    let table = super::table_name("compaction_state", args)?;
    // Fails with TABLE_NOT_FOUND for an unknown table.
    shell.admin.describe(&table).await?;
    let status = shell.admin.cluster_status().await?;
    let (mut minor, mut major) = (false, false);
    for r in status.servers.iter().flat_map(|s| &s.regions) {
        if r.table == table {
            minor |= r.compacting_minor;
            major |= r.compacting_major;
        }
    }
    let state = match (major, minor) {
        (true, true) => "MAJOR_AND_MINOR",
        (true, false) => "MAJOR",
        (false, true) => "MINOR",
        (false, false) => "NONE",
    };
    line(out, state);
    Ok(Reply::value(format!("\"{state}\"")))
}

/// `move 'ENCODED_REGIONNAME'[, 'SERVER_NAME']`: the server as HBase names
/// it (`host,port,startcode`) or `host:port`; without one, the least
/// loaded other server.
pub async fn move_region(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("move", args, 1..=2)?;
    let region = match args.first() {
        Some(v) => v.text("region")?,
        None => return arg_err("move needs a region"),
    };
    let dest = match args.get(1) {
        Some(v) => {
            let s = v.text("server name")?;
            match ferrobase_hbase_wire::names::ServerName::parse(&s) {
                Ok(name) => Some(name.host_and_port()),
                Err(_) if s.contains(':') && !s.contains(',') => Some(s),
                Err(_) => {
                    return arg_err(format!(
                        "server name '{s}' is neither host,port,startcode nor host:port"
                    ));
                }
            }
        }
        None => None,
    };
    shell.admin.move_region(&region, dest.as_deref()).await?;
    Ok(Reply::timed())
}

/// `list_deadservers`: `SERVERNAME` rows, oldest first.
pub async fn list_deadservers(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("list_deadservers", args, 0..=0)?;
    let dead = shell.admin.dead_servers().await?;
    out.push_str("SERVERNAME\n");
    for d in &dead {
        line(out, &d.name);
    }
    crate::format::rows(dead.len() as u64, out);
    Ok(Reply::timed())
}

/// `show_filters`: the filter language's filters (docs/filters.md).
pub fn show_filters(args: &[Value], out: &mut String) -> Result<Reply, ShellError> {
    arity("show_filters", args, 0..=0)?;
    for name in ferrobase_filter::registry::FILTER_NAMES {
        line(out, name);
    }
    Ok(Reply::timed())
}
