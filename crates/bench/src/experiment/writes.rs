//! The write experiments (docs/experiments.md): tests 1–3 and 5–7 of the
//! HBase 0.94 write-tuning study (WAL, handlers, write buffer × threads,
//! qualifier length, value size, column count), the HBase 0.94 write-stall
//! study (flush and compaction pools), the one-column against 53-column
//! study and the Hypertable against HBase 0.90 study's random writes.
//! Each point is one [`run_load`]; the table is dropped afterwards.
//!
//! The seeds loaded billions of rows with 10–12 MB client buffers; at our
//! row counts such a buffer would hold the whole run, so where a seed's
//! buffer is larger than a few MiB, the sweep notes the size it used.

use super::{Comparison, Ctx, Report, int};
use crate::chart::Series;
use crate::load::{LoadReport, LoadSpec, drop_hbase_table, drop_table, run_load};
use crate::peer::HBasePeer;
use crate::rowspec::RowSpec;
use crate::target::{Target, with_target_url};
use crate::{BenchError, Result};
use ferrobase_types::{Durability, Settings};
use ferrobase_workloads::Shape;

const MIB: u64 = 1 << 20;

fn columns() -> Vec<String> {
    [
        "point",
        "rows",
        "rows/s",
        "cells/s",
        "MB/s",
        "RPCs",
        "p99 ms",
        "p99.9 ms",
        "stalls",
        "errors",
        "CPU s",
        "peak RSS MB",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Blocked writes + delayed flushes + too-busy refusals during a load, or
/// `n/a` when the server did not report its counters.
pub(super) fn stalls(r: &LoadReport) -> String {
    match (r.stalls_before, r.stalls_after) {
        (Some(b), Some(a)) => {
            let d = a.since(&b);
            (d.blocked_writes + d.delayed_flushes + d.too_busy).to_string()
        }
        _ => "n/a".into(),
    }
}

fn row(label: &str, r: &LoadReport) -> Vec<String> {
    let stalls = stalls(r);
    vec![
        label.to_string(),
        int(r.rows as f64),
        int(r.rows_per_s),
        int(r.cells_per_s),
        format!("{:.1}", r.payload_mb_per_s),
        int(r.rpcs as f64),
        format!("{:.1}", r.flush_latency.p99_us as f64 / 1000.0),
        format!("{:.1}", r.flush_latency.p999_us as f64 / 1000.0),
        stalls,
        r.error_count.to_string(),
    ]
    .into_iter()
    .chain(r.resources.clone().unwrap_or_default().cells())
    .collect()
}

/// One load (its processes measured, [`Ctx::probe`]) and a dropped table.
async fn point(ctx: &Ctx, t: &Target, spec: &LoadSpec) -> Result<LoadReport> {
    let probe = ctx.probe();
    let mut r = run_load(t, spec).await?;
    r.resources = Some(probe.finish());
    // Let this point's flushes finish, so they do not race the drop. Its
    // compactions need no waiting for: dropping the table closes its
    // regions, which stops them (the next point starts on an idle server
    // either way). They are paced at 50–100 MiB/s of keys and values
    // (`compaction::throttle`), so after a `wide53` load (about 5 KB of
    // them a row) waiting took a minute, measured nothing, and kept
    // `single-vs-multi-column` from running its shapes more than twice
    // within its two minutes.
    t.wait_flushed(std::time::Duration::from_secs(120)).await;
    if t.is_hbase() {
        drop_hbase_table(t, &spec.table).await?;
    } else {
        let conn = t.connect(1)?;
        drop_table(&conn.admin(), &spec.table).await?;
    }
    Ok(r)
}

/// One point on a server of its own, with the point's server-wide
/// settings: a fresh embedded ferrobase with `settings` (or the `--server`
/// ferrobase as it runs), or, for the HBase peer, a fresh Apache HBase
/// started with `hbase_set` (HBase's names) for this point alone and
/// stopped after it.
async fn fresh_server_point(
    ctx: &Ctx,
    settings: Settings,
    hbase_set: &[String],
    spec: &LoadSpec,
) -> Result<LoadReport> {
    if ctx.hbase.is_none() {
        return with_target_url(&ctx.target(), settings, async |t| point(ctx, t, spec).await).await;
    }
    let Some(heap) = &ctx.peer_heap else {
        return Err(BenchError::Invalid(
            "a point with its own HBase settings needs an HBase this command starts (not --peer-addr)"
                .into(),
        ));
    };
    let peer = HBasePeer::start(heap, hbase_set).await?;
    let here = Ctx {
        hbase: Some(peer.addr.clone()),
        peer_pid: peer.pid(),
        ..ctx.clone()
    };
    let r = with_target_url(&here.target(), settings, async |t| {
        point(&here, t, spec).await
    })
    .await;
    // Stopping waits for the JVM to exit: off the async threads.
    let _ = tokio::task::spawn_blocking(move || drop(peer)).await;
    r
}

/// Settings of the embedded server for write sweeps: the seeds' 120 handlers.
fn server_settings() -> Settings {
    Settings {
        handler_count: 120,
        ..Settings::default()
    }
}

fn spec(rows: RowSpec, n: u64, threads: usize, buffer: u64, durability: Durability) -> LoadSpec {
    LoadSpec {
        threads,
        write_buffer: buffer,
        durability,
        ..LoadSpec::new(rows, n)
    }
}

/// Test 1 of the HBase 0.94 write-tuning study: durability SKIP/ASYNC/SYNC/FSYNC
/// at 4 and 16 threads.
pub async fn wal(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "wal",
        "write-tuning study §1.1",
        "WAL durability vs write throughput",
        "durability",
        "rows/s",
    );
    rep.columns = columns();
    let n = ctx.n(400_000);
    let rows = RowSpec::plain(Shape::Vehicle15);
    with_target_url(&ctx.target(), server_settings(), async |t| {
        for threads in [4usize, 16] {
            let mut s = Series::new(format!("{}, {threads} threads", ctx.system()));
            for d in [
                Durability::SkipWal,
                Durability::AsyncWal,
                Durability::SyncWal,
                Durability::FsyncWal,
            ] {
                let r = point(ctx, t, &spec(rows, n, threads, 2 * MIB, d)).await?;
                let label = format!("{} ×{threads}", d.name());
                rep.rows.push(row(&label, &r));
                rep.point(&label, &r);
                s.push(d.name(), r.rows_per_s);
            }
            rep.series.push(s);
        }
        Ok(())
    })
    .await?;
    let s16 = rep.series.get(1);
    if let (Some(skip), Some(fsync)) = (
        s16.and_then(|s| s.at("SKIP_WAL")),
        s16.and_then(|s| s.at("FSYNC_WAL")),
    ) {
        rep.notes.push(format!(
            "FSYNC_WAL at 16 threads = {:.0} % of SKIP_WAL (target ≥ 50 %)",
            100.0 * fsync / skip.max(1e-9)
        ));
    }
    rep.notes.push("vehicle15 rows, 2 MiB write buffer per thread (seed: 12 MB, 4 threads, 120 handlers; HBase gives no figure, only 'WAL off is far faster')".into());
    Ok(rep)
}

/// Test 2 of the HBase 0.94 write-tuning study: `hbase.regionserver.handler.count`
/// 1…256, a fresh
/// embedded server per point.
pub async fn handlers(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "handlers",
        "write-tuning study §1.2",
        "RPC handler count vs write throughput",
        "hbase.regionserver.handler.count",
        "rows/s",
    );
    rep.columns = columns();
    let n = ctx.n(200_000);
    let rows = RowSpec::plain(Shape::Vehicle15);
    let mut s = Series::new(format!("{}, 8 threads", ctx.system()));
    for h in [1usize, 2, 4, 8, 16, 30, 64, 120, 256] {
        let settings = Settings {
            handler_count: h,
            ..Settings::default()
        };
        let hbase_set = [format!("hbase.regionserver.handler.count={h}")];
        let r = fresh_server_point(
            ctx,
            settings,
            &hbase_set,
            &spec(rows, n, 8, MIB, Durability::SkipWal),
        )
        .await?;
        rep.rows.push(row(&h.to_string(), &r));
        rep.point(&h.to_string(), &r);
        s.push(h.to_string(), r.rows_per_s);
    }
    rep.series.push(s);
    if ctx.server.is_some() {
        rep.notes.push("with --server the handler count is the running server's: every point used the same server".into());
    }
    if ctx.hbase.is_some() {
        rep.notes.push("each point ran on an Apache HBase started for it with hbase.regionserver.handler.count as in the table (the shared peer stayed idle)".into());
    }
    rep.notes.push("vehicle15, 8 threads, 1 MiB buffer, SKIP_WAL (seed: WAL off, 12 MB buffer; HBase peaks near 120 handlers, no figure given)".into());
    Ok(rep)
}

/// Test 3 of the HBase 0.94 write-tuning study: write buffer 1…16 MiB × threads
/// 1…16.
pub async fn write_buffer(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "write-buffer",
        "write-tuning study §1.3",
        "Client write buffer × threads",
        "write buffer (MiB)",
        "rows/s",
    );
    rep.columns = columns();
    let n = ctx.n(60_000);
    let rows = RowSpec::plain(Shape::Gps60);
    with_target_url(&ctx.target(), server_settings(), async |t| {
        for threads in [1usize, 4, 16] {
            let mut s = Series::new(format!("{}, {threads} threads", ctx.system()));
            for mib in [1u64, 2, 4, 8, 16] {
                let r = point(
                    ctx,
                    t,
                    &spec(rows, n, threads, mib * MIB, Durability::SkipWal),
                )
                .await?;
                let label = format!("{mib} MiB ×{threads}");
                rep.rows.push(row(&label, &r));
                rep.point(&label, &r);
                s.push(mib.to_string(), r.rows_per_s);
            }
            rep.series.push(s);
        }
        Ok(())
    })
    .await?;
    rep.notes.push("gps60 rows, SKIP_WAL (seed: SendData_60L, HBase best at 15 threads × 9 MB, no figure given); buffers larger than a thread's share of the rows flush once".into());
    Ok(rep)
}

/// Test 5 of the HBase 0.94 write-tuning study: qualifier length 1…16 bytes, 60
/// columns.
pub async fn qualifier_length(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "qualifier-length",
        "write-tuning study §1.5",
        "Qualifier length (60 columns)",
        "qualifier length (bytes)",
        "rows/s",
    );
    rep.columns = columns();
    let n = ctx.n(60_000);
    let mut s = Series::new(format!("{}, 8 threads", ctx.system()));
    with_target_url(&ctx.target(), server_settings(), async |t| {
        for len in [1usize, 2, 4, 8, 16] {
            let rows = RowSpec {
                qualifier_len: Some(len),
                ..RowSpec::plain(Shape::Gps60)
            };
            let r = point(ctx, t, &spec(rows, n, 8, 4 * MIB, Durability::SkipWal)).await?;
            rep.rows.push(row(&len.to_string(), &r));
            rep.point(&len.to_string(), &r);
            s.push(len.to_string(), r.rows_per_s);
        }
        Ok(())
    })
    .await?;
    rep.series.push(s);
    rep.notes.push("gps60, 8 threads, 4 MiB buffer, SKIP_WAL (seed: 11 MB; HBase: almost no effect, no figure)".into());
    Ok(rep)
}

/// Test 6 of the HBase 0.94 write-tuning study: values of 26/126/526/1026 bytes,
/// 60 columns, 4 threads.
pub async fn value_size(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "value-size",
        "write-tuning study §1.6",
        "Value size per column (60 columns)",
        "value size (bytes)",
        "MB/s of payload",
    );
    rep.columns = columns();
    let mut s = Series::new(format!("{}, 4 threads", ctx.system()));
    with_target_url(&ctx.target(), server_settings(), async |t| {
        for size in [26u64, 126, 526, 1026] {
            let rows = RowSpec {
                value_size: Some(size as usize),
                ..RowSpec::plain(Shape::Gps60)
            };
            // The same payload (~150 MB at scale 1) at every size.
            let n = ctx.n((150_000_000 / (60 * size)).min(60_000));
            let r = point(ctx, t, &spec(rows, n, 4, 4 * MIB, Durability::SkipWal)).await?;
            rep.rows.push(row(&size.to_string(), &r));
            rep.point(&size.to_string(), &r);
            s.push(size.to_string(), r.payload_mb_per_s);
        }
        Ok(())
    })
    .await?;
    rep.series.push(s);
    rep.notes.push("gps60 values padded with 'Q', 4 MiB buffer, SKIP_WAL (HBase: larger values, more bytes/s; no figure)".into());
    Ok(rep)
}

/// Test 7 of the HBase 0.94 write-tuning study: 1…120 columns at constant bytes
/// per row, 10 threads.
pub async fn column_count(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "column-count",
        "write-tuning study §1.7",
        "Columns per row at constant row bytes",
        "columns",
        "rows/s",
    );
    rep.columns = columns();
    let n = ctx.n(60_000);
    let mut s = Series::new(format!("{}, 10 threads", ctx.system()));
    with_target_url(&ctx.target(), server_settings(), async |t| {
        for c in [1usize, 2, 5, 10, 20, 60, 120] {
            let rows = RowSpec {
                columns: Some(c),
                ..RowSpec::plain(Shape::Gps60)
            };
            let r = point(ctx, t, &spec(rows, n, 10, 4 * MIB, Durability::SkipWal)).await?;
            rep.rows.push(row(&c.to_string(), &r));
            rep.point(&c.to_string(), &r);
            s.push(c.to_string(), r.rows_per_s);
        }
        Ok(())
    })
    .await?;
    rep.series.push(s);
    rep.notes.push("a gps60 row's values cut into C columns, 4 MiB buffer, SKIP_WAL (HBase: fewer columns, faster; no figure)".into());
    Ok(rep)
}

/// The HBase 0.94 write-stall study (docs/experiments.md): flush and
/// compaction pools and blockingStoreFiles under a
/// load that forces many flushes (4 MiB memstores).
pub async fn flush_compaction_threads(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "flush-compaction-threads",
        "write-stall study",
        "Flush/compaction pools and blockingStoreFiles",
        "server configuration",
        "rows/s",
    );
    rep.columns = columns();
    let n = ctx.n(1_000_000);
    let rows = RowSpec::plain(Shape::Log9);
    let configs: [(&str, usize, usize, usize, Option<f64>); 4] = [
        (
            "stock: 1 flusher, 1+1 compactors, blocking 7",
            1,
            1,
            7,
            Some(40_800.0),
        ),
        ("blockingStoreFiles 16 (our default)", 1, 1, 16, None),
        ("blockingStoreFiles 2000", 1, 1, 2000, Some(47_100.0)),
        (
            "pools 20 flushers, 15+15 compactors, 2000",
            20,
            15,
            2000,
            Some(93_600.0),
        ),
    ];
    let mut ours = Series::new(ctx.system());
    let mut hbase = Series::new("HBase (write-stall study, 16-core RegionServer)");
    let mut stalls = Series::new("ferrobase stalled writes + delayed flushes");
    for (i, (label, flushers, compactors, blocking, hb)) in configs.iter().enumerate() {
        let settings = Settings {
            memstore_flush_size: 4 * MIB,
            flusher_count: *flushers,
            compaction_small_threads: *compactors,
            compaction_large_threads: *compactors,
            blocking_store_files: *blocking,
            ..Settings::default()
        };
        let hbase_set = [
            format!("hbase.hregion.memstore.flush.size={}", 4 * MIB),
            format!("hbase.hstore.flusher.count={flushers}"),
            format!("hbase.regionserver.thread.compaction.small={compactors}"),
            format!("hbase.regionserver.thread.compaction.large={compactors}"),
            format!("hbase.hstore.blockingStoreFiles={blocking}"),
        ];
        let r = fresh_server_point(
            ctx,
            settings,
            &hbase_set,
            &spec(rows, n, 8, 4 * MIB, Durability::SkipWal),
        )
        .await?;
        let x = format!("{}", i + 1);
        rep.rows.push(row(&format!("{x}: {label}"), &r));
        rep.point(label, &r);
        ours.push(x.clone(), r.rows_per_s);
        if let (Some(b), Some(a)) = (r.stalls_before, r.stalls_after) {
            let d = a.since(&b);
            stalls.push(
                x.clone(),
                (d.blocked_writes + d.delayed_flushes + d.too_busy) as f64,
            );
        }
        if let Some(h) = hb {
            hbase.push(x.clone(), *h);
            rep.comparisons
                .push(Comparison::new(label.to_string(), r.rows_per_s, *h));
        }
    }
    rep.series.push(ours);
    rep.hbase.push(hbase);
    rep.notes.push("log9 rows, 8 threads, 4 MiB buffer, SKIP_WAL, hbase.hregion.memstore.flush.size 4 MiB so the load flushes many times; x: 1..4 = the configurations in the table".into());
    if !stalls.points.is_empty() {
        rep.notes.push(format!(
            "stall counts per configuration (blocked writes + delayed flushes + too busy): {:?}",
            stalls.points
        ));
    }
    if ctx.hbase.is_some() {
        rep.notes.push("each point ran on an Apache HBase started for it with hbase.hregion.memstore.flush.size 4 MiB, hbase.hstore.flusher.count, hbase.regionserver.thread.compaction.small and .large, and hbase.hstore.blockingStoreFiles as in the table (the shared peer stayed idle)".into());
    }
    Ok(rep)
}

/// The one-column against 53-column study (docs/experiments.md):
/// `single53` vs `wide53`, 10 threads, WAL on, 5 MiB buffer.
pub async fn single_vs_multi(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "single-vs-multi-column",
        "53-column study",
        "One column vs 53 columns per row",
        "shape",
        "rows/s",
    );
    rep.columns = columns();
    // 600,000 rows: `single53` then runs ~2 s, long enough for a steady ratio.
    let n = ctx.n(600_000);
    // Each shape runs four times, in the order single, wide, wide, single,
    // twice over, and its figure is the mean: whatever drifts during the
    // experiment (this VM's speed, memory the first load touched for the
    // ones after it) then weighs on both shapes alike instead of on the one
    // that ran last, and one slow load moves the ratio half as much as
    // with two runs a shape.
    let order = [
        Shape::Single53,
        Shape::Wide53,
        Shape::Wide53,
        Shape::Single53,
        Shape::Single53,
        Shape::Wide53,
        Shape::Wide53,
        Shape::Single53,
    ];
    let mut results: Vec<(Shape, LoadReport)> = Vec::new();
    with_target_url(&ctx.target(), server_settings(), async |t| {
        for (i, shape) in order.into_iter().enumerate() {
            let r = point(
                ctx,
                t,
                &spec(RowSpec::plain(shape), n, 10, 5 * MIB, Durability::SyncWal),
            )
            .await?;
            let label = format!("{} (run {})", shape.name(), i + 1);
            rep.rows.push(row(&label, &r));
            rep.point(&label, &r);
            results.push((shape, r));
        }
        Ok(())
    })
    .await?;
    let mean = |shape: Shape, f: fn(&LoadReport) -> f64| {
        let runs: Vec<f64> = results
            .iter()
            .filter(|(s, _)| *s == shape)
            .map(|(_, r)| f(r))
            .collect();
        runs.iter().sum::<f64>() / runs.len().max(1) as f64
    };
    let single = mean(Shape::Single53, |r| r.rows_per_s);
    let wide = mean(Shape::Wide53, |r| r.rows_per_s);
    let mut ours = Series::new(format!("{} (mean of 4 runs)", ctx.system()));
    let mut hbase = Series::new("HBase (53-column study)");
    hbase.push("single53", 12_403.87);
    hbase.push("wide53", 1_730.68);
    if !results.is_empty() {
        ours.push("single53", single);
        ours.push("wide53", wide);
        rep.comparisons
            .push(Comparison::new("single53 rows/s", single, 12_403.87));
        rep.comparisons
            .push(Comparison::new("wide53 rows/s", wide, 1_730.68));
        let speed = single / wide.max(1e-9);
        let rpcs = mean(Shape::Wide53, |r| r.rpcs as f64)
            / mean(Shape::Single53, |r| r.rpcs as f64).max(1.0);
        rep.notes.push(format!(
            "single/wide rows/s ratio: ours {speed:.2} (HBase 7.17; target ≤ 1.5); wide/single RPC ratio: ours {rpcs:.2} (HBase 478/53 = 9.02)"
        ));
    }
    rep.series.push(ours);
    rep.hbase.push(hbase);
    rep.notes
        .push("SYNC_WAL (WAL on), 10 threads, 5 MiB buffer counted in encoded bytes; each shape runs four times (order single, wide, wide, single, twice over) and its figure is the mean".into());
    Ok(rep)
}

/// The Hypertable against HBase 0.90 study (docs/experiments.md): random
/// writes of `kv` with 10/100/1000/10000-byte values.
pub async fn random_write_value_size(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "random-write-value-size",
        "Hypertable study",
        "Random writes by value size",
        "value size (bytes)",
        "MB/s of payload",
    );
    rep.columns = columns();
    let mut s = Series::new(format!("{}, 8 threads", ctx.system()));
    with_target_url(&ctx.target(), server_settings(), async |t| {
        for size in [10usize, 100, 1000, 10_000] {
            let rows = RowSpec::plain(Shape::Kv { value_size: size });
            let n = ctx.n((200_000_000 / (size as u64 + 21)).min(600_000));
            let r = point(ctx, t, &spec(rows, n, 8, 4 * MIB, Durability::AsyncWal)).await?;
            rep.rows.push(row(&size.to_string(), &r));
            rep.point(&size.to_string(), &r);
            s.push(size.to_string(), r.payload_mb_per_s);
        }
        Ok(())
    })
    .await?;
    rep.series.push(s);
    rep.notes.push("kv rows (20-byte hashed keys), ASYNC_WAL, 8 threads, 4 MiB buffer; the seed gives no absolute HBase figure (Hypertable ≈ 2× HBase)".into());
    Ok(rep)
}
