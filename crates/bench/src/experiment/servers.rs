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
//!
//! Against the HBase peer (`--peer hbase`), each point starts a fresh
//! Apache HBase whose JVM runs N region servers as threads (beside its
//! master and ZooKeeper), loads the same pre-split table and reads back
//! where HBase's master placed the regions. Both systems' CPU seconds and
//! peak memory are measured over every server process (ferrobase: the
//! master, the region servers and etcd; HBase: its one JVM).

use super::{Ctx, Report, int};
use crate::chart::Series;
use crate::cluster::LocalCluster;
use crate::load::{LoadReport, LoadSpec, drop_hbase_table, drop_table, run_load};
use crate::peer::HBasePeer;
use crate::resources::Probe;
use crate::rowspec::RowSpec;
use crate::target::{with_target, with_target_url};
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
    /// `regions/writes` per server, e.g. `2/133,120` (HBase: `2/–`, its
    /// write counts are not read).
    per_server: Vec<String>,
    /// Servers holding at least one region of the table.
    used: usize,
}

/// The load of every point.
fn load_spec(ctx: &Ctx, n: u64) -> LoadSpec {
    LoadSpec {
        table: "bench_regionservers".into(),
        threads: 4,
        write_buffer: 10 << 20,
        durability: Durability::AsyncWal,
        presplit: REGIONS,
        quiet: ctx.quiet,
        ..LoadSpec::new(RowSpec::plain(Shape::Vehicle15), n)
    }
}

/// The report both systems' runs fill.
fn report() -> Report {
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
        "CPU s",
        "peak RSS MB",
        "regions/writes per server",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    rep
}

/// One point's table row; `CPU s` over every process measured (servers
/// and client), `peak RSS MB` the sum of the server processes' peaks.
fn row(servers: usize, r: &LoadReport, spread: &Spread) -> Vec<String> {
    let usage = r.resources.clone().unwrap_or_default();
    vec![
        servers.to_string(),
        int(r.rows as f64),
        int(r.rows_per_s),
        int(r.cells_per_s),
        format!("{:.1}", r.payload_mb_per_s),
        int(r.rpcs as f64),
        format!("{:.1}", r.flush_latency.p99_us as f64 / 1000.0),
        super::writes::stalls(r),
        r.error_count.to_string(),
        if usage.processes.is_empty() {
            "n/a".into()
        } else {
            format!("{:.2}", usage.cpu_s())
        },
        usage
            .servers_peak_rss_sum()
            .map_or("n/a".into(), |b| format!("{:.0}", b as f64 / 1e6)),
        spread.per_server.join(" "),
    ]
}

/// Runs the sweep (see the module docs).
pub async fn regionservers(ctx: &Ctx) -> Result<Report> {
    if ctx.hbase.is_some() {
        return regionservers_hbase(ctx).await;
    }
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
    let mut rep = report();
    let n = ctx.n(400_000);
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
        let spec = load_spec(ctx, n);
        let client = Settings {
            client_retries: 40,
            client_pause_ms: 20,
            ..Settings::default()
        };
        let addr = cluster.master_address();
        let processes = cluster.processes();
        let (r, spread) = with_target(Some(&addr), client, async |t| {
            let conn = t.connect(1)?;
            wait_servers(&conn, servers).await?;
            let probe = Probe::start_many(&processes, "bench client");
            let mut r = run_load(t, &spec).await?;
            r.resources = Some(probe.finish());
            let spread = spread(&conn, &spec.table).await?;
            drop_table(&conn.admin(), &spec.table).await?;
            Ok((r, spread))
        })
        .await?;
        drop(cluster);
        let label = servers.to_string();
        rep.rows.push(row(servers, &r, &spread));
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
    rep.notes.push(
        "CPU s: CPU seconds of the load over the cluster's processes (master, region servers, etcd) and the bench client; \
         peak RSS MB: the sum of the cluster processes' peak resident sets during the load"
            .into(),
    );
    Ok(rep)
}

/// The sweep against Apache HBase: a fresh HBase per point with that many
/// region servers in its JVM (see the module docs).
async fn regionservers_hbase(ctx: &Ctx) -> Result<Report> {
    let Some(heap) = ctx.peer_heap.clone() else {
        return Err(BenchError::Invalid(
            "the HBase run of 'regionservers' starts an HBase for each point; it needs one this command starts (not --peer-addr)"
                .into(),
        ));
    };
    let mut rep = report();
    let n = ctx.n(400_000);
    let spec = load_spec(ctx, n);
    let set = vec!["hbase.regionserver.handler.count=120".to_string()];
    let mut series = Series::new(format!(
        "{} (region servers: threads of one JVM)",
        ctx.system()
    ));
    let mut unbalanced = Vec::new();
    for servers in 1..=3usize {
        let peer = HBasePeer::start_with(&heap, &set, servers).await?;
        let here = Ctx {
            hbase: Some(peer.addr.clone()),
            peer_pid: peer.pid(),
            ..ctx.clone()
        };
        let result = with_target_url(&here.target(), Settings::default(), async |t| {
            let probe = here.probe();
            let mut r = run_load(t, &spec).await?;
            r.resources = Some(probe.finish());
            let locations = t
                .hbase_connect(1)
                .await?
                .region_locations(&spec.table)
                .await?;
            let spread = hbase_spread(locations.iter().map(|l| l.server.as_str()));
            drop_hbase_table(t, &spec.table).await?;
            Ok((r, spread))
        })
        .await;
        // Stopping waits for the JVM to exit: off the async threads.
        let _ = tokio::task::spawn_blocking(move || drop(peer)).await;
        let (r, spread) = result?;
        if spread.used < servers {
            unbalanced.push(format!(
                "{servers} servers: the {REGIONS} regions were on {} of them",
                spread.used
            ));
        }
        let label = servers.to_string();
        rep.rows.push(row(servers, &r, &spread));
        rep.point(&label, &r);
        series.push(label, r.rows_per_s);
    }
    rep.series.push(series);
    rep.notes.push(format!(
        "each point ran on an Apache HBase started for it whose one JVM (heap {heap}, shared) held the master, ZooKeeper and N region servers as threads \
         (the first from LocalHBaseCluster, the others started beside it the same way), where ferrobase's region servers are separate processes; \
         CPU s and peak RSS MB are that JVM's (and the bench client's CPU)"
    ));
    rep.notes.push(if unbalanced.is_empty() {
        format!("HBase's master spread the {REGIONS} pre-split regions evenly over the region servers at table creation (regions per server in the table)")
    } else {
        format!("HBase's master did not spread the regions over every server: {}", unbalanced.join("; "))
    });
    Ok(rep)
}

/// Regions per server from a table's region locations (servers in name
/// order; HBase's write counts are not read: `–`).
fn hbase_spread<'a>(servers: impl Iterator<Item = &'a str>) -> Spread {
    let mut per: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for s in servers {
        *per.entry(s).or_default() += 1;
    }
    Spread {
        per_server: per.values().map(|n| format!("{n}/–")).collect(),
        used: per.len(),
    }
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
    let used = status
        .servers
        .iter()
        .filter(|s| s.regions.iter().any(|r| r.table == table))
        .count();
    Ok(Spread { per_server, used })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_counted_per_hbase_server() {
        let s = hbase_spread(
            [
                "127.0.0.1:3",
                "127.0.0.1:1",
                "127.0.0.1:3",
                "127.0.0.1:1",
                "127.0.0.1:3",
            ]
            .into_iter(),
        );
        assert_eq!(s.per_server, ["2/–", "3/–"]);
        assert_eq!(s.used, 2);
        assert_eq!(hbase_spread(std::iter::empty()).used, 0);
    }
}
