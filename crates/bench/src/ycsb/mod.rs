//! YCSB's core workloads against ferrobase: `ycsb load` inserts
//! `recordcount` records, `ycsb run` runs `operationcount` operations of
//! the workload's mix, each with T client tasks, one operation outstanding
//! per task (YCSB's HBase binding without client-side buffering). Prints a
//! YCSB status line every 10 s on stderr and YCSB's summary on stdout.
//!
//! Against an embedded server (no `--server`), `run` first loads the
//! records itself (not measured): the embedded server lives only as long as
//! the command. This module never changes YCSB's semantics to go faster.

pub mod properties;
pub mod summary;
pub mod workload;

use crate::load::mutation;
use crate::target::{Target, with_target};
use crate::{BenchError, Result};
use bytes::Bytes;
use ferrobase_client::{Get, Scan, Table};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use ferrobase_workloads::GeneratedRow;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use summary::{JsonSummary, Measurements};
use workload::{Op, Workload};

/// Which YCSB phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Load,
    Run,
}

/// A YCSB command.
#[derive(Clone, Debug)]
pub struct YcsbOptions {
    pub phase: Phase,
    /// `a`..`f` or a property file.
    pub workload: String,
    /// `-p key=value` overrides.
    pub properties: Vec<String>,
    pub threads: Option<usize>,
    pub server: Option<String>,
    /// Client settings (TLS, say); the embedded server runs with them too.
    pub settings: Settings,
    pub status_interval: Duration,
    /// No status lines.
    pub quiet: bool,
}

/// What a YCSB command measured.
#[derive(Clone, Debug)]
pub struct YcsbOutcome {
    /// YCSB's summary text.
    pub summary: String,
    pub json: JsonSummary,
    /// Operations that returned ERROR.
    pub errors: u64,
}

struct Shared {
    w: Workload,
    table: Table,
    family: Bytes,
    m: Mutex<Measurements>,
    /// Next insert key number.
    next_insert: AtomicU64,
    /// Highest key number known inserted (YCSB's acknowledged counter).
    acked: AtomicU64,
    /// End of the load phase's key range.
    load_end: u64,
}

impl Shared {
    fn record(&self, op: &str, d: Duration, status: &str) {
        let mut m = self.m.lock().unwrap_or_else(|e| e.into_inner());
        m.record(op, d, status);
    }

    fn done(&self) {
        self.m.lock().unwrap_or_else(|e| e.into_inner()).done += 1;
    }

    fn record_mutation(&self, keynum: u64) -> RowMutation {
        let g = GeneratedRow::new(
            self.w.key(keynum),
            (0..self.w.field_count).map(|j| (self.w.field(j), self.w.value(keynum, j))),
        );
        mutation(&g, &self.family, Durability::UseDefault)
    }
}

fn status_of<T>(r: &std::result::Result<T, ferrobase_client::ClientError>) -> &'static str {
    if r.is_ok() { "OK" } else { "ERROR" }
}

async fn insert(s: &Shared, keynum: u64) -> &'static str {
    let m = s.record_mutation(keynum);
    let t0 = Instant::now();
    let r = s.table.put(m).await;
    let st = status_of(&r);
    s.record("INSERT", t0.elapsed(), st);
    st
}

async fn load_task(s: Arc<Shared>) {
    loop {
        let k = s.next_insert.fetch_add(1, Ordering::Relaxed);
        if k >= s.load_end {
            return;
        }
        insert(&s, k).await;
        s.done();
    }
}

async fn read(s: &Shared, keynum: u64, rng: &mut ChaCha8Rng) -> &'static str {
    let mut get = Get::new(s.w.key(keynum));
    if !s.w.read_all_fields {
        get = get.column(
            s.family.clone(),
            s.w.field(rng.random_range(0..s.w.field_count)),
        );
    }
    let t0 = Instant::now();
    let r = s.table.get(get).await;
    let st = match &r {
        Ok(row) if row.is_empty() => "NOT_FOUND",
        Ok(_) => "OK",
        Err(_) => "ERROR",
    };
    s.record("READ", t0.elapsed(), st);
    st
}

async fn update(s: &Shared, keynum: u64, rng: &mut ChaCha8Rng) -> &'static str {
    let mut m = RowMutation::new(s.w.key(keynum));
    if s.w.write_all_fields {
        for j in 0..s.w.field_count {
            m = m.put(s.family.clone(), s.w.field(j), s.w.update_value(rng));
        }
    } else {
        let j = rng.random_range(0..s.w.field_count);
        m = m.put(s.family.clone(), s.w.field(j), s.w.update_value(rng));
    }
    let t0 = Instant::now();
    let r = s.table.put(m).await;
    let st = status_of(&r);
    s.record("UPDATE", t0.elapsed(), st);
    st
}

async fn scan(s: &Shared, keynum: u64, len: u64) -> &'static str {
    let mut sc = Scan::new().start_row(s.w.key(keynum)).limit(len);
    sc = sc.caching(len.min(u64::from(u32::MAX)) as u32);
    if !s.w.read_all_fields {
        sc = sc.family(s.family.clone());
    }
    let t0 = Instant::now();
    let mut scanner = s.table.scan(sc);
    let st = loop {
        match scanner.next().await {
            Ok(Some(_)) => {}
            Ok(None) => break "OK",
            Err(_) => break "ERROR",
        }
    };
    s.record("SCAN", t0.elapsed(), st);
    st
}

async fn run_task(s: Arc<Shared>, ops: u64, seed: u64) -> Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut keys = s.w.key_chooser(seed).map_err(BenchError::Invalid)?;
    let mut scan_len = ferrobase_workloads::KeyGenerator::parse(
        &s.w.scan_length_distribution,
        s.w.max_scan_length - s.w.min_scan_length + 1,
        seed ^ 0x5ca1_ab1e,
    )
    .map_err(BenchError::Invalid)?;
    for _ in 0..ops {
        let acked = s.acked.load(Ordering::Relaxed);
        keys.set_newest(acked);
        // YCSB: draw again while the key is past the last inserted one.
        let mut keynum = keys.next_item();
        let mut tries = 0;
        while keynum > acked && tries < 100 {
            keynum = keys.next_item();
            tries += 1;
        }
        let keynum = keynum.min(acked);
        match s.w.choose(rng.random::<f64>()) {
            Op::Read => {
                read(&s, keynum, &mut rng).await;
            }
            Op::Update => {
                update(&s, keynum, &mut rng).await;
            }
            Op::Insert => {
                let k = s.next_insert.fetch_add(1, Ordering::Relaxed);
                if insert(&s, k).await == "OK" {
                    s.acked.fetch_max(k, Ordering::Relaxed);
                }
            }
            Op::Scan => {
                let len = s.w.min_scan_length + scan_len.next_item();
                scan(&s, keynum, len).await;
            }
            Op::ReadModifyWrite => {
                let t0 = Instant::now();
                let a = read(&s, keynum, &mut rng).await;
                let b = update(&s, keynum, &mut rng).await;
                let st = if a == "ERROR" || b == "ERROR" {
                    "ERROR"
                } else {
                    "OK"
                };
                s.record("READ-MODIFY-WRITE", t0.elapsed(), st);
            }
        }
        s.done();
    }
    Ok(())
}

async fn ensure_table(t: &Target, w: &Workload) -> Result<()> {
    let admin = t.connect(1)?.admin();
    if admin.exists(&w.table).await? {
        return Ok(());
    }
    let fam = FamilyDescriptor::new(&w.family)
        .map_err(|e| BenchError::Invalid(format!("property columnfamily: {e}")))?;
    let desc = TableDescriptor::new(&w.table, vec![fam])
        .map_err(|e| BenchError::Invalid(format!("property table: {e}")))?;
    admin.create_table(&desc, &[]).await?;
    Ok(())
}

/// Runs tasks until done, printing a status line every interval.
async fn drive(
    shared: &Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<Result<()>>>,
    opts: &YcsbOptions,
) -> Result<Duration> {
    let start = Instant::now();
    let mut last = Instant::now();
    let mut last_ops = 0u64;
    while !tasks.iter().all(|t| t.is_finished()) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if !opts.quiet && last.elapsed() >= opts.status_interval {
            let mut m = shared.m.lock().unwrap_or_else(|e| e.into_inner());
            let ops = m.operations();
            let line = summary::status_line(
                &mut m,
                start.elapsed(),
                ops - last_ops,
                last.elapsed(),
                SystemTime::now(),
            );
            drop(m);
            eprintln!("{line}");
            last = Instant::now();
            last_ops = ops;
        }
    }
    let elapsed = start.elapsed();
    for t in tasks {
        t.await
            .map_err(|e| BenchError::Server(format!("a YCSB client task died: {e}")))??;
    }
    Ok(elapsed)
}

async fn phase(
    t: &Target,
    w: &Workload,
    phase: Phase,
    threads: usize,
    opts: &YcsbOptions,
) -> Result<YcsbOutcome> {
    let conn = t.connect(threads)?;
    let insert_count = w.record_count.saturating_sub(w.insert_start);
    let shared = Arc::new(Shared {
        w: w.clone(),
        table: conn.table(&w.table),
        family: Bytes::from(w.family.clone().into_bytes()),
        m: Mutex::new(Measurements::default()),
        next_insert: AtomicU64::new(match phase {
            Phase::Load => w.insert_start,
            Phase::Run => w.record_count,
        }),
        acked: AtomicU64::new(w.record_count.saturating_sub(1)),
        load_end: w.insert_start + insert_count,
    });
    // The server's counters around the phase: why it got its number.
    let before = t.stalls().await;
    let mut tasks = Vec::new();
    for k in 0..threads as u64 {
        let s = shared.clone();
        tasks.push(match phase {
            Phase::Load => tokio::spawn(async move {
                load_task(s).await;
                Ok(())
            }),
            Phase::Run => {
                let per = w.operation_count / threads as u64
                    + u64::from(k < w.operation_count % threads as u64);
                tokio::spawn(run_task(s, per, 1_000 + k))
            }
        });
    }
    let elapsed = drive(&shared, tasks, opts).await?;
    let after = t.stalls().await;
    let m = shared.m.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut text = summary::summary(&m, elapsed);
    let mut json = JsonSummary::new(&m, elapsed);
    if let (Some(b), Some(a)) = (before, after) {
        let delta = a.since(&b);
        text += &summary::server_section(&delta);
        json.server = Some(delta);
    }
    Ok(YcsbOutcome {
        summary: text,
        json,
        errors: m.errors(),
    })
}

/// Runs a YCSB phase. See the module docs.
pub async fn run(opts: &YcsbOptions) -> Result<YcsbOutcome> {
    let mut props = properties::load_workload(&opts.workload).map_err(BenchError::Invalid)?;
    properties::apply_overrides(&mut props, &opts.properties).map_err(BenchError::Invalid)?;
    let w = Workload::from_properties(&props).map_err(BenchError::Invalid)?;
    let threads = opts.threads.or(w.thread_count).unwrap_or(1);
    if threads == 0 {
        return Err(BenchError::Invalid("--threads must be at least 1".into()));
    }
    with_target(opts.server.as_deref(), opts.settings.clone(), async |t| {
        ensure_table(t, &w).await?;
        if opts.phase == Phase::Run && t.is_embedded() && w.record_count > 0 {
            if !opts.quiet {
                eprintln!(
                    "embedded server: loading {} records first (not measured)",
                    w.record_count
                );
            }
            let quiet = YcsbOptions {
                quiet: true,
                ..opts.clone()
            };
            let pre = phase(t, &w, Phase::Load, threads, &quiet).await?;
            if pre.errors > 0 {
                return Err(BenchError::Server(format!(
                    "loading the records failed {} times",
                    pre.errors
                )));
            }
        }
        phase(t, &w, opts.phase, threads, opts).await
    })
    .await
}
