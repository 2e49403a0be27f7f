//! `help`, `help "COMMAND"` and `help "GROUP"`: the command groups and
//! each command's usage with examples, in the HBase shell's words.

use super::{COMMANDS, Reply, arity, closest};
use crate::value::Value;
use crate::{ShellError, arg_err};

const GROUPS: &[&str] = &[
    "general",
    "ddl",
    "namespace",
    "dml",
    "snapshots",
    "tools",
    "security",
];

/// Usage text of each command.
fn usage(name: &str) -> Option<&'static str> {
    Some(match name {
        "status" => {
            "Show cluster status. Can be 'summary', 'simple', or 'detailed'. The\ndefault is 'summary'. Examples:\n\n  hbase> status\n  hbase> status 'simple'\n  hbase> status 'detailed'\n"
        }
        "version" => "Output this HBase version\n",
        "whoami" => "Show the current hbase user.\nSyntax : whoami\n",
        "help" => {
            "Show help: 'help' lists commands, 'help \"COMMAND\"' shows one command,\n'help \"GROUP\"' shows a group's commands.\n"
        }
        "exit" | "quit" => "Leave the shell.\n",
        "alter" => {
            "Alter a table. Add or modify a column family by giving a dict with NAME;\ndelete one with METHOD => 'delete'. Examples:\n\n  hbase> alter 't1', NAME => 'f1', VERSIONS => 5\n  hbase> alter 't1', 'f2'\n  hbase> alter 't1', {NAME => 'f1', COMPRESSION => 'SNAPPY'}, {NAME => 'f3'}\n  hbase> alter 't1', NAME => 'f1', METHOD => 'delete'\n  hbase> alter 't1', 'delete' => 'f1'\n"
        }
        "create" => {
            "Creates a table. Pass a table name, and a set of column family\nspecifications (at least one), and, optionally, table configuration.\nColumn specification can be a simple string (name), or a dictionary\n(dictionaries are described below in main help output), necessarily\nincluding NAME attribute.\nExamples:\n\n  hbase> create 't1', {NAME => 'f1', VERSIONS => 5}\n  hbase> create 't1', {NAME => 'f1'}, {NAME => 'f2'}, {NAME => 'f3'}\n  hbase> create 't1', 'f1', 'f2', 'f3'\n  hbase> create 't1', {NAME => 'f1', VERSIONS => 1, TTL => 2592000, BLOCKCACHE => true}\n  hbase> create 't1', 'f1', SPLITS => ['10', '20', '30', '40']\n  hbase> create 't1', 'f1', {NUMREGIONS => 15, SPLITALGO => 'HexStringSplit'}\n  hbase> create 't1', 'f1', {DURABILITY => 'ASYNC_WAL'}\n\nFamily attributes: NAME, VERSIONS, MIN_VERSIONS, TTL, BLOCKSIZE, BLOCKCACHE,\nBLOOMFILTER, COMPRESSION, DATA_BLOCK_ENCODING, IN_MEMORY, KEEP_DELETED_CELLS,\nROW_CACHE.\n"
        }
        "describe" | "desc" => {
            "Describe the named table. For example:\n  hbase> describe 't1'\n\nAlternatively, you can use the abbreviated 'desc' for the same thing.\n  hbase> desc 't1'\n"
        }
        "disable" => "Start disable of named table:\n  hbase> disable 't1'\n",
        "drop" => "Drop the named table. Table must first be disabled:\n  hbase> drop 't1'\n",
        "enable" => "Start enable of named table:\n  hbase> enable 't1'\n",
        "exists" => "Does the named table exist?\n  hbase> exists 't1'\n",
        "is_disabled" => "Is named table disabled? For example:\n  hbase> is_disabled 't1'\n",
        "is_enabled" => "Is named table enabled? For example:\n  hbase> is_enabled 't1'\n",
        "list" => {
            "List all user tables. Optional regular expression parameter could\nbe used to filter the output. Examples:\n\n  hbase> list\n  hbase> list 'abc.*'\n"
        }
        "alter_namespace" => {
            "Alter namespace properties.\n\nTo add/modify a property:\n\n  hbase> alter_namespace 'ns1', {METHOD => 'set', 'PROPERTY_NAME' => 'PROPERTY_VALUE'}\n\nTo delete a property:\n\n  hbase> alter_namespace 'ns1', {METHOD => 'unset', NAME=>'PROPERTY_NAME'}\n"
        }
        "create_namespace" => {
            "Create namespace; pass namespace name,\nand optionally a dictionary of namespace configuration.\nExamples:\n\n  hbase> create_namespace 'ns1'\n  hbase> create_namespace 'ns1', {'PROPERTY_NAME'=>'PROPERTY_VALUE'}\n"
        }
        "describe_namespace" => {
            "Describe the named namespace. For example:\n  hbase> describe_namespace 'ns1'\n"
        }
        "drop_namespace" => {
            "Drop the named namespace. The namespace must be empty.\n  hbase> drop_namespace 'ns1'\n"
        }
        "list_namespace" => {
            "List all namespaces in hbase. Optional regular expression parameter could\nbe used to filter the output. Examples:\n\n  hbase> list_namespace\n  hbase> list_namespace 'abc.*'\n"
        }
        "list_namespace_tables" => {
            "List all tables that are members of the namespace.\nExamples:\n\n  hbase> list_namespace_tables 'ns1'\n"
        }
        "snapshot" => {
            "Take a snapshot of specified table. With TTL (seconds) it can no longer be\ncloned or restored once that has passed, and the master deletes it.\nExamples:\n\n  hbase> snapshot 'sourceTable', 'snapshotName'\n  hbase> snapshot 'namespace:sourceTable', 'snapshotName', {TTL => 86400}\n"
        }
        "list_snapshots" => {
            "List all snapshots taken (by printing the names and relative information).\nOptional regular expression parameter could be used to filter the output\nby snapshot name.\n\nExamples:\n  hbase> list_snapshots\n  hbase> list_snapshots 'abc.*'\n"
        }
        "list_table_snapshots" => {
            "List all completed snapshots matching the table name regular expression and the\nsnapshot name regular expression (by printing the names and relative information).\nOptional snapshot name regular expression parameter could be used to filter the output\nby snapshot name.\n\nExamples:\n  hbase> list_table_snapshots 'tableName'\n  hbase> list_table_snapshots 'tableName.*'\n  hbase> list_table_snapshots 'tableName', 'snapshotName'\n  hbase> list_table_snapshots 'tableName', 'snapshotName.*'\n  hbase> list_table_snapshots 'tableName.*', 'snapshotName.*'\n  hbase> list_table_snapshots 'ns:tableName.*', 'snapshotName.*'\n"
        }
        "delete_snapshot" => {
            "Delete a specified snapshot. Examples:\n\n  hbase> delete_snapshot 'snapshotName'\n"
        }
        "clone_snapshot" => {
            "Create a new table by cloning the snapshot content (rows, schema and\nregion boundaries). The clone holds its own copy of the snapshot's files,\nso it is independent of the original table and of the snapshot.\n\nExamples:\n  hbase> clone_snapshot 'snapshotName', 'tableName'\n"
        }
        "restore_snapshot" => {
            "Restore a specified snapshot.\nThe restore will replace the content of the original table,\nbringing back the content to the snapshot state.\nThe table must be disabled.\n\nExamples:\n  hbase> restore_snapshot 'snapshotName'\n"
        }
        "append" => {
            "Appends a cell 'value' at specified table/row/column coordinates.\n\n  hbase> append 't1', 'r1', 'c1', 'value'\n"
        }
        "count" => {
            "Count the number of rows in a table. Current count is shown every 1000\nrows by default; the interval may be given. Examples:\n\n  hbase> count 't1'\n  hbase> count 't1', INTERVAL => 100000\n  hbase> count 't1', CACHE => 1000\n  hbase> count 't1', INTERVAL => 10, CACHE => 1000\n"
        }
        "delete" => {
            "Put a delete cell value at specified table/row/column and optionally\ntimestamp coordinates. Deletes every version of the column at or below\nthe timestamp. Examples:\n\n  hbase> delete 't1', 'r1', 'c1', ts1\n  hbase> delete 't1', 'r1', 'c1'\n"
        }
        "deleteall" => {
            "Delete all cells in a given row; pass a table name, row, and optionally\na column and timestamp. Examples:\n\n  hbase> deleteall 't1', 'r1'\n  hbase> deleteall 't1', 'r1', 'c1'\n  hbase> deleteall 't1', 'r1', 'c1', ts1\n"
        }
        "get" => {
            "Get row or cell contents; pass table name, row, and optionally\na dictionary of column(s), timestamp, timerange, versions and filter.\nExamples:\n\n  hbase> get 't1', 'r1'\n  hbase> get 't1', 'r1', {TIMERANGE => [ts1, ts2]}\n  hbase> get 't1', 'r1', {COLUMN => 'c1'}\n  hbase> get 't1', 'r1', {COLUMN => ['c1', 'c2', 'c3']}\n  hbase> get 't1', 'r1', {COLUMN => 'c1', TIMESTAMP => ts1}\n  hbase> get 't1', 'r1', {COLUMN => 'c1', TIMERANGE => [ts1, ts2], VERSIONS => 4}\n  hbase> get 't1', 'r1', {FILTER => \"ValueFilter(=, 'binary:abc')\"}\n  hbase> get 't1', 'r1', 'c1'\n  hbase> get 't1', 'r1', 'c1', 'c2'\n  hbase> get 't1', 'r1', ['c1', 'c2']\n"
        }
        "get_counter" => {
            "Return a counter cell value at specified table/row/column coordinates.\nA counter cell should be managed with atomic increment functions on HBase\nand the data should be binary encoded (as long value). Example:\n\n  hbase> get_counter 't1', 'r1', 'c1'\n"
        }
        "incr" => {
            "Increments a cell 'value' at specified table/row/column coordinates.\nExamples:\n\n  hbase> incr 't1', 'r1', 'c1'\n  hbase> incr 't1', 'r1', 'c1', 1\n  hbase> incr 't1', 'r1', 'c1', 10\n"
        }
        "put" => {
            "Put a cell 'value' at specified table/row/column and optionally\ntimestamp coordinates. Examples:\n\n  hbase> put 't1', 'r1', 'c1', 'value'\n  hbase> put 't1', 'r1', 'c1', 'value', ts1\n  hbase> put 't1', \"r\\x00\\x01\", 'c1', \"\\xFF\"\n"
        }
        "scan" => {
            "Scan a table; pass table name and optionally a dictionary of scanner\nspecifications: STARTROW, STOPROW, ROWPREFIXFILTER, COLUMNS, LIMIT,\nVERSIONS, TIMESTAMP, TIMERANGE, REVERSED, FILTER, CACHE.\nExamples:\n\n  hbase> scan 't1'\n  hbase> scan 't1', {COLUMNS => ['c1', 'c2'], LIMIT => 10, STARTROW => 'xyz'}\n  hbase> scan 't1', {ROWPREFIXFILTER => 'row2', REVERSED => true}\n  hbase> scan 't1', {COLUMNS => 'c1', TIMERANGE => [1303668804000, 1303668904000]}\n  hbase> scan 't1', {FILTER => \"(PrefixFilter ('row2') AND\n    (QualifierFilter (>=, 'binary:xyz'))) AND (TimestampsFilter ( 123, 456))\"}\n"
        }
        "truncate" => {
            "Deletes every row of the specified table, keeping its schema and splits.\n  hbase> truncate 't1'\n"
        }
        "compact" => {
            "Compact all regions in a table, or one region by its id:\n  hbase> compact 't1'\n  hbase> compact '1234'\n"
        }
        "grant" => {
            "Grant users specific rights.\nSyntax: grant <user>, <permissions> [, <@namespace> [, <table> [, <column family> [, <column qualifier>]]]]\n\npermissions is either zero or more letters from the set \"RWXCA\".\nREAD('R'), WRITE('W'), EXEC('X'), CREATE('C'), ADMIN('A')\n\nFor example:\n\n    hbase> grant 'bobsmith', 'RWXCA'\n    hbase> grant 'bobsmith', 'RW', '@ns1'\n    hbase> grant 'bobsmith', 'RW', 't1', 'f1', 'col1'\n"
        }
        "revoke" => {
            "Revoke a user's access rights.\nSyntax: revoke <user> [, <@namespace> [, <table> [, <column family> [, <column qualifier>]]]]\n\nFor example:\n\n    hbase> revoke 'bobsmith'\n    hbase> revoke 'bobsmith', '@ns1'\n    hbase> revoke 'bobsmith', 't1', 'f1', 'col1'\n"
        }
        "user_permission" => {
            "Show all permissions for the particular user.\nSyntax : user_permission <table>\n\nNote: A namespace must always precede with '@' character.\n\nFor example:\n\n    hbase> user_permission\n    hbase> user_permission '@ns1'\n    hbase> user_permission 'table1'\n    hbase> user_permission 'namespace1:table1'\n    hbase> user_permission '.*'\n"
        }
        "flush" => {
            "Flush all regions in passed table or pass a region id to flush an\nindividual region. For example:\n\n  hbase> flush 't1'\n  hbase> flush '1234'\n"
        }
        "major_compact" => {
            "Run major compaction on passed table or pass a region id to major\ncompact an individual region:\n\n  hbase> major_compact 't1'\n  hbase> major_compact '1234'\n"
        }
        "split" => {
            "Split entire table or pass a region id to split individual region. With\nthe second parameter, you can specify an explicit split key for the region.\nExamples:\n\n  hbase> split 't1'\n  hbase> split '1234'\n  hbase> split 't1', 'splitKey'\n"
        }
        "merge_region" => {
            "Merge two or more adjacent regions, given by encoded region name (or\nregion id). The merged region reads the regions' files by reference and\ncompacts them into its own. With force (true), regions that are not\nadjacent merge together with every region between them.\nExamples:\n\n  hbase> merge_region 'ENCODED_REGIONNAME', 'ENCODED_REGIONNAME'\n  hbase> merge_region 'ENCODED_REGIONNAME', 'ENCODED_REGIONNAME', true\n  hbase> merge_region ['ENCODED_REGIONNAME', 'ENCODED_REGIONNAME', 'ENCODED_REGIONNAME']\n  hbase> merge_region ['ENCODED_REGIONNAME', 'ENCODED_REGIONNAME'], true\n  hbase> merge_region '1234', '1235'\n"
        }
        "alter_async" => {
            "Alter column family schema, as alter does (every region has the new\nschema when it returns). Examples:\n\n  hbase> alter_async 't1', NAME => 'f1', VERSIONS => 5\n  hbase> alter_async 't1', 'delete' => 'f1'\n"
        }
        "alter_status" => {
            "Get the status of the alter command. Indicates the number of regions of the\ntable that have received the updated schema. Examples:\n\n  hbase> alter_status 't1'\n  hbase> alter_status 'ns1:t1'\n"
        }
        "truncate_preserve" => {
            "Disables, drops and recreates the specified table while still maintaining\nthe previous region boundaries (truncate does the same here).\n\n  hbase> truncate_preserve 't1'\n"
        }
        "show_filters" => "Show all the filters in hbase. Example:\n  hbase> show_filters\n",
        "balancer" => {
            "Trigger the cluster balancer. Returns true if balancer ran. It runs\nwhatever balance_switch says when asked by name.\nExamples:\n\n  hbase> balancer\n  hbase> balancer 'force'\n"
        }
        "balance_switch" => {
            "Enable/Disable balancer. Returns previous balancer state.\nExamples:\n\n  hbase> balance_switch true\n  hbase> balance_switch false\n"
        }
        "balancer_enabled" => {
            "Query the balancer's state.\nExamples:\n\n  hbase> balancer_enabled\n"
        }
        "catalogjanitor_run" => {
            "Catalog janitor command to run the (garbage collection) scan from command line.\n\n  hbase> catalogjanitor_run\n"
        }
        "catalogjanitor_switch" => {
            "Enable/Disable CatalogJanitor. Returns previous CatalogJanitor state.\nExamples:\n\n  hbase> catalogjanitor_switch true\n  hbase> catalogjanitor_switch false\n"
        }
        "catalogjanitor_enabled" => {
            "Verify if the CatalogJanitor is enabled or not.\nExamples:\n\n  hbase> catalogjanitor_enabled\n"
        }
        "compaction_state" => {
            "Gets compaction status (MAJOR, MAJOR_AND_MINOR, MINOR, NONE) for a table:\n  hbase> compaction_state 'ns1:t1'\n  hbase> compaction_state 't1'\n"
        }
        "compaction_switch" => {
            "Turn the compaction on or off on all region servers. Running\ncompactions finish; a restarted server compacts again. Prints each\nserver's previous state.\nExamples:\n\n  hbase> compaction_switch true\n  hbase> compaction_switch false\n"
        }
        "move" => {
            "Move a region. Optionally specify target regionserver else we choose one\nat random. NOTE: You pass the encoded region name, not the region name.\nThe server name is its 'host name,port,startcode' (or host:port).\nExamples:\n\n  hbase> move 'ENCODED_REGIONNAME'\n  hbase> move 'ENCODED_REGIONNAME', 'SERVER_NAME'\n"
        }
        "list_deadservers" => {
            "List all dead region servers in hbase\nExamples:\n  hbase> list_deadservers\n"
        }
        "snapshot_cleanup_switch" => {
            "Enable/Disable snapshot auto-cleanup based on snapshot TTL.\nReturns previous snapshot auto-cleanup switch state.\nExamples:\n\n  hbase> snapshot_cleanup_switch true\n  hbase> snapshot_cleanup_switch false\n"
        }
        "snapshot_cleanup_enabled" => {
            "Query the snapshot auto-cleanup state.\nExamples:\n\n  hbase> snapshot_cleanup_enabled\n"
        }
        "get_splits" => {
            "Get the splits of the named table:\n  hbase> get_splits 't1'\n  hbase> get_splits 'ns1:t1'\n"
        }
        "list_regions" => {
            "List the regions of a table: server, region name, start and end keys,\nstore file size (MB) and requests.\nExamples:\n\n  hbase> list_regions 'table_name'\n"
        }
        "locate_region" => {
            "Locate the region a row key falls in, and its server.\nExamples:\n\n  hbase> locate_region 'tableName', 'key0'\n"
        }
        _ => return None,
    })
}

fn group_commands(group: &str) -> Vec<&'static str> {
    COMMANDS
        .iter()
        .filter(|(_, g)| *g == group)
        .map(|(n, _)| *n)
        .collect()
}

pub fn help(args: &[Value], out: &mut String) -> Result<Reply, ShellError> {
    arity("help", args, 0..=1)?;
    let Some(topic) = args.first() else {
        out.push_str(&format!(
            "ferrobase shell, version {}\nType 'help \"COMMAND\"', (e.g. 'help \"get\"' -- the quotes are necessary) for help on a specific command.\nCommands are grouped. Type 'help \"COMMAND_GROUP\"', (e.g. 'help \"general\"') for help on a command group.\n\nCOMMAND GROUPS:\n",
            env!("CARGO_PKG_VERSION")
        ));
        for g in GROUPS {
            out.push_str(&format!(
                "  Group name: {g}\n  Commands: {}\n\n",
                group_commands(g).join(", ")
            ));
        }
        out.push_str("SHELL USAGE:\nQuote all names in the shell, such as table and column names. Commas\ndelimit command parameters. Type <RETURN> after entering a command to run it.\nDictionaries of configuration used in the creation and alteration of tables\nare Ruby Hashes. They look like this:\n\n  {'key1' => 'value1', 'key2' => 'value2', ...}\n\nBinary keys and values are written in double quotes with \\xNN escapes,\ne.g. \"\\x00\\x01\"; output shows them the same way.\n");
        return Ok(Reply::Done {
            value: None,
            timed: false,
        });
    };
    let topic = topic.text("help topic")?;
    if GROUPS.contains(&topic.as_str()) {
        out.push_str(&format!("Command: group '{topic}'\n"));
        for c in group_commands(&topic) {
            out.push_str(&format!("\nCommand: {c}\n{}", usage(c).unwrap_or("")));
        }
        return Ok(Reply::Done {
            value: None,
            timed: false,
        });
    }
    match usage(&topic) {
        Some(u) => {
            out.push_str(u);
            Ok(Reply::Done {
                value: None,
                timed: false,
            })
        }
        None => arg_err(format!(
            "no help for '{topic}': it is not a command or group{}",
            closest(&topic)
                .map(|c| format!("; did you mean '{c}'?"))
                .unwrap_or_default()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_usage() {
        for (c, g) in COMMANDS {
            assert!(usage(c).is_some(), "{c}");
            assert!(GROUPS.contains(g), "{g}");
        }
    }
}
