//! Tools and general commands: flush, compact, major_compact, split,
//! merge_region, the region listings (get_splits, list_regions,
//! locate_region), status (`'summary'`, `'simple'`, `'detailed'`),
//! version, whoami.
//!
//! Status figures come from the master's cluster status as they are; this
//! module only lays them out the way HBase's `status` does.

use super::{Reply, arity, table_name};
use crate::session::Shell;
use crate::value::Value;
use crate::{ShellError, arg_err};
use std::fmt::Write as _;

pub async fn flush(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("flush", args, 1..=1)?;
    shell.admin.flush(&table_name("flush", args)?).await?;
    Ok(Reply::timed())
}

pub async fn compact(shell: &mut Shell, args: &[Value], major: bool) -> Result<Reply, ShellError> {
    let command = if major { "major_compact" } else { "compact" };
    arity(command, args, 1..=1)?;
    let target = table_name(command, args)?;
    if major {
        shell.admin.major_compact(&target).await?;
    } else {
        shell.admin.compact(&target).await?;
    }
    Ok(Reply::timed())
}

pub async fn split(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    arity("split", args, 1..=2)?;
    let target = table_name("split", args)?;
    let point = args.get(1).map(|v| v.bytes("split point")).transpose()?;
    shell.admin.split(&target, point.map(Into::into)).await?;
    Ok(Reply::timed())
}

/// `merge_region 'A', 'B'[, force]` or `merge_region ['A', 'B', 'C'][, force]`
/// (HBase 2's two forms).
pub async fn merge_region(shell: &mut Shell, args: &[Value]) -> Result<Reply, ShellError> {
    let (regions, force) = match args.first() {
        Some(Value::Array(list)) => {
            arity("merge_region", args, 1..=2)?;
            let regions = list
                .iter()
                .map(|v| v.text("region"))
                .collect::<Result<Vec<_>, _>>()?;
            (regions, args.get(1))
        }
        _ => {
            arity("merge_region", args, 2..=3)?;
            let region = |i: usize| -> Result<String, ShellError> {
                match args.get(i) {
                    Some(v) => v.text("region"),
                    None => arg_err("merge_region needs two regions".to_string()),
                }
            };
            (vec![region(0)?, region(1)?], args.get(2))
        }
    };
    if regions.len() < 2 {
        return arg_err(format!(
            "merge_region needs at least two regions, not {}",
            regions.len()
        ));
    }
    let force = force
        .map(|v| v.boolean("force"))
        .transpose()?
        .unwrap_or(false);
    shell.admin.merge_many(&regions, force).await?;
    Ok(Reply::timed())
}

/// HBase's name of a region: `table,startkey,id.encoded.` and the encoded
/// part (hex MD5), the names `merge_region` and the HBase shell take.
fn region_names(r: &ferrobase_client::RegionLocation) -> (String, String) {
    match ferrobase_hbase_wire::names::TableName::parse(&r.table) {
        Ok(t) => {
            let n = ferrobase_hbase_wire::names::RegionName::new(&t, &r.start_key, r.region_id);
            (
                ferrobase_types::binary::to_string_binary(&n.name),
                n.encoded,
            )
        }
        Err(_) => (r.region_id.to_string(), r.region_id.to_string()),
    }
}

/// `host:port` as HBase's `host,port,startcode` (the start code is not
/// reported to clients: 0).
fn server_name(address: &str) -> String {
    match address.rsplit_once(':') {
        Some((host, port)) => format!("{host},{port},0"),
        None => address.to_string(),
    }
}

/// `get_splits 't'`: the table's split keys (its regions' start keys but
/// the first), after HBase's count of regions.
pub async fn get_splits(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("get_splits", args, 1..=1)?;
    let d = shell
        .admin
        .describe(&table_name("get_splits", args)?)
        .await?;
    // HBase's shell prints the number of regions under this name.
    let _ = writeln!(out, "Total number of splits = {}", d.regions.len());
    for r in d.regions.iter().skip(1) {
        let _ = writeln!(
            out,
            "{}",
            ferrobase_types::binary::to_string_binary(&r.start_key)
        );
    }
    Ok(Reply::timed())
}

/// `list_regions 't'`: one line per region with its server, name, keys,
/// store file size (MB) and requests, as HBase's shell lays them out.
pub async fn list_regions(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("list_regions", args, 1..=3)?;
    let table = table_name("list_regions", args)?;
    let d = shell.admin.describe(&table).await?;
    let status = shell.admin.cluster_status().await?;
    let load = |id: u64| {
        status
            .servers
            .iter()
            .flat_map(|s| &s.regions)
            .find(|l| l.region_id == id)
            .map_or((0, 0), |l| {
                (mb(l.store_file_bytes), l.read_requests + l.write_requests)
            })
    };
    let header = [
        "SERVER_NAME",
        "REGION_NAME",
        "START_KEY",
        "END_KEY",
        "SIZE",
        "REQ",
        "LOCALITY",
    ];
    let rows: Vec<[String; 7]> = d
        .regions
        .iter()
        .map(|r| {
            let (size, req) = load(r.region_id);
            [
                server_name(&r.server),
                region_names(r).0,
                ferrobase_types::binary::to_string_binary(&r.start_key),
                ferrobase_types::binary::to_string_binary(&r.end_key),
                size.to_string(),
                req.to_string(),
                "0.0".to_string(),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[&str]| -> String {
        let mut s = String::new();
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(s, " {c:>w$} |");
        }
        s
    };
    let _ = writeln!(out, "{}", line(&header));
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let _ = writeln!(
        out,
        "{}",
        line(&dashes.iter().map(String::as_str).collect::<Vec<_>>())
    );
    for r in &rows {
        let _ = writeln!(
            out,
            "{}",
            line(&r.iter().map(String::as_str).collect::<Vec<_>>())
        );
    }
    let _ = writeln!(out, " {} rows", rows.len());
    Ok(Reply::timed())
}

/// `locate_region 't', 'row'`: the region holding a row and its server.
pub async fn locate_region(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("locate_region", args, 2..=2)?;
    let table = table_name("locate_region", args)?;
    let row = match args.get(1) {
        Some(v) => v.bytes("row")?,
        None => return arg_err("locate_region needs a table and a row".to_string()),
    };
    let d = shell.admin.describe(&table).await?;
    let Some(r) = d.regions.iter().find(|r| {
        r.start_key.as_ref() <= row.as_slice()
            && (r.end_key.is_empty() || row.as_slice() < r.end_key.as_ref())
    }) else {
        return arg_err(format!("no region of {table} holds that row"));
    };
    let (name, encoded) = region_names(r);
    let _ = writeln!(out, "HOST                                     REGION");
    let _ = writeln!(
        out,
        " {:<40}{{ENCODED => {encoded}, NAME => '{name}', STARTKEY => '{}', ENDKEY => '{}'}}",
        r.server,
        ferrobase_types::binary::to_string_binary(&r.start_key),
        ferrobase_types::binary::to_string_binary(&r.end_key)
    );
    let _ = writeln!(out, "1 row(s)");
    Ok(Reply::timed())
}

fn mb(bytes: u64) -> u64 {
    bytes / (1024 * 1024)
}

pub async fn status(
    shell: &mut Shell,
    args: &[Value],
    out: &mut String,
) -> Result<Reply, ShellError> {
    arity("status", args, 0..=1)?;
    let format = match args.first() {
        Some(v) => v.text("status format")?,
        None => "summary".to_string(),
    };
    if !matches!(format.as_str(), "summary" | "simple" | "detailed") {
        return arg_err(format!(
            "unknown status format '{format}'; valid formats: summary, simple, detailed"
        ));
    }
    let st = shell.admin.cluster_status().await?;
    let regions: usize = st.servers.iter().map(|s| s.regions.len()).sum();
    let servers = st.servers.len();
    let load = if servers == 0 {
        0.0
    } else {
        regions as f64 / servers as f64
    };
    if format == "summary" {
        let _ = writeln!(
            out,
            "1 active master, 0 backup masters, {servers} servers, 0 dead, {load:.4} average load"
        );
        return Ok(Reply::timed());
    }
    if format == "detailed" {
        let _ = writeln!(out, "version {}", env!("CARGO_PKG_VERSION"));
        out.push_str("0 regionsInTransition\n");
    }
    let _ = writeln!(out, "active master:  {}", shell.address);
    out.push_str("0 backup masters\n");
    let _ = writeln!(out, "{servers} live servers");
    for s in &st.servers {
        let files: u64 = s.regions.iter().map(|r| r.store_files).sum();
        let file_bytes: u64 = s.regions.iter().map(|r| r.store_file_bytes).sum();
        let reads: u64 = s.regions.iter().map(|r| r.read_requests).sum();
        let writes: u64 = s.regions.iter().map(|r| r.write_requests).sum();
        let _ = writeln!(out, "    {}", s.server);
        let _ = writeln!(
            out,
            "        numberOfOnlineRegions={}, numberOfStorefiles={files}, storefileSizeMB={}, memstoreSizeMB={}, readRequestsCount={reads}, writeRequestsCount={writes}",
            s.regions.len(),
            mb(file_bytes),
            mb(s.global_memstore_bytes),
        );
        if format == "detailed" {
            if let Some(st) = &s.stalls {
                let _ = writeln!(
                    out,
                    "        blockedWrites={}, blockedMs={}, tooBusy={}, delayedFlushes={}, forcedFlushesGlobal={}, forcedFlushesWal={}, flushes={}, compactions={}",
                    st.blocked_writes,
                    st.blocked_ms,
                    st.too_busy,
                    st.delayed_flushes,
                    st.forced_flushes_global,
                    st.forced_flushes_wal,
                    st.flushes,
                    st.compactions
                );
            }
            if let Some(c) = &s.block_cache {
                let lookups = c.hits + c.misses;
                let ratio = if lookups == 0 {
                    0.0
                } else {
                    c.hits as f64 * 100.0 / lookups as f64
                };
                let _ = writeln!(
                    out,
                    "        blockCacheHitCount={}, blockCacheMissCount={}, blockCacheHitRatio={ratio:.2}%, blockCacheEvictionCount={}, blockCacheCount={}, blockCacheSizeMB={}, blockCacheCapacityMB={}",
                    c.hits,
                    c.misses,
                    c.evictions,
                    c.blocks,
                    mb(c.size_bytes),
                    mb(c.capacity_bytes)
                );
            }
            for r in &s.regions {
                let _ = writeln!(out, "        \"{}\":", r.name);
                let _ = writeln!(
                    out,
                    "            numberOfStorefiles={}, storefileSizeMB={}, memstoreSizeMB={}, readRequestsCount={}, writeRequestsCount={}",
                    r.store_files,
                    mb(r.store_file_bytes),
                    mb(r.memstore_bytes),
                    r.read_requests,
                    r.write_requests
                );
            }
        }
    }
    out.push_str("0 dead servers\n");
    if format == "simple" {
        let _ = writeln!(out, "Aggregate load: 0, regions: {regions}");
    }
    Ok(Reply::timed())
}

pub fn version(args: &[Value], out: &mut String) -> Result<Reply, ShellError> {
    arity("version", args, 0..=0)?;
    let _ = writeln!(
        out,
        "{}, ferrobase (HBase 2 shell syntax)",
        env!("CARGO_PKG_VERSION")
    );
    Ok(Reply::timed())
}

/// `whoami`: the user this shell claims (`hbase.client.user`, else the OS
/// user); a TLS client certificate's CN overrides it on the server.
pub fn whoami(shell: &mut Shell, args: &[Value], out: &mut String) -> Result<Reply, ShellError> {
    arity("whoami", args, 0..=0)?;
    let user = shell.conn.settings().claimed_user();
    let _ = writeln!(out, "{user} (auth:SIMPLE)\n    groups: {user}");
    Ok(Reply::timed())
}
