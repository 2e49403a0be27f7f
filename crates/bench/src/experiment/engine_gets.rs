//! `random-read`'s engine-alone points: the same gets straight into a
//! region of an in-process storage engine, without RPC or a client, once
//! with the block cache and once with the row cache. Over RPC a get's cost
//! is mostly the call itself, so what a cache saves shows here first.
//!
//! Owns only its temporary engine (a directory of its own, deleted after);
//! never touches the server the other points run against.

use crate::latency::{Latency, LatencySummary};
use crate::rowspec::RowSpec;
use crate::{BenchError, Result};
use bytes::Bytes;
use ferrobase_storage::{Engine, Get, Region, RegionInfo, StorageError};
use ferrobase_types::{Durability, FamilyDescriptor, RowMutation, Settings, TableDescriptor};
use ferrobase_workloads::{GeneratedRow, KeyGenerator};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Threads issuing gets: one per core of the machines the seeds compare.
pub const THREADS: u64 = 2;

/// One timed pass.
#[derive(Clone, Debug, serde::Serialize)]
pub struct EnginePoint {
    /// `zipfian 0.8, row cache` and the like.
    pub label: String,
    pub gets: u64,
    pub gets_per_s: f64,
    pub latency: LatencySummary,
    /// Row-cache hits / lookups during the timed pass (0 for the block
    /// cache's table).
    pub row_cache_hit_ratio: f64,
}

fn storage_err(what: &str) -> impl FnOnce(StorageError) -> BenchError + '_ {
    move |e| BenchError::Server(format!("engine alone, {what}: {e}"))
}

/// Loads `n` rows of `rows` into two tables of a fresh engine (block cache;
/// row cache, `row_cache_bytes`), flushes and compacts them, then for each
/// `(label, distribution)` runs `ops` untimed gets (filling the caches)
/// and `ops` timed ones on each table.
pub fn engine_gets(
    rows: RowSpec,
    n: u64,
    ops: u64,
    row_cache_bytes: u64,
    dists: &[(&str, &str)],
) -> Result<Vec<EnginePoint>> {
    let dir = tempfile::tempdir().map_err(BenchError::io("creating the engine's directory"))?;
    let settings = Settings {
        row_cache_size: row_cache_bytes as f64,
        ..Settings::default()
    };
    let engine = Engine::open(dir.path(), settings).map_err(storage_err("opening"))?;
    let mut out = Vec::new();
    let result = (|| {
        for (id, (cache, attr)) in [("block cache", "BLOCKCACHE"), ("row cache", "ROW_CACHE")]
            .into_iter()
            .enumerate()
        {
            let region = load(&engine, id as u64 + 1, attr, rows, n)?;
            for (label, dist) in dists {
                run(&region, rows, n, ops, dist, 0x5741_524D)?;
                let before = hits_and_lookups(&engine);
                let (latency, secs) = run(&region, rows, n, ops, dist, 42)?;
                let after = hits_and_lookups(&engine);
                let lookups = after.1.saturating_sub(before.1);
                out.push(EnginePoint {
                    label: format!("{label}, {cache}"),
                    gets: ops,
                    gets_per_s: ops as f64 / secs,
                    latency,
                    row_cache_hit_ratio: if lookups == 0 {
                        0.0
                    } else {
                        after.0.saturating_sub(before.0) as f64 / lookups as f64
                    },
                });
            }
        }
        Ok(())
    })();
    let closed = engine.close().map_err(storage_err("closing"));
    result.and(closed).map(|()| out)
}

fn hits_and_lookups(engine: &Engine) -> (u64, u64) {
    engine.row_cache().map_or((0, 0), |c| {
        let s = c.stats();
        (s.hits, s.hits + s.misses + s.bypasses)
    })
}

/// Table `engine_<id>` with family `f` (`attr => true`), loaded with rows
/// `0..n`, flushed and major-compacted: gets read one store file.
fn load(engine: &Engine, id: u64, attr: &str, rows: RowSpec, n: u64) -> Result<Arc<Region>> {
    let mut family = FamilyDescriptor::new("f").map_err(|e| BenchError::Invalid(e.to_string()))?;
    family
        .set(attr, "true")
        .map_err(|e| BenchError::Invalid(e.to_string()))?;
    let name = format!("engine_{id}");
    let table = TableDescriptor::new(&name, vec![family])
        .map_err(|e| BenchError::Invalid(e.to_string()))?;
    let region = engine
        .open_region(&table, RegionInfo::whole_table(id, &name))
        .map_err(storage_err("opening a region"))?;
    let f = Bytes::from_static(b"f");
    let mut row = GeneratedRow::default();
    let mut batch = Vec::with_capacity(256);
    for i in 0..n {
        rows.fill(i, &mut row);
        let mut m =
            RowMutation::new(Bytes::copy_from_slice(&row.row)).with_durability(Durability::SkipWal);
        for (q, v) in &row {
            m = m.put(
                f.clone(),
                Bytes::copy_from_slice(q),
                Bytes::copy_from_slice(v),
            );
        }
        batch.push(m);
        if batch.len() == batch.capacity() || i + 1 == n {
            region
                .mutate_owned(std::mem::take(&mut batch))
                .map_err(storage_err("loading"))?;
            batch.reserve(256);
        }
    }
    region.flush(true).map_err(storage_err("flushing"))?;
    region.compact(true).map_err(storage_err("compacting"))?;
    engine.wait_idle(Duration::from_secs(120));
    Ok(region)
}

/// `ops` gets over [`THREADS`] threads, keys from `dist` over `0..n`;
/// every get must return a whole row. Returns the latencies and seconds.
fn run(
    region: &Arc<Region>,
    rows: RowSpec,
    n: u64,
    ops: u64,
    dist: &str,
    seed: u64,
) -> Result<(LatencySummary, f64)> {
    let per = ops.div_ceil(THREADS);
    let want = rows.cells_per_row();
    let start = Instant::now();
    let parts: Vec<Result<Latency>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let region = region.clone();
                s.spawn(move || -> Result<Latency> {
                    let mut keys = KeyGenerator::parse(dist, n, seed.wrapping_add(t))
                        .map_err(BenchError::Invalid)?;
                    let mut latency = Latency::new();
                    let mut key = Vec::new();
                    for _ in 0..per.min(ops.saturating_sub(t * per)) {
                        rows.shape.fill_key(keys.next_item(), &mut key);
                        let get = Get::new(Bytes::copy_from_slice(&key));
                        let t0 = Instant::now();
                        let cells = region.get(&get).map_err(storage_err("a get"))?;
                        latency.record(t0.elapsed());
                        if cells.len() != want {
                            return Err(BenchError::Server(format!(
                                "engine alone: a get returned {} cells, not {want}",
                                cells.len()
                            )));
                        }
                    }
                    Ok(latency)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(BenchError::Server("a get thread panicked".into())))
            })
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let mut all = Latency::new();
    for p in parts {
        all.merge(&p?);
    }
    Ok((all.summary(), secs))
}
