//! What `/metrics` shows beyond the per-call instruments: gauges and
//! counters read from the region server, the engine, the master and
//! `/proc/self` at scrape time, set into the process's recorder just
//! before it renders.
//!
//! Nothing here runs on a request's path: the engine already keeps these
//! numbers (the same ones `status 'detailed'` prints); a scrape only reads
//! them. Labels are bounded: per table, and per region only for the first
//! [`REGION_LABEL_CAP`] regions by name.

use crate::master::Master;
use crate::region_server::RegionServer;
use ferrobase_proto::pb;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};

/// Regions reported one by one (`hbase_regionserver_region_*`); a server
/// holding more reports the rest only in its per-table and total figures,
/// so a large server cannot flood the scraper with series.
pub const REGION_LABEL_CAP: usize = 100;

fn gauge(name: &'static str, v: f64) {
    metrics::gauge!(name).set(v);
}

fn counter(name: &'static str, v: u64) {
    metrics::counter!(name).absolute(v);
}

/// Per table totals over the regions a server holds.
#[derive(Default)]
struct TableTotals {
    regions: u64,
    memstore: u64,
    store_files: u64,
    store_file_bytes: u64,
    reads: u64,
    writes: u64,
}

/// The server's read and write totals across regions that come and go: a
/// region's counts live in the region, so when it closes (moved, split,
/// dropped) its last seen counts are kept here and the totals never go
/// back.
#[derive(Default)]
pub struct RequestTotals {
    last: HashMap<u64, (u64, u64)>,
    retired: (u64, u64),
}

impl RequestTotals {
    /// The totals (reads, writes) given the regions online now.
    pub fn update(&mut self, regions: &[pb::RegionLoad]) -> (u64, u64) {
        let now: HashMap<u64, (u64, u64)> = regions
            .iter()
            .map(|r| (r.region_id, (r.read_requests, r.write_requests)))
            .collect();
        for (id, (r, w)) in &self.last {
            if !now.contains_key(id) {
                self.retired.0 += r;
                self.retired.1 += w;
            }
        }
        let online = now.values().fold((0, 0), |(r, w), (a, b)| (r + a, w + b));
        self.last = now;
        (self.retired.0 + online.0, self.retired.1 + online.1)
    }
}

/// Sets every region server figure.
pub fn region_server(rs: &RegionServer, totals: &Mutex<RequestTotals>) {
    let load = rs.load();
    let stats = rs.engine().stats();
    let mut tables: BTreeMap<&str, TableTotals> = BTreeMap::new();
    let (reads, writes) = totals.lock().update(&load.regions);
    let (mut files, mut file_bytes) = (0u64, 0u64);
    for (i, r) in load.regions.iter().enumerate() {
        files += r.store_files;
        file_bytes += r.store_file_bytes;
        let t = tables.entry(r.table.as_str()).or_default();
        t.regions += 1;
        t.memstore += r.memstore_bytes;
        t.store_files += r.store_files;
        t.store_file_bytes += r.store_file_bytes;
        t.reads += r.read_requests;
        t.writes += r.write_requests;
        if i < REGION_LABEL_CAP {
            // The region's id, not its name: names hold commas and row
            // bytes, ids are short and unique.
            let labels = [
                ("table", r.table.clone()),
                ("region", format!("{:016x}", r.region_id)),
            ];
            metrics::gauge!("hbase_regionserver_region_memstore_size_bytes", &labels)
                .set(r.memstore_bytes as f64);
            metrics::gauge!("hbase_regionserver_region_store_files", &labels)
                .set(r.store_files as f64);
            metrics::gauge!("hbase_regionserver_region_store_file_size_bytes", &labels)
                .set(r.store_file_bytes as f64);
            metrics::gauge!("hbase_regionserver_region_read_requests", &labels)
                .set(r.read_requests as f64);
            metrics::gauge!("hbase_regionserver_region_write_requests", &labels)
                .set(r.write_requests as f64);
        }
    }
    for (name, t) in &tables {
        let labels = [("table", name.to_string())];
        metrics::gauge!("hbase_regionserver_table_regions", &labels).set(t.regions as f64);
        metrics::gauge!("hbase_regionserver_table_memstore_size_bytes", &labels)
            .set(t.memstore as f64);
        metrics::gauge!("hbase_regionserver_table_store_files", &labels).set(t.store_files as f64);
        metrics::gauge!("hbase_regionserver_table_store_file_size_bytes", &labels)
            .set(t.store_file_bytes as f64);
        metrics::gauge!("hbase_regionserver_table_read_requests", &labels).set(t.reads as f64);
        metrics::gauge!("hbase_regionserver_table_write_requests", &labels).set(t.writes as f64);
    }
    gauge("hbase_regionserver_regions", load.regions.len() as f64);
    counter("hbase_regionserver_read_requests_total", reads);
    counter("hbase_regionserver_write_requests_total", writes);
    gauge("hbase_regionserver_store_files", files as f64);
    gauge(
        "hbase_regionserver_store_file_size_bytes",
        file_bytes as f64,
    );
    gauge(
        "hbase_regionserver_memstore_size_bytes",
        stats.global_memstore_bytes as f64,
    );
    gauge(
        "hbase_regionserver_memstore_limit_bytes",
        stats.global_memstore_limit as f64,
    );
    counter("hbase_regionserver_flushes_total", stats.flushes);
    counter(
        "hbase_regionserver_flushed_bytes_total",
        stats.flushed_bytes,
    );
    gauge(
        "hbase_regionserver_flush_queue_length",
        stats.flush_jobs as f64,
    );
    gauge(
        "hbase_regionserver_compaction_queue_length",
        stats.background_jobs.saturating_sub(stats.flush_jobs) as f64,
    );
    counter("hbase_regionserver_compactions_total", stats.compactions);
    counter(
        "hbase_regionserver_compacted_input_bytes_total",
        stats.compacted_bytes_in,
    );
    counter(
        "hbase_regionserver_compacted_output_bytes_total",
        stats.compacted_bytes_out,
    );
    counter(
        "hbase_regionserver_compaction_throttled_milliseconds_total",
        stats.compaction_throttled_ms,
    );
    let s = stats.stalls;
    counter("hbase_regionserver_blocked_writes_total", s.blocked_writes);
    counter(
        "hbase_regionserver_blocked_write_milliseconds_total",
        s.blocked_ms,
    );
    counter("hbase_regionserver_region_too_busy_total", s.too_busy);
    counter(
        "hbase_regionserver_delayed_flushes_total",
        s.delayed_flushes,
    );
    metrics::counter!("hbase_regionserver_forced_flushes_total", "reason" => "global_memstore")
        .absolute(s.forced_flushes_global);
    metrics::counter!("hbase_regionserver_forced_flushes_total", "reason" => "wal_count")
        .absolute(s.forced_flushes_wal);
    let w = stats.wal;
    counter("hbase_regionserver_wal_appends_total", w.appends);
    counter("hbase_regionserver_wal_batches_total", w.batches);
    counter("hbase_regionserver_wal_syncs_total", w.syncs);
    counter("hbase_regionserver_wal_written_bytes_total", w.bytes);
    counter("hbase_regionserver_wal_rolls_total", w.rolls);
    let c = stats.cache;
    counter("hbase_regionserver_block_cache_hits_total", c.hits);
    counter("hbase_regionserver_block_cache_misses_total", c.misses);
    counter(
        "hbase_regionserver_block_cache_evictions_total",
        c.evictions,
    );
    gauge(
        "hbase_regionserver_block_cache_size_bytes",
        c.size_bytes as f64,
    );
    gauge(
        "hbase_regionserver_block_cache_capacity_bytes",
        c.capacity_bytes as f64,
    );
    gauge("hbase_regionserver_block_cache_blocks", c.entries as f64);
    {
        // Zeros when the row cache is off: every documented name is there.
        let r = rs
            .engine()
            .row_cache()
            .map(|rc| rc.stats())
            .unwrap_or_default();
        counter("hbase_regionserver_row_cache_hits_total", r.hits);
        counter("hbase_regionserver_row_cache_misses_total", r.misses);
        counter("hbase_regionserver_row_cache_bypasses_total", r.bypasses);
        gauge(
            "hbase_regionserver_row_cache_size_bytes",
            r.size_bytes as f64,
        );
        gauge("hbase_regionserver_row_cache_entries", r.entries as f64);
    }
    let pool = rs.pool();
    gauge("hbase_regionserver_handlers", pool.handler_count() as f64);
    gauge(
        "hbase_regionserver_active_handlers",
        pool.active_handlers() as f64,
    );
    gauge(
        "hbase_regionserver_call_queue_length",
        pool.queued_calls() as f64,
    );
    counter("hbase_regionserver_rejected_calls_total", pool.rejected());
    gauge(
        "hbase_regionserver_open_scanners",
        rs.scanners().len() as f64,
    );
    counter(
        "hbase_regionserver_slow_responses_total",
        rs.slow_log().too_slow(),
    );
    counter(
        "hbase_regionserver_large_responses_total",
        rs.slow_log().too_large(),
    );
}

/// Sets the master's figures: tables, regions, live and dead servers.
pub fn master(m: &Master, live_servers: usize) {
    let tables = m.list_tables();
    let regions: usize = tables
        .iter()
        .filter_map(|t| m.table_regions(t).ok())
        .map(|(_, r)| r.len())
        .sum();
    gauge("hbase_master_tables", tables.len() as f64);
    gauge("hbase_master_regions", regions as f64);
    gauge("hbase_master_live_region_servers", live_servers as f64);
    gauge(
        "hbase_master_dead_region_servers",
        m.dead_servers().len() as f64,
    );
    let [crashes, split_ms] = &m.crashes;
    counter(
        "hbase_master_server_crash_total",
        crashes.load(std::sync::atomic::Ordering::Relaxed),
    );
    counter(
        "hbase_master_wal_split_milliseconds_total",
        split_ms.load(std::sync::atomic::Ordering::Relaxed),
    );
    let [splits, merges, retired] = &m.region_changes;
    counter(
        "hbase_master_region_splits_total",
        splits.load(std::sync::atomic::Ordering::Relaxed),
    );
    counter(
        "hbase_master_region_merges_total",
        merges.load(std::sync::atomic::Ordering::Relaxed),
    );
    counter(
        "hbase_master_janitor_retired_regions_total",
        retired.load(std::sync::atomic::Ordering::Relaxed),
    );
}

/// CPU time and resident memory of this process, from `/proc/self`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcessStats {
    pub cpu_seconds: f64,
    pub resident_bytes: u64,
    pub threads: u64,
}

/// Reads `/proc/self/stat` and `/proc/self/status`; zeros where they are
/// missing (not Linux) or unreadable.
pub fn process_stats() -> ProcessStats {
    let mut p = ProcessStats::default();
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        // Fields after the command name, which may hold spaces and ends at
        // the last ')': state is field 3, utime 14, stime 15, threads 20.
        if let Some((_, rest)) = stat.rsplit_once(')') {
            let f: Vec<&str> = rest.split_whitespace().collect();
            let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // `rest` starts at field 3; clock ticks are USER_HZ, 100 on
            // every Linux ABI.
            p.cpu_seconds = (num(11) + num(12)) as f64 / 100.0;
            p.threads = num(17);
        }
    }
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        p.resident_bytes = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024);
    }
    p
}

/// Sets the process figures (Prometheus's standard names).
pub fn process(started_unix_secs: f64) {
    let p = process_stats();
    gauge("process_cpu_seconds_total", p.cpu_seconds);
    gauge("process_resident_memory_bytes", p.resident_bytes as f64);
    gauge("process_threads", p.threads as f64);
    gauge("process_start_time_seconds", started_unix_secs);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(id: u64, reads: u64, writes: u64) -> pb::RegionLoad {
        pb::RegionLoad {
            region_id: id,
            read_requests: reads,
            write_requests: writes,
            ..Default::default()
        }
    }

    #[test]
    fn totals_keep_the_counts_of_regions_that_left() {
        let mut t = RequestTotals::default();
        assert_eq!(t.update(&[region(1, 5, 7), region(2, 1, 1)]), (6, 8));
        // Region 1 split into 3 and 4: its counts stay in the totals.
        assert_eq!(
            t.update(&[region(2, 2, 1), region(3, 1, 0), region(4, 0, 2)]),
            (8, 10)
        );
        assert_eq!(t.update(&[]), (8, 10));
    }

    #[test]
    fn reads_this_process() {
        let p = process_stats();
        assert!(p.resident_bytes > 0, "{p:?}");
        assert!(p.threads >= 1, "{p:?}");
    }
}
