//! YCSB against Apache HBase and ferrobase through `scripts/bench-peer.sh`,
//! run as a child process: the script owns starting each server, the YCSB
//! client JVM, the `/proc` measurements and `OUT/results.json`; this module
//! owns checking the flags, finding the script, passing its progress
//! through to stderr, and reading `results.json` back into
//! [`YcsbResults`] and its ferrobase/HBase [`RatioRow`]s.
//!
//! Driving the script rather than porting it keeps one implementation of
//! the measurement (the script is also run on its own, and documented in
//! docs/bench.md), so `bench peer` and the script cannot drift apart.

use crate::{BenchError, Result};
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// YCSB's operation kinds, in the order its CoreWorkload reports them.
pub const OPS: [&str; 6] = [
    "READ",
    "UPDATE",
    "INSERT",
    "SCAN",
    "READ-MODIFY-WRITE",
    "DELETE",
];

/// The environment variable naming the script, for a binary run outside a
/// checkout.
pub const SCRIPT_ENV: &str = "FERROBASE_BENCH_PEER_SCRIPT";

/// YCSB's core workloads.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Workload {
    A,
    B,
    C,
    D,
    E,
    F,
}

impl Workload {
    pub fn letter(self) -> &'static str {
        match self {
            Workload::A => "a",
            Workload::B => "b",
            Workload::C => "c",
            Workload::D => "d",
            Workload::E => "e",
            Workload::F => "f",
        }
    }
}

/// The systems the script can measure.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum System {
    Hbase,
    Ferrobase,
}

impl System {
    pub fn name(self) -> &'static str {
        match self {
            System::Hbase => "hbase",
            System::Ferrobase => "ferrobase",
        }
    }
}

/// One run of the script.
#[derive(Clone, Debug, Serialize)]
pub struct YcsbRun {
    pub records: u64,
    pub ops: u64,
    pub threads: u32,
    pub workloads: Vec<Workload>,
    pub systems: Vec<System>,
    pub out: PathBuf,
    /// Each server's memory budget in bytes.
    pub memory: u64,
    pub splits: u32,
    pub timeout_s: u64,
    pub keep_data: bool,
    /// The ferrobase binary measured (`FERROBASE_BIN`); `None`: the
    /// script's default, `target/release/ferrobase`.
    pub ferrobase_bin: Option<PathBuf>,
}

impl YcsbRun {
    /// Refuses values the script would refuse, with the flag's name.
    pub fn check(&self) -> Result<()> {
        for (flag, v) in [
            ("--records", self.records),
            ("--ops", self.ops),
            ("--threads", u64::from(self.threads)),
            ("--timeout", self.timeout_s),
        ] {
            if v == 0 {
                return Err(BenchError::Invalid(format!("{flag} must be at least 1")));
            }
        }
        if self.workloads.is_empty() || self.systems.is_empty() {
            return Err(BenchError::Invalid(
                "--workloads and --systems need at least one value".into(),
            ));
        }
        if self.memory < 1 << 20 {
            return Err(BenchError::Invalid(format!(
                "--memory {} bytes is less than 1 MiB (e.g. 2g, 1536m)",
                self.memory
            )));
        }
        Ok(())
    }

    /// `--memory` as the script takes it (`2g`, `1536m`).
    pub fn memory_arg(&self) -> String {
        if self.memory.is_multiple_of(1 << 30) {
            format!("{}g", self.memory >> 30)
        } else {
            format!("{}m", self.memory.div_ceil(1 << 20))
        }
    }
}

/// `scripts/NAME`: `$env_var`, else the first `scripts/NAME` in the current
/// directory or a parent, else the one of the source tree this binary was
/// built from.
pub fn find_script(name: &str, env_var: &str) -> Result<PathBuf> {
    if let Some(p) = std::env::var_os(env_var) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        return Err(BenchError::CannotRun(format!(
            "{env_var}={} is not a file",
            p.display()
        )));
    }
    let mut dir = std::env::current_dir().ok();
    while let Some(d) = dir {
        let p = d.join("scripts").join(name);
        if p.is_file() {
            return Ok(p);
        }
        dir = d.parent().map(PathBuf::from);
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name);
    if built.is_file() {
        return Ok(built);
    }
    Err(BenchError::CannotRun(format!(
        "scripts/{name} not found: run from a ferrobase checkout, or set {env_var}"
    )))
}

/// What the script printed and wrote.
#[derive(Clone, Debug)]
pub struct ScriptOutcome {
    /// Its tables (stdout).
    pub table: String,
    pub results: YcsbResults,
    pub results_path: PathBuf,
}

/// Runs the script (`script`, else [`find_script`]) to its end: its
/// progress lines go to this process's stderr as they come, its tables are
/// returned. Both servers get free ports unless the environment names
/// them, so a run does not collide with a server on HBase's default ports.
pub fn run_script(r: &YcsbRun, script: Option<&Path>) -> Result<ScriptOutcome> {
    r.check()?;
    let script = match script {
        Some(p) if p.is_file() => p.to_path_buf(),
        Some(p) => {
            return Err(BenchError::CannotRun(format!(
                "the YCSB script {} is not a file",
                p.display()
            )));
        }
        None => find_script("bench-peer.sh", SCRIPT_ENV)?,
    };
    std::fs::create_dir_all(&r.out)
        .map_err(BenchError::io(format!("creating {}", r.out.display())))?;
    let join = |v: Vec<&str>| v.join(",");
    let mut cmd = Command::new(&script);
    cmd.arg("--records")
        .arg(r.records.to_string())
        .arg("--ops")
        .arg(r.ops.to_string())
        .arg("--threads")
        .arg(r.threads.to_string())
        .arg("--workloads")
        .arg(join(r.workloads.iter().map(|w| w.letter()).collect()))
        .arg("--systems")
        .arg(join(r.systems.iter().map(|s| s.name()).collect()))
        .arg("--out")
        .arg(&r.out)
        .arg("--memory")
        .arg(r.memory_arg())
        .arg("--splits")
        .arg(r.splits.to_string())
        .arg("--timeout")
        .arg(r.timeout_s.to_string());
    if r.keep_data {
        cmd.arg("--keep-data");
    }
    if let Some(bin) = &r.ferrobase_bin {
        cmd.env("FERROBASE_BIN", bin);
    }
    for var in [
        "FERROBASE_PORT",
        "HBASE_PEER_MASTER_PORT",
        "HBASE_PEER_RS_PORT",
        "HBASE_PEER_ZK_PORT",
    ] {
        if std::env::var_os(var).is_none() {
            cmd.env(var, free_port()?.to_string());
        }
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    eprintln!("bench peer ycsb: {}", script.display());
    let mut child = cmd
        .spawn()
        .map_err(BenchError::io(format!("running {}", script.display())))?;
    // stderr is passed through line by line (the script's progress), and
    // its last lines kept for the error when the script itself fails.
    let stderr = child.stderr.take();
    let tail = std::thread::spawn(move || {
        let mut last: VecDeque<String> = VecDeque::new();
        if let Some(e) = stderr {
            for line in BufReader::new(e).lines().map_while(|l| l.ok()) {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{line}");
                if last.len() == 3 {
                    last.pop_front();
                }
                last.push_back(line);
            }
        }
        last
    });
    let mut table = String::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
            // scripts/java-deps.sh's notes on what it fetches are progress.
            if line.starts_with("== resolving") || line.starts_with("== installing") {
                eprintln!("{line}");
                continue;
            }
            table.push_str(&line);
            table.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(BenchError::io(format!("waiting for {}", script.display())))?;
    let last = tail.join().unwrap_or_default();
    if !status.success() {
        let why: Vec<String> = last.into_iter().collect();
        return Err(BenchError::Server(format!(
            "{} failed ({status}): {}",
            script.display(),
            why.join(" / ")
        )));
    }
    let results_path = r.out.join("results.json");
    let results = read_results(&results_path)?;
    Ok(ScriptOutcome {
        table,
        results,
        results_path,
    })
}

fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(BenchError::io("finding a free port"))?;
    Ok(l.local_addr()
        .map_err(BenchError::io("finding a free port"))?
        .port())
}

/// Reads the script's `results.json`.
pub fn read_results(path: &Path) -> Result<YcsbResults> {
    let text = std::fs::read_to_string(path)
        .map_err(BenchError::io(format!("reading {}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| BenchError::Invalid(format!("{}: {e}", path.display())))
}

/// `results.json` of `scripts/bench-peer.sh` (the fields the report uses;
/// the run's settings are kept as they are).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct YcsbResults {
    #[serde(default)]
    pub run: serde_json::Value,
    #[serde(default)]
    pub systems: Vec<SystemEnd>,
    #[serde(default)]
    pub phases: Vec<YcsbPhase>,
}

/// One system at the end of its run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SystemEnd {
    pub system: String,
    #[serde(default)]
    pub start_error: Option<String>,
    #[serde(default)]
    pub disk_bytes: Option<u64>,
    #[serde(default)]
    pub server_cpu_s: Option<f64>,
    #[serde(default)]
    pub server_peak_rss_kib: Option<u64>,
}

/// One phase (create, load, a workload) of one system.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct YcsbPhase {
    pub system: String,
    pub phase: String,
    /// ok, partial, failed or skipped.
    pub status: String,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub throughput: Option<f64>,
    #[serde(default)]
    pub operations: BTreeMap<String, OpFigures>,
    #[serde(default)]
    pub server_cpu_s: Option<f64>,
    #[serde(default)]
    pub server_peak_rss_kib: Option<u64>,
    #[serde(default)]
    pub wall_s: Option<f64>,
}

/// One operation kind's figures in a phase (µs).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpFigures {
    #[serde(default)]
    pub count: u64,
    #[serde(default)]
    pub avg_us: Option<f64>,
    #[serde(default)]
    pub p95_us: Option<f64>,
    #[serde(default)]
    pub p99_us: Option<f64>,
}

impl YcsbResults {
    pub fn phase(&self, system: &str, phase: &str) -> Option<&YcsbPhase> {
        self.phases
            .iter()
            .find(|p| p.system == system && p.phase == phase)
    }

    /// Phases that did not end `ok`, in run order.
    pub fn failures(&self) -> Vec<&YcsbPhase> {
        self.phases.iter().filter(|p| p.status != "ok").collect()
    }
}

/// One figure on both systems.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Pair {
    pub ferrobase: Option<f64>,
    pub hbase: Option<f64>,
}

impl Pair {
    /// ferrobase / HBase, when both were measured and HBase's is not 0.
    pub fn ratio(&self) -> Option<f64> {
        match (self.ferrobase, self.hbase) {
            (Some(f), Some(h)) if h != 0.0 => Some(f / h),
            _ => None,
        }
    }
}

/// One row of the ratio table: a phase's figures on both systems.
#[derive(Clone, Debug, Serialize)]
pub struct RatioRow {
    /// `load` or the workload's letter.
    pub phase: String,
    /// Each system's status (ok, partial, failed, skipped, not run).
    pub status: Statuses,
    pub throughput: Pair,
    /// 99th percentile latency (µs) per operation kind either ran.
    pub p99_us: Vec<(String, Pair)>,
    pub server_cpu_s: Pair,
    pub peak_rss_mib: Pair,
}

/// A status on both systems.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Statuses {
    pub ferrobase: String,
    pub hbase: String,
}

/// The ratio table: one row per load or workload phase, in run order. A
/// failed or skipped phase has no figures (a partial one keeps them).
pub fn ratio_rows(r: &YcsbResults) -> Vec<RatioRow> {
    let mut order: Vec<&str> = Vec::new();
    for p in &r.phases {
        if p.phase != "create" && !order.contains(&p.phase.as_str()) {
            order.push(&p.phase);
        }
    }
    order
        .into_iter()
        .map(|phase| {
            let of = |system: &str| {
                r.phase(system, phase)
                    .filter(|p| p.status == "ok" || p.status == "partial")
            };
            let (f, h) = (of("ferrobase"), of("hbase"));
            let pair = |get: &dyn Fn(&YcsbPhase) -> Option<f64>| Pair {
                ferrobase: f.and_then(get),
                hbase: h.and_then(get),
            };
            let mut p99_us = Vec::new();
            for op in OPS {
                let get = |p: &YcsbPhase| {
                    p.operations
                        .get(op)
                        .filter(|o| o.count > 0)
                        .and_then(|o| o.p99_us)
                };
                let pr = pair(&get);
                if pr.ferrobase.is_some() || pr.hbase.is_some() {
                    p99_us.push((op.to_string(), pr));
                }
            }
            let status = |system: &str| {
                r.phase(system, phase)
                    .map_or_else(|| "not run".to_string(), |p| p.status.clone())
            };
            RatioRow {
                phase: phase.to_string(),
                status: Statuses {
                    ferrobase: status("ferrobase"),
                    hbase: status("hbase"),
                },
                throughput: pair(&|p| p.throughput),
                p99_us,
                server_cpu_s: pair(&|p| p.server_cpu_s),
                peak_rss_mib: pair(&|p| p.server_peak_rss_kib.map(|k| k as f64 / 1024.0)),
            }
        })
        .collect()
}
