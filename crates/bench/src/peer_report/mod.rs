//! `ferrobase bench peer`: ferrobase measured against a real Apache HBase
//! on the same machine, in the same run, with the same clients.
//!
//! - `peer ycsb`: YCSB 0.17.0 workloads on both systems ([`ycsb`], which
//!   drives `scripts/bench-peer.sh`): its tables and `OUT/results.json`.
//! - `peer all`: YCSB sized from `--scale`, then the seed experiments with
//!   the HBase peer (the same code as `bench experiment NAME --peer
//!   hbase`, in this process), then `DIR/index.html` ([`html`]) and
//!   `DIR/summary.md`, one table for a README ([`markdown`]). A phase
//!   that fails is recorded with its error and the run goes on.
//!
//! This module owns the command line, the order of the phases and the
//! run's results ([`PeerRun`]); measuring is the script's and the
//! experiments'.

pub mod html;
pub mod markdown;
pub mod ycsb;

#[cfg(test)]
mod tests;

use crate::cli::{ExperimentName, Outcome, PeerArg, experiment_name};
use crate::experiment::{self, Ctx, Report};
use crate::peer::start_peer;
use crate::{BenchError, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use ycsb::{System, Workload, YcsbResults, YcsbRun, run_script};

/// `ferrobase bench peer`.
#[derive(Args, Debug)]
pub struct PeerArgs {
    #[command(subcommand)]
    pub command: PeerCommand,
}

impl PeerArgs {
    /// The ferrobase binary (set by `ferrobase bench`, not a flag).
    pub fn set_exe(&mut self, exe: Option<PathBuf>) {
        match &mut self.command {
            PeerCommand::Ycsb(a) => a.exe = exe,
            PeerCommand::All(a) => a.exe = exe,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum PeerCommand {
    /// YCSB workloads against Apache HBase and ferrobase, one after the
    /// other (scripts/bench-peer.sh): one table per phase with
    /// ferrobase/HBase, OUT/results.json and OUT/results.md.
    Ycsb(PeerYcsbArgs),
    /// YCSB and the seed experiments against both, then DIR/index.html
    /// with every chart and ratio table.
    All(PeerAllArgs),
}

fn parse_size(s: &str) -> std::result::Result<u64, String> {
    ferrobase_types::settings::parse_size(s)
        .filter(|v| *v >= 1 << 20)
        .ok_or_else(|| format!("'{s}' is not a size of at least 1 MiB (e.g. 2g, 1536m)"))
}

/// `bench peer ycsb`.
#[derive(Args, Debug)]
pub struct PeerYcsbArgs {
    /// Workloads run after one load, in this order (D and E insert rows).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "a,b,c,d,e,f")]
    pub workloads: Vec<Workload>,
    /// Rows loaded (YCSB's recordcount).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub records: u64,
    /// Operations per workload (operationcount).
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub ops: u64,
    /// YCSB client threads, load and workloads.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Systems measured, in this order.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "hbase,ferrobase"
    )]
    pub systems: Vec<System>,
    /// Results, logs and (while running) data.
    #[arg(long, default_value = "bench-out/peer")]
    pub out: PathBuf,
    /// Each server's memory budget: HBase's heap, ferrobase.memory.size.
    #[arg(long, default_value = "2g", value_parser = parse_size)]
    pub memory: u64,
    /// Split keys of usertable (N + 1 regions).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub splits: u32,
    /// Wall-clock limit of one phase, seconds.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Keep the servers' data directories.
    #[arg(long)]
    pub keep_data: bool,
    /// The script (default: scripts/bench-peer.sh of the checkout, or
    /// $FERROBASE_BENCH_PEER_SCRIPT).
    #[arg(long, value_name = "PATH")]
    pub script: Option<PathBuf>,
    #[arg(skip)]
    pub exe: Option<PathBuf>,
}

/// `bench peer all`.
#[derive(Args, Debug)]
pub struct PeerAllArgs {
    /// Multiplies the experiments' row and operation counts; YCSB loads
    /// and runs 100,000 × scale records and operations (at least 1,000).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    #[arg(long, default_value = "bench-out/peer-all")]
    pub out: PathBuf,
    /// Seed experiments to run, in this order (default: every one).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub experiments: Vec<ExperimentName>,
    /// YCSB workloads (after one load).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "a,b,c,d,e,f")]
    pub workloads: Vec<Workload>,
    /// YCSB client threads.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// Memory budget of each YCSB server (HBase's heap, ferrobase.memory.size).
    #[arg(long, default_value = "2g", value_parser = parse_size)]
    pub memory: u64,
    /// Leave YCSB out (the report says so).
    #[arg(long)]
    pub no_ycsb: bool,
    /// The YCSB script (default: scripts/bench-peer.sh of the checkout, or
    /// $FERROBASE_BENCH_PEER_SCRIPT).
    #[arg(long, value_name = "PATH")]
    pub ycsb_script: Option<PathBuf>,
    /// A running HBase for the experiments (`host:port` of its RPC
    /// registry) instead of one this command starts; YCSB always starts
    /// its own.
    #[arg(long, value_name = "HOST:PORT")]
    pub peer_addr: Option<String>,
    /// Java heap of the experiments' HBase (default: the embedded
    /// ferrobase's memory budget).
    #[arg(long, value_name = "SIZE")]
    pub peer_heap: Option<String>,
    #[arg(skip)]
    pub exe: Option<PathBuf>,
}

/// How one phase of `peer all` ended.
#[derive(Clone, Debug, Serialize)]
pub enum Step<T> {
    Done(T),
    /// Its error.
    Failed(String),
    /// Why it was not run.
    NotRun(String),
}

impl<T> Step<T> {
    pub fn done(&self) -> Option<&T> {
        match self {
            Step::Done(t) => Some(t),
            _ => None,
        }
    }
}

/// Everything `index.html` shows.
#[derive(Clone, Debug, Serialize)]
pub struct PeerRun {
    pub machine: String,
    pub date: String,
    pub ferrobase_version: String,
    pub hbase_version: String,
    /// The command line, shell-quoted.
    pub command: String,
    pub scale: f64,
    pub ycsb: Step<YcsbResults>,
    /// The experiments' HBase: how it was started, or why not.
    pub peer: Step<String>,
    /// In the order run.
    pub experiments: Vec<(String, Step<Report>)>,
}

impl PeerRun {
    /// Failed phases, experiments with failed operations, YCSB phases not ok.
    pub fn failures(&self) -> usize {
        let ycsb = match &self.ycsb {
            Step::Done(r) => r.failures().len(),
            Step::Failed(_) => 1,
            Step::NotRun(_) => 0,
        };
        let peer = usize::from(matches!(self.peer, Step::Failed(_)));
        let exps = self
            .experiments
            .iter()
            .filter(|(_, s)| match s {
                Step::Done(r) => r.errors > 0,
                Step::Failed(_) => true,
                Step::NotRun(_) => false,
            })
            .count();
        ycsb + peer + exps
    }
}

/// The HBase both commands measure.
pub const HBASE_VERSION: &str = "Apache HBase 2.6.4 (hbase-2.6.4-hadoop3 artifacts, standalone)";

/// YCSB records and operations at `scale` (100,000 at 1, at least 1,000).
pub fn ycsb_size(scale: f64) -> u64 {
    ((100_000.0 * scale).round() as u64).max(1_000)
}

/// `YYYY-MM-DD HH:MM:SS` UTC of a Unix time.
pub fn utc(secs: u64) -> String {
    // Days to civil date (Howard Hinnant's algorithm), for the proleptic
    // Gregorian calendar from 1970.
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The command line as a shell would take it back.
pub fn shell_join(args: impl IntoIterator<Item = String>) -> String {
    args.into_iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// Runs `bench peer …`.
pub async fn run(a: &PeerArgs) -> Result<Outcome> {
    match &a.command {
        PeerCommand::Ycsb(y) => ycsb_cmd(y).await,
        PeerCommand::All(all) => all_cmd(all).await,
    }
}

async fn run_ycsb(run: YcsbRun, script: Option<PathBuf>) -> Result<ycsb::ScriptOutcome> {
    tokio::task::spawn_blocking(move || run_script(&run, script.as_deref()))
        .await
        .map_err(|e| BenchError::Server(format!("the YCSB run: {e}")))?
}

/// `bench peer ycsb`: exit code 1 when a phase did not end ok.
pub async fn ycsb_cmd(a: &PeerYcsbArgs) -> Result<Outcome> {
    let run = YcsbRun {
        records: a.records,
        ops: a.ops,
        threads: a.threads,
        workloads: a.workloads.clone(),
        systems: a.systems.clone(),
        out: a.out.clone(),
        memory: a.memory,
        splits: a.splits,
        timeout_s: a.timeout,
        keep_data: a.keep_data,
        ferrobase_bin: a.exe.clone(),
    };
    run.check()?;
    let o = run_ycsb(run, a.script.clone()).await?;
    let failed = o.results.failures().len();
    let mut output = o.table;
    output += &format!("wrote {}\n", o.results_path.display());
    if failed > 0 {
        output += &format!("{failed} phase(s) did not end ok\n");
    }
    Ok(Outcome {
        output,
        exit_code: u8::from(failed > 0),
    })
}

/// The experiments `--experiments` names, in order, each once.
fn experiment_list(names: &[ExperimentName]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for n in names {
        let add: Vec<&'static str> = match experiment_name(*n) {
            Some(one) => vec![one],
            None => experiment::NAMES.to_vec(),
        };
        for x in add {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    if out.is_empty() {
        experiment::NAMES.to_vec()
    } else {
        out
    }
}

/// `bench peer all`: exit code 1 when a phase failed or an experiment
/// had failed operations; `index.html` is written either way.
pub async fn all_cmd(a: &PeerAllArgs) -> Result<Outcome> {
    if !(a.scale.is_finite() && a.scale > 0.0) {
        return Err(BenchError::Invalid(format!(
            "--scale {} must be a positive number",
            a.scale
        )));
    }
    if a.workloads.is_empty() {
        return Err(BenchError::Invalid("--workloads needs a workload".into()));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(BenchError::io(format!("creating {}", a.out.display())))?;
    let names = experiment_list(&a.experiments);
    let mut output = String::new();
    let mut run = PeerRun {
        machine: experiment::machine(),
        date: now(),
        ferrobase_version: format!("ferrobase {}", env!("CARGO_PKG_VERSION")),
        hbase_version: HBASE_VERSION.into(),
        command: shell_join(std::env::args()),
        scale: a.scale,
        ycsb: Step::NotRun("--no-ycsb".into()),
        peer: Step::NotRun("no experiment to run".into()),
        experiments: Vec::new(),
    };

    if !a.no_ycsb {
        let n = ycsb_size(a.scale);
        eprintln!(
            "bench peer all: YCSB, {n} records and operations, workloads {} on Apache HBase and ferrobase ...",
            a.workloads
                .iter()
                .map(|w| w.letter())
                .collect::<Vec<_>>()
                .join(",")
        );
        let yr = YcsbRun {
            records: n,
            ops: n,
            threads: a.threads,
            workloads: a.workloads.clone(),
            systems: vec![System::Hbase, System::Ferrobase],
            out: a.out.join("ycsb"),
            memory: a.memory,
            splits: 10,
            timeout_s: 1800,
            keep_data: false,
            ferrobase_bin: a.exe.clone(),
        };
        run.ycsb = match run_ycsb(yr, a.ycsb_script.clone()).await {
            Ok(o) => {
                output += "== YCSB\n";
                output += &o.table;
                Step::Done(o.results)
            }
            Err(e) => {
                eprintln!("bench peer all: YCSB failed: {e}");
                Step::Failed(e.to_string())
            }
        };
    }

    let setup = match start_peer(
        Some(PeerArg::Hbase),
        a.peer_addr.as_deref(),
        a.peer_heap.as_deref(),
    )
    .await
    {
        Ok(s) => {
            if let Some((_, describe)) = &s.peer {
                run.peer = Step::Done(describe.clone());
            }
            Some(s)
        }
        Err(e) => {
            eprintln!(
                "bench peer all: the HBase peer did not start ({e}); the experiments run on ferrobase alone"
            );
            run.peer = Step::Failed(e.to_string());
            None
        }
    };
    let ctx = Ctx {
        quiet: false,
        exe: a.exe.clone(),
        peer: setup.as_ref().and_then(|s| s.peer.clone()),
        peer_pid: setup.as_ref().and_then(|s| s.pid),
        peer_heap: setup.as_ref().and_then(|s| s.heap.clone()),
        ..Ctx::new(a.scale)
    };
    for (i, name) in names.iter().enumerate() {
        eprintln!(
            "bench peer all: experiment {name} ({}/{}, scale {}) ...",
            i + 1,
            names.len(),
            a.scale
        );
        let step = match experiment::run(name, &ctx).await {
            Ok(r) => match r.write(&a.out) {
                Ok(_) => {
                    output += &r.text();
                    output.push('\n');
                    Step::Done(r)
                }
                Err(e) => Step::Failed(format!("writing its files: {e}")),
            },
            Err(BenchError::CannotRun(why)) => Step::NotRun(why),
            Err(BenchError::Interrupted) => {
                run.experiments
                    .push((name.to_string(), Step::Failed("interrupted".into())));
                break;
            }
            Err(e) => Step::Failed(e.to_string()),
        };
        if let Step::Failed(e) | Step::NotRun(e) = &step {
            eprintln!("bench peer all: experiment {name}: {e}");
        }
        run.experiments.push((name.to_string(), step));
    }
    drop(setup);

    let index = a.out.join("index.html");
    std::fs::write(&index, html::render(&run))
        .map_err(BenchError::io(format!("writing {}", index.display())))?;
    // The same run as data: every phase's figures, errors and reasons.
    let combined = a.out.join("results.json");
    let json = serde_json::to_string_pretty(&run)
        .map_err(|e| BenchError::Invalid(format!("encoding {}: {e}", combined.display())))?;
    std::fs::write(&combined, json)
        .map_err(BenchError::io(format!("writing {}", combined.display())))?;
    // The README's benchmark table, from the same run.
    let summary = a.out.join("summary.md");
    std::fs::write(&summary, markdown::render(&run))
        .map_err(BenchError::io(format!("writing {}", summary.display())))?;
    let failures = run.failures();
    output += &format!(
        "wrote {}, {} and {}\n",
        index.display(),
        combined.display(),
        summary.display()
    );
    if failures > 0 {
        output +=
            &format!("{failures} phase(s) failed or had failed operations (see the report)\n");
    }
    Ok(Outcome {
        output,
        exit_code: u8::from(failures > 0),
    })
}
