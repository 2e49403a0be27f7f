//! `/jmx`: the figures of `/metrics` in HBase's JMX JSON shape,
//! `{"beans":[{"name":"Hadoop:service=HBase,name=RegionServer,sub=Server",
//! …}]}`, under HBase's key names (`readRequestCount`, `memStoreSize`,
//! `Get_num_ops`, `Get_99th_percentile`, …), for tools that scrape HBase's
//! `/jmx`. `?qry=NAME` keeps the beans of that name (`*` matches any text),
//! as HBase's servlet does.
//!
//! It reads the rendered Prometheus text back with a Prometheus parser, so
//! both endpoints always show the same numbers; it keeps no state.

use super::{Shared, render, text_error};
use crate::rpc_metrics::{LATENCY, Op, REQUESTS};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use prometheus_parse::{Sample, Scrape, Value};
use serde_json::{Map, Value as Json, json};
use std::sync::Arc;

/// Query of `/jmx`.
#[derive(serde::Deserialize)]
pub struct JmxQuery {
    qry: Option<String>,
}

/// The samples of one rendering, summed over labels by metric name.
struct Figures {
    samples: Vec<Sample>,
}

impl Figures {
    fn sum(&self, name: &str) -> f64 {
        self.samples
            .iter()
            .filter(|s| s.metric == name)
            .map(|s| match &s.value {
                Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
                _ => 0.0,
            })
            .sum()
    }

    fn sum_where(&self, name: &str, label: &str, value: &str) -> f64 {
        self.samples
            .iter()
            .filter(|s| s.metric == name && s.labels.get(label) == Some(value))
            .map(|s| match &s.value {
                Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
                _ => 0.0,
            })
            .sum()
    }

    /// The largest `quantile` of a summary over its label sets (protocols),
    /// in ms as HBase reports.
    fn quantile_ms(&self, name: &str, op: &str, quantile: f64) -> f64 {
        self.samples
            .iter()
            .filter(|s| s.metric == name && s.labels.get("op") == Some(op))
            .filter_map(|s| match &s.value {
                Value::Summary(qs) => qs
                    .iter()
                    .find(|q| (q.quantile - quantile).abs() < 1e-9)
                    .map(|q| q.count),
                _ => None,
            })
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
            * 1000.0
    }
}

/// HBase's name for each operation's figures (`Get_num_ops`, …).
fn hbase_op_name(op: Op) -> &'static str {
    match op {
        Op::Get => "Get",
        Op::Put => "Put",
        Op::Delete => "Delete",
        Op::Mutate => "Mutate",
        Op::Multi => "Multi",
        Op::Scan => "ScanTime",
        Op::Increment => "Increment",
        Op::Append => "Append",
        Op::CheckAndMutate => "CheckAndMutate",
    }
}

fn insert(bean: &mut Map<String, Json>, key: &str, v: f64) {
    // Whole numbers as integers, as JMX longs are.
    let value = if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    };
    bean.insert(key.to_string(), value);
}

fn beans(s: &Shared, f: &Figures) -> Vec<Json> {
    let mut beans = Vec::new();
    if s.parts.region_server.is_some() {
        let mut server = Map::new();
        server.insert(
            "name".into(),
            json!("Hadoop:service=HBase,name=RegionServer,sub=Server"),
        );
        server.insert("modelerType".into(), json!("RegionServer,sub=Server"));
        let reads = f.sum("hbase_regionserver_read_requests_total");
        let writes = f.sum("hbase_regionserver_write_requests_total");
        for (key, v) in [
            ("regionCount", f.sum("hbase_regionserver_regions")),
            ("readRequestCount", reads),
            ("writeRequestCount", writes),
            ("totalRequestCount", reads + writes),
            (
                "memStoreSize",
                f.sum("hbase_regionserver_memstore_size_bytes"),
            ),
            ("storeFileCount", f.sum("hbase_regionserver_store_files")),
            (
                "storeFileSize",
                f.sum("hbase_regionserver_store_file_size_bytes"),
            ),
            (
                "flushQueueLength",
                f.sum("hbase_regionserver_flush_queue_length"),
            ),
            (
                "compactionQueueLength",
                f.sum("hbase_regionserver_compaction_queue_length"),
            ),
            (
                "flushedCellsSize",
                f.sum("hbase_regionserver_flushed_bytes_total"),
            ),
            (
                "compactedCellsSize",
                f.sum("hbase_regionserver_compacted_output_bytes_total"),
            ),
            (
                "blockedRequestCount",
                f.sum("hbase_regionserver_blocked_writes_total"),
            ),
            (
                "blockCacheSize",
                f.sum("hbase_regionserver_block_cache_size_bytes"),
            ),
            (
                "blockCacheCount",
                f.sum("hbase_regionserver_block_cache_blocks"),
            ),
            (
                "blockCacheFreeSize",
                (f.sum("hbase_regionserver_block_cache_capacity_bytes")
                    - f.sum("hbase_regionserver_block_cache_size_bytes"))
                .max(0.0),
            ),
            (
                "blockCacheHitCount",
                f.sum("hbase_regionserver_block_cache_hits_total"),
            ),
            (
                "blockCacheMissCount",
                f.sum("hbase_regionserver_block_cache_misses_total"),
            ),
            (
                "blockCacheEvictionCount",
                f.sum("hbase_regionserver_block_cache_evictions_total"),
            ),
            (
                "slowResponseCount",
                f.sum("hbase_regionserver_slow_responses_total"),
            ),
        ] {
            insert(&mut server, key, v);
        }
        let (hits, misses) = (
            f.sum("hbase_regionserver_block_cache_hits_total"),
            f.sum("hbase_regionserver_block_cache_misses_total"),
        );
        let percent = if hits + misses > 0.0 {
            hits * 100.0 / (hits + misses)
        } else {
            0.0
        };
        insert(&mut server, "blockCacheCountHitPercent", percent);
        for &op in Op::all() {
            let name = hbase_op_name(op);
            insert(
                &mut server,
                &format!("{name}_num_ops"),
                f.sum_where(REQUESTS, "op", op.label()),
            );
            for (suffix, q) in [
                ("median", 0.5),
                ("75th_percentile", 0.75),
                ("95th_percentile", 0.95),
                ("99th_percentile", 0.99),
                ("99.9th_percentile", 0.999),
            ] {
                insert(
                    &mut server,
                    &format!("{name}_{suffix}"),
                    f.quantile_ms(LATENCY, op.label(), q),
                );
            }
        }
        beans.push(Json::Object(server));

        let mut ipc = Map::new();
        ipc.insert(
            "name".into(),
            json!("Hadoop:service=HBase,name=RegionServer,sub=IPC"),
        );
        for (key, v) in [
            (
                "numActiveHandler",
                f.sum("hbase_regionserver_active_handlers"),
            ),
            (
                "numCallsInGeneralQueue",
                f.sum("hbase_regionserver_call_queue_length"),
            ),
            ("receivedBytes", f.sum(crate::rpc_metrics::RECEIVED_BYTES)),
            ("sentBytes", f.sum(crate::rpc_metrics::SENT_BYTES)),
            (
                "exceptions.callQueueTooBig",
                f.sum("hbase_regionserver_rejected_calls_total"),
            ),
            ("numOpenScanners", f.sum("hbase_regionserver_open_scanners")),
        ] {
            insert(&mut ipc, key, v);
        }
        beans.push(Json::Object(ipc));

        let mut wal = Map::new();
        wal.insert(
            "name".into(),
            json!("Hadoop:service=HBase,name=RegionServer,sub=WAL"),
        );
        for (key, v) in [
            ("appendCount", f.sum("hbase_regionserver_wal_appends_total")),
            (
                "SyncTime_num_ops",
                f.sum("hbase_regionserver_wal_syncs_total"),
            ),
            (
                "writtenBytes",
                f.sum("hbase_regionserver_wal_written_bytes_total"),
            ),
            ("rollRequest", f.sum("hbase_regionserver_wal_rolls_total")),
        ] {
            insert(&mut wal, key, v);
        }
        beans.push(Json::Object(wal));
    }
    if s.parts.master.is_some() {
        let mut master = Map::new();
        master.insert(
            "name".into(),
            json!("Hadoop:service=HBase,name=Master,sub=Server"),
        );
        for (key, v) in [
            (
                "numRegionServers",
                f.sum("hbase_master_live_region_servers"),
            ),
            (
                "numDeadRegionServers",
                f.sum("hbase_master_dead_region_servers"),
            ),
            ("numTables", f.sum("hbase_master_tables")),
            ("numRegions", f.sum("hbase_master_regions")),
        ] {
            insert(&mut master, key, v);
        }
        beans.push(Json::Object(master));
    }
    let mut process = Map::new();
    process.insert("name".into(), json!("java.lang:type=OperatingSystem"));
    insert(
        &mut process,
        "ProcessCpuTime",
        // JMX reports nanoseconds.
        (f.sum("process_cpu_seconds_total") * 1e9).round(),
    );
    insert(
        &mut process,
        "ResidentMemorySize",
        f.sum("process_resident_memory_bytes"),
    );
    beans.push(Json::Object(process));
    beans
}

/// Whether `name` matches `pattern`, where `*` stands for any text (the
/// part of JMX's ObjectName patterns tools use: `…,sub=*`).
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return false;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// `GET /jmx[?qry=BEAN]`.
pub async fn handler(
    State(s): State<Arc<Shared>>,
    q: Result<Query<JmxQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = q else {
        return text_error(
            StatusCode::BAD_REQUEST,
            "bad query: /jmx takes only qry=BEAN_NAME".into(),
        );
    };
    let text = match render(&s).await {
        Ok(t) => t,
        Err(e) => return e,
    };
    let scrape = match Scrape::parse(text.lines().map(|l| Ok(l.to_string()))) {
        Ok(s) => s,
        Err(e) => {
            return text_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("reading the metrics back failed: {e}"),
            );
        }
    };
    let mut all = beans(
        &s,
        &Figures {
            samples: scrape.samples,
        },
    );
    if let Some(want) = q.qry {
        all.retain(|b| {
            b.get("name")
                .and_then(Json::as_str)
                .is_some_and(|name| glob(&want, name))
        });
        if all.is_empty() {
            return text_error(StatusCode::NOT_FOUND, format!("no bean named {want}"));
        }
    }
    axum::Json(json!({ "beans": all })).into_response()
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn qry_patterns_match_like_jmx() {
        let rs = "Hadoop:service=HBase,name=RegionServer,sub=Server";
        assert!(glob(rs, rs));
        assert!(glob("Hadoop:service=HBase,name=RegionServer,sub=*", rs));
        assert!(glob("*sub=Server", rs));
        assert!(glob("Hadoop:*RegionServer*", rs));
        assert!(!glob("Hadoop:service=HBase,name=Master,sub=*", rs));
        assert!(!glob("Hadoop:service=HBase", rs));
    }
}
