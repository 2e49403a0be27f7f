//! The `ferrobase` command: one binary, one subcommand per job.
//!
//! This file only parses the command line and dispatches; each subcommand
//! lives in its own module. Errors are reported with `anyhow` and a
//! non-zero exit code, never a panic.

mod alloc;
mod bench_cmd;
mod cluster_args;
mod config;
mod demo;
mod import_cmd;
mod info;
mod master_cmd;
mod regionserver_cmd;
mod shell_cmd;
mod snapshot_cmd;
mod standalone;
mod storefile_cmd;
mod thrift_cmd;
mod token_cmd;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// ferrobase: an HBase-style wide-column database.
#[derive(Parser)]
#[command(name = "ferrobase", version, about)]
struct Cli {
    /// Log lines as `text` (default) or `json` (one object a line);
    /// levels per module come from RUST_LOG (`warn` by default, e.g.
    /// `RUST_LOG=info,ferrobase::slow_log=warn`).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// The format of log lines on stderr.
#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Open the engine on a data directory, load rows of a benchmark data
    /// shape, flush, compact, read them back and print what happened.
    Demo(demo::DemoArgs),
    /// Run master, region server and meta in one process on a local data
    /// directory; prints the address it listens on; Ctrl-C or SIGTERM stops it.
    Standalone(standalone::StandaloneArgs),
    /// Distributed mode: a master (standby until etcd elects it).
    Master(master_cmd::MasterArgs),
    /// Distributed mode: a region server on a shared root.
    Regionserver(regionserver_cmd::RegionServerArgs),
    /// The HBase shell: `create`, `put`, `get`, `scan`, … against a server;
    /// interactive, or `-e "cmd; cmd"`, a script FILE, or standard input.
    Shell(shell_cmd::ShellArgs),
    /// HBase's Thrift1 gateway (`hbase thrift start`) for happybase and
    /// other HBase Thrift clients; prints the address it listens on.
    Thrift(thrift_cmd::ThriftArgs),
    /// Benchmarks: the HBase write-path study's load tool, the published experiments, YCSB workloads.
    Bench(ferrobase_bench::cli::BenchArgs),
    /// Load delimited text files into a table (HBase's ImportTsv), through
    /// the write path or, with --bulk, as store files handed to the regions.
    Import(Box<import_cmd::ImportArgs>),
    /// Inspect a store file (like `hbase hfile`).
    Storefile {
        #[command(subcommand)]
        command: StorefileCommand,
    },
    /// Table snapshots offline: `export NAME --to ROOT` copies one to
    /// another storage root (HBase's ExportSnapshot).
    Snapshot {
        #[command(subcommand)]
        command: snapshot_cmd::SnapshotCommand,
    },
    /// Authentication tokens: `create --user NAME --out FILE` mints one
    /// from the root's key as a Hadoop token file (HADOOP_TOKEN_FILE_LOCATION).
    Token {
        #[command(subcommand)]
        command: token_cmd::TokenCommand,
    },
    /// Print every setting with its HBase name, value and meaning.
    Settings {
        /// A TOML settings file to apply first.
        #[arg(long)]
        config: Option<PathBuf>,
        /// `name=value` overrides, applied after the file.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Print a Markdown table (for the README).
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Subcommand)]
enum StorefileCommand {
    /// File info, one `key=value` a line (like `hbase hfile -m -f FILE`).
    Meta { file: PathBuf },
    /// Every cell as `row/family:qualifier/timestamp/Type/vlen=N`.
    Cells {
        file: PathBuf,
        /// Also print values.
        #[arg(long)]
        values: bool,
    },
}

fn main() -> ExitCode {
    alloc::keep_freed_memory();
    let cli = Cli::parse();
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    let result = match cli.command {
        Command::Demo(args) => demo::run(args),
        Command::Standalone(args) => standalone::run(args),
        Command::Master(args) => master_cmd::run(args),
        Command::Regionserver(args) => regionserver_cmd::run(args),
        Command::Shell(args) => shell_cmd::run(args),
        Command::Thrift(args) => thrift_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::Import(args) => import_cmd::run(*args),
        Command::Storefile { command } => match command {
            StorefileCommand::Meta { file } => storefile_cmd::meta(&file),
            StorefileCommand::Cells { file, values } => storefile_cmd::cells(&file, values),
        },
        Command::Snapshot { command } => snapshot_cmd::run(command),
        Command::Token { command } => token_cmd::run(command),
        Command::Settings {
            config,
            set,
            markdown,
        } => config::load(config.as_deref(), &set)
            .and_then(|s| config::print(&s, markdown).map_err(Into::into)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // Output piped into `head` and the like: the reader stopped early.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
