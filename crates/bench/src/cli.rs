//! The `ferrobase bench` command line (clap) and its entry point. Flags
//! with a fixed set of values are clap value enums, so a bad value is
//! refused with the list of valid ones. Exit codes: 0 success, 1 the run
//! had errors (counts printed) or could not run, 2 the experiment needs
//! distributed mode.

use crate::experiment::{self, Ctx};
use crate::load::{LoadSpec, run_load};
use crate::peer::start_peer;
use crate::rowspec::RowSpec;
use crate::target::{TargetUrl, with_target_url};
use crate::ycsb::{self, Phase, YcsbOptions};
use crate::{BenchError, Result};
use clap::{Args, Subcommand, ValueEnum};
use ferrobase_types::{Durability, Settings};
use std::path::PathBuf;
use std::time::Duration;

/// `ferrobase bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: BenchCommand,
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Load rows of a benchmark data shape (the seed studies' SendData tool).
    Load(LoadArgs),
    /// Run a seed experiment (a sweep), write NAME.json and NAME.svg.
    Experiment(ExperimentArgs),
    /// YCSB core workloads: `ycsb load|run --workload a..f|PATH`.
    Ycsb(YcsbArgs),
    /// Write a shape's rows as delimited text files for `ferrobase import`
    /// (one file a client thread, as the seeds loaded them).
    GenText(GenTextArgs),
    /// ferrobase against a real Apache HBase on this machine: `peer ycsb`
    /// (YCSB A–F on both) and `peer all` (YCSB and the seed experiments,
    /// one HTML report).
    Peer(crate::peer_report::PeerArgs),
}

/// `bench gen-text`.
#[derive(Args, Debug)]
pub struct GenTextArgs {
    #[arg(long, value_enum)]
    pub shape: ShapeArg,
    #[arg(long, default_value_t = 100_000)]
    pub rows: u64,
    /// Files to cut the rows into (contiguous ranges, like `bench load`'s
    /// threads).
    #[arg(long, default_value_t = 4)]
    pub files: usize,
    /// Directory to write `part-NNNNN.tsv` into.
    #[arg(long)]
    pub out: PathBuf,
    /// Field separator (one byte; `\t` for a tab, the default).
    #[arg(long, default_value = "\\t")]
    pub separator: String,
    /// As for `bench load`.
    #[arg(long)]
    pub value_size: Option<usize>,
    #[arg(long)]
    pub columns: Option<usize>,
    #[arg(long)]
    pub qualifier_len: Option<usize>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeArg {
    Log9,
    Gps60,
    Vehicle15,
    Kv,
    Wide53,
    Single53,
    Ycsb,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DurabilityArg {
    Skip,
    Async,
    Sync,
    Fsync,
}

impl From<DurabilityArg> for Durability {
    fn from(d: DurabilityArg) -> Durability {
        match d {
            DurabilityArg::Skip => Durability::SkipWal,
            DurabilityArg::Async => Durability::AsyncWal,
            DurabilityArg::Sync => Durability::SyncWal,
            DurabilityArg::Fsync => Durability::FsyncWal,
        }
    }
}

/// `bench load`.
#[derive(Args, Debug)]
pub struct LoadArgs {
    #[arg(long, value_enum)]
    pub shape: ShapeArg,
    #[arg(long, default_value_t = 100_000)]
    pub rows: u64,
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Client write buffer per thread (bytes; k/m/g suffixes).
    #[arg(long, default_value = "12m", value_parser = parse_size)]
    pub write_buffer: u64,
    #[arg(long, value_enum, default_value = "skip")]
    pub durability: DurabilityArg,
    /// kv value size / ycsb field length; other shapes: pad values with 'Q'.
    #[arg(long)]
    pub value_size: Option<usize>,
    /// Cut each row's values into C columns (same row bytes).
    #[arg(long)]
    pub columns: Option<usize>,
    /// Qualifier length in bytes.
    #[arg(long)]
    pub qualifier_len: Option<usize>,
    /// Create the table with K regions.
    #[arg(long, default_value_t = 1)]
    pub presplit: u32,
    /// Table name (default bench_SHAPE); dropped and re-created.
    #[arg(long)]
    pub table: Option<String>,
    /// A running server (host:port); default: an embedded one on a temp dir.
    #[arg(long)]
    pub server: Option<String>,
    /// The server to load: `ferrobase://` (an embedded one, the default),
    /// `ferrobase://HOST:PORT` (as --server) or `hbase://HOST:PORT` (an
    /// HBase 2.x, through its RPC connection registry at HOST:PORT, e.g. a
    /// region server's 16020).
    #[arg(long, value_name = "URL", conflicts_with = "server")]
    pub target: Option<String>,
    /// Settings of the embedded server, `name=value`.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Connect with TLS, trusting the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// This client's private key and certificate (one PEM file), for
    /// mutual TLS.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// Column-family attributes of the created table, `NAME=VALUE`
    /// (e.g. `DATA_BLOCK_ENCODING=FAST_DIFF`, `COMPRESSION=SNAPPY`).
    #[arg(long = "family", value_name = "NAME=VALUE")]
    pub family: Vec<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Experiment names (`all` runs every one).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExperimentName {
    Wal,
    Handlers,
    WriteBuffer,
    Regionservers,
    QualifierLength,
    ValueSize,
    ColumnCount,
    FlushCompactionThreads,
    SingleVsMultiColumn,
    RandomWriteValueSize,
    RandomRead,
    BlockSize,
    CompressionEncoding,
    All,
}

/// `bench experiment`.
#[derive(Args, Debug)]
pub struct ExperimentArgs {
    #[arg(value_enum)]
    pub name: ExperimentName,
    /// Multiplies row and operation counts (1: ≤ 2 minutes each on 2 cores).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    #[arg(long, default_value = "bench-results")]
    pub out: PathBuf,
    #[arg(long)]
    pub server: Option<String>,
    /// etcd for the clusters `regionservers` starts (default: it starts
    /// its own; this one must not be used by a running ferrobase cluster).
    #[arg(long)]
    pub etcd: Option<String>,
    /// Storage root for the clusters `regionservers` starts: `file:///dir`
    /// or `s3://bucket/prefix?endpoint=…` (default: a temporary directory).
    /// Each cluster gets its own subdirectory or prefix.
    #[arg(long)]
    pub root: Option<String>,
    /// Print the report(s) as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Also run the write and read experiments' points against a real
    /// Apache HBase 2.6 on this machine (started with scripts/hbase-peer.sh unless
    /// --peer-addr names a running one) and plot both.
    #[arg(long, value_enum)]
    pub peer: Option<PeerArg>,
    /// A running HBase for --peer (the `host:port` of its RPC connection
    /// registry: a region server or master).
    #[arg(long, value_name = "HOST:PORT", requires = "peer")]
    pub peer_addr: Option<String>,
    /// Java heap of the HBase --peer starts (default: the embedded
    /// ferrobase's memory budget, ferrobase.memory.size).
    #[arg(long, value_name = "SIZE", requires = "peer")]
    pub peer_heap: Option<String>,
    /// The ferrobase binary (set by `ferrobase bench`, not a flag).
    #[arg(skip)]
    pub exe: Option<PathBuf>,
}

/// Systems `--peer` can start beside ferrobase.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerArg {
    /// Apache HBase 2.6 standalone (scripts/hbase-peer.sh).
    Hbase,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseArg {
    Load,
    Run,
}

/// `bench ycsb`.
#[derive(Args, Debug)]
pub struct YcsbArgs {
    #[arg(value_enum)]
    pub phase: PhaseArg,
    /// a, b, c, d, e, f or a YCSB property file.
    #[arg(long)]
    pub workload: String,
    /// Property overrides, `-p key=value`.
    #[arg(short = 'p', value_name = "KEY=VALUE")]
    pub properties: Vec<String>,
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long)]
    pub server: Option<String>,
    /// Connect with TLS, trusting the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// This client's private key and certificate (one PEM file), for
    /// mutual TLS.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// Seconds between status lines.
    #[arg(long, default_value_t = 10)]
    pub status_interval: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_size(s: &str) -> std::result::Result<u64, String> {
    ferrobase_types::settings::parse_size(s)
        .filter(|v| *v > 0)
        .ok_or_else(|| format!("'{s}' is not a size in bytes (e.g. 12m, 512k, 1048576)"))
}

fn shape_name(s: ShapeArg) -> &'static str {
    match s {
        ShapeArg::Log9 => "log9",
        ShapeArg::Gps60 => "gps60",
        ShapeArg::Vehicle15 => "vehicle15",
        ShapeArg::Kv => "kv",
        ShapeArg::Wide53 => "wide53",
        ShapeArg::Single53 => "single53",
        ShapeArg::Ycsb => "ycsb",
    }
}

/// The name `experiment::run` knows.
pub fn experiment_name(n: ExperimentName) -> Option<&'static str> {
    let i = match n {
        ExperimentName::Wal => 0,
        ExperimentName::Handlers => 1,
        ExperimentName::WriteBuffer => 2,
        ExperimentName::Regionservers => 3,
        ExperimentName::QualifierLength => 4,
        ExperimentName::ValueSize => 5,
        ExperimentName::ColumnCount => 6,
        ExperimentName::FlushCompactionThreads => 7,
        ExperimentName::SingleVsMultiColumn => 8,
        ExperimentName::RandomWriteValueSize => 9,
        ExperimentName::RandomRead => 10,
        ExperimentName::BlockSize => 11,
        ExperimentName::CompressionEncoding => 12,
        ExperimentName::All => return None,
    };
    experiment::NAMES.get(i).copied()
}

/// What a bench command printed and how it should exit.
#[derive(Debug)]
pub struct Outcome {
    /// For stdout.
    pub output: String,
    /// 0 ok, 1 errors during the run, 2 the experiment cannot run here
    /// (e.g. `regionservers` without etcd).
    pub exit_code: u8,
}

/// `bench load`.
pub async fn load(a: &LoadArgs) -> Result<Outcome> {
    let rows = RowSpec::new(
        shape_name(a.shape),
        a.value_size,
        a.columns,
        a.qualifier_len,
    )
    .map_err(BenchError::Invalid)?;
    let mut settings = Settings::default();
    for s in &a.set {
        settings
            .apply_override(s)
            .map_err(|e| BenchError::Invalid(format!("--set {s}: {e}")))?;
    }
    settings.apply_client_tls_flags(a.tls_ca.as_deref(), a.tls_cert.as_deref());
    if a.threads == 0 || a.presplit == 0 {
        return Err(BenchError::Invalid(
            "--threads and --presplit must be at least 1".into(),
        ));
    }
    let family_attrs = a
        .family
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(BenchError::Invalid(format!(
                "--family {kv}: expected NAME=VALUE, e.g. DATA_BLOCK_ENCODING=FAST_DIFF"
            ))),
        })
        .collect::<Result<Vec<_>>>()?;
    let spec = LoadSpec {
        family_attrs,
        table: a
            .table
            .clone()
            .unwrap_or_else(|| format!("bench_{}", rows.shape.name())),
        threads: a.threads,
        write_buffer: a.write_buffer,
        durability: a.durability.into(),
        presplit: a.presplit,
        quiet: a.json,
        ..LoadSpec::new(rows, a.rows)
    };
    let target = match &a.target {
        Some(url) => TargetUrl::parse(url)?,
        None => TargetUrl::from_server(a.server.as_deref()),
    };
    if matches!(target, TargetUrl::HBase(_)) && !a.set.is_empty() {
        return Err(BenchError::Invalid(
            "--set changes the embedded ferrobase server; an HBase target keeps its own settings"
                .into(),
        ));
    }
    let report = with_target_url(&target, settings, async |t| run_load(t, &spec).await).await?;
    let output = if a.json {
        serde_json::to_string_pretty(&report).map_err(|e| BenchError::Invalid(e.to_string()))?
            + "\n"
    } else {
        report.text()
    };
    Ok(Outcome {
        output,
        exit_code: u8::from(report.error_count > 0),
    })
}

/// `bench experiment`.
pub async fn experiment(a: &ExperimentArgs) -> Result<Outcome> {
    if !(a.scale.is_finite() && a.scale > 0.0) {
        return Err(BenchError::Invalid(format!(
            "--scale {} must be a positive number",
            a.scale
        )));
    }
    if let Some(url) = &a.root {
        // Checked here, not by the cluster's processes, so a typo is named
        // at once instead of as a master that never starts.
        ferrobase_server::distributed::parse_root(url, &Settings::default())
            .map_err(|e| BenchError::Invalid(e.to_string()))?;
    }
    // Kept until the experiments end; stops the peer when dropped.
    let setup = start_peer(a.peer, a.peer_addr.as_deref(), a.peer_heap.as_deref()).await?;
    let ctx = Ctx {
        scale: a.scale,
        server: a.server.clone(),
        quiet: a.json,
        exe: a.exe.clone(),
        etcd: a.etcd.clone(),
        root: a.root.clone(),
        hbase: None,
        peer: setup.peer.clone(),
        peer_pid: setup.pid,
        peer_heap: setup.heap.clone(),
    };
    let names: Vec<&str> = match experiment_name(a.name) {
        Some(n) => vec![n],
        None => experiment::NAMES.to_vec(),
    };
    let mut out = String::new();
    let mut reports = Vec::new();
    let mut skipped = Vec::new();
    let mut json = Vec::new();
    let mut errors = 0;
    for name in &names {
        if !a.json {
            eprintln!("experiment {name} (scale {}) ...", a.scale);
        }
        match experiment::run(name, &ctx).await {
            Ok(r) => {
                let (jp, sp) = r.write(&a.out)?;
                errors += r.errors;
                if a.json {
                    json.push(serde_json::to_value(&r).unwrap_or_default());
                } else {
                    out += &r.text();
                    out += &format!("wrote {} and {}\n\n", jp.display(), sp.display());
                }
                reports.push(r);
            }
            Err(BenchError::CannotRun(why)) if names.len() > 1 => {
                eprintln!("skipping {name}: {why}");
                skipped.push((name.to_string(), why));
            }
            Err(BenchError::CannotRun(why)) => {
                return Ok(Outcome {
                    output: format!("{why}\n"),
                    exit_code: 2,
                });
            }
            Err(e) => return Err(e),
        }
    }
    if names.len() > 1 {
        let index = experiment::write_index(&a.out, &reports, &skipped)?;
        if !a.json {
            out += &format!("wrote {}\n", index.display());
        }
    }
    if a.json {
        out = serde_json::to_string_pretty(&json)
            .map_err(|e| BenchError::Invalid(e.to_string()))?
            + "\n";
    }
    if errors > 0 && !a.json {
        out += &format!("{errors} operation(s) failed\n");
    }
    drop(setup);
    Ok(Outcome {
        output: out,
        exit_code: u8::from(errors > 0),
    })
}

/// `bench ycsb`.
pub async fn ycsb_cmd(a: &YcsbArgs) -> Result<Outcome> {
    let opts = YcsbOptions {
        phase: match a.phase {
            PhaseArg::Load => Phase::Load,
            PhaseArg::Run => Phase::Run,
        },
        workload: a.workload.clone(),
        properties: a.properties.clone(),
        threads: a.threads,
        server: a.server.clone(),
        settings: {
            let mut s = Settings::default();
            s.apply_client_tls_flags(a.tls_ca.as_deref(), a.tls_cert.as_deref());
            s
        },
        status_interval: Duration::from_secs(a.status_interval.max(1)),
        quiet: a.json,
    };
    let o = ycsb::run(&opts).await?;
    let mut output = if a.json {
        serde_json::to_string_pretty(&o.json).map_err(|e| BenchError::Invalid(e.to_string()))?
            + "\n"
    } else {
        o.summary.clone()
    };
    if o.errors > 0 && !a.json {
        output += &format!("{} operation(s) returned ERROR\n", o.errors);
    }
    Ok(Outcome {
        output,
        exit_code: u8::from(o.errors > 0),
    })
}

/// Reads a one-byte separator: itself, or `\t`, `tab`, `\x1f`-style hex.
pub fn parse_separator(text: &str) -> Result<u8> {
    let b = match text {
        "\\t" | "tab" | "TAB" => Some(b'\t'),
        _ => match text.strip_prefix("\\x").or_else(|| text.strip_prefix("0x")) {
            Some(hex) => u8::from_str_radix(hex, 16).ok(),
            None if text.len() == 1 => text.bytes().next(),
            None => None,
        },
    };
    match b {
        Some(b'\n' | b'\r') | None => Err(BenchError::Invalid(format!(
            "separator '{text}' must be one byte other than a line break (e.g. ',', '|', '\\t', '\\x1f')"
        ))),
        Some(b) => Ok(b),
    }
}

/// `bench gen-text`.
pub fn gen_text_cmd(a: &GenTextArgs) -> Result<Outcome> {
    let rows = RowSpec::new(
        shape_name(a.shape),
        a.value_size,
        a.columns,
        a.qualifier_len,
    )
    .map_err(BenchError::Invalid)?;
    let sep = parse_separator(&a.separator)?;
    let r = crate::gen_text::gen_text(&rows, a.rows, a.files, &a.out, sep)?;
    let mut output = format!(
        "bench gen-text: {} rows of {} in {} file(s), {} bytes, under {}\n",
        r.rows,
        rows.describe(),
        r.files.len(),
        r.bytes,
        a.out.display()
    );
    output += &format!("  import with: --columns {}\n", r.columns);
    Ok(Outcome {
        output,
        exit_code: 0,
    })
}

/// Runs a bench command on a new multi-threaded runtime.
pub fn run(args: &BenchArgs) -> Result<Outcome> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(BenchError::io("starting the async runtime"))?;
    // Ctrl-C is handled by `with_target`: it ends the run and stops the
    // embedded server cleanly.
    rt.block_on(async {
        match &args.command {
            BenchCommand::Load(a) => load(a).await,
            BenchCommand::Experiment(a) => experiment(a).await,
            BenchCommand::Ycsb(a) => ycsb_cmd(a).await,
            BenchCommand::GenText(a) => gen_text_cmd(a),
            BenchCommand::Peer(a) => crate::peer_report::run(a).await,
        }
    })
}
