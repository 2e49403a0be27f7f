//! `ferrobase-compare`: our region engine against RocksDB, in one process,
//! on the data shapes of docs/workloads.md. See crates/compare/README.md.
//!
//! For each workload, each engine runs in turn (open, work, flush, close);
//! then one JSON line per workload goes to stdout:
//! `{"workload":…,"rows":…,"ours_ops_s":…,"rocksdb_ops_s":…,"ratio":…,
//! "ours_peak_rss_mb":…,"rocksdb_peak_rss_mb":…,"ours_disk_mb":…,"rocksdb_disk_mb":…}`.
//! Progress goes to stderr.

mod args;
mod engine;
mod measure;
#[cfg(feature = "ours")]
mod ours;
mod rocks;

use anyhow::{Context, Result, bail};
use args::{Args, Workload};
use clap::Parser;
use engine::{Config, EngineId, KvEngine, WalMode};
use ferrobase_workloads::{GeneratedRow, Shape, Uniform, Zipfian};
use measure::Progress;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// What one engine did in one workload.
#[derive(Clone, Copy, Debug)]
struct Measured {
    ops_s: f64,
    peak_rss_mb: Option<f64>,
    disk_mb: f64,
}

/// Shared state of a run.
struct Run {
    args: Args,
    config: Config,
}

impl Run {
    fn count(&self, base: u64) -> u64 {
        ((base as f64 * self.args.scale).round() as u64).max(1)
    }

    fn log9_rows(&self) -> u64 {
        self.count(2_000_000)
    }

    fn dataset_dir(&self, engine: EngineId, dataset: &str) -> PathBuf {
        self.args.dir.join(engine.name()).join(dataset)
    }

    fn log9_marker(&self, engine: EngineId) -> PathBuf {
        self.args.dir.join(engine.name()).join("log9.rows")
    }

    /// Rows of the workload (ops for get-zipf).
    fn rows(&self, w: Workload) -> u64 {
        match w {
            Workload::LoadLog9 | Workload::Scan => self.log9_rows(),
            Workload::LoadLog9Fsync => self.count(200_000),
            Workload::GetZipf => self.count(1_000_000),
            Workload::LoadGps60 => self.count(300_000),
            Workload::LoadSingle53 | Workload::LoadWide53 => self.count(600_000),
        }
    }

    fn run(&self, engine: EngineId, w: Workload) -> Result<Measured> {
        let rows = self.rows(w);
        match w {
            Workload::LoadLog9 => {
                let m = self.load(
                    engine,
                    w.name(),
                    "log9",
                    Shape::Log9,
                    rows,
                    1,
                    WalMode::Async,
                )?;
                std::fs::write(self.log9_marker(engine), rows.to_string())?;
                Ok(m)
            }
            Workload::LoadLog9Fsync => self.load(
                engine,
                w.name(),
                "log9-fsync",
                Shape::Log9,
                rows,
                8,
                WalMode::Fsync,
            ),
            Workload::LoadGps60 => self.load(
                engine,
                w.name(),
                "gps60",
                Shape::Gps60,
                rows,
                1,
                WalMode::Async,
            ),
            Workload::LoadSingle53 => self.load(
                engine,
                w.name(),
                "single53",
                Shape::Single53,
                rows,
                1,
                WalMode::Async,
            ),
            Workload::LoadWide53 => self.load(
                engine,
                w.name(),
                "wide53",
                Shape::Wide53,
                rows,
                1,
                WalMode::Async,
            ),
            Workload::GetZipf => {
                self.ensure_log9(engine)?;
                self.get_zipf(engine, rows)
            }
            Workload::Scan => {
                self.ensure_log9(engine)?;
                self.scan(engine)
            }
        }
    }

    /// [`Run::run`], in a child process with `--isolate`.
    fn run_phase(&self, engine: EngineId, w: Workload) -> Result<Measured> {
        if !self.args.isolate {
            return self.run(engine, w);
        }
        let exe = std::env::current_exe().context("finding this executable")?;
        let mut cmd = std::process::Command::new(exe);
        cmd.arg("--child")
            .args(["--scale", &self.args.scale.to_string()])
            .arg("--dir")
            .arg(&self.args.dir)
            .args(["--engines", engine.name(), "--workload", w.name()])
            .args(["--seed", &self.args.seed.to_string()])
            .stderr(std::process::Stdio::inherit());
        if !self.args.settle() {
            cmd.arg("--no-settle");
        }
        let out = cmd.output().context("running the child process")?;
        if !out.status.success() {
            bail!("child process failed ({})", out.status);
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("PHASE "))
            .context("child process printed no result")?;
        let nums: Vec<f64> = line
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        match nums[..] {
            [ops_s, peak, disk_mb] => Ok(Measured {
                ops_s,
                peak_rss_mb: (peak >= 0.0).then_some(peak),
                disk_mb,
            }),
            _ => bail!("child process printed '{line}'"),
        }
    }

    /// Makes sure `load-log9`'s data is there (loading it, untimed, if not).
    fn ensure_log9(&self, engine: EngineId) -> Result<()> {
        let rows = self.log9_rows();
        let marked = std::fs::read_to_string(self.log9_marker(engine)).ok();
        if marked.as_deref().map(str::trim) == Some(rows.to_string().as_str())
            && self.dataset_dir(engine, "log9").is_dir()
        {
            return Ok(());
        }
        eprintln!(
            "[{}] no log9 data of {rows} rows in {}: loading it first",
            engine.name(),
            self.args.dir.display()
        );
        self.run(engine, Workload::LoadLog9).map(|_| ())
    }

    fn open(&self, engine: EngineId, dataset: &str) -> Result<Box<dyn KvEngine>> {
        engine.open(&self.dataset_dir(engine, dataset), &self.config)
    }

    fn start_phase(&self, engine: EngineId, label: &str) {
        let reset = measure::reset_peak_rss();
        eprintln!(
            "[{}] {label}: start, RSS {:.0} MB{}",
            engine.name(),
            measure::rss_mb().unwrap_or(0.0),
            if reset {
                ""
            } else {
                " (could not reset the peak-RSS mark: the peak covers the whole process)"
            }
        );
    }

    /// Measures disk (after waiting for compactions if `settle`), closes,
    /// reads the peak RSS.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        engine: EngineId,
        label: &str,
        db: Box<dyn KvEngine>,
        dataset: &str,
        ops: u64,
        secs: f64,
        settle: bool,
    ) -> Result<Measured> {
        if settle {
            let t = Instant::now();
            let settled = db.settle(Duration::from_secs(600))?;
            eprintln!(
                "[{}] {label}: {} after {:.1} s",
                engine.name(),
                if settled {
                    "compactions settled"
                } else {
                    "compactions still running"
                },
                t.elapsed().as_secs_f64()
            );
        }
        let disk_mb = measure::dir_size_mb(&self.dataset_dir(engine, dataset));
        eprintln!("[{}] {label}: stats: {}", engine.name(), db.stats());
        let t = Instant::now();
        db.close()?;
        let peak = measure::peak_rss_mb();
        let ops_s = ops as f64 / secs.max(1e-9);
        eprintln!(
            "[{}] {label}: {ops} ops in {secs:.2} s = {ops_s:.0} ops/s; peak RSS {:.0} MB, disk {disk_mb:.1} MB (close {:.1} s)",
            engine.name(),
            peak.unwrap_or(0.0),
            t.elapsed().as_secs_f64()
        );
        Ok(Measured {
            ops_s,
            peak_rss_mb: peak,
            disk_mb,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn load(
        &self,
        engine: EngineId,
        label: &str,
        dataset: &str,
        shape: Shape,
        rows: u64,
        threads: usize,
        wal: WalMode,
    ) -> Result<Measured> {
        let dir = self.dataset_dir(engine, dataset);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        if dataset == "log9" {
            let _ = std::fs::remove_file(self.log9_marker(engine));
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        self.start_phase(engine, label);
        eprintln!(
            "[{}] {label}: {rows} {shape} rows, {threads} writer thread(s), {} into {}",
            engine.name(),
            wal.name(),
            dir.display()
        );
        let db = self.open(engine, dataset)?;
        let family = shape.family();
        let (result, took) =
            Progress::run(&format!("[{}] {label}", engine.name()), rows, |progress| {
                std::thread::scope(|s| {
                    let db = &*db;
                    let handles: Vec<_> = (0..threads as u64)
                        .map(|t| {
                            let (lo, hi) =
                                (rows * t / threads as u64, rows * (t + 1) / threads as u64);
                            s.spawn(move || -> Result<()> {
                                let mut buf = GeneratedRow::default();
                                for i in lo..hi {
                                    shape.fill_row(i, &mut buf);
                                    db.put_row(&buf, family, wal)
                                        .with_context(|| format!("writing row {i}"))?;
                                    progress.done.fetch_add(1, Ordering::Relaxed);
                                }
                                Ok(())
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| {
                            h.join()
                                .unwrap_or_else(|_| Err(anyhow::anyhow!("writer thread panicked")))
                        })
                        .collect::<Result<Vec<()>>>()
                })
            });
        let secs = took.as_secs_f64();
        if let Err(e) = result {
            let _ = db.close();
            return Err(e);
        }
        let t = Instant::now();
        db.flush()?;
        eprintln!(
            "[{}] {label}: writes took {secs:.2} s; final flush {:.2} s",
            engine.name(),
            t.elapsed().as_secs_f64()
        );
        self.finish(engine, label, db, dataset, rows, secs, self.args.settle())
    }

    /// `threads` readers of `total / threads` gets each, Zipfian over the
    /// log9 rows; returns (gets, gets with an unexpected cell count).
    fn zipf_gets(
        &self,
        db: &dyn KvEngine,
        zipf: &Zipfian,
        total: u64,
        seed: u64,
        label: &str,
    ) -> Result<(u64, u64, u64, Duration)> {
        const THREADS: u64 = 2;
        let (result, took) = Progress::run(label, total, |progress| {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..THREADS)
                    .map(|t| {
                        let n = total * (t + 1) / THREADS - total * t / THREADS;
                        let mut chooser = zipf.fork(seed.wrapping_add(t));
                        s.spawn(move || -> Result<(u64, u64, u64)> {
                            let mut key = Vec::with_capacity(32);
                            let mut bad = 0u64;
                            let mut bytes = 0u64;
                            for k in 0..n {
                                key.clear();
                                ferrobase_workloads::ycsb_key_into(chooser.next_item(), &mut key);
                                let read = db.get_row(&key)?;
                                if read.cells != 9 {
                                    bad += 1;
                                }
                                bytes += read.value_bytes as u64;
                                if k % 1024 == 1023 {
                                    progress.done.fetch_add(1024, Ordering::Relaxed);
                                }
                            }
                            Ok((n, bad, bytes))
                        })
                    })
                    .collect();
                let mut sum = (0u64, 0u64, 0u64);
                for h in handles {
                    let (n, bad, bytes) = h
                        .join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("reader thread panicked")))?;
                    sum.0 += n;
                    sum.1 += bad;
                    sum.2 += bytes;
                }
                Ok(sum)
            })
        });
        result.map(|(n, bad, bytes)| (n, bad, bytes, took))
    }

    fn get_zipf(&self, engine: EngineId, gets: u64) -> Result<Measured> {
        let label = Workload::GetZipf.name();
        let rows = self.log9_rows();
        self.start_phase(engine, label);
        let db = self.open(engine, "log9")?;
        let zipf = Zipfian::ycsb(rows, self.args.seed);
        eprintln!(
            "[{}] {label}: {gets} gets, Zipfian 0.99 over {rows} log9 rows, 2 reader threads; warming up with {gets} gets",
            engine.name()
        );
        let warm_label = format!("[{}] {label} warm-up", engine.name());
        let (_, _, _, warm) =
            self.zipf_gets(&*db, &zipf, gets, self.args.seed ^ 0x5741_524D, &warm_label)?;
        eprintln!(
            "[{}] {label}: warm-up took {:.2} s",
            engine.name(),
            warm.as_secs_f64()
        );

        let timed_label = format!("[{}] {label}", engine.name());
        let (done, bad, bytes, took) =
            self.zipf_gets(&*db, &zipf, gets, self.args.seed, &timed_label)?;
        let secs = took.as_secs_f64();
        eprintln!(
            "[{}] {label}: read {:.1} MB of values",
            engine.name(),
            bytes as f64 / 1048576.0
        );
        if bad > 0 {
            let _ = db.close();
            bail!("{bad} of {done} gets did not return the 9 cells of a log9 row");
        }
        verify_rows(&*db, Shape::Log9, rows, self.args.seed)?;
        self.finish(engine, label, db, "log9", done, secs, false)
    }

    fn scan(&self, engine: EngineId) -> Result<Measured> {
        let label = Workload::Scan.name();
        let rows = self.log9_rows();
        self.start_phase(engine, label);
        let db = self.open(engine, "log9")?;
        eprintln!(
            "[{}] {label}: full scan of {rows} log9 rows (one untimed pass first)",
            engine.name()
        );
        let mut secs = 0.0;
        for pass in ["warm-up", "timed"] {
            let (count, took) =
                Progress::run(&format!("[{}] {label} {pass}", engine.name()), rows, |p| {
                    db.scan_all(&p.done)
                });
            let count = count?;
            secs = took.as_secs_f64();
            if count.rows != rows || count.cells != rows * 9 {
                let _ = db.close();
                bail!(
                    "scan found {} rows and {} cells; expected {rows} rows of 9 cells",
                    count.rows,
                    count.cells
                );
            }
            eprintln!("[{}] {label}: {pass} pass {secs:.2} s", engine.name());
        }
        self.finish(engine, label, db, "log9", rows, secs, false)
    }
}

/// Reads 1000 random rows and compares them with the generator.
fn verify_rows(db: &dyn KvEngine, shape: Shape, rows: u64, seed: u64) -> Result<()> {
    let mut pick = Uniform::new(rows, seed ^ 0x5645_5249_4659);
    for _ in 0..1000.min(rows) {
        let i = pick.next_item();
        let generated = shape.row(i);
        let mut want: Vec<(Vec<u8>, Vec<u8>)> = generated
            .cells()
            .map(|(q, v)| (q.to_vec(), v.to_vec()))
            .collect();
        let mut got = db.read_row(&generated.row)?;
        want.sort();
        got.sort();
        if got != want {
            bail!(
                "row {i} ({}) reads back {} cells that differ from the {} written",
                String::from_utf8_lossy(&generated.row),
                got.len(),
                want.len()
            );
        }
    }
    Ok(())
}

fn num(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "null".to_string(),
    }
}

fn json_line(workload: &str, rows: u64, ours: Option<Measured>, rocks: Option<Measured>) -> String {
    let ratio = match (ours, rocks) {
        (Some(o), Some(r)) if r.ops_s > 0.0 => Some(o.ops_s / r.ops_s),
        _ => None,
    };
    format!(
        "{{\"workload\":\"{workload}\",\"rows\":{rows},\"ours_ops_s\":{},\"rocksdb_ops_s\":{},\"ratio\":{},\
         \"ours_peak_rss_mb\":{},\"rocksdb_peak_rss_mb\":{},\"ours_disk_mb\":{},\"rocksdb_disk_mb\":{}}}",
        num(ours.map(|m| m.ops_s), 0),
        num(rocks.map(|m| m.ops_s), 0),
        num(ratio, 3),
        num(ours.and_then(|m| m.peak_rss_mb), 1),
        num(rocks.and_then(|m| m.peak_rss_mb), 1),
        num(ours.map(|m| m.disk_mb), 1),
        num(rocks.map(|m| m.disk_mb), 1),
    )
}

fn main() -> Result<()> {
    let args = Args::parse().normalized();
    let run = Run {
        config: Config::defaults(),
        args,
    };
    if run.args.child {
        let (Some(&e), Some(&w)) = (run.args.engines.first(), run.args.workloads.first()) else {
            bail!("--child needs one engine and one workload");
        };
        let m = run.run(e, w)?;
        println!(
            "PHASE {} {} {}",
            m.ops_s,
            m.peak_rss_mb.unwrap_or(-1.0),
            m.disk_mb
        );
        return Ok(());
    }
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    eprintln!(
        "ferrobase-compare: scale {}, {cpus} CPUs, dir {}, engines {:?}; write buffer / memstore flush size {} MiB, \
         background jobs {}, block cache {} MiB, compression NONE; settle {}, isolate {}",
        run.args.scale,
        run.args.dir.display(),
        run.args
            .engines
            .iter()
            .map(|e| e.name())
            .collect::<Vec<_>>(),
        run.config.memstore_flush_size >> 20,
        run.config.background_jobs,
        run.config.block_cache_bytes >> 20,
        run.args.settle(),
        run.args.isolate
    );
    for e in &run.args.engines {
        if !e.available() {
            eprintln!(
                "[{}] not built in (build with `--features ours`): its fields are null",
                e.name()
            );
        }
    }
    std::fs::create_dir_all(&run.args.dir)
        .with_context(|| format!("creating {}", run.args.dir.display()))?;

    let mut failures = 0;
    for &w in &run.args.workloads {
        let (mut ours, mut rocks) = (None, None);
        for &e in &run.args.engines {
            if !e.available() {
                continue;
            }
            match run.run_phase(e, w) {
                Ok(m) => match e {
                    EngineId::Ours => ours = Some(m),
                    EngineId::RocksDb => rocks = Some(m),
                },
                Err(err) => {
                    failures += 1;
                    eprintln!("[{}] {} FAILED: {err:#}", e.name(), w.name());
                }
            }
        }
        println!("{}", json_line(w.name(), run.rows(w), ours, rocks));
    }
    if run.args.clean {
        for e in &run.args.engines {
            let dir: &Path = &run.args.dir.join(e.name());
            if dir.exists() {
                std::fs::remove_dir_all(dir)
                    .with_context(|| format!("removing {}", dir.display()))?;
            }
        }
    }
    if failures > 0 {
        bail!("{failures} engine run(s) failed; see above");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_every_field_and_nulls() {
        let m = Measured {
            ops_s: 1000.4,
            peak_rss_mb: Some(12.34),
            disk_mb: 3.0,
        };
        let line = json_line("scan", 10, None, Some(m));
        assert_eq!(
            line,
            "{\"workload\":\"scan\",\"rows\":10,\"ours_ops_s\":null,\"rocksdb_ops_s\":1000,\"ratio\":null,\
             \"ours_peak_rss_mb\":null,\"rocksdb_peak_rss_mb\":12.3,\"ours_disk_mb\":null,\"rocksdb_disk_mb\":3.0}"
        );
        let both = json_line("scan", 10, Some(Measured { ops_s: 500.0, ..m }), Some(m));
        assert!(both.contains("\"ratio\":0.500"), "{both}");
    }
}
