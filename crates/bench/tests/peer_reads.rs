//! The `--peer` path of the read experiments without Java: a ferrobase
//! standalone server speaks HBase's RPC on its port, so it stands in for
//! the HBase named by `--peer-addr`. `random-read`, `block-size` and
//! `compression-encoding` then load, flush and major-compact their tables
//! through the HBase client's Admin calls, read them through the HBase
//! client, and write one report with both systems' lines, ratios, and CPU
//! seconds and peak memory per read phase.

use anyhow::Result;
use ferrobase_bench::cli::{ExperimentArgs, ExperimentName, PeerArg, experiment};
use ferrobase_server::Standalone;
use ferrobase_types::Settings;

fn args(name: ExperimentName, out: &std::path::Path, peer: &str) -> ExperimentArgs {
    ExperimentArgs {
        name,
        scale: 0.0005,
        out: out.to_path_buf(),
        server: None,
        etcd: None,
        root: None,
        json: false,
        peer: Some(PeerArg::Hbase),
        peer_addr: Some(peer.to_string()),
        peer_heap: None,
        exe: None,
    }
}

fn strings(v: &serde_json::Value, key: &str) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x[key].as_str().map(String::from))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_experiments_against_a_peer_named_by_address() -> Result<()> {
    let data = tempfile::tempdir()?;
    let settings = Settings {
        memory_size: 256 << 20,
        ..Settings::default()
    };
    let peer = Standalone::start(data.path(), settings, "127.0.0.1:0".parse()?).await?;
    let addr = peer.addr().to_string();
    let out = tempfile::tempdir()?;

    let outcome = experiment(&args(ExperimentName::RandomRead, out.path(), &addr)).await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        out.path().join("random-read.json"),
    )?)?;
    assert_eq!(
        strings(&v["series"], "name"),
        [
            "ferrobase, block cache on",
            "ferrobase, block cache off",
            "ferrobase, row cache on",
            "Apache HBase 2.6 (this machine), block cache on",
            "Apache HBase 2.6 (this machine), block cache off",
        ]
    );
    // One ratio per distribution of each cache setting both systems ran.
    let here: Vec<String> = strings(&v["comparisons"], "what")
        .into_iter()
        .filter(|w| w.contains("Apache HBase here"))
        .collect();
    assert_eq!(
        here,
        [
            "zipfian 0.8, block cache on: ferrobase / Apache HBase here",
            "uniform, block cache on: ferrobase / Apache HBase here",
            "zipfian 0.8, block cache off: ferrobase / Apache HBase here",
            "uniform, block cache off: ferrobase / Apache HBase here",
        ]
    );
    assert_eq!(v["errors"], 0);
    assert!(v["peer"].as_str().unwrap_or("").contains("already running"));
    // Every get found its row on both systems.
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    let header: Vec<&str> = v["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str())
        .collect();
    let col = |name: &str| header.iter().position(|c| *c == name);
    let (Some(not_found), Some(cpu), Some(rss)) =
        (col("not found"), col("CPU s"), col("peak RSS MB"))
    else {
        panic!("columns: {header:?}");
    };
    // Six points over RPC and four engine-alone ones for ferrobase, four
    // for HBase.
    assert_eq!(rows.len(), 14);
    for r in &rows {
        assert_eq!(r.as_array().map(Vec::len), Some(header.len()), "{r}");
        assert_eq!(r[not_found], "0", "{r}");
        if r[0].as_str().is_some_and(|l| l.ends_with("engine alone")) {
            // In-process gets: no separate processes to measure.
            assert_eq!(r[cpu], "-", "{r}");
            continue;
        }
        assert!(
            r[cpu].as_str().is_some_and(|c| c.parse::<f64>().is_ok()),
            "{r}"
        );
        assert!(
            r[rss].as_str().is_some_and(|c| c.parse::<f64>().is_ok()),
            "{r}"
        );
    }
    let labels: Vec<String> = rows
        .iter()
        .filter_map(|r| r[0].as_str().map(String::from))
        .collect();
    assert_eq!(labels[0], "ferrobase zipfian 0.8, block cache on");
    assert_eq!(
        labels[6..10],
        [
            "ferrobase zipfian 0.8, block cache, engine alone",
            "ferrobase uniform, block cache, engine alone",
            "ferrobase zipfian 0.8, row cache, engine alone",
            "ferrobase uniform, row cache, engine alone",
        ]
    );
    assert_eq!(labels[10], "HBase zipfian 0.8, block cache on");
    // The row cache answered the engine-alone gets of its table.
    let notes = v["notes"].to_string();
    assert!(notes.contains("row-cache hits 100 %"), "{notes}");
    // The peer's points carry their processes' CPU and memory; the peer
    // runs in this process here, so it is measured once.
    let points = v["points"].as_array().cloned().unwrap_or_default();
    let theirs: Vec<&serde_json::Value> =
        points.iter().filter(|p| p["system"] == "hbase").collect();
    assert_eq!(theirs.len(), 4);
    for p in theirs {
        let procs = &p["report"]["resources"]["processes"];
        assert_eq!(procs.as_array().map(Vec::len), Some(1), "{p}");
        assert!(procs[0]["peak_rss_bytes"].as_u64().unwrap_or(0) > 0, "{p}");
        assert!(procs[0]["cpu_s"].as_f64().is_some(), "{p}");
    }
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(notes.iter().any(|n| n.contains("HBase has no row cache")));
    assert!(notes.iter().any(|n| n.contains("FlushRegion")));

    let outcome = experiment(&args(ExperimentName::BlockSize, out.path(), &addr)).await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        out.path().join("block-size.json"),
    )?)?;
    let here: Vec<String> = strings(&v["comparisons"], "what")
        .into_iter()
        .filter(|w| w.contains("Apache HBase here"))
        .collect();
    assert_eq!(here.len(), 6, "{here:?}");
    assert!(here[0].starts_with("16 KiB gets/s"), "{here:?}");
    assert!(here[1].starts_with("16 KiB 50-row scans/s"), "{here:?}");
    assert_eq!(v["errors"], 0);
    assert!(
        strings(&v["hbase"], "name")
            .iter()
            .all(|n| n.ends_with("published figure") && !n.contains("2013"))
    );
    let svg = std::fs::read_to_string(out.path().join("block-size.svg"))?;
    assert!(svg.contains("Apache HBase 2.6 (this machine) get"));

    // Server-wide settings per point: an HBase named by address cannot be
    // restarted with them, so the sweep runs on ferrobase alone and says so.
    let outcome = experiment(&args(ExperimentName::Handlers, out.path(), &addr)).await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("handlers.json"))?)?;
    assert_eq!(strings(&v["series"], "name"), ["ferrobase, 8 threads"]);
    assert!(outcome.output.contains("cannot be restarted with them"));
    assert!(outcome.output.contains("CPU s"));

    // Compression × encoding: the stand-in (a ferrobase) has PREFIX_TREE,
    // but the HBase run leaves it out, as HBase 2 has none; every other
    // point is compared by its size on disk, and the rates by their means.
    let outcome = experiment(&args(
        ExperimentName::CompressionEncoding,
        out.path(),
        &addr,
    ))
    .await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        out.path().join("compression-encoding.json"),
    )?)?;
    assert_eq!(v["errors"], 0);
    let labels: Vec<String> = v["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r[0].as_str().map(String::from))
        .collect();
    let ours: Vec<&String> = labels
        .iter()
        .filter(|l| l.starts_with("ferrobase "))
        .collect();
    let theirs: Vec<&String> = labels.iter().filter(|l| l.starts_with("HBase ")).collect();
    assert_eq!((ours.len(), theirs.len()), (30, 25), "{labels:?}");
    assert!(theirs.iter().all(|l| !l.contains("PREFIX_TREE")));
    assert_eq!(
        ours.iter()
            .filter(|l| l.ends_with("PREFIX_TREE (ferrobase only)"))
            .count(),
        5
    );
    let here: Vec<String> = strings(&v["comparisons"], "what")
        .into_iter()
        .filter(|w| w.contains("Apache HBase here"))
        .collect();
    assert_eq!(
        here.iter()
            .filter(|w| w.contains("mean over the 25 points"))
            .count(),
        3,
        "{here:?}"
    );
    // One line per compression and system, over the encodings.
    let lines = strings(&v["series"], "name");
    assert_eq!(lines.len(), 10, "{lines:?}");
    assert!(lines.contains(&"Apache HBase 2.6 (this machine), ZSTD".to_string()));

    peer.stop().await?;
    Ok(())
}
