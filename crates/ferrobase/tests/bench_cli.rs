//! `ferrobase bench` through the binary: a bad flag exits non-zero listing
//! the valid values; a small load prints a JSON report and exits 0;
//! `regionservers` runs 1, 2 and 3 real region server processes on a real
//! etcd and reports every point; `bench peer ycsb` runs YCSB against a real
//! Apache HBase 2.6 and this binary (skipped, saying so, where Java is
//! absent, unless `FERROBASE_REQUIRE_HBASE_PEER=1`).

use std::process::Command;

fn ferrobase(args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new(env!("CARGO_BIN_EXE_ferrobase"))
        .args(args)
        .output()
}

#[test]
fn bad_flags_are_refused_with_the_valid_values() -> Result<(), Box<dyn std::error::Error>> {
    let out = ferrobase(&["bench", "load", "--shape", "log10", "--rows", "10"])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("log10") && err.contains("log9") && err.contains("single53"),
        "{err}"
    );

    let out = ferrobase(&["bench", "load", "--shape", "kv", "--durability", "often"])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skip") && err.contains("fsync"), "{err}");

    let out = ferrobase(&["bench", "experiment", "nope"])?;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("block-size"));

    let out = ferrobase(&["bench", "ycsb", "run", "--workload", "z"])?;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("a, b, c, d, e, f"));

    let out = ferrobase(&["bench", "load", "--shape", "kv", "--family", "FAST_DIFF"])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--family FAST_DIFF") && err.contains("NAME=VALUE"),
        "{err}"
    );

    let out = ferrobase(&[
        "bench",
        "load",
        "--shape",
        "kv",
        "--rows",
        "10",
        "--family",
        "DATA_BLOCK_ENCODING=SHRINK",
    ])?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("DATA_BLOCK_ENCODING") && err.contains("SHRINK"),
        "{err}"
    );
    Ok(())
}

#[test]
fn load_prints_json() -> Result<(), Box<dyn std::error::Error>> {
    let out = ferrobase(&[
        "bench",
        "load",
        "--shape",
        "kv",
        "--value-size",
        "50",
        "--rows",
        "500",
        "--threads",
        "2",
        "--write-buffer",
        "8k",
        "--family",
        "DATA_BLOCK_ENCODING=FAST_DIFF",
        "--json",
    ])?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(v["rows"], 500);
    assert_eq!(v["cells"], 500);
    assert_eq!(v["error_count"], 0);
    assert!(v["rpcs"].as_u64().unwrap_or(0) >= 2);
    Ok(())
}

#[test]
fn regionservers_experiment_runs_real_clusters() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let out_dir = dir.path().to_string_lossy().to_string();
    let out = ferrobase(&[
        "bench",
        "experiment",
        "regionservers",
        "--scale",
        "0.005",
        "--out",
        &out_dir,
        "--json",
    ])?;
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.path().join("regionservers.json"),
    )?)?;
    assert_eq!(v["errors"], 0);
    let points = v["series"][0]["points"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let xs: Vec<_> = points.iter().map(|p| p[0].clone()).collect();
    assert_eq!(xs, ["1", "2", "3"]);
    for p in &points {
        assert!(p[1].as_f64().unwrap_or(0.0) > 0.0, "{p}");
    }
    // Every load wrote all its rows, and with 3 servers the 6 regions were
    // spread over 3 servers (one `regions/writes` entry each).
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.len(), 3);
    let columns = v["columns"].as_array().map(Vec::len).unwrap_or(0);
    assert!(
        rows.iter()
            .all(|r| r.as_array().map(Vec::len) == Some(columns))
    );
    for r in &rows {
        assert_eq!(r[1], "2,000", "{r}");
    }
    // Stall counters come from the cluster's status (summed over servers);
    // CPU and memory are measured over the cluster's processes (master,
    // region servers, etcd) and this client.
    for (i, p) in v["points"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        assert!(p["report"]["stalls_after"]["flushes"].is_u64(), "{p}");
        let processes = p["report"]["resources"]["processes"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0);
        assert_eq!(processes, i + 4, "{p}");
    }
    let spread_column = v["columns"]
        .as_array()
        .and_then(|c| c.iter().position(|c| c == "regions/writes per server"))
        .unwrap_or(usize::MAX);
    let spread = rows[2][spread_column].as_str().unwrap_or_default();
    let regions: Vec<&str> = spread
        .split(' ')
        .map(|e| e.split('/').next().unwrap_or(""))
        .collect();
    assert_eq!(regions, ["2", "2", "2"], "{spread}");
    assert!(std::fs::read_to_string(dir.path().join("regionservers.svg"))?.starts_with("<svg"));
    Ok(())
}

/// False (after saying why) when no Java can run YCSB and Apache HBase and
/// the run does not require one.
fn java_or_skip(what: &str) -> bool {
    let required = std::env::var("FERROBASE_REQUIRE_HBASE_PEER").is_ok_and(|v| v == "1");
    if Command::new("java").arg("-version").output().is_err() {
        assert!(
            !required,
            "FERROBASE_REQUIRE_HBASE_PEER=1 but java is not on PATH"
        );
        eprintln!(
            "\n===== SKIPPED: {what} =====\n\
             java is not on PATH, so neither YCSB nor Apache HBase can run and this test\n\
             checked NOTHING. scripts/java-deps.sh peer ycsb installs a JDK 17 and Maven.\n"
        );
        return false;
    }
    true
}

#[test]
fn peer_ycsb_against_apache_hbase_and_this_binary() -> Result<(), Box<dyn std::error::Error>> {
    if !java_or_skip("bench peer ycsb against Apache HBase") {
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let out_dir = dir.path().to_string_lossy().to_string();
    let out = ferrobase(&[
        "bench",
        "peer",
        "ycsb",
        "--records",
        "500",
        "--ops",
        "500",
        "--threads",
        "2",
        "--workloads",
        "c",
        "--memory",
        "512m",
        "--out",
        &out_dir,
    ])?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Progress on stderr, one table with both systems and their ratio on
    // stdout.
    assert!(stderr.contains("hbase: load: ok"), "{stderr}");
    assert!(stderr.contains("ferrobase: workload c: ok"), "{stderr}");
    assert!(
        stdout.contains("== workload c") && stdout.contains("| READ p99 µs"),
        "{stdout}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json"))?)?;
    for system in ["hbase", "ferrobase"] {
        for phase in ["create", "load", "c"] {
            let p = v["phases"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["system"] == system && p["phase"] == phase)
                .cloned()
                .unwrap_or_default();
            assert_eq!(p["status"], "ok", "{system} {phase}: {p}");
            if phase == "c" {
                assert_eq!(p["operations"]["READ"]["ok"], 500, "{p}");
                assert!(p["server_cpu_s"].is_f64(), "{p}");
            }
        }
    }
    assert!(v["ratios_ferrobase_over_hbase"]["c"]["throughput"].is_f64());
    Ok(())
}
