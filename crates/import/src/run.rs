//! An import from start to end: check the table, cut the files into
//! splits, run one reader thread per `--threads` over them (each with its
//! own sink), show progress (bytes, rows/s, ETA), write the rejects file,
//! hand bulk files to their regions, report.
//!
//! A bad line never stops an import unless it was told to stop
//! (`--fail-on-bad-lines`); then the readers stop at their next line, and
//! nothing is bulk loaded (rows already sent through the write path
//! stay, as with HBase's ImportTsv).

use crate::ImportError;
use crate::bulk_sink::BulkSink;
use crate::columns::ColumnSpec;
use crate::complete;
use crate::line::LineParser;
use crate::options::ImportOptions;
use crate::rejects::{self, RejectsPart, SplitDone};
pub use crate::report::ImportReport;
use crate::sink::{DryRunSink, Sink, SinkOutcome, WritePathSink};
use crate::splits::{self, Split, SplitReader};
use ferrobase_bench::progress::Progress;
use ferrobase_bench::target::Target;
use ferrobase_client::{RegionLocation, StagingDir, Table};
use ferrobase_storage::fs::{LocalFs, Storage};
use ferrobase_types::{FamilyDescriptor, TableDescriptor};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What every reader shares.
struct Ctx {
    queue: Mutex<VecDeque<(usize, Split)>>,
    spec: Arc<ColumnSpec>,
    separator: u8,
    timestamp: u64,
    max_cell: usize,
    rejects: PathBuf,
    skip_bad_lines: bool,
    bytes: AtomicU64,
    rows: AtomicU64,
    bad: AtomicU64,
    stop: AtomicBool,
    /// Where the first bad line was, when bad lines stop the import.
    first_bad: Mutex<Option<(String, String)>>,
}

/// What one reader did.
#[derive(Default)]
struct ReaderResult {
    splits: Vec<SplitDone>,
    lines: u64,
    sink: SinkOutcome,
}

/// Runs an import against `target`. See the module docs.
pub async fn run_import(
    target: &Target,
    opts: &ImportOptions,
) -> Result<ImportReport, ImportError> {
    if opts.files.is_empty() {
        return Err(ImportError::Invalid("no input file given".into()));
    }
    if opts.threads == 0 {
        return Err(ImportError::Invalid("--threads must be at least 1".into()));
    }
    let conn = target
        .connect(opts.threads)
        .map_err(|e| ImportError::Server(e.to_string()))?;
    let admin = conn.admin();
    let spec = Arc::new(opts.columns.clone());
    if !admin.exists(&opts.table).await? {
        if !opts.create_table {
            return Err(ImportError::Invalid(format!(
                "table '{}' does not exist (it is created when -Dcreate.table=no is not given)",
                opts.table
            )));
        }
        let families = spec
            .families
            .iter()
            .map(|f| FamilyDescriptor::new(f))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ImportError::Columns(e.to_string()))?;
        let desc = TableDescriptor::new(&opts.table, families)
            .map_err(|e| ImportError::Invalid(e.to_string()))?;
        admin.create_table(&desc, &[]).await?;
    }
    let description = admin.describe(&opts.table).await?;
    let descriptor = description.descriptor;
    let mut families = Vec::new();
    for f in &spec.families {
        match descriptor.family(f.as_bytes()) {
            Some(d) => families.push(d.clone()),
            None => {
                return Err(ImportError::Columns(format!(
                    "family '{f}' is not in table '{}' (its families: {})",
                    opts.table,
                    descriptor
                        .families
                        .iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    let table = conn.table(&opts.table);
    let regions = table.region_locations(true).await?;
    let splits = splits::plan(&opts.files, opts.split_size)?;
    let total = splits::total_bytes(&opts.files);
    let ctx = Arc::new(Ctx {
        queue: Mutex::new(splits.iter().cloned().enumerate().collect()),
        spec: spec.clone(),
        separator: opts.separator,
        timestamp: opts.timestamp,
        max_cell: opts.settings.keyvalue_max_size,
        rejects: opts.rejects.clone(),
        skip_bad_lines: opts.skip_bad_lines,
        bytes: AtomicU64::new(0),
        rows: AtomicU64::new(0),
        bad: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        first_bad: Mutex::new(None),
    });
    let staging = if opts.bulk && !opts.dry_run {
        let s = table.prepare_bulk_load().await?;
        let fs = staging_fs(&s, opts.root.as_deref());
        match fs {
            Ok(fs) => Some((s, fs)),
            Err(e) => {
                complete::cleanup(&table, &s).await;
                return Err(e);
            }
        }
    } else {
        None
    };
    let started = Instant::now();
    let rt = tokio::runtime::Handle::current();
    let mut tasks = Vec::new();
    for worker in 0..opts.threads.min(splits.len()).max(1) {
        let sink: Box<dyn Sink> = match (&staging, opts.dry_run) {
            (_, true) => Box::new(DryRunSink {
                cells_per_row: spec
                    .columns
                    .iter()
                    .filter(|c| matches!(c, crate::columns::Column::Cell { .. }))
                    .count() as u64,
                ..DryRunSink::default()
            }),
            (Some((s, fs)), false) => Box::new(BulkSink::new(
                fs.clone(),
                PathBuf::from(&s.path),
                regions.clone(),
                spec.clone(),
                families.clone(),
                opts.separator,
                opts.skip_empty_columns,
                (opts.bulk_buffer / opts.threads as u64) as usize,
                worker,
            )),
            (None, false) => Box::new(WritePathSink::new(
                table.clone(),
                rt.clone(),
                spec.clone(),
                opts.durability,
                opts.skip_empty_columns,
                opts.write_buffer,
            )),
        };
        let ctx = ctx.clone();
        tasks.push(tokio::task::spawn_blocking(move || read_splits(&ctx, sink)));
    }
    let mut progress = Progress::bytes(total, "rows", opts.quiet);
    let results = join_with_progress(tasks, &ctx, &mut progress).await;
    let mut outcome = ReaderResult::default();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(Ok(mut r)) => {
                outcome.splits.append(&mut r.splits);
                outcome.lines += r.lines;
                outcome.sink.rows += r.sink.rows;
                outcome.sink.cells += r.sink.cells;
                outcome.sink.staged.append(&mut r.sink.staged);
                for (k, v) in r.sink.failed {
                    *outcome.sink.failed.entry(k).or_default() += v;
                }
            }
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error
                    .get_or_insert(ImportError::Server(format!("a reader thread died: {e}")));
            }
        }
    }
    let rejected = if first_error.is_none() {
        rejects::merge(&opts.rejects, &mut outcome.splits)
    } else {
        rejects::discard(&outcome.splits);
        Ok(0)
    };
    let stopped = ctx.first_bad.lock().ok().and_then(|mut g| g.take());
    let failure = match (first_error, rejected, stopped) {
        (Some(e), _, _) => Some(e),
        (None, Err(e), _) => Some(e),
        (None, Ok(_), Some((at, why))) => Some(ImportError::BadLine {
            at,
            why,
            rejects: opts.rejects.display().to_string(),
        }),
        (None, Ok(_), None) => None,
    };
    let mut bulk = None;
    if let Some((s, fs)) = &staging {
        let loaded = match failure {
            Some(_) => None,
            None => Some(
                complete::complete(
                    &table,
                    fs,
                    &descriptor,
                    &regions,
                    outcome.sink.staged.clone(),
                )
                .await,
            ),
        };
        complete::cleanup(&table, s).await;
        if let Some(l) = loaded {
            bulk = Some(l?);
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let elapsed = started.elapsed().as_secs_f64().max(1e-9);
    let bytes = ctx.bytes.load(Ordering::Relaxed);
    let failed_count = outcome.sink.failed.values().sum();
    Ok(ImportReport {
        table: opts.table.clone(),
        server: target.describe(),
        mode: if opts.dry_run {
            "dry run"
        } else if opts.bulk {
            "bulk"
        } else {
            "write path"
        }
        .to_string(),
        files: opts.files.len(),
        splits: splits.len(),
        threads: opts.threads,
        bytes,
        lines: outcome.lines,
        rows: outcome.sink.rows,
        cells: outcome.sink.cells,
        bad_lines: ctx.bad.load(Ordering::Relaxed),
        rejects: opts.rejects.display().to_string(),
        failed_count,
        failed_rows: outcome.sink.failed,
        bulk,
        elapsed_s: elapsed,
        rows_per_s: outcome.sink.rows as f64 / elapsed,
        mb_per_s: bytes as f64 / elapsed / 1e6,
    })
}

/// The storage the staging directory is on, seen from here: the root
/// `--root` names, else the server's own when it is a local directory
/// (the importer runs where the server's files are), else none.
fn staging_fs(staging: &StagingDir, root: Option<&str>) -> Result<Arc<dyn Storage>, ImportError> {
    match root {
        Some(url) => Ok(ferrobase_storage::fs::from_url(url)?),
        None if Path::new(&staging.path).is_absolute() => Ok(Arc::new(LocalFs::as_given())),
        // A local root: the same directory, from this machine.
        None => match staging.root.strip_prefix("file://") {
            Some(dir) if !dir.starts_with(" (") => Ok(Arc::new(LocalFs::new(dir))),
            _ => Err(ImportError::Invalid(format!(
                "--bulk against this cluster needs --root: its staging directory '{}' is on the storage root {}",
                staging.path, staging.root
            ))),
        },
    }
}

/// Awaits the readers, updating the progress every 100 ms.
async fn join_with_progress<T>(
    tasks: Vec<tokio::task::JoinHandle<T>>,
    ctx: &Ctx,
    progress: &mut Progress,
) -> Vec<Result<T, tokio::task::JoinError>> {
    ferrobase_bench::progress::join_all_with(tasks, progress, |p| {
        p.set_counting(
            ctx.bytes.load(Ordering::Relaxed),
            ctx.rows.load(Ordering::Relaxed),
        )
    })
    .await
}

/// One reader thread: takes splits until none is left (or bad lines stop
/// the import), parses their lines into `sink`.
fn read_splits(ctx: &Ctx, mut sink: Box<dyn Sink>) -> Result<ReaderResult, ImportError> {
    let mut out = ReaderResult::default();
    let mut parser = LineParser::new(ctx.spec.clone(), ctx.separator, ctx.timestamp, ctx.max_cell);
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            break;
        }
        let next = ctx.queue.lock().ok().and_then(|mut q| q.pop_front());
        let Some((n, split)) = next else { break };
        let mut reader = SplitReader::open(&split)?;
        let mut part = RejectsPart::new(&ctx.rejects, n);
        let mut lines = 0u64;
        loop {
            if ctx.stop.load(Ordering::Relaxed) {
                break;
            }
            let at = reader.position();
            let Some((line, len)) = reader.next_line()? else {
                break;
            };
            lines += 1;
            ctx.bytes.fetch_add(len, Ordering::Relaxed);
            match parser.parse(line) {
                Ok(parsed) => {
                    sink.add(&parsed)?;
                    ctx.rows.fetch_add(1, Ordering::Relaxed);
                }
                Err(why) => {
                    ctx.bad.fetch_add(1, Ordering::Relaxed);
                    part.add(lines, &why, line)?;
                    if !ctx.skip_bad_lines {
                        let place = if split.index == 0 {
                            format!("{}:{lines}", split.path.display())
                        } else {
                            format!("at byte {at} of {}", split.path.display())
                        };
                        if let Ok(mut g) = ctx.first_bad.lock() {
                            g.get_or_insert((place, why.to_string()));
                        }
                        ctx.stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
        out.lines += lines;
        out.splits.push(SplitDone {
            split,
            lines,
            part: part.finish()?,
        });
    }
    out.sink = sink.finish()?;
    Ok(out)
}

/// The regions of a table sorted by start key (for tests and tools).
pub async fn regions_of(table: &Table) -> Result<Arc<Vec<RegionLocation>>, ImportError> {
    Ok(table.region_locations(true).await?)
}
