//! The command line: what to run, where, with which engines. This module
//! owns the flags and the names of the workloads; it never runs anything.

use crate::engine::EngineId;
use clap::Parser;
use std::path::PathBuf;

/// The workloads, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Workload {
    LoadLog9,
    LoadLog9Fsync,
    GetZipf,
    Scan,
    LoadGps60,
    /// The one-column against 53-column study's shapes (docs/experiments.md):
    /// the same 751 value bytes per row as one cell
    /// (`single53`) or 53 (`wide53`). Their ratio per engine shows what the
    /// per-cell data model costs, whatever the server around it.
    LoadSingle53,
    LoadWide53,
}

impl Workload {
    pub const ALL: [Workload; 7] = [
        Workload::LoadLog9,
        Workload::LoadLog9Fsync,
        Workload::GetZipf,
        Workload::Scan,
        Workload::LoadGps60,
        Workload::LoadSingle53,
        Workload::LoadWide53,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::LoadLog9 => "load-log9",
            Workload::LoadLog9Fsync => "load-log9-fsync",
            Workload::GetZipf => "get-zipf",
            Workload::Scan => "scan",
            Workload::LoadGps60 => "load-gps60",
            Workload::LoadSingle53 => "load-single53",
            Workload::LoadWide53 => "load-wide53",
        }
    }

    /// The workload named `name`; the error lists the valid names.
    pub fn parse(name: &str) -> Result<Workload, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == name.trim())
            .ok_or_else(|| {
                let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!("unknown workload '{name}'; valid: {}", names.join(", "))
            })
    }
}

fn positive_scale(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{text} is not a positive number"))
    }
}

/// Our region engine against RocksDB, in one process, on the data shapes
/// of docs/workloads.md. One JSON line per workload on stdout, progress on
/// stderr.
#[derive(Parser, Debug)]
#[command(name = "ferrobase-compare", version)]
pub struct Args {
    /// Multiply every row and operation count by F.
    #[arg(long, value_name = "F", default_value = "1", allow_negative_numbers = true, value_parser = positive_scale)]
    pub scale: f64,
    /// Run only these (repeat or comma-separate): load-log9,
    /// load-log9-fsync, get-zipf, scan, load-gps60, load-single53,
    /// load-wide53 (default: all).
    #[arg(long = "workload", visible_alias = "workloads", value_name = "NAME",
          value_delimiter = ',', value_parser = Workload::parse)]
    pub workloads: Vec<Workload>,
    /// Where the databases go; DIR/<engine>/<dataset> is deleted and
    /// re-created by a load.
    #[arg(long, value_name = "DIR", default_value_os_t = std::env::temp_dir().join("ferrobase-compare"))]
    pub dir: PathBuf,
    /// Engines and their order.
    #[arg(long, visible_alias = "engine", value_name = "LIST", value_delimiter = ',',
          value_parser = EngineId::parse, default_value = "ours,rocksdb")]
    pub engines: Vec<EngineId>,
    /// Measure disk right after the final flush, without waiting for
    /// running or pending compactions to finish.
    #[arg(long)]
    pub no_settle: bool,
    /// Run each engine's part of each workload in a child process (clean
    /// peak-RSS figures; default: all in this process).
    #[arg(long)]
    pub isolate: bool,
    /// Internal: run one engine's part of one workload and print `PHASE …`.
    #[arg(long, hide = true)]
    pub child: bool,
    /// Seed of the request distributions.
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,
    /// Delete the databases at the end.
    #[arg(long)]
    pub clean: bool,
}

impl Args {
    /// Every workload when none was named; each once, in run order.
    pub fn normalized(mut self) -> Args {
        if self.workloads.is_empty() {
            self.workloads = Workload::ALL.to_vec();
        }
        self.workloads.sort();
        self.workloads.dedup();
        self.engines.dedup();
        self
    }

    pub fn settle(&self) -> bool {
        !self.no_settle
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn workload_names_round_trip() {
        for w in Workload::ALL {
            assert_eq!(Workload::parse(w.name()).ok(), Some(w));
        }
        assert!(Workload::parse("load").is_err());
    }

    #[test]
    fn flags_parse_and_bad_values_name_themselves() {
        Args::command().debug_assert();
        let a = Args::try_parse_from([
            "c",
            "--scale",
            "0.5",
            "--workload",
            "scan,get-zipf",
            "--workloads=scan",
            "--engines",
            "rocksdb",
            "--no-settle",
        ])
        .unwrap()
        .normalized();
        assert_eq!(a.scale, 0.5);
        assert_eq!(a.workloads, [Workload::GetZipf, Workload::Scan]);
        assert_eq!(a.engines, [EngineId::RocksDb]);
        assert!(!a.settle());
        let d = Args::try_parse_from(["c"]).unwrap().normalized();
        assert_eq!(d.workloads, Workload::ALL);
        assert_eq!(d.engines, [EngineId::Ours, EngineId::RocksDb]);
        assert!(d.settle());
        for (bad, says) in [
            (&["c", "--scale", "-1"][..], "not a positive number"),
            (&["c", "--scale", "x"][..], "not a number"),
            (&["c", "--workload", "load"][..], "unknown workload 'load'"),
            (
                &["c", "--engines", "leveldb"][..],
                "unknown engine 'leveldb'",
            ),
            (&["c", "--frobnicate"][..], "--frobnicate"),
        ] {
            let e = Args::try_parse_from(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
