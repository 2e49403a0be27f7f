//! `ycsb load` then `ycsb run` (workloads A and E) against one server:
//! YCSB's summary lines with the right counts.

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
    let server = Standalone::start(dir.path(), Settings::default(), "127.0.0.1:0".parse()?).await?;
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

        let a = run(&opts(Phase::Run, "a", &addr)).await?;
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
