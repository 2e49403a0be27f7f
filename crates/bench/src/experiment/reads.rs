//! The read experiments (docs/experiments.md): the Hypertable against HBase
//! 0.90 study's random reads (Zipfian 0.8 and uniform, block cache on/off)
//! and the HBase column-family design study (BLOCKSIZE; compression × data
//! block encoding). Each loads its tables, flushes and major-compacts
//! them so reads go to store files, reads, and drops the tables.
//! `random-read` and `block-size` also run against an HBase target (the
//! `--peer hbase` run): the same load, then HBase's flush and major
//! compaction of every region (waited for), then the same reads. Every
//! read phase is measured for CPU seconds and peak memory of the server
//! and client processes ([`crate::resources`]).

use super::engine_gets::THREADS;
use super::{Comparison, Ctx, Report, int};
use crate::chart::Series;
use crate::load::{LoadReport, LoadSpec, drop_hbase_table, drop_table, run_load};
use crate::reads::{ReadLoad, ReadReport, run_reads};
use crate::rowspec::RowSpec;
use crate::target::{Target, with_target_url};
use crate::{BenchError, Result};
use ferrobase_types::{Durability, Settings};
use ferrobase_workloads::Shape;
use std::time::Duration;

fn read_columns() -> Vec<String> {
    [
        "point",
        "ops",
        "ops/s",
        "rows/s",
        "mean ms",
        "p99 ms",
        "p99.9 ms",
        "not found",
        "errors",
        "CPU s",
        "peak RSS MB",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// What the `CPU s` and `peak RSS MB` columns hold, for the notes.
const RESOURCE_NOTE: &str = "CPU s: CPU seconds of the reads, summed over the server process and the bench client process (for the embedded ferrobase they are one process; for HBase the JVM and the client); peak RSS MB: the server process's peak resident set during the reads (VmHWM, reset when each read phase starts; for the embedded ferrobase that process also holds the client)";

/// Reads with the processes measured ([`Ctx::probe`]).
async fn measured_reads(ctx: &Ctx, t: &Target, load: &ReadLoad) -> Result<ReadReport> {
    let probe = ctx.probe();
    let mut r = run_reads(t, load).await?;
    r.resources = Some(probe.finish());
    Ok(r)
}

/// Drops a read experiment's table, on ferrobase or HBase.
async fn drop_read_table(t: &Target, table: &str) -> Result<()> {
    if t.is_hbase() {
        drop_hbase_table(t, table).await
    } else {
        drop_table(&t.connect(1)?.admin(), table).await
    }
}

fn read_row(label: &str, r: &ReadReport) -> Vec<String> {
    vec![
        label.to_string(),
        int(r.ops as f64),
        int(r.ops_per_s),
        int(r.rows_per_s),
        format!("{:.2}", r.latency.mean_us / 1000.0),
        format!("{:.2}", r.latency.p99_us as f64 / 1000.0),
        format!("{:.2}", r.latency.p999_us as f64 / 1000.0),
        r.not_found.to_string(),
        r.error_count.to_string(),
    ]
    .into_iter()
    .chain(r.resources.clone().unwrap_or_default().cells())
    .collect()
}

/// Loads `n` rows into a fresh `table` with `attrs`, flushes and
/// major-compacts it, and waits for the server to be idle; returns the
/// load's report.
async fn prepare(
    t: &Target,
    table: &str,
    rows: RowSpec,
    n: u64,
    attrs: &[(&str, &str)],
) -> Result<LoadReport> {
    let spec = LoadSpec {
        table: table.to_string(),
        threads: 4,
        write_buffer: 2 << 20,
        durability: Durability::SkipWal,
        family_attrs: attrs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..LoadSpec::new(rows, n)
    };
    let r = run_load(t, &spec).await?;
    if r.error_count > 0 {
        return Err(BenchError::Server(format!(
            "loading {table}: {} rows failed: {:?}",
            r.error_count, r.errors
        )));
    }
    if t.is_hbase() {
        let admin = t.hbase_connect(1).await?.admin();
        admin.flush_table(table).await?;
        admin
            .major_compact_table(table, Duration::from_secs(600))
            .await?;
        return Ok(r);
    }
    let admin = t.connect(1)?.admin();
    admin.flush(table).await?;
    t.wait_idle(Duration::from_secs(120)).await;
    admin.major_compact(table).await?;
    t.wait_idle(Duration::from_secs(120)).await;
    Ok(r)
}

fn reads(
    table: &str,
    rows: RowSpec,
    items: u64,
    ops: u64,
    dist: &str,
    scan: Option<u32>,
) -> ReadLoad {
    ReadLoad {
        table: table.to_string(),
        rows,
        items,
        ops,
        threads: 32,
        distribution: dist.to_string(),
        scan_rows: scan,
        seed: 42,
        quiet: true,
    }
}

/// The Hypertable against HBase 0.90 study (docs/experiments.md): gets of
/// 1 KB rows, Zipfian 0.8 and uniform, cache on/off.
pub async fn random_read(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "random-read",
        "Hypertable study",
        "Random row reads (1 KB values)",
        "distribution",
        "gets/s",
    );
    rep.columns = read_columns();
    let n = ctx.n(50_000);
    let ops = ctx.n(100_000);
    let rows = RowSpec::plain(Shape::Kv { value_size: 1000 });
    // The row cache is sized for the whole table (Hypertable's query cache
    // held the hot rows); only the third table's family uses it.
    let settings = Settings {
        row_cache_size: (256u64 << 20) as f64,
        ..Settings::default()
    };
    type Attrs = &'static [(&'static str, &'static str)];
    let configs: [(&str, &str, Attrs); 3] = [
        ("block cache on", "cached", &[("BLOCKCACHE", "true")]),
        ("block cache off", "uncached", &[("BLOCKCACHE", "false")]),
        (
            "row cache on",
            "rowcached",
            &[("BLOCKCACHE", "true"), ("ROW_CACHE", "true")],
        ),
    ];
    with_target_url(&ctx.target(), settings, async |t| {
        for (cache, name, attrs) in configs {
            if t.is_hbase() && name == "rowcached" {
                // HBase has no row cache: the attribute would be ignored
                // and the point would repeat "block cache on".
                continue;
            }
            let table = format!("bench_read_{name}");
            prepare(t, &table, rows, n, attrs).await?;
            // An untimed uniform pass first: every system and cache is
            // measured warm, as the study's caches were.
            run_reads(t, &reads(&table, rows, n, ops, "uniform", None)).await?;
            let mut s = Series::new(format!("{}, {cache}", ctx.system()));
            for (label, dist) in [("zipfian 0.8", "scrambled:0.8"), ("uniform", "uniform")] {
                let r = measured_reads(ctx, t, &reads(&table, rows, n, ops, dist, None)).await?;
                let l = format!("{label}, {cache}");
                rep.rows.push(read_row(&l, &r));
                rep.point(&l, &r);
                s.push(label, r.ops_per_s);
            }
            rep.series.push(s);
            drop_read_table(t, &table).await?;
        }
        Ok(())
    })
    .await?;
    if ctx.hbase.is_some() {
        rep.notes
            .push("HBase has no row cache: its run has the block cache on and off only".into());
    } else if ctx.server.is_none() {
        engine_alone(&mut rep, rows, n, ops * 10).await?;
    }
    rep.notes.push(RESOURCE_NOTE.into());
    rep.notes.push("kv rows with 1000-byte values, 32 client tasks with one get outstanding each; Zipfian: YCSB's scrambled Zipfian with exponent 0.8; block cache off: family BLOCKCACHE => false (the OS page cache still holds the files); row cache on: ROW_CACHE => true with ferrobase.rowcache.size 256 MiB (against --server, the server's own setting applies); each table is read once uniformly, untimed, before its points. The seed gives no absolute HBase figure (Zipfian: Hypertable ahead by its row cache; uniform: about equal)".into());
    Ok(rep)
}

/// `random-read`'s engine-alone points ([`super::engine_gets`]): rows in
/// the table, the row cache's gain in the notes and the JSON.
async fn engine_alone(rep: &mut Report, rows: RowSpec, n: u64, ops: u64) -> Result<()> {
    const DISTS: [(&str, &str); 2] = [("zipfian 0.8", "scrambled:0.8"), ("uniform", "uniform")];
    let points = tokio::task::spawn_blocking(move || {
        super::engine_gets::engine_gets(rows, n, ops, 256 << 20, &DISTS)
    })
    .await
    .map_err(|e| BenchError::Server(format!("the engine-alone gets died: {e}")))??;
    let width = rep.columns.len();
    for p in &points {
        let label = format!("{}, engine alone", p.label);
        let mut row = vec![
            label.clone(),
            int(p.gets as f64),
            int(p.gets_per_s),
            int(p.gets_per_s),
            format!("{:.4}", p.latency.mean_us / 1000.0),
            format!("{:.3}", p.latency.p99_us as f64 / 1000.0),
            format!("{:.3}", p.latency.p999_us as f64 / 1000.0),
            "0".into(),
            "0".into(),
        ];
        row.resize(width, "-".into());
        rep.rows.push(row);
        rep.points
            .push(serde_json::json!({ "point": label, "report": p }));
    }
    let point = |label: String| points.iter().find(|p| p.label == label);
    let gains: Vec<String> = DISTS
        .iter()
        .map(|(d, _)| {
            let (row, block) = (
                point(format!("{d}, row cache")),
                point(format!("{d}, block cache")),
            );
            format!(
                "{d} {:.2}x (row-cache hits {:.0} %)",
                row.map_or(f64::NAN, |p| p.gets_per_s) / block.map_or(f64::NAN, |p| p.gets_per_s),
                row.map_or(0.0, |p| p.row_cache_hit_ratio) * 100.0
            )
        })
        .collect();
    rep.notes.push(format!(
        "engine alone: the same gets straight into a region of an in-process engine (no RPC, no client), {THREADS} threads, after an untimed pass that fills the caches; row cache / block cache gets/s: {}",
        gains.join(", ")
    ));
    Ok(())
}

/// The HBase column-family design study (docs/experiments.md): BLOCKSIZE
/// 16/64/128 KiB, get and scan throughput, relative to 64 KiB (the study's
/// figures are relative too).
pub async fn block_size(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "block-size",
        "column-family study",
        "BLOCKSIZE: get and scan throughput relative to 64 KiB",
        "BLOCKSIZE",
        "throughput / throughput at 64 KiB",
    );
    rep.columns = read_columns();
    let n = ctx.n(30_000);
    let gets = ctx.n(60_000);
    let scans = ctx.n(6_000);
    let rows = RowSpec::plain(Shape::Ycsb {
        field_count: 10,
        field_length: 100,
    });
    let mut got: Vec<(String, f64, f64)> = Vec::new();
    with_target_url(&ctx.target(), Settings::default(), async |t| {
        for kib in [16u32, 64, 128] {
            let table = format!("bench_blocksize_{kib}k");
            let size = (kib * 1024).to_string();
            prepare(t, &table, rows, n, &[("BLOCKSIZE", size.as_str())]).await?;
            let g = measured_reads(ctx, t, &reads(&table, rows, n, gets, "uniform", None)).await?;
            let s =
                measured_reads(ctx, t, &reads(&table, rows, n, scans, "uniform", Some(50))).await?;
            rep.rows.push(read_row(&format!("{kib} KiB get"), &g));
            rep.rows.push(read_row(&format!("{kib} KiB scan 50"), &s));
            rep.point(&format!("{kib} KiB get"), &g);
            rep.point(&format!("{kib} KiB scan"), &s);
            rep.peer_figures
                .push((format!("{kib} KiB gets/s"), g.ops_per_s));
            rep.peer_figures
                .push((format!("{kib} KiB 50-row scans/s"), s.ops_per_s));
            got.push((format!("{kib} KiB"), g.ops_per_s, s.ops_per_s));
            drop_read_table(t, &table).await?;
        }
        Ok(())
    })
    .await?;
    let base = got
        .iter()
        .find(|(l, _, _)| l == "64 KiB")
        .map(|(_, g, s)| (*g, *s))
        .unwrap_or((1.0, 1.0));
    let mut og = Series::new(format!("{} get", ctx.system()));
    let mut os = Series::new(format!("{} scan", ctx.system()));
    for (l, g, s) in &got {
        og.push(l.clone(), g / base.0.max(1e-9));
        os.push(l.clone(), s / base.1.max(1e-9));
    }
    // The column-family design study (docs/experiments.md): 64 K vs 16 K:
    // get −13 %, scan +33 %; 128 K vs 64 K: get −22 %, scan +7 %.
    let mut hg = Series::new("HBase get (column-family study)");
    let mut hs = Series::new("HBase scan (column-family study)");
    for (l, g, s) in [
        ("16 KiB", 1.0 / 0.87, 1.0 / 1.33),
        ("64 KiB", 1.0, 1.0),
        ("128 KiB", 0.78, 1.07),
    ] {
        hg.push(l, g);
        hs.push(l, s);
        if let (Some(a), Some(b), true) = (og.at(l), os.at(l), l != "64 KiB") {
            rep.comparisons.push(Comparison::new(
                format!("{l} get, relative to 64 KiB"),
                a,
                g,
            ));
            rep.comparisons.push(Comparison::new(
                format!("{l} scan, relative to 64 KiB"),
                b,
                s,
            ));
        }
    }
    rep.series.extend([og, os]);
    rep.hbase.extend([hg, hs]);
    rep.notes.push("ycsb rows (10 × 100 B), one region, flushed and major-compacted; uniform gets and 50-row scans, 32 client tasks; the comparison lines print relative figures (ratios ×100 would be percentages)".into());
    rep.notes.push(RESOURCE_NOTE.into());
    Ok(rep)
}

/// The bytes of `table`'s store files: on ferrobase, the sizes its
/// cluster status reports; on HBase, the files its regions serve
/// (`GetStoreFile`) measured on the local filesystem (`None` when they are
/// not local `file:` paths, e.g. an HBase on HDFS named by `--peer-addr`).
async fn store_file_bytes(t: &Target, table: &str) -> Result<Option<u64>> {
    if t.is_hbase() {
        let files = t.hbase_connect(1).await?.admin().store_files(table).await?;
        return Ok(local_file_bytes(&files));
    }
    let status = t.connect(1)?.admin().cluster_status().await?;
    Ok(Some(
        status
            .servers
            .iter()
            .flat_map(|s| s.regions.iter())
            .filter(|r| r.table == table)
            .map(|r| r.store_file_bytes)
            .sum(),
    ))
}

/// The summed sizes of `file:` URLs (`file:/p`, `file:///p`) or plain
/// absolute paths; `None` when one is of another scheme or cannot be read.
pub fn local_file_bytes(files: &[String]) -> Option<u64> {
    let mut sum = 0;
    for f in files {
        let path = match f.strip_prefix("file:") {
            Some(rest) => rest.strip_prefix("//").unwrap_or(rest),
            None if f.starts_with('/') => f.as_str(),
            None => return None,
        };
        sum += std::fs::metadata(path).ok()?.len();
    }
    Some(sum)
}

/// The compressions swept: every one ferrobase has, each of which the
/// HBase peer has too (GZ through java.util.zip, SNAPPY through
/// snappy-java, LZ4 through lz4-java, ZSTD through HBase's zstd-jni codec;
/// interop/hbase-peer).
const COMPRESSIONS: [&str; 5] = ["NONE", "GZ", "SNAPPY", "LZ4", "ZSTD"];

/// The data block encodings swept; HBase 2 has all but PREFIX_TREE.
const ENCODINGS: [&str; 6] = [
    "NONE",
    "PREFIX",
    "DIFF",
    "FAST_DIFF",
    "ROW_INDEX_V1",
    "PREFIX_TREE",
];

/// Unmeasured load-and-read rounds before `compression-encoding`'s points.
const WARM_UP_ROUNDS: usize = 3;

/// The x label of an encoding in the chart: PREFIX_TREE marked as
/// ferrobase's alone.
fn encoding_label(enc: &str) -> String {
    if enc == "PREFIX_TREE" {
        "PREFIX_TREE (not in HBase 2)".into()
    } else {
        enc.into()
    }
}

/// The HBase column-family design study (docs/experiments.md): compression
/// × data block encoding: on-disk size, load, get and scan throughput, CPU
/// seconds. Against HBase, PREFIX_TREE is left out (HBase 2 removed it).
pub async fn compression_encoding(ctx: &Ctx) -> Result<Report> {
    let mut rep = Report::new(
        "compression-encoding",
        "column-family study",
        "Compression × data block encoding: on-disk size",
        "DATA_BLOCK_ENCODING (one line per COMPRESSION)",
        "store file bytes / bytes with NONE/NONE",
    );
    rep.columns = [
        "point",
        "MB on disk",
        "size ratio",
        "load rows/s",
        "gets/s",
        "get p99 ms",
        "scans/s",
        "scan p99 ms",
        "CPU s (reads)",
        "peak RSS MB",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let n = ctx.n(15_000);
    let gets = ctx.n(15_000);
    let scans = ctx.n(1_500);
    let rows = RowSpec::plain(Shape::Ycsb {
        field_count: 10,
        field_length: 100,
    });
    let mut lines: Vec<Series> = Vec::new();
    let mut base: Option<f64> = None;
    // Load, get and scan rates of the points both systems run, for the
    // means compared with the peer.
    let (mut loads, mut get_rates, mut scan_rates) = (Vec::new(), Vec::new(), Vec::new());
    with_target_url(&ctx.target(), Settings::default(), async |t| {
        // Unmeasured rounds first: the sweep compares 25 points within one
        // server process, and without them the first few carry its
        // warm-up (HBase's JIT compilation and heap growth: its gets/s rose
        // about fourfold over the first ten points of a cold JVM).
        for _ in 0..WARM_UP_ROUNDS {
            let table = "bench_ce_warm_up";
            prepare(t, table, rows, n, &[]).await?;
            run_reads(t, &reads(table, rows, n, gets, "uniform", None)).await?;
            run_reads(t, &reads(table, rows, n, scans, "uniform", Some(50))).await?;
            drop_read_table(t, table).await?;
        }
        for comp in COMPRESSIONS {
            let mut line = Series::new(format!("{}, {comp}", ctx.system()));
            for enc in ENCODINGS {
                if t.is_hbase() && enc == "PREFIX_TREE" {
                    continue;
                }
                let table = format!("bench_ce_{}_{}", comp.to_lowercase(), enc.to_lowercase());
                let load = prepare(
                    t,
                    &table,
                    rows,
                    n,
                    &[("COMPRESSION", comp), ("DATA_BLOCK_ENCODING", enc)],
                )
                .await?;
                let bytes = store_file_bytes(t, &table).await?.map(|b| b as f64);
                let probe = ctx.probe();
                let g = run_reads(t, &reads(&table, rows, n, gets, "uniform", None)).await?;
                let s = run_reads(t, &reads(&table, rows, n, scans, "uniform", Some(50))).await?;
                let usage = probe.finish();
                rep.errors += g.error_count + s.error_count;
                let label = format!("{comp}/{enc}");
                let ratio = bytes.map(|b| b / *base.get_or_insert(b.max(1.0)));
                if let Some(r) = ratio {
                    line.push(encoding_label(enc), r);
                }
                if enc != "PREFIX_TREE" {
                    loads.push(load.rows_per_s);
                    get_rates.push(g.ops_per_s);
                    scan_rates.push(s.ops_per_s);
                    if let Some(b) = bytes {
                        rep.peer_figures
                            .push((format!("{label} MB on disk"), b / 1e6));
                    }
                }
                let shown = if enc == "PREFIX_TREE" {
                    format!("{label} (ferrobase only)")
                } else {
                    label.clone()
                };
                let [cpu, rss] = usage.cells();
                rep.rows.push(vec![
                    shown,
                    bytes.map_or("n/a".into(), |b| format!("{:.1}", b / 1e6)),
                    ratio.map_or("n/a".into(), |r| format!("{r:.2}")),
                    int(load.rows_per_s),
                    int(g.ops_per_s),
                    format!("{:.2}", g.latency.p99_us as f64 / 1000.0),
                    int(s.ops_per_s),
                    format!("{:.2}", s.latency.p99_us as f64 / 1000.0),
                    cpu,
                    rss,
                ]);
                rep.points.push(serde_json::json!({
                    "point": label, "store_file_bytes": bytes, "cpu_seconds": usage.cpu_s(),
                    "load": serde_json::to_value(&load).unwrap_or_default(),
                    "get": serde_json::to_value(&g).unwrap_or_default(),
                    "scan": serde_json::to_value(&s).unwrap_or_default(),
                    "resources": serde_json::to_value(&usage).unwrap_or_default(),
                }));
                drop_read_table(t, &table).await?;
            }
            lines.push(line);
        }
        Ok(())
    })
    .await?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let points = loads.len();
    for (what, v) in [
        ("load rows/s", &loads),
        ("gets/s", &get_rates),
        ("50-row scans/s", &scan_rates),
    ] {
        rep.peer_figures.push((
            format!("{what}, mean over the {points} points without PREFIX_TREE"),
            mean(v),
        ));
    }
    if let Some(r) = lines
        .iter()
        .find(|l| l.name.ends_with(", SNAPPY"))
        .and_then(|l| l.at("NONE"))
    {
        rep.comparisons
            .push(Comparison::new("SNAPPY size ratio", r, 0.7));
    }
    let mut hbase = Series::new("HBase SNAPPY size ratio (column-family study: ~0.7)");
    hbase.push("NONE", 0.7);
    rep.series.extend(lines);
    rep.hbase.push(hbase);
    if ctx.hbase.is_some() {
        rep.notes.push("HBase 2 has no PREFIX_TREE (removed in 2.0): its run sweeps the other encodings; MB on disk: the files its regions serve after the major compaction (AdminService GetStoreFile), their sizes read from the peer's local root directory".into());
    }
    rep.notes.push(format!("ycsb rows (10 × 100 B of text), {n} a table, loaded (4 threads, SKIP_WAL), flushed and major-compacted; then {gets} uniform gets and {scans} 50-row scans, 32 client tasks; {WARM_UP_ROUNDS} such rounds on a NONE/NONE table, not measured, warm the server up first. {RESOURCE_NOTE}. HBase (study): ratio ~0.7 for snappy, prefix_tree or both, snappy +38 % CPU on random reads"));
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_file_sizes_are_read_from_local_paths_only() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        std::fs::write(&a, [0u8; 100])?;
        std::fs::write(&b, [0u8; 23])?;
        let (a, b) = (a.display().to_string(), b.display().to_string());
        // HBase names its files `file:/...`; `file:///...` and plain paths
        // are the same files.
        let names = [format!("file:{a}"), format!("file://{b}")];
        assert_eq!(local_file_bytes(&names), Some(123));
        assert_eq!(local_file_bytes(std::slice::from_ref(&a)), Some(100));
        assert_eq!(local_file_bytes(&[]), Some(0));
        // Files elsewhere, or gone, are not guessed at.
        assert_eq!(local_file_bytes(&[format!("hdfs://nn:8020{a}")]), None);
        assert_eq!(local_file_bytes(&[format!("{a}.gone")]), None);
        assert_eq!(local_file_bytes(&["relative/path".to_string()]), None);
        Ok(())
    }
}
