//! `bench experiment value-size --peer hbase`, `random-read --peer hbase`
//! and `compression-encoding --peer hbase` at a tiny scale, against a real
//! Apache HBase 2.6 started by the command itself (scripts/hbase-peer.sh):
//! the JSON holds ferrobase's and HBase's lines and a ferrobase/HBase ratio
//! per point, the SVG draws both, the reads find every row on both systems
//! after HBase's flush and major compaction, every compression both have
//! works in HBase and its store files are measured on its disk, the HBase
//! JVM's CPU and memory are measured, and the peer is stopped afterwards.
//! The HBase run of `regionservers` starts an HBase with 1, 2 and 3 region
//! servers in its JVM and finds the pre-split table's regions on all of
//! them. Needs Java 17 and Maven; where `java` is
//! absent the test prints why and checks nothing, unless
//! `FERROBASE_REQUIRE_HBASE_PEER=1` (scripts/test.sh), which makes it fail.

use anyhow::Result;
use ferrobase_bench::cli::{ExperimentArgs, ExperimentName, PeerArg, experiment};
use ferrobase_bench::experiment::{Ctx, servers};

/// False (after saying why) when no Java can start the peer and the run
/// does not require one.
fn java_or_skip() -> bool {
    let required = std::env::var("FERROBASE_REQUIRE_HBASE_PEER").is_ok_and(|v| v == "1");
    if std::process::Command::new("java")
        .arg("-version")
        .output()
        .is_err()
    {
        assert!(
            !required,
            "FERROBASE_REQUIRE_HBASE_PEER=1 but java is not on PATH"
        );
        eprintln!(
            "\n===== SKIPPED: bench experiment --peer hbase =====\n\
             java is not on PATH, so no Apache HBase can start and this test checked\n\
             NOTHING. scripts/java-deps.sh peer installs a JDK 17 and Maven.\n\
             ==================================================\n"
        );
        return false;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn value_size_against_ferrobase_and_apache_hbase() -> Result<()> {
    if !java_or_skip() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let args = ExperimentArgs {
        name: ExperimentName::ValueSize,
        scale: 0.0005,
        out: dir.path().to_path_buf(),
        server: None,
        etcd: None,
        root: None,
        json: false,
        peer: Some(PeerArg::Hbase),
        peer_addr: None,
        peer_heap: Some("768m".into()),
        exe: None,
    };
    let outcome = experiment(&args).await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.path().join("value-size.json"),
    )?)?;
    let names: Vec<&str> = v["series"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        names,
        [
            "ferrobase, 4 threads",
            "Apache HBase 2.6 (this machine), 4 threads"
        ]
    );
    for s in v["series"].as_array().into_iter().flatten() {
        assert_eq!(s["points"].as_array().map(Vec::len), Some(4), "{s}");
    }
    let ratios = v["comparisons"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|c| {
                    c["what"]
                        .as_str()
                        .unwrap_or("")
                        .contains("Apache HBase here")
                })
                .count()
        })
        .unwrap_or(0);
    assert_eq!(ratios, 4);
    assert!(
        v["peer"]
            .as_str()
            .unwrap_or("")
            .contains("Apache HBase 2.6.4")
    );
    assert_eq!(v["errors"], 0);
    let svg = std::fs::read_to_string(dir.path().join("value-size.svg"))?;
    assert!(svg.contains("Apache HBase 2.6 (this machine)"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_read_against_ferrobase_and_apache_hbase() -> Result<()> {
    if !java_or_skip() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let args = ExperimentArgs {
        name: ExperimentName::RandomRead,
        scale: 0.0005,
        out: dir.path().to_path_buf(),
        server: None,
        etcd: None,
        root: None,
        json: false,
        peer: Some(PeerArg::Hbase),
        peer_addr: None,
        peer_heap: Some("768m".into()),
        exe: None,
    };
    let outcome = experiment(&args).await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.path().join("random-read.json"),
    )?)?;
    assert_eq!(v["errors"], 0);
    let ratios = v["comparisons"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter(|c| {
                    c["what"]
                        .as_str()
                        .unwrap_or("")
                        .contains("Apache HBase here")
                })
                .count()
        })
        .unwrap_or(0);
    assert_eq!(ratios, 4);
    let points = v["points"].as_array().cloned().unwrap_or_default();
    let theirs: Vec<&serde_json::Value> =
        points.iter().filter(|p| p["system"] == "hbase").collect();
    assert_eq!(theirs.len(), 4);
    for p in theirs {
        // Every key was loaded, so every get found its row.
        assert_eq!(p["report"]["not_found"], 0, "{p}");
        // The JVM and this process, each measured.
        let procs = p["report"]["resources"]["processes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(procs.len(), 2, "{p}");
        assert_eq!(procs[0]["process"], "Apache HBase JVM");
        assert!(procs[0]["peak_rss_bytes"].as_u64().unwrap_or(0) > 0, "{p}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compression_encoding_against_ferrobase_and_apache_hbase() -> Result<()> {
    if !java_or_skip() {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let args = ExperimentArgs {
        name: ExperimentName::CompressionEncoding,
        scale: 0.002,
        out: dir.path().to_path_buf(),
        server: None,
        etcd: None,
        root: None,
        json: false,
        peer: Some(PeerArg::Hbase),
        peer_addr: None,
        peer_heap: Some("768m".into()),
        exe: None,
    };
    let outcome = experiment(&args).await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.path().join("compression-encoding.json"),
    )?)?;
    // Every compression both systems have (GZ, SNAPPY, LZ4, ZSTD) created,
    // loaded, compacted and read in HBase without a failed operation.
    assert_eq!(v["errors"], 0);
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    let header: Vec<&str> = v["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str())
        .collect();
    let mb = header
        .iter()
        .position(|c| *c == "MB on disk")
        .unwrap_or(usize::MAX);
    let theirs: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r[0].as_str().is_some_and(|l| l.starts_with("HBase ")))
        .collect();
    assert_eq!(theirs.len(), 25);
    // Sizes read from the store files on the peer's disk.
    for r in &theirs {
        assert!(
            r[mb].as_str().is_some_and(|c| c.parse::<f64>().is_ok()),
            "{r}"
        );
    }
    let points = v["points"].as_array().cloned().unwrap_or_default();
    let sizes = |system: &str, label: &str| {
        points
            .iter()
            .find(|p| {
                p["point"]
                    == if system == "hbase" {
                        format!("HBase {label}")
                    } else {
                        label.to_string()
                    }
            })
            .and_then(|p| p["store_file_bytes"].as_f64())
            .unwrap_or(0.0)
    };
    for system in ["ferrobase", "hbase"] {
        // GZ and ZSTD make text smaller than no compression on both.
        let none = sizes(system, "NONE/NONE");
        assert!(none > 0.0, "{system}");
        assert!(sizes(system, "GZ/NONE") < none, "{system}");
        assert!(sizes(system, "ZSTD/NONE") < none, "{system}");
    }
    let svg = std::fs::read_to_string(dir.path().join("compression-encoding.svg"))?;
    assert!(svg.contains("Apache HBase 2.6 (this machine), ZSTD"));
    assert!(svg.contains("PREFIX_TREE (not in HBase 2)"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regionservers_on_apache_hbase_with_one_to_three_servers() -> Result<()> {
    if !java_or_skip() {
        return Ok(());
    }
    // The HBase run alone (the ferrobase run needs the ferrobase binary:
    // crates/ferrobase/tests/bench_cli.rs); it starts its own HBase per
    // point, so the address here is never dialled.
    let ctx = Ctx {
        hbase: Some("127.0.0.1:1".into()),
        peer_heap: Some("768m".into()),
        ..Ctx::new(0.005)
    };
    let rep = servers::regionservers(&ctx).await?;
    assert_eq!(rep.errors, 0);
    let xs: Vec<&str> = rep.series[0]
        .points
        .iter()
        .map(|(x, _)| x.as_str())
        .collect();
    assert_eq!(xs, ["1", "2", "3"]);
    let spread = rep
        .columns
        .iter()
        .position(|c| c == "regions/writes per server")
        .unwrap_or(usize::MAX);
    // The master placed the 6 pre-split regions over every server (one
    // `regions/–` entry a server holding some).
    for (n, r) in rep.rows.iter().enumerate() {
        let regions: Vec<u32> = r[spread]
            .split(' ')
            .filter_map(|e| e.split('/').next()?.parse().ok())
            .collect();
        assert_eq!(regions.len(), n + 1, "{r:?}");
        assert_eq!(regions.iter().sum::<u32>(), 6, "{r:?}");
    }
    for p in &rep.points {
        assert_eq!(p["report"]["rows"], 2_000, "{p}");
        let procs = p["report"]["resources"]["processes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // The one JVM (every server) and this client.
        assert_eq!(procs.len(), 2, "{p}");
        assert_eq!(procs[0]["process"], "Apache HBase JVM");
    }
    assert!(rep.notes.iter().any(|n| n.contains("threads")));
    Ok(())
}
