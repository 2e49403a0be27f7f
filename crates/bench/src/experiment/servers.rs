//! Test 4 of the HBase 0.94 write-tuning study (docs/experiments.md): write
//! throughput with 1, 2 and 3 region servers. Each point starts a fresh
//! [`LocalCluster`] (etcd, a master, N region server processes), loads a
//! table pre-split into 6 regions (2, 3 or 6 a server), reads back how the
//! regions and writes were spread, and stops the cluster.
//!
//! On a 2-core machine the region servers, the client and etcd share the
//! same cores, so more servers cannot mean more CPU: the figures show what
//! spreading costs or gains on fixed hardware (more RPCs and smaller
//! batches per server, against more WALs and queues working in parallel),
//! not the scaling the study measured on 5 machines. The report says so.

use super::{Ctx, Report, int};
use crate::chart::Series;
use crate::cluster::LocalCluster;
use crate::load::{LoadSpec, drop_table, run_load};
use crate::rowspec::RowSpec;
use crate::target::with_target;
use crate::{BenchError, Result};
use ferrobase_types::{Durability, Settings};
use ferrobase_workloads::Shape;

/// Regions of the loaded table: divisible by 1, 2 and 3.
const REGIONS: u32 = 6;

/// Settings of every process: the seed's 120 handlers, and a memory
/// budget that lets three servers and the client share this machine.
const SERVER_SETTINGS: &[&str] = &[
    "hbase.regionserver.handler.count=120",
    "ferrobase.memory.size=1073741824",
];

/// How one point's regions and writes were spread.
struct Spread {
    /// `regions/writes` per server, e.g. `2/133,120`.
    per_server: Vec<String>,
}

/// Runs the sweep (see the module docs).
pub async fn regionservers(ctx: &Ctx) -> Result<Report> {
    let Some(exe) = ctx.exe.clone() else {
        return Err(BenchError::CannotRun(
            "experiment 'regionservers' (write-tuning study §1.4) starts `ferrobase master` and \
             `ferrobase regionserver` processes: run it through the ferrobase binary \
             (`ferrobase bench experiment regionservers`)"
                .into(),
        ));
    };
    if ctx.server.is_some() {
        return Err(BenchError::Invalid(
            "experiment 'regionservers' starts its own clusters (1, 2 and 3 region servers); \
             it does not take --server"
                .into(),
        ));
    }
    let mut rep = Report::new(
        "regionservers",
        "write-tuning study §1.4",
        "Region servers vs write throughput",
        "region servers",
        "rows/s",
    );
    rep.columns = [
        "servers",
        "rows",
        "rows/s",
        "cells/s",
        "MB/s",
        "RPCs",
        "p99 ms",
        "stalls",
        "errors",
        "regions/writes per server",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let n = ctx.n(400_000);
    let rows = RowSpec::plain(Shape::Vehicle15);
    let settings: Vec<String> = SERVER_SETTINGS.iter().map(|s| s.to_string()).collect();
    let mut series = Series::new("ferrobase (all processes on one 2-core machine)");
    for servers in 1..=3usize {
        let cluster = tokio::task::block_in_place(|| {
            LocalCluster::start(
                &exe,
                (ctx.etcd.as_deref(), ctx.root.as_deref()),
                servers,
                &settings,
            )
        })?;
        let spec = LoadSpec {
            table: "bench_regionservers".into(),
            threads: 4,
            write_buffer: 10 << 20,
            durability: Durability::AsyncWal,
            presplit: REGIONS,
            quiet: ctx.quiet,
            ..LoadSpec::new(rows, n)
        };
        let client = Settings {
            client_retries: 40,
            client_pause_ms: 20,
            ..Settings::default()
        };
        let addr = cluster.master_address();
        let (r, spread) = with_target(Some(&addr), client, async |t| {
            let conn = t.connect(1)?;
            wait_servers(&conn, servers).await?;
            let r = run_load(t, &spec).await?;
            let spread = spread(&conn, &spec.table).await?;
            drop_table(&conn.admin(), &spec.table).await?;
            Ok((r, spread))
        })
        .await?;
        drop(cluster);
        let label = servers.to_string();
        rep.rows.push(vec![
            label.clone(),
            int(r.rows as f64),
            int(r.rows_per_s),
            int(r.cells_per_s),
            format!("{:.1}", r.payload_mb_per_s),
            int(r.rpcs as f64),
            format!("{:.1}", r.flush_latency.p99_us as f64 / 1000.0),
            super::writes::stalls(&r),
            r.error_count.to_string(),
            spread.per_server.join(" "),
        ]);
        rep.point(&label, &r);
        series.push(label, r.rows_per_s);
    }
    rep.series.push(series);
    let cores = std::thread::available_parallelism()
        .map(|c| c.get())
        .unwrap_or(1);
    rep.notes.push(format!(
        "every region server, the master, etcd and the 4 client threads share this machine's {cores} core(s): \
         the seed ran each RegionServer on its own 8-core machine, so its throughput grew with hardware; \
         here the total CPU is fixed, so a gain comes only from work one server does not overlap \
         (one WAL, one handler queue per server), and a loss shows the cost of spreading a load"
    ));
    rep.notes.push(match ctx.root.as_deref() {
        // Only the scheme and bucket: the URL may carry credentials.
        Some(url) => format!(
            "storage root: {} (each cluster under its own prefix)",
            url.split(['?', '/']).take(3).collect::<Vec<_>>().join("/")
        ),
        None => "storage root: a temporary local directory".to_string(),
    });
    rep.notes.push(format!(
        "vehicle15 rows, 4 threads, 10 MiB buffer, 120 handlers, ASYNC_WAL, table pre-split into {REGIONS} regions \
         (seed: 4 threads, 10 MB buffer, 120 handlers; HBase gives no figure, only 'more RegionServers, faster writes')"
    ));
    Ok(rep)
}

/// Waits (at most 60 s) until the master sees `n` region servers.
async fn wait_servers(conn: &ferrobase_client::Connection, n: usize) -> Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match conn.admin().cluster_status().await {
            Ok(s) if s.servers.len() == n => return Ok(()),
            _ if std::time::Instant::now() > deadline => {
                return Err(BenchError::Server(format!(
                    "the master did not see {n} region server(s) within 60 s"
                )));
            }
            _ => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
        }
    }
}

/// Regions of `table` and their write requests, per server.
async fn spread(conn: &ferrobase_client::Connection, table: &str) -> Result<Spread> {
    let status = conn.admin().cluster_status().await?;
    let mut per_server = Vec::new();
    for s in &status.servers {
        let mine: Vec<_> = s.regions.iter().filter(|r| r.table == table).collect();
        let writes: u64 = mine.iter().map(|r| r.write_requests).sum();
        per_server.push(format!("{}/{}", mine.len(), int(writes as f64)));
    }
    Ok(Spread { per_server })
}
