//! `ferrobase demo`: the engine end to end on one data directory.
//!
//! Loads rows of a data shape (docs/workloads.md) into a one-region table
//! with several writer threads, reads a sample back with gets, scans
//! everything, flushes, major-compacts and prints what the engine counted.
//! Running it again on the same directory first reports the rows that
//! survived the restart.

use anyhow::{Context, bail};
use bytes::Bytes;
use ferrobase_bench::progress::Progress;
use ferrobase_storage::{Engine, Get, RegionInfo, Scan};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, TableDescriptor};
use ferrobase_workloads::Shape;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Arguments of `ferrobase demo`.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// Data directory (created if missing).
    #[arg(long, default_value = "./ferrobase-data")]
    data_dir: PathBuf,
    /// Rows to load.
    #[arg(long, default_value_t = 200_000)]
    rows: u64,
    /// Data shape (log9, gps60, vehicle15, kv, wide53, single53, ycsb).
    #[arg(long, default_value = "log9")]
    shape: String,
    /// Writer threads.
    #[arg(long, default_value_t = 2)]
    threads: u64,
    /// Durability of each write (skip, async, sync, fsync).
    #[arg(long, default_value = "async")]
    durability: String,
    /// Column family attributes, e.g. `COMPRESSION=LZ4`.
    #[arg(long = "family-attr", value_name = "NAME=VALUE")]
    family_attrs: Vec<String>,
    /// A TOML settings file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// `name=value` setting overrides.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

/// Runs the demo.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    let settings = crate::config::load(args.config.as_deref(), &args.set)?;
    let shape = Shape::parse(&args.shape, None).map_err(anyhow::Error::msg)?;
    let durability: Durability = args.durability.parse().map_err(anyhow::Error::msg)?;
    if args.threads == 0 {
        bail!("--threads must be at least 1");
    }
    let mut family = FamilyDescriptor::new("f")?;
    for attr in &args.family_attrs {
        let (k, v) = attr
            .split_once('=')
            .with_context(|| format!("--family-attr '{attr}' is not NAME=VALUE"))?;
        family.set(k, v)?;
    }
    let table = TableDescriptor::new("demo", vec![family])?;
    std::fs::create_dir_all(&args.data_dir)
        .with_context(|| format!("creating {}", args.data_dir.display()))?;
    let engine = Engine::open(&args.data_dir, settings).context("opening the engine")?;
    let region = engine.open_region(&table, RegionInfo::whole_table(1, "demo"))?;
    println!("data dir: {}", args.data_dir.display());
    let before = count_rows(&region)?;
    println!("rows present at open: {before}");

    let start = Instant::now();
    let done = Arc::new(AtomicU64::new(0));
    let per_thread = args.rows.div_ceil(args.threads);
    let mut progress = Progress::new("rows", args.rows, false);
    let result: anyhow::Result<()> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..args.threads)
            .map(|t| {
                let (region, done, shape) = (&region, &done, &shape);
                s.spawn(move || -> anyhow::Result<()> {
                    let lo = t * per_thread;
                    let hi = ((t + 1) * per_thread).min(args.rows);
                    for i in lo..hi {
                        let g = shape.row(i);
                        let mut m = RowMutation::new(Bytes::copy_from_slice(&g.row))
                            .with_durability(durability);
                        for (q, v) in &g {
                            m = m.put(Bytes::from_static(b"f"), q, v);
                        }
                        region.mutate(m)?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        while handles.iter().any(|h| !h.is_finished()) {
            progress.set(done.load(Ordering::Relaxed));
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("a writer thread panicked"))??;
        }
        Ok(())
    });
    progress.finish();
    result?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "loaded {} {} rows with {} threads ({}): {:.0} rows/s",
        args.rows,
        shape.name(),
        args.threads,
        durability,
        args.rows as f64 / secs
    );

    let start = Instant::now();
    let sample = args.rows.min(10_000);
    let mut found = 0;
    for i in 0..sample {
        let row = shape.row(i * (args.rows / sample.max(1)).max(1)).row;
        if !region.get(&Get::new(row))?.is_empty() {
            found += 1;
        }
    }
    println!(
        "get: {found}/{sample} sampled rows found, {:.0} gets/s",
        sample as f64 / start.elapsed().as_secs_f64()
    );
    if found != sample {
        bail!("{} loaded rows are missing", sample - found);
    }
    region.flush(true)?;
    let start = Instant::now();
    let rows = count_rows(&region)?;
    println!(
        "scan: {rows} rows, {:.0} rows/s",
        rows as f64 / start.elapsed().as_secs_f64()
    );
    region.compact(true)?;
    let status = region.status();
    println!(
        "after major compaction: {} store file(s), {:.1} MiB on disk",
        status.store_files,
        status.store_file_bytes as f64 / 1048576.0
    );
    let stats = engine.stats();
    println!(
        "engine: flushes={} compactions={} blocked_writes={} too_busy={} delayed_flushes={} cache hits={} misses={} wal appends={} group_commits={}",
        stats.flushes,
        stats.compactions,
        stats.stalls.blocked_writes,
        stats.stalls.too_busy,
        stats.stalls.delayed_flushes,
        stats.cache.hits,
        stats.cache.misses,
        stats.wal.appends,
        stats.wal.batches
    );
    for (family, files) in region.store_files() {
        for f in files {
            println!(
                "store file {family}: {}  (inspect: ferrobase storefile meta {})",
                f.display(),
                f.display()
            );
        }
    }
    engine.close()?;
    Ok(())
}

fn count_rows(region: &ferrobase_storage::Region) -> anyhow::Result<u64> {
    let mut scanner = region.scan(&Scan::default())?;
    let mut n = 0;
    while scanner.next_row()?.is_some() {
        n += 1;
    }
    Ok(n)
}
