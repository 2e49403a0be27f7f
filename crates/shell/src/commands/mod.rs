//! Every shell command: the table of names and groups, dispatch, and the
//! argument helpers commands share (table name, `family:qualifier`).
//!
//! Each submodule owns one group: [`ddl`] (tables and families), [`dml`]
//! (writes and counters), [`namespace`] (create, alter, describe, list,
//! drop namespaces), [`read`] (get, scan, count), [`snapshot`]
//! (snapshot, list, delete, clone, restore), [`security`] (grant, revoke,
//! user_permission), [`tools`] (flush, compaction, split, merge_region,
//! status, version, whoami) and [`help`]. Commands
//! write their output to a string; the session prints it.

pub mod cluster;
pub mod ddl;
pub mod dml;
pub mod help;
pub mod namespace;
pub mod read;
pub mod security;
pub mod snapshot;
pub mod tools;

use crate::parser::Command;
use crate::session::Shell;
use crate::value::Value;
use crate::{ShellError, arg_err};

/// What a command left for the session.
pub enum Reply {
    /// Finished: `value` is echoed as `=> value` in interactive sessions;
    /// `timed` prints `Took N seconds`.
    Done { value: Option<String>, timed: bool },
    /// `exit`/`quit`.
    Exit,
}

impl Reply {
    pub(crate) fn timed() -> Reply {
        Reply::Done {
            value: None,
            timed: true,
        }
    }

    pub(crate) fn value(v: impl Into<String>) -> Reply {
        Reply::Done {
            value: Some(v.into()),
            timed: true,
        }
    }
}

/// Every command: (name, group).
pub const COMMANDS: &[(&str, &str)] = &[
    ("status", "general"),
    ("version", "general"),
    ("whoami", "general"),
    ("help", "general"),
    ("exit", "general"),
    ("quit", "general"),
    ("alter", "ddl"),
    ("alter_async", "ddl"),
    ("alter_status", "ddl"),
    ("create", "ddl"),
    ("describe", "ddl"),
    ("desc", "ddl"),
    ("disable", "ddl"),
    ("drop", "ddl"),
    ("enable", "ddl"),
    ("exists", "ddl"),
    ("is_disabled", "ddl"),
    ("is_enabled", "ddl"),
    ("list", "ddl"),
    ("truncate", "ddl"),
    ("truncate_preserve", "ddl"),
    ("show_filters", "ddl"),
    ("append", "dml"),
    ("count", "dml"),
    ("delete", "dml"),
    ("deleteall", "dml"),
    ("get", "dml"),
    ("get_counter", "dml"),
    ("incr", "dml"),
    ("put", "dml"),
    ("scan", "dml"),
    ("alter_namespace", "namespace"),
    ("create_namespace", "namespace"),
    ("describe_namespace", "namespace"),
    ("drop_namespace", "namespace"),
    ("list_namespace", "namespace"),
    ("list_namespace_tables", "namespace"),
    ("clone_snapshot", "snapshots"),
    ("delete_snapshot", "snapshots"),
    ("list_snapshots", "snapshots"),
    ("list_table_snapshots", "snapshots"),
    ("restore_snapshot", "snapshots"),
    ("snapshot", "snapshots"),
    ("grant", "security"),
    ("revoke", "security"),
    ("user_permission", "security"),
    ("compact", "tools"),
    ("flush", "tools"),
    ("get_splits", "tools"),
    ("list_regions", "tools"),
    ("locate_region", "tools"),
    ("major_compact", "tools"),
    ("merge_region", "tools"),
    ("balancer", "tools"),
    ("balance_switch", "tools"),
    ("balancer_enabled", "tools"),
    ("catalogjanitor_run", "tools"),
    ("catalogjanitor_switch", "tools"),
    ("catalogjanitor_enabled", "tools"),
    ("move", "tools"),
    ("compaction_switch", "tools"),
    ("compaction_state", "tools"),
    ("list_deadservers", "tools"),
    ("snapshot_cleanup_enabled", "tools"),
    ("snapshot_cleanup_switch", "tools"),
    ("split", "tools"),
];

/// True for a known command name.
pub fn is_command(name: &str) -> bool {
    COMMANDS.iter().any(|(n, _)| *n == name)
}

/// Runs `cmd`, writing its output to `out`.
pub async fn run(shell: &mut Shell, cmd: &Command, out: &mut String) -> Result<Reply, ShellError> {
    let a = &cmd.args[..];
    match cmd.name.as_str() {
        "create" => ddl::create(shell, a, out).await,
        "list" => ddl::list(shell, a, out).await,
        "describe" | "desc" => ddl::describe(shell, a, out).await,
        "exists" => ddl::exists(shell, a, out).await,
        "disable" => ddl::disable(shell, a).await,
        "enable" => ddl::enable(shell, a).await,
        "is_enabled" => ddl::is_enabled(shell, a, out, true).await,
        "is_disabled" => ddl::is_enabled(shell, a, out, false).await,
        // The change is on every region when alter answers: alter_async
        // is the same call.
        "alter" | "alter_async" => ddl::alter(shell, a, out).await,
        "alter_status" => ddl::alter_status(shell, a, out).await,
        "drop" => ddl::drop(shell, a).await,
        // Both keep the split points (HBase 2's truncate does not).
        "truncate" | "truncate_preserve" => ddl::truncate(shell, a, out).await,
        "show_filters" => cluster::show_filters(a, out),
        "balancer" => cluster::balancer(shell, a, out).await,
        "balance_switch" => cluster::balance_switch(shell, a, out).await,
        "balancer_enabled" => cluster::balancer_enabled(shell, a, out).await,
        "catalogjanitor_run" => cluster::catalogjanitor_run(shell, a).await,
        "catalogjanitor_switch" => cluster::catalogjanitor_switch(shell, a, out).await,
        "catalogjanitor_enabled" => cluster::catalogjanitor_enabled(shell, a, out).await,
        "move" => cluster::move_region(shell, a).await,
        "compaction_switch" => cluster::compaction_switch(shell, a, out).await,
        "compaction_state" => cluster::compaction_state(shell, a, out).await,
        "list_deadservers" => cluster::list_deadservers(shell, a, out).await,
        "put" => dml::put(shell, a).await,
        "delete" => dml::delete(shell, a).await,
        "deleteall" => dml::deleteall(shell, a).await,
        "incr" => dml::incr(shell, a, out).await,
        "get_counter" => dml::get_counter(shell, a, out).await,
        "append" => dml::append(shell, a, out).await,
        "get" => read::get(shell, a, out).await,
        "scan" => read::scan(shell, a, out).await,
        "count" => read::count(shell, a, out).await,
        "create_namespace" => namespace::create_namespace(shell, a).await,
        "alter_namespace" => namespace::alter_namespace(shell, a).await,
        "describe_namespace" => namespace::describe_namespace(shell, a, out).await,
        "list_namespace" => namespace::list_namespace(shell, a, out).await,
        "list_namespace_tables" => namespace::list_namespace_tables(shell, a, out).await,
        "drop_namespace" => namespace::drop_namespace(shell, a).await,
        "snapshot" => snapshot::snapshot(shell, a).await,
        "snapshot_cleanup_switch" => snapshot::snapshot_cleanup_switch(shell, a, out).await,
        "snapshot_cleanup_enabled" => snapshot::snapshot_cleanup_enabled(shell, a, out).await,
        "list_snapshots" => snapshot::list_snapshots(shell, a, out).await,
        "list_table_snapshots" => snapshot::list_table_snapshots(shell, a, out).await,
        "delete_snapshot" => snapshot::delete_snapshot(shell, a).await,
        "clone_snapshot" => snapshot::clone_snapshot(shell, a).await,
        "restore_snapshot" => snapshot::restore_snapshot(shell, a).await,
        "grant" => security::grant(shell, a).await,
        "revoke" => security::revoke(shell, a).await,
        "user_permission" => security::user_permission(shell, a, out).await,
        "flush" => tools::flush(shell, a).await,
        "compact" => tools::compact(shell, a, false).await,
        "major_compact" => tools::compact(shell, a, true).await,
        "split" => tools::split(shell, a).await,
        "merge_region" => tools::merge_region(shell, a).await,
        "get_splits" => tools::get_splits(shell, a, out).await,
        "list_regions" => tools::list_regions(shell, a, out).await,
        "locate_region" => tools::locate_region(shell, a, out).await,
        "status" => tools::status(shell, a, out).await,
        "version" => tools::version(a, out),
        "whoami" => tools::whoami(shell, a, out),
        "help" => help::help(a, out),
        "exit" | "quit" => Ok(Reply::Exit),
        other => Err(ShellError::UnknownCommand {
            name: other.to_string(),
            suggestion: closest(other),
        }),
    }
}

/// The command closest to `name` by edit distance, if reasonably close.
pub fn closest(name: &str) -> Option<String> {
    COMMANDS
        .iter()
        .map(|(n, _)| (edit_distance(name, n), *n))
        .min()
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .map(|(_, n)| n.to_string())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The optional first argument of a `list*` command as a pattern that must
/// match a whole name (HBase's Java `Pattern.matches`); none matches all.
/// `what` names the names in messages ("table", "namespace").
pub(crate) fn name_pattern(args: &[Value], what: &str) -> Result<regex::Regex, ShellError> {
    let pattern = match args.first() {
        Some(v) => v.text(&format!("the {what} name pattern"))?,
        None => ".*".to_string(),
    };
    regex::Regex::new(&format!("^(?:{pattern})$"))
        .map_err(|e| ShellError::Argument(format!("bad {what} name pattern '{pattern}': {e}")))
}

/// Fails unless the argument count is in `range`.
pub(crate) fn arity(
    command: &str,
    args: &[Value],
    range: std::ops::RangeInclusive<usize>,
) -> Result<(), ShellError> {
    if range.contains(&args.len()) {
        return Ok(());
    }
    let want = if range.start() == range.end() {
        range.start().to_string()
    } else if *range.end() == usize::MAX {
        format!("at least {}", range.start())
    } else {
        format!("{} to {}", range.start(), range.end())
    };
    arg_err(format!(
        "wrong number of arguments for {command} ({} given, {want} expected)",
        args.len()
    ))
}

/// The first argument as a table name.
pub(crate) fn table_name(command: &str, args: &[Value]) -> Result<String, ShellError> {
    match args.first() {
        None => arg_err(format!("{command} needs a table name")),
        Some(v @ (Value::Str(_) | Value::Word(_))) => v.text("table name"),
        Some(v) => arg_err(format!("table name must be a string, not {}", v.describe())),
    }
}

/// `family` or `family:qualifier` (the qualifier may be empty: `f:`).
pub(crate) fn parse_column(spec: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
    match spec.iter().position(|&b| b == b':') {
        Some(i) => (spec[..i].to_vec(), Some(spec[i + 1..].to_vec())),
        None => (spec.to_vec(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(closest("scna").as_deref(), Some("scan"));
        assert_eq!(closest("descibe").as_deref(), Some("describe"));
        assert_eq!(closest("majorcompact").as_deref(), Some("major_compact"));
        assert_eq!(closest("zzzzzzzzzzzz"), None);
    }

    #[test]
    fn columns() {
        assert_eq!(parse_column(b"f:q"), (b"f".to_vec(), Some(b"q".to_vec())));
        assert_eq!(parse_column(b"f"), (b"f".to_vec(), None));
        assert_eq!(
            parse_column(b"f:a:b"),
            (b"f".to_vec(), Some(b"a:b".to_vec()))
        );
    }
}
