//! `ferrobase import` (HBase's ImportTsv): command-line parsing only; the
//! import itself is the `ferrobase-import` crate. Prints the report on
//! stdout; exits 1 when rows were refused by the cluster.

use anyhow::Context;
use clap::Args;
use ferrobase_bench::cli::parse_separator;
use ferrobase_bench::target::with_target_at;
use ferrobase_import::options::{self, Defines};
use ferrobase_import::{ImportOptions, run_import};
use ferrobase_types::Settings;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `ferrobase import`.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("where").args(["server", "data_dir"])))]
pub struct ImportArgs {
    /// The table (created with the columns' families if it does not
    /// exist, unless -Dcreate.table=no).
    #[arg(long)]
    table: String,
    /// What each field of a line is: HBASE_ROW_KEY, HBASE_TS_KEY, or
    /// family:qualifier (importtsv.columns).
    #[arg(long)]
    columns: Option<String>,
    /// Field separator, one byte (importtsv.separator; default tab).
    #[arg(long)]
    separator: Option<String>,
    /// Count bad lines, write them to the rejects file, go on (the
    /// default; importtsv.skip.bad.lines=true).
    #[arg(long)]
    skip_bad_lines: bool,
    /// Stop at the first bad line (importtsv.skip.bad.lines=false).
    #[arg(long)]
    fail_on_bad_lines: bool,
    /// Write sorted store files per region and hand them to the regions
    /// (completebulkload) instead of sending puts: no WAL, no memstore.
    #[arg(long)]
    bulk: bool,
    /// Parse and count, write nothing (importtsv.dry.run).
    #[arg(long)]
    dry_run: bool,
    /// Every cell's timestamp, ms (importtsv.timestamp; default now).
    #[arg(long)]
    timestamp: Option<u64>,
    /// Durability of the puts (importtsv.wal.durability): USE_DEFAULT,
    /// SKIP_WAL, ASYNC_WAL, SYNC_WAL, FSYNC_WAL.
    #[arg(long)]
    durability: Option<String>,
    /// Reader threads (default: the cores, at least one per file up to 16).
    #[arg(long)]
    threads: Option<usize>,
    /// A reader takes a file this many bytes at a time (k/m/g).
    #[arg(long, default_value = "64m", value_parser = parse_size)]
    split_size: u64,
    /// Write buffer per reader thread, encoded bytes (k/m/g).
    #[arg(long, default_value = "12m", value_parser = parse_size)]
    write_buffer: u64,
    /// Memory for sorting lines into store files, all readers (k/m/g).
    #[arg(long, default_value = "256m", value_parser = parse_size)]
    bulk_buffer: u64,
    /// Where bad lines go (default: `./<table>.rejects`).
    #[arg(long)]
    rejects: Option<PathBuf>,
    /// A running server or master (host:port).
    #[arg(long)]
    server: Option<String>,
    /// Run an embedded standalone server on this data directory for the
    /// import (default without --server: a temporary one, for measuring).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// The cluster's storage root, for --bulk against a distributed cluster.
    #[arg(long)]
    root: Option<String>,
    /// Settings, `name=value` (e.g. hbase.client.keyvalue.maxsize=1m).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// HBase's `-Dimporttsv.*=` options, and any setting.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    define: Vec<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// The input files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    ferrobase_types::settings::parse_size(s).ok_or_else(|| format!("bad size '{s}' (e.g. 64m)"))
}

/// Runs `ferrobase import`.
pub fn run(a: ImportArgs) -> anyhow::Result<()> {
    let mut defines = Defines::default();
    for d in &a.define {
        defines.add(d)?;
    }
    let columns = options::columns(a.columns.as_deref(), &defines)?;
    let separator = match (a.separator.as_deref(), defines.separator.as_deref()) {
        (Some(_), Some(_)) => {
            anyhow::bail!("give the separator once: --separator or -Dimporttsv.separator")
        }
        (Some(s), None) | (None, Some(s)) => parse_separator(s)?,
        (None, None) => b'\t',
    };
    let skip_bad_lines = options::skip_bad_lines(a.skip_bad_lines, a.fail_on_bad_lines, &defines)?;
    let durability = match (a.durability.as_deref(), defines.durability) {
        (Some(_), Some(_)) => {
            anyhow::bail!("give the durability once: --durability or -Dimporttsv.wal.durability")
        }
        (Some(d), None) => options::durability(d)?,
        (None, Some(d)) => d,
        (None, None) => ferrobase_types::Durability::UseDefault,
    };
    if a.bulk && durability != ferrobase_types::Durability::UseDefault {
        anyhow::bail!("--bulk writes no WAL; a durability does not apply to it");
    }
    let mut settings = Settings::default();
    for s in a.set.iter().chain(&defines.settings) {
        settings
            .apply_override(s)
            .with_context(|| format!("setting {s}"))?;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = a.threads.unwrap_or(cores.max(a.files.len().min(16)));
    let rejects = a
        .rejects
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.rejects", a.table.replace([':', '/'], "_"))));
    let opts = ImportOptions {
        table: a.table.clone(),
        columns,
        files: a.files.clone(),
        separator,
        skip_bad_lines,
        timestamp: a
            .timestamp
            .or(defines.timestamp)
            .unwrap_or_else(options::now_ms),
        skip_empty_columns: defines.skip_empty_columns,
        dry_run: a.dry_run || defines.dry_run,
        bulk: a.bulk,
        create_table: defines.create_table.unwrap_or(true),
        durability,
        threads,
        split_size: a.split_size,
        write_buffer: a.write_buffer,
        bulk_buffer: a.bulk_buffer,
        rejects,
        root: a.root.clone(),
        settings: settings.clone(),
        quiet: a.json,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let report = rt.block_on(async {
        with_target_at(
            a.server.as_deref(),
            a.data_dir.as_deref(),
            settings,
            async |t| {
                run_import(t, &opts)
                    .await
                    .map_err(|e| ferrobase_bench::BenchError::Invalid(e.to_string()))
            },
        )
        .await
    });
    let report = report.map_err(|e| match e {
        ferrobase_bench::BenchError::Invalid(m) => anyhow::anyhow!(m),
        other => anyhow::anyhow!(other),
    })?;
    let output = if a.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        report.text()
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(output.as_bytes());
    let _ = out.flush();
    if report.failed_count > 0 {
        std::process::exit(1);
    }
    Ok(())
}
