//! The info port of a standalone server: `/metrics` parses as Prometheus
//! text and its counts move as a real client works; `/jmx` has HBase's
//! beans; the pages list the table and its regions, escaped; a slow (here:
//! large) response lands in the slow-request list; bad requests get 404 or
//! 400.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use common::http_get;
use ferrobase_client::{Get, Scan};
use ferrobase_server::info_server::{InfoParts, InfoServer};
use ferrobase_types::RowMutation;
use prometheus_parse::{Scrape, Value};
use std::net::SocketAddr;

async fn scrape(addr: SocketAddr) -> Scrape {
    let (status, body) = http_get(addr, "/metrics").await;
    assert_eq!(status, 200, "{body}");
    Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap()
}

/// The value of the sample `name` whose labels include `labels`.
fn value(s: &Scrape, name: &str, labels: &[(&str, &str)]) -> f64 {
    s.samples
        .iter()
        .filter(|x| x.metric == name)
        .filter(|x| labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .map(|x| match x.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
            _ => 0.0,
        })
        .sum()
}

fn requests(s: &Scrape, op: &str) -> f64 {
    value(
        s,
        "hbase_regionserver_rpc_requests_total",
        &[("protocol", "grpc"), ("op", op)],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_jmx_and_pages_follow_a_real_client() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = common::settings();
    // Every answer of more than a byte is "too large": the slow-request
    // list fills without depending on how long anything takes.
    settings.ipc_warn_response_size = 1;
    let (server, conn) = common::start_on(dir.path(), settings).await;
    let info = InfoServer::start(
        "127.0.0.1:0".parse().unwrap(),
        InfoParts {
            master: Some(server.master().clone()),
            region_server: Some(server.region_server().clone()),
            role: "standalone",
        },
        None,
    )
    .await
    .unwrap();
    let addr = info.addr();

    let before = scrape(addr).await;
    assert_eq!(requests(&before, "get"), 0.0);
    assert_eq!(value(&before, "hbase_regionserver_regions", &[]), 0.0);

    // A table split at a key with a byte that is not printable and one
    // that is markup.
    let split = Bytes::from_static(b"m<\x01");
    let admin = conn.admin();
    admin
        .create_table(&common::table("t", &["f"]), std::slice::from_ref(&split))
        .await
        .unwrap();
    let t = conn.table("t");
    for i in 0..10 {
        t.put(RowMutation::new(format!("r{i}")).put("f", "q", "v"))
            .await
            .unwrap();
    }
    for i in 0..5 {
        t.get(Get::new(format!("r{i}"))).await.unwrap();
    }
    let rows = t.scan(Scan::new()).collect().await.unwrap();
    assert_eq!(rows.len(), 10);
    t.increment("n", "f", "c", 2).await.unwrap();
    t.append("a", "f", "log", "x").await.unwrap();
    assert!(
        t.check_and_mutate("f", "q", None, RowMutation::new("new").put("f", "q", "v"))
            .await
            .unwrap()
    );
    admin.flush("t").await.unwrap();

    let after = scrape(addr).await;
    // Counts, never timings. Retries could only add calls.
    assert!(requests(&after, "get") >= 5.0);
    assert!(requests(&after, "mutate") >= 10.0);
    assert!(requests(&after, "scan") >= 1.0);
    assert!(requests(&after, "increment") >= 1.0);
    assert!(requests(&after, "append") >= 1.0);
    assert!(requests(&after, "check_and_mutate") >= 1.0);
    // Every call is timed: the latency summary counted the gets.
    let latency_count = value(
        &after,
        "hbase_regionserver_rpc_latency_seconds_count",
        &[("protocol", "grpc"), ("op", "get")],
    );
    let summary = after
        .samples
        .iter()
        .find(|x| {
            x.metric == "hbase_regionserver_rpc_latency_seconds"
                && x.labels.get("op") == Some("get")
                && x.labels.get("protocol") == Some("grpc")
        })
        .map(|x| x.value.clone());
    assert!(latency_count >= 5.0, "count {latency_count}");
    assert!(
        matches!(summary, Some(Value::Summary(ref q)) if q.len() == 5),
        "{summary:?}"
    );
    assert_eq!(value(&after, "hbase_regionserver_regions", &[]), 2.0);
    assert_eq!(
        value(
            &after,
            "hbase_regionserver_table_regions",
            &[("table", "t")]
        ),
        2.0
    );
    assert!(
        value(&after, "hbase_regionserver_flushes_total", &[])
            > value(&before, "hbase_regionserver_flushes_total", &[])
    );
    assert!(value(&after, "hbase_regionserver_store_files", &[]) >= 1.0);
    assert!(
        value(&after, "hbase_regionserver_wal_appends_total", &[])
            >= value(&before, "hbase_regionserver_wal_appends_total", &[]) + 13.0
    );
    assert!(
        value(&after, "hbase_regionserver_write_requests_total", &[]) >= 13.0,
        "writes"
    );
    assert!(value(&after, "hbase_regionserver_read_requests_total", &[]) >= 5.0);
    assert!(value(&after, "hbase_regionserver_large_responses_total", &[]) >= 1.0);
    assert_eq!(value(&after, "hbase_master_tables", &[]), 1.0);
    assert!(value(&after, "process_resident_memory_bytes", &[]) > 0.0);

    // Every series docs/metrics.md and the Grafana dashboard name is there
    // (the gateway's only in a process running one).
    let names: std::collections::BTreeSet<String> =
        after.samples.iter().map(|s| s.metric.clone()).collect();
    for doc in ["docs/metrics.md", "docs/grafana/ferrobase.json"] {
        let text =
            std::fs::read_to_string(format!("{}/../../{doc}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let named = regex_names(&text);
        assert!(named.len() > 10, "{doc}: {named:?}");
        for name in named {
            if name.starts_with("hbase_thrift_") {
                continue;
            }
            assert!(
                names.contains(&name),
                "{doc} names {name}, /metrics has not"
            );
        }
    }

    // /jmx: HBase's beans and keys.
    let (status, body) = http_get(addr, "/jmx").await;
    assert_eq!(status, 200, "{body}");
    let jmx: serde_json::Value = serde_json::from_str(&body).unwrap();
    let beans = jmx["beans"].as_array().unwrap();
    let bean = |name: &str| {
        beans
            .iter()
            .find(|b| b["name"] == name)
            .unwrap_or_else(|| panic!("no bean {name} in {body}"))
            .clone()
    };
    let rs = bean("Hadoop:service=HBase,name=RegionServer,sub=Server");
    assert_eq!(rs["regionCount"], 2);
    assert!(rs["readRequestCount"].as_i64().unwrap() >= 5);
    assert!(rs["writeRequestCount"].as_i64().unwrap() >= 13);
    assert!(rs["storeFileCount"].as_i64().unwrap() >= 1);
    assert!(rs["Get_num_ops"].as_i64().unwrap() >= 5);
    for key in [
        "memStoreSize",
        "storeFileSize",
        "blockCacheHitCount",
        "blockCacheMissCount",
        "Get_99th_percentile",
        "Put_num_ops",
    ] {
        assert!(rs.get(key).is_some(), "{key} missing: {rs}");
    }
    assert_eq!(
        bean("Hadoop:service=HBase,name=Master,sub=Server")["numTables"],
        1
    );
    bean("Hadoop:service=HBase,name=RegionServer,sub=IPC");
    let (status, one) = http_get(
        addr,
        "/jmx?qry=Hadoop:service=HBase,name=RegionServer,sub=WAL",
    )
    .await;
    assert_eq!(status, 200, "{one}");
    assert!(one.contains("appendCount"), "{one}");

    // Pages: the table with its region count, keys escaped.
    let (status, master) = http_get(addr, "/master-status").await;
    assert_eq!(status, 200);
    assert!(master.contains("href=\"/table.jsp?name=t\""), "{master}");
    assert!(
        master.contains("<td class=\"n region-count\">2</td>"),
        "{master}"
    );
    let (status, page) = http_get(addr, "/table.jsp?name=t").await;
    assert_eq!(status, 200);
    assert_eq!(page.matches("class=\"region-row\"").count(), 2, "{page}");
    assert!(page.contains("m&lt;\\x01"), "{page}");
    assert!(!page.contains("m<"), "{page}");
    let (status, rs_page) = http_get(addr, "/rs-status").await;
    assert_eq!(status, 200);
    assert!(rs_page.contains("responseTooLarge"), "{rs_page}");
    assert!(rs_page.contains("/static/rs-chart.js"), "{rs_page}");
    let (status, js) = http_get(addr, "/static/rs-chart.js").await;
    assert_eq!(status, 200);
    assert!(js.contains("rs-status.json"));
    let (status, points) = http_get(addr, "/rs-status.json").await;
    assert_eq!(status, 200);
    let points: serde_json::Value = serde_json::from_str(&points).unwrap();
    assert!(points["points"].is_array());
    let (status, _) = http_get(addr, "/").await;
    assert_eq!(status, 303);

    // Bad requests: 404 or 400 with a message, and the server still serves.
    for (path, want) in [
        ("/nope", 404),
        ("/table.jsp", 400),
        ("/table.jsp?name=", 400),
        ("/table.jsp?name=missing", 404),
        ("/table.jsp?name=%3Cscript%3E", 404),
        ("/jmx?qry=Hadoop:service=HBase,name=Nothing", 404),
        ("/rs-status.json?since=abc", 400),
        ("/metrics/../../etc/passwd", 404),
    ] {
        let (status, body) = http_get(addr, path).await;
        assert_eq!(status, want, "{path}: {body}");
        assert!(!body.trim().is_empty(), "{path}: no message");
    }
    assert_eq!(http_get(addr, "/metrics").await.0, 200);

    info.stop().await;
    server.stop().await.unwrap();
}

/// Whole metric names (`hbase_…`, `process_…`) in a document; name stems
/// written with `…` are skipped.
fn regex_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if (rest.starts_with("hbase_") || rest.starts_with("process_"))
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
        {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..end];
            let stem = name.ends_with('_') || rest[end..].starts_with('…');
            if !stem {
                out.push(name.to_string());
            }
            i += end.max(1);
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}
