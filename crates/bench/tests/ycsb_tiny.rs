//! `ycsb load` then `ycsb run` (workloads A and E) against one server:
//! YCSB's summary lines with the right counts, and the `[SERVER]` section
//! of what the remote server did meanwhile (its flushes during the load,
//! its block cache lookups during the reads).

use anyhow::Result;
use ferrobase_bench::ycsb::{Phase, YcsbOptions, run};
use ferrobase_server::Standalone;
use ferrobase_types::Settings;
use std::time::Duration;

fn opts(phase: Phase, workload: &str, server: &str) -> YcsbOptions {
    YcsbOptions {
        phase,
        workload: workload.into(),
        properties: vec![
            "recordcount=300".into(),
            "operationcount=200".into(),
            "readallfields=false".into(),
        ],
        threads: Some(3),
        server: Some(server.into()),
        settings: Default::default(),
        status_interval: Duration::from_secs(10),
        quiet: true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ycsb_load_then_run() -> Result<()> {
    let dir = tempfile::tempdir()?;
    // Small memstores: the load flushes, and the reads then go through
    // store files and the block cache.
    let settings = Settings {
        memstore_flush_size: 16 << 10,
        ..Settings::default()
    };
    let server = Standalone::start(dir.path(), settings, "127.0.0.1:0".parse()?).await?;
    let addr = server.addr().to_string();
    let result = async {
        let load = run(&opts(Phase::Load, "a", &addr)).await?;
        assert_eq!(load.errors, 0);
        let lines: Vec<&str> = load.summary.lines().collect();
        assert!(
            lines[0].starts_with("[OVERALL], RunTime(ms), "),
            "{}",
            load.summary
        );
        assert!(lines[1].starts_with("[OVERALL], Throughput(ops/sec), "));
        assert!(
            lines.contains(&"[INSERT], Operations, 300"),
            "{}",
            load.summary
        );
        assert!(
            lines.contains(&"[INSERT], Return=OK, 300"),
            "{}",
            load.summary
        );

        let server_count = |text: &str, what: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("[SERVER], {what}, ")))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no [SERVER], {what} in {text}"))
        };
        assert!(
            server_count(&load.summary, "Flushes") >= 1,
            "{}",
            load.summary
        );
        assert_eq!(
            load.json.server.map(|s| s.flushes),
            Some(server_count(&load.summary, "Flushes"))
        );

        let a = run(&opts(Phase::Run, "a", &addr)).await?;
        let lookups = server_count(&a.summary, "BlockCacheHits")
            + server_count(&a.summary, "BlockCacheMisses");
        assert!(
            lookups > 0,
            "reads of flushed rows use the block cache: {}",
            a.summary
        );
        assert!(
            a.summary.contains("[SERVER], BlockCacheHitRatio(%), "),
            "{}",
            a.summary
        );
        assert_eq!(a.errors, 0, "{}", a.summary);
        let count = |text: &str, op: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("[{op}], Operations, ")))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        assert_eq!(
            count(&a.summary, "READ") + count(&a.summary, "UPDATE"),
            200,
            "{}",
            a.summary
        );
        assert!(a.summary.contains("[READ], 95thPercentileLatency(us), "));
        assert!(a.summary.contains("[READ], Return=OK, "));
        assert!(
            !a.summary.contains("NOT_FOUND"),
            "loaded keys must be found: {}",
            a.summary
        );

        let e = run(&opts(Phase::Run, "e", &addr)).await?;
        assert_eq!(e.errors, 0, "{}", e.summary);
        assert_eq!(
            count(&e.summary, "SCAN") + count(&e.summary, "INSERT"),
            200,
            "{}",
            e.summary
        );
        assert!(e.json.throughput_ops_per_s > 0.0);
        anyhow::Ok(())
    }
    .await;
    server.stop().await?;
    result
}
