//! The load tool (the seeds' `SendData`): rows of a [`RowSpec`] written by
//! T client threads, each with its own generator range (the seeds: one data
//! file per thread) and its own write buffer, flushed as one batch when it
//! holds `write_buffer` encoded bytes (as `BufferedMutator` does; here the
//! flush is timed).
//!
//! The report: rows/s, cells/s, MB/s of payload (row keys, qualifiers and
//! values), RPCs and bytes sent, latency per buffer flush, errors by kind,
//! and the server's stall counters before and after. This module never
//! creates a server; it drives the [`Target`] it is given: ferrobase
//! through its own client, or an HBase target through
//! `ferrobase-hbase-client` with the very same rows and batches (one
//! `Multi` per region server a flush touches, cells in a KeyValue cell
//! block).

use crate::latency::{Latency, LatencySummary};
use crate::progress::Progress;
use crate::rowspec::RowSpec;
use crate::target::{Stalls, Target};
use crate::{BenchError, Result};
use bytes::Bytes;
use ferrobase_client::{Admin, Table};
use ferrobase_types::{
    CellRun, CellType, Durability, FamilyDescriptor, LATEST_TIMESTAMP, RowMutation, TableDescriptor,
};
use ferrobase_workloads::GeneratedRow;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What to load.
#[derive(Clone, Debug)]
pub struct LoadSpec {
    pub rows: RowSpec,
    pub row_count: u64,
    /// First row number (rows `start..start+row_count`).
    pub start: u64,
    pub threads: usize,
    pub write_buffer: u64,
    pub durability: Durability,
    pub table: String,
    /// Regions to create the table with (split at row-key quantiles).
    pub presplit: u32,
    /// Family attributes (`BLOCKSIZE`, `COMPRESSION`, …).
    pub family_attrs: Vec<(String, String)>,
    /// Drop and re-create the table first (otherwise it must exist).
    pub create_table: bool,
    /// No progress output.
    pub quiet: bool,
}

impl LoadSpec {
    /// A spec with the seeds' usual defaults: 4 threads, 12 MiB buffer,
    /// SKIP_WAL, one region, table `bench_<shape>`.
    pub fn new(rows: RowSpec, row_count: u64) -> LoadSpec {
        LoadSpec {
            table: format!("bench_{}", rows.shape.name()),
            rows,
            row_count,
            start: 0,
            threads: 4,
            write_buffer: 12 << 20,
            durability: Durability::SkipWal,
            presplit: 1,
            family_attrs: Vec::new(),
            create_table: true,
            quiet: true,
        }
    }
}

/// The result of a load.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    pub shape: String,
    pub table: String,
    pub server: String,
    pub threads: usize,
    pub write_buffer_bytes: u64,
    pub durability: String,
    pub regions: u32,
    pub rows: u64,
    pub cells: u64,
    pub payload_bytes: u64,
    pub elapsed_s: f64,
    pub rows_per_s: f64,
    pub cells_per_s: f64,
    pub payload_mb_per_s: f64,
    /// `multi` calls sent (one per server a flush touches; retries not counted).
    pub rpcs: u64,
    /// Encoded mutation bytes sent.
    pub bytes_sent: u64,
    pub flush_latency: LatencySummary,
    /// Rows that failed, by error.
    pub errors: BTreeMap<String, u64>,
    pub error_count: u64,
    /// Server stall counters (embedded server only).
    pub stalls_before: Option<Stalls>,
    pub stalls_after: Option<Stalls>,
    /// CPU and peak memory of the processes during the load, when the
    /// caller measured them ([`crate::resources::Probe`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<crate::resources::Usage>,
}

/// Maps `skip|async|sync|fsync` (and HBase's names) to a durability.
pub fn parse_durability(text: &str) -> Result<Durability> {
    match text.trim().to_ascii_lowercase().as_str() {
        "skip" | "skip_wal" => Ok(Durability::SkipWal),
        "async" | "async_wal" => Ok(Durability::AsyncWal),
        "sync" | "sync_wal" => Ok(Durability::SyncWal),
        "fsync" | "fsync_wal" => Ok(Durability::FsyncWal),
        other => Err(BenchError::Invalid(format!(
            "unknown durability '{other}'; valid: skip, async, sync, fsync"
        ))),
    }
}

/// Drops `name` if it exists and creates it with one family `f` (with
/// `attrs`) and `regions` regions split at quantiles of `rows`' keys.
pub async fn create_table(
    admin: &Admin,
    name: &str,
    rows: &RowSpec,
    row_count: u64,
    regions: u32,
    attrs: &[(String, String)],
) -> Result<()> {
    drop_table(admin, name).await?;
    let desc = table_descriptor(name, rows, attrs)?;
    admin
        .create_table(&desc, &split_points(rows, row_count, regions))
        .await?;
    Ok(())
}

/// The load table: one family (the shape's) with `attrs`.
fn table_descriptor(
    name: &str,
    rows: &RowSpec,
    attrs: &[(String, String)],
) -> Result<TableDescriptor> {
    let family = std::str::from_utf8(rows.shape.family())
        .map_err(|e| BenchError::Invalid(format!("family name: {e}")))?;
    let mut fam =
        FamilyDescriptor::new(family).map_err(|e| BenchError::Invalid(format!("family: {e}")))?;
    for (k, v) in attrs {
        fam.set(k, v)
            .map_err(|e| BenchError::Invalid(format!("family attribute {k}={v}: {e}")))?;
    }
    TableDescriptor::new(name, vec![fam]).map_err(|e| BenchError::Invalid(format!("table: {e}")))
}

/// Disables and drops `name` if it exists.
pub async fn drop_table(admin: &Admin, name: &str) -> Result<()> {
    if admin.exists(name).await? {
        if admin.is_enabled(name).await? {
            admin.disable(name).await?;
        }
        admin.drop_table(name).await?;
    }
    Ok(())
}

/// `regions - 1` split points: quantiles of a sample of the row keys.
fn split_points(rows: &RowSpec, row_count: u64, regions: u32) -> Vec<Bytes> {
    if regions <= 1 {
        return Vec::new();
    }
    let samples = (regions as u64 * 64).min(row_count.max(1));
    let mut keys: Vec<Vec<u8>> = (0..samples)
        .map(|k| rows.shape.row(k * row_count.max(1) / samples).row)
        .collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<Bytes> = (1..regions as usize)
        .filter_map(|r| keys.get(r * keys.len() / regions as usize).cloned())
        .map(Bytes::from)
        .collect();
    out.dedup();
    out.retain(|k| !k.is_empty());
    out
}

struct ThreadResult {
    latency: Latency,
    errors: BTreeMap<String, u64>,
    rpcs: u64,
    bytes_sent: u64,
    cells: u64,
    payload: u64,
    end: Instant,
}

/// Builds the mutation of one generated row.
pub fn mutation(g: &GeneratedRow, family: &Bytes, durability: Durability) -> RowMutation {
    // The row's cells go into one run sized up front: one allocation per
    // row, whatever its width (53 cells in `wide53`). A bound, not the
    // exact size (which would take a pass over the cells): a cell's two
    // lengths, "latest" and its type take at most 8 bytes below 2 MiB.
    let mut cells = CellRun::with_capacity(g.cell_bytes() + 8 * g.len());
    for (q, v) in g {
        cells.push(q, LATEST_TIMESTAMP, CellType::Put, v);
    }
    let mut m = RowMutation::new(Bytes::copy_from_slice(&g.row)).with_durability(durability);
    m.push_family(family.clone(), cells);
    m
}

/// A region's start key and server, sorted by start key.
type RegionStart = (Bytes, String);

/// Servers a batch of rows goes to, given the table's regions sorted by
/// start key.
fn servers_hit(regions: &[RegionStart], batch: &[RowMutation]) -> u64 {
    let distinct: BTreeSet<&str> = regions.iter().map(|r| r.1.as_str()).collect();
    if distinct.len() <= 1 {
        return 1;
    }
    let mut hit = BTreeSet::new();
    for m in batch {
        let idx = regions
            .partition_point(|r| r.0.as_ref() <= m.row.as_ref())
            .saturating_sub(1);
        if let Some(r) = regions.get(idx) {
            hit.insert(r.1.as_str());
        }
    }
    hit.len().max(1) as u64
}

/// Where a load thread sends its batches.
enum Writer {
    Ferrobase(Table),
    HBase(ferrobase_hbase_client::Table),
}

impl Writer {
    /// Sends one batch; counts failures by kind into `errors`.
    async fn batch(&self, buf: &[RowMutation], errors: &mut BTreeMap<String, u64>) {
        match self {
            Writer::Ferrobase(table) => {
                for r in table.batch(buf).await {
                    if let Err(e) = r {
                        let kind = match e.code() {
                            Some(code) => format!("{code:?}"),
                            None => e.to_string(),
                        };
                        *errors.entry(kind).or_default() += 1;
                    }
                }
            }
            Writer::HBase(table) => {
                for r in table.batch(buf).await {
                    if let Err(e) = r {
                        *errors.entry(e.kind()).or_default() += 1;
                    }
                }
            }
        }
    }
}

async fn load_range(
    table: Writer,
    spec: Arc<LoadSpec>,
    regions: Arc<Vec<RegionStart>>,
    range: std::ops::Range<u64>,
    done: Arc<AtomicU64>,
) -> ThreadResult {
    // Static: cloning it for each cell touches no reference count.
    let family = Bytes::from_static(spec.rows.shape.family());
    let mut res = ThreadResult {
        latency: Latency::new(),
        errors: BTreeMap::new(),
        rpcs: 0,
        bytes_sent: 0,
        cells: 0,
        payload: 0,
        end: Instant::now(),
    };
    let mut g = GeneratedRow::default();
    let mut buf: Vec<RowMutation> = Vec::new();
    let mut buffered = 0u64;
    let last = range.end;
    for i in range {
        spec.rows.fill(i, &mut g);
        res.cells += g.len() as u64;
        res.payload += g.payload_bytes() as u64;
        let m = mutation(&g, &family, spec.durability);
        buffered += m.encoded_size() as u64;
        buf.push(m);
        if buffered >= spec.write_buffer || i + 1 == last {
            res.rpcs += servers_hit(&regions, &buf);
            res.bytes_sent += buffered;
            let t0 = Instant::now();
            table.batch(&buf, &mut res.errors).await;
            res.latency.record(t0.elapsed());
            done.fetch_add(buf.len() as u64, Ordering::Relaxed);
            buf.clear();
            buffered = 0;
        }
    }
    res.end = Instant::now();
    res
}

/// Creates the table on ferrobase (when asked) and returns a writer per
/// thread and the regions.
async fn setup_ferrobase(
    target: &Target,
    spec: &LoadSpec,
) -> Result<(Vec<Writer>, Vec<RegionStart>)> {
    let conn = target.connect(spec.threads)?;
    let admin = conn.admin();
    if spec.create_table {
        create_table(
            &admin,
            &spec.table,
            &spec.rows,
            spec.start + spec.row_count,
            spec.presplit,
            &spec.family_attrs,
        )
        .await?;
    }
    let mut regions: Vec<RegionStart> = admin
        .describe(&spec.table)
        .await?
        .regions
        .into_iter()
        .map(|r| (r.start_key, r.server))
        .collect();
    regions.sort();
    let writers = (0..spec.threads)
        .map(|_| Writer::Ferrobase(conn.table(&spec.table)))
        .collect();
    Ok((writers, regions))
}

/// The same on an HBase target, through the HBase RPC client: the table
/// dropped and created with the same family attributes and split points.
async fn setup_hbase(target: &Target, spec: &LoadSpec) -> Result<(Vec<Writer>, Vec<RegionStart>)> {
    let conn = target.hbase_connect(spec.threads).await?;
    if spec.create_table {
        let admin = conn.admin();
        admin.drop_table_if_exists(&spec.table).await?;
        let desc = table_descriptor(&spec.table, &spec.rows, &spec.family_attrs)?;
        let splits = split_points(&spec.rows, spec.start + spec.row_count, spec.presplit);
        admin.create_table(&desc, &splits).await?;
    }
    let regions = conn
        .region_locations(&spec.table)
        .await?
        .into_iter()
        .map(|r| (r.start_key, r.server))
        .collect();
    let writers = (0..spec.threads)
        .map(|_| Writer::HBase(conn.table(&spec.table)))
        .collect();
    Ok((writers, regions))
}

/// Drops a load's table on an HBase target (the write experiments drop
/// each point's table).
pub async fn drop_hbase_table(target: &Target, table: &str) -> Result<()> {
    let conn = target.hbase_connect(1).await?;
    conn.admin().drop_table_if_exists(table).await?;
    Ok(())
}

/// Runs a load against `target`. See the module docs.
pub async fn run_load(target: &Target, spec: &LoadSpec) -> Result<LoadReport> {
    if spec.threads == 0 {
        return Err(BenchError::Invalid("--threads must be at least 1".into()));
    }
    let (writers, regions) = if target.is_hbase() {
        setup_hbase(target, spec).await?
    } else {
        setup_ferrobase(target, spec).await?
    };
    let region_count = regions.len() as u32;
    let regions = Arc::new(regions);
    let stalls_before = target.stalls().await;
    let spec_arc = Arc::new(spec.clone());
    let done = Arc::new(AtomicU64::new(0));
    let per_thread = spec.row_count.div_ceil(spec.threads as u64);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for (t, writer) in (0..spec.threads as u64).zip(writers) {
        let lo = spec.start + (t * per_thread).min(spec.row_count);
        let hi = spec.start + ((t + 1) * per_thread).min(spec.row_count);
        tasks.push(tokio::spawn(load_range(
            writer,
            spec_arc.clone(),
            regions.clone(),
            lo..hi,
            done.clone(),
        )));
    }
    let mut progress = Progress::new("rows", spec.row_count, spec.quiet);
    let joined = crate::progress::join_all(tasks, &done, &mut progress).await;
    let mut end = start;
    let mut latency = Latency::new();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let (mut rpcs, mut bytes_sent, mut cells, mut payload) = (0, 0, 0, 0);
    for r in joined {
        let r = r.map_err(|e| BenchError::Server(format!("a load thread died: {e}")))?;
        end = end.max(r.end);
        latency.merge(&r.latency);
        for (k, v) in r.errors {
            *errors.entry(k).or_default() += v;
        }
        rpcs += r.rpcs;
        bytes_sent += r.bytes_sent;
        cells += r.cells;
        payload += r.payload;
    }
    let elapsed = (end - start).as_secs_f64().max(1e-9);
    let stalls_after = target.stalls().await;
    let rows = spec.row_count;
    Ok(LoadReport {
        shape: spec.rows.describe(),
        table: spec.table.clone(),
        server: target.describe(),
        threads: spec.threads,
        write_buffer_bytes: spec.write_buffer,
        durability: spec.durability.name().to_string(),
        regions: region_count,
        rows,
        cells,
        payload_bytes: payload,
        elapsed_s: elapsed,
        rows_per_s: rows as f64 / elapsed,
        cells_per_s: cells as f64 / elapsed,
        payload_mb_per_s: payload as f64 / elapsed / 1e6,
        rpcs,
        bytes_sent,
        flush_latency: latency.summary(),
        error_count: errors.values().sum(),
        errors,
        stalls_before,
        stalls_after,
        resources: None,
    })
}

impl LoadReport {
    /// The report for people.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let mib = self.write_buffer_bytes as f64 / (1 << 20) as f64;
        s += &format!(
            "bench load: {} rows of {} into '{}' ({} region(s)) on {}\n",
            self.rows, self.shape, self.table, self.regions, self.server
        );
        s += &format!(
            "  {} threads, write buffer {mib:.1} MiB, {}\n",
            self.threads, self.durability
        );
        s += &format!("  elapsed      {:.2} s\n", self.elapsed_s);
        s += &format!("  rows/s       {:.0}\n", self.rows_per_s);
        s += &format!("  cells/s      {:.0}\n", self.cells_per_s);
        s += &format!(
            "  MB/s         {:.2} (payload: row keys, qualifiers, values; {} bytes)\n",
            self.payload_mb_per_s, self.payload_bytes
        );
        s += &format!(
            "  RPCs         {} ({:.1} rows each), {} bytes sent\n",
            self.rpcs,
            self.rows as f64 / self.rpcs.max(1) as f64,
            self.bytes_sent
        );
        s += &format!("  flush        {}\n", self.flush_latency.line());
        match (&self.stalls_before, &self.stalls_after) {
            (Some(b), Some(a)) => {
                s += &format!("  server       this run: {}\n", a.since(b).line());
            }
            _ => s += "  server       no server counters (an HBase target reports none)\n",
        }
        s += &format!("  errors       {}", self.error_count);
        for (k, v) in &self.errors {
            s += &format!("\n    {k}: {v}");
        }
        s += "\n";
        s
    }
}
