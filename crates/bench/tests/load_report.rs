//! `bench load` against an embedded server: the report counts what was
//! written, and the rows are really in the table.

use anyhow::Result;
use ferrobase_bench::load::{LoadSpec, run_load};
use ferrobase_bench::rowspec::RowSpec;
use ferrobase_bench::target::with_target;
use ferrobase_client::Scan;
use ferrobase_types::{Durability, Settings};
use ferrobase_workloads::Shape;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_counts_rows_cells_rpcs_and_stalls() -> Result<()> {
    let spec = LoadSpec {
        threads: 3,
        write_buffer: 64 << 10,
        durability: Durability::AsyncWal,
        presplit: 2,
        ..LoadSpec::new(RowSpec::plain(Shape::Log9), 3_000)
    };
    let (report, scanned) = with_target(None, Settings::default(), async |t| {
        let report = run_load(t, &spec).await?;
        let table = t.connect(1)?.table(&spec.table);
        let rows = table.scan(Scan::new()).collect().await?;
        Ok((report, rows))
    })
    .await?;
    assert_eq!(report.rows, 3_000);
    assert_eq!(report.cells, 27_000);
    assert_eq!(report.error_count, 0, "{:?}", report.errors);
    assert_eq!(report.regions, 2);
    // 3 threads, each with 1,000 rows of ~200 encoded bytes and a 64 KiB
    // buffer: several flushes per thread, one RPC each (one server).
    assert!(report.rpcs >= 6, "rpcs {}", report.rpcs);
    assert_eq!(report.flush_latency.count, report.rpcs);
    assert!(report.bytes_sent > report.payload_bytes);
    assert!(report.stalls_before.is_some() && report.stalls_after.is_some());
    assert!(report.rows_per_s > 0.0 && report.payload_mb_per_s > 0.0);
    assert_eq!(scanned.len(), 3_000);
    let first = Shape::Log9.row(0);
    let hit = scanned
        .iter()
        .find(|r| r.row.as_ref() == first.row.as_slice());
    let value = hit.and_then(|r| r.value(b"f", b"c0"));
    assert_eq!(value.map(|v| v.as_ref()), first.cell(0).map(|c| c.1));
    let text = report.text();
    assert!(text.contains("rows/s") && text.contains("p99.9"), "{text}");
    assert!(text.contains("server       this run: flushes "), "{text}");
    let json = serde_json::to_value(&report)?;
    assert_eq!(json["rows"], 3_000);
    assert!(json["flush_latency"]["p999_us"].is_u64());
    Ok(())
}
