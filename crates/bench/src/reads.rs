//! Read load: T client tasks doing row gets or short scans of rows of a
//! [`RowSpec`] already loaded, with keys drawn from a YCSB distribution
//! (`uniform`, `zipfian[:θ]`, `scrambled[:θ]`, `latest`, `hotspot`).
//! Reports ops/s, rows read, latency per operation and errors. Never
//! writes. A ferrobase target is read through ferrobase's client; an HBase
//! target (`hbase://`) through `ferrobase-hbase-client` with the same
//! keys, the same `Get` of the whole row and the same scans (start row,
//! caching = limit = the scan's rows), one TCP connection per task.

use crate::latency::{Latency, LatencySummary};
use crate::progress::Progress;
use crate::rowspec::RowSpec;
use crate::target::Target;
use crate::{BenchError, Result};
use ferrobase_client::{Get, Scan, Table};
use ferrobase_workloads::KeyGenerator;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What to read.
#[derive(Clone, Debug)]
pub struct ReadLoad {
    pub table: String,
    pub rows: RowSpec,
    /// Rows `0..items` exist.
    pub items: u64,
    pub ops: u64,
    pub threads: usize,
    /// A [`KeyGenerator::parse`] spec.
    pub distribution: String,
    /// `Some(n)`: scans of `n` rows from the chosen key; `None`: gets.
    pub scan_rows: Option<u32>,
    pub seed: u64,
    pub quiet: bool,
}

/// The result of a read load.
#[derive(Clone, Debug, Serialize)]
pub struct ReadReport {
    pub kind: String,
    pub distribution: String,
    pub ops: u64,
    pub rows_read: u64,
    pub not_found: u64,
    pub elapsed_s: f64,
    pub ops_per_s: f64,
    pub rows_per_s: f64,
    pub latency: LatencySummary,
    pub errors: BTreeMap<String, u64>,
    pub error_count: u64,
    /// CPU and peak memory of the processes during the reads, when the
    /// caller measured them ([`crate::resources::Probe`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<crate::resources::Usage>,
}

/// Where a read task sends its calls.
enum Reader {
    Ferrobase(Table),
    HBase(ferrobase_hbase_client::Table),
}

impl Reader {
    /// One get (rows found: 0 or 1) or scan of `scan_rows` rows from `key`
    /// (rows returned).
    async fn read(&self, key: bytes::Bytes, scan_rows: Option<u32>) -> Result<u64, String> {
        match (self, scan_rows) {
            (Reader::Ferrobase(table), None) => table
                .get(Get::new(key))
                .await
                .map(|r| u64::from(!r.is_empty()))
                .map_err(|e| e.to_string()),
            (Reader::Ferrobase(table), Some(n)) => {
                let mut scanner =
                    table.scan(Scan::new().start_row(key).caching(n).limit(u64::from(n)));
                let mut got = 0u64;
                loop {
                    match scanner.next().await {
                        Ok(Some(_)) => got += 1,
                        Ok(None) => break Ok(got),
                        Err(e) => break Err(e.to_string()),
                    }
                }
            }
            (Reader::HBase(table), None) => {
                let get = ferrobase_hbase_client::Get::new(key);
                table
                    .get(&get)
                    .await
                    .map(|cells| u64::from(!cells.is_empty()))
                    .map_err(|e| e.kind())
            }
            (Reader::HBase(table), Some(n)) => {
                let scan = ferrobase_hbase_client::Scan {
                    start_row: key,
                    ..ferrobase_hbase_client::Scan::new()
                }
                .caching(n)
                .limit(u64::from(n));
                let mut scanner = table.scanner(scan);
                let mut got = 0u64;
                loop {
                    match scanner.next_row().await {
                        Ok(Some(_)) => got += 1,
                        Ok(None) => break Ok(got),
                        Err(e) => break Err(e.kind()),
                    }
                }
            }
        }
    }
}

struct Part {
    latency: Latency,
    rows: u64,
    not_found: u64,
    errors: BTreeMap<String, u64>,
    end: Instant,
}

async fn read_part(
    table: Reader,
    spec: Arc<ReadLoad>,
    ops: u64,
    seed: u64,
    done: Arc<AtomicU64>,
) -> Result<Part> {
    let mut keys =
        KeyGenerator::parse(&spec.distribution, spec.items, seed).map_err(BenchError::Invalid)?;
    let mut part = Part {
        latency: Latency::new(),
        rows: 0,
        not_found: 0,
        errors: BTreeMap::new(),
        end: Instant::now(),
    };
    let mut key_buf = Vec::new();
    for _ in 0..ops {
        spec.rows.shape.fill_key(keys.next_item(), &mut key_buf);
        let key = bytes::Bytes::copy_from_slice(&key_buf);
        let t0 = Instant::now();
        let outcome = table.read(key, spec.scan_rows).await;
        part.latency.record(t0.elapsed());
        match outcome {
            Ok(0) => part.not_found += 1,
            Ok(n) => part.rows += n,
            Err(e) => {
                *part.errors.entry(e).or_default() += 1;
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    part.end = Instant::now();
    Ok(part)
}

/// Runs a read load against `target`.
pub async fn run_reads(target: &Target, spec: &ReadLoad) -> Result<ReadReport> {
    if spec.threads == 0 || spec.items == 0 {
        return Err(BenchError::Invalid(
            "reads need at least one thread and one row".into(),
        ));
    }
    let mut readers = Vec::with_capacity(spec.threads);
    if target.is_hbase() {
        let conn = target.hbase_connect(spec.threads).await?;
        readers.extend((0..spec.threads).map(|_| Reader::HBase(conn.table(&spec.table))));
    } else {
        let conn = target.connect(spec.threads)?;
        readers.extend((0..spec.threads).map(|_| Reader::Ferrobase(conn.table(&spec.table))));
    }
    let shared = Arc::new(spec.clone());
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let per = spec.ops.div_ceil(spec.threads as u64);
    let mut tasks = Vec::new();
    for (t, reader) in (0..spec.threads as u64).zip(readers) {
        let ops = per.min(spec.ops.saturating_sub(t * per));
        tasks.push(tokio::spawn(read_part(
            reader,
            shared.clone(),
            ops,
            spec.seed.wrapping_add(t),
            done.clone(),
        )));
    }
    let mut progress = Progress::new("ops", spec.ops, spec.quiet);
    let joined = crate::progress::join_all(tasks, &done, &mut progress).await;
    let mut latency = Latency::new();
    let (mut rows, mut not_found, mut end) = (0, 0, start);
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for p in joined {
        let p = p.map_err(|e| BenchError::Server(format!("a read task died: {e}")))??;
        latency.merge(&p.latency);
        rows += p.rows;
        not_found += p.not_found;
        end = end.max(p.end);
        for (k, v) in p.errors {
            *errors.entry(k).or_default() += v;
        }
    }
    let elapsed = (end - start).as_secs_f64().max(1e-9);
    Ok(ReadReport {
        kind: match spec.scan_rows {
            None => "get".into(),
            Some(n) => format!("scan {n} rows"),
        },
        distribution: spec.distribution.clone(),
        ops: spec.ops,
        rows_read: rows,
        not_found,
        elapsed_s: elapsed,
        ops_per_s: spec.ops as f64 / elapsed,
        rows_per_s: rows as f64 / elapsed,
        latency: latency.summary(),
        error_count: errors.values().sum(),
        errors,
        resources: None,
    })
}
