//! The report's arithmetic and page, from hand-made results in the
//! script's `results.json` format.

use super::html::{comparison_table, render};
use super::ycsb::{YcsbResults, YcsbRun, ratio_rows};
use super::*;
use crate::chart::Series;
use crate::experiment::Comparison;

/// Two systems, a load and workloads a and e; HBase's workload e failed.
fn results() -> YcsbResults {
    let v = serde_json::json!({
        "run": {"ycsb": "0.17.0", "binding": "HBaseClient2", "hbase": "2.6.4-hadoop3 standalone",
                "records": 1000, "ops": 1000, "threads": 4, "memory": "2g"},
        "systems": [
            {"system": "hbase", "start_error": null, "disk_bytes": 1000, "server_cpu_s": 10.0, "server_peak_rss_kib": 2097152},
            {"system": "ferrobase", "start_error": null, "disk_bytes": 900, "server_cpu_s": 2.0, "server_peak_rss_kib": 524288}
        ],
        "phases": [
            {"system": "hbase", "phase": "create", "status": "ok"},
            {"system": "hbase", "phase": "load", "status": "ok", "throughput": 1000.0,
             "operations": {"INSERT": {"count": 1000, "ok": 1000, "avg_us": 900.0, "p95_us": 1500.0, "p99_us": 4000.0}},
             "server_cpu_s": 4.0, "server_peak_rss_kib": 1048576},
            {"system": "hbase", "phase": "a", "status": "ok", "throughput": 2000.0,
             "operations": {"READ": {"count": 500, "p99_us": 3000.0}, "UPDATE": {"count": 500, "p99_us": 5000.0}},
             "server_cpu_s": 3.0, "server_peak_rss_kib": 2097152},
            {"system": "hbase", "phase": "e", "status": "failed", "error": "java.io.IOException: <boom> & more",
             "throughput": 5.0, "operations": {"SCAN": {"count": 3, "p99_us": 1.0}}},
            {"system": "ferrobase", "phase": "create", "status": "ok"},
            {"system": "ferrobase", "phase": "load", "status": "ok", "throughput": 4000.0,
             "operations": {"INSERT": {"count": 1000, "p99_us": 1000.0}},
             "server_cpu_s": 1.0, "server_peak_rss_kib": 262144},
            {"system": "ferrobase", "phase": "a", "status": "partial", "error": "2 operations failed",
             "throughput": 5000.0,
             "operations": {"READ": {"count": 500, "p99_us": 1500.0}, "UPDATE": {"count": 500, "p99_us": 1000.0}},
             "server_cpu_s": 0.75, "server_peak_rss_kib": 524288},
            {"system": "ferrobase", "phase": "e", "status": "ok", "throughput": 3000.0,
             "operations": {"SCAN": {"count": 950, "p99_us": 2000.0}, "INSERT": {"count": 50, "p99_us": 800.0}},
             "server_cpu_s": 0.5, "server_peak_rss_kib": 524288}
        ]
    });
    match serde_json::from_value(v) {
        Ok(r) => r,
        Err(e) => panic!("results: {e}"),
    }
}

fn report(name: &str, ours: f64, theirs: f64) -> Report {
    let mut r = Report::new(name, "seed study", &format!("{name} title"), "x", "rows/s");
    let mut s = Series::new("ferrobase, 4 threads");
    s.push("p1", ours);
    r.series.push(s);
    r.comparisons.push(Comparison::new(
        "p1, 4 threads: ferrobase / Apache HBase here",
        ours,
        theirs,
    ));
    r.comparisons
        .push(Comparison::new("p1 (published 2013 figure)", ours, 100.0));
    r.columns = vec!["point".into(), "rows/s".into()];
    r.rows = vec![vec!["p1".into(), ours.to_string()]];
    r
}

fn run() -> PeerRun {
    PeerRun {
        machine: "2 cores, 8 GiB RAM, Test CPU".into(),
        date: "2026-12-07 07:00:00".into(),
        ferrobase_version: "ferrobase 0.1.0".into(),
        hbase_version: HBASE_VERSION.into(),
        command: "ferrobase bench peer all --scale 0.1 --out 'my dir'".into(),
        scale: 0.1,
        ycsb: Step::Done(results()),
        peer: Step::Done("Apache HBase 2.6.4 standalone, heap 2048m".into()),
        experiments: vec![
            ("wal".into(), Step::Done(report("wal", 3000.0, 1000.0))),
            (
                "block-size".into(),
                Step::Failed("HBase client: region <r1> \"moved\" & gone".into()),
            ),
            (
                "regionservers".into(),
                Step::NotRun("needs the ferrobase binary".into()),
            ),
        ],
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn ratios_are_ferrobase_over_hbase_per_phase_and_failed_phases_have_none() {
    let rows = ratio_rows(&results());
    let phases: Vec<&str> = rows.iter().map(|r| r.phase.as_str()).collect();
    assert_eq!(phases, ["load", "a", "e"]);
    let load = &rows[0];
    assert!(close(load.throughput.ratio(), 4.0));
    assert_eq!(load.p99_us.len(), 1);
    assert_eq!(load.p99_us[0].0, "INSERT");
    assert!(close(load.p99_us[0].1.ratio(), 0.25));
    assert!(close(load.server_cpu_s.ratio(), 0.25));
    assert!(close(load.peak_rss_mib.hbase, 1024.0));
    assert!(close(load.peak_rss_mib.ratio(), 0.25));
    // A partial run keeps its figures and says it was partial.
    let a = &rows[1];
    assert_eq!(a.status.ferrobase, "partial");
    assert!(close(a.throughput.ratio(), 2.5));
    let ops: Vec<(&str, Option<f64>)> = a
        .p99_us
        .iter()
        .map(|(op, p)| (op.as_str(), p.ratio()))
        .collect();
    assert_eq!(ops, [("READ", Some(0.5)), ("UPDATE", Some(0.2))]);
    // HBase's failed run is not a figure: no ratio, though it printed one.
    let e = &rows[2];
    assert_eq!(e.status.hbase, "failed");
    assert_eq!(e.throughput.hbase, None);
    assert_eq!(e.throughput.ratio(), None);
    assert!(close(e.throughput.ferrobase, 3000.0));
    let ops: Vec<&str> = e.p99_us.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(ops, ["INSERT", "SCAN"]);
}

#[test]
fn the_page_names_every_phase_and_escapes_errors() {
    let run = run();
    let page = render(&run);
    for id in [
        "id=\"ycsb\"",
        "id=\"wal\"",
        "id=\"block-size\"",
        "id=\"regionservers\"",
    ] {
        assert!(page.contains(id), "{id} missing");
    }
    assert_eq!(page.matches("class=\"experiment\"").count(), 3);
    // The YCSB table: one row per phase, ratios as computed.
    assert_eq!(page.matches("<tr class=\"phase\"").count(), 3);
    assert!(page.contains("<td>4,000</td><td>1,000</td><td><b>4.00</b></td>"));
    assert!(page.contains("READ: 1,500 / 3,000 = <b>0.50</b>"));
    // Failures shown with their error, escaped.
    assert!(page.contains("hbase e: FAILED: java.io.IOException: &lt;boom&gt; &amp; more"));
    assert!(
        page.contains(
            "FAILED</span>: HBase client: region &lt;r1&gt; &quot;moved&quot; &amp; gone"
        )
    );
    assert!(!page.contains("<boom>") && !page.contains("<r1>"));
    assert!(page.contains("not run</span>: needs the ferrobase binary"));
    // The experiment's chart inlined, its ratios with HBase here first.
    assert_eq!(page.matches("<svg").count(), 1);
    let here = page.find("<td class=\"l\">here</td><td>3,000</td><td>1,000</td><td><b>3.00</b>");
    let published = page.find("<td class=\"l\">published</td>");
    assert!(here.is_some() && published.is_some() && here < published);
    // Machine, versions, the command (quoted as given, escaped).
    for text in [
        "1,000 records, 1,000 operations a workload, 4 client threads",
        "2 cores, 8 GiB RAM, Test CPU",
        "2026-12-07 07:00:00",
        "ferrobase 0.1.0",
        "Apache HBase 2.6.4",
        "--out &#39;my dir&#39;",
    ] {
        assert!(page.contains(text), "{text} missing");
    }
    assert!(page.ends_with("</body></html>\n"));
    // HBase's failed e, ferrobase's partial a, the failed experiment.
    assert_eq!(run.failures(), 3);
}

#[test]
fn a_failed_ycsb_run_and_peer_are_shown_not_hidden() {
    let mut r = run();
    r.ycsb = Step::Failed("scripts/bench-peer.sh failed: no <java>".into());
    r.peer = Step::Failed("scripts/hbase-peer.sh start failed".into());
    let page = render(&r);
    assert!(page.contains("FAILED</span>: scripts/bench-peer.sh failed: no &lt;java&gt;"));
    assert!(page.contains("FAILED</span>: scripts/hbase-peer.sh start failed"));
    assert_eq!(page.matches("<tr class=\"phase\"").count(), 0);
    assert_eq!(r.failures(), 3);
}

#[test]
fn comparisons_without_any_say_so() {
    let mut r = report("x", 1.0, 1.0);
    r.comparisons.clear();
    assert!(comparison_table(&r).contains("No ferrobase/HBase comparison"));
}

#[test]
fn dates_commands_and_sizes() {
    assert_eq!(utc(0), "1970-01-01 00:00:00");
    assert_eq!(utc(951_782_400), "2000-02-29 00:00:00");
    assert_eq!(utc(1_700_000_000), "2023-11-14 22:13:20");
    assert_eq!(
        shell_join([
            "a".to_string(),
            "b c".into(),
            "it's".into(),
            "--x=1,2".into()
        ]),
        "a 'b c' 'it'\\''s' --x=1,2"
    );
    assert_eq!(ycsb_size(1.0), 100_000);
    assert_eq!(ycsb_size(0.1), 10_000);
    assert_eq!(ycsb_size(0.0001), 1_000);
    let mut y = YcsbRun {
        records: 1,
        ops: 1,
        threads: 1,
        workloads: vec![Workload::A],
        systems: vec![System::Ferrobase],
        out: "o".into(),
        memory: 2 << 30,
        splits: 10,
        timeout_s: 1,
        keep_data: false,
        ferrobase_bin: None,
    };
    assert_eq!(y.memory_arg(), "2g");
    y.memory = 1536 << 20;
    assert_eq!(y.memory_arg(), "1536m");
    assert!(y.check().is_ok());
    y.threads = 0;
    assert!(
        y.check()
            .is_err_and(|e| e.to_string().contains("--threads"))
    );
}

#[test]
fn experiment_lists_keep_order_and_expand_all() {
    use ExperimentName as E;
    assert_eq!(
        experiment_list(&[E::RandomRead, E::Wal, E::RandomRead]),
        ["random-read", "wal"]
    );
    assert_eq!(experiment_list(&[]).len(), 13);
    assert_eq!(experiment_list(&[E::Wal, E::All]).len(), 13);
}

#[test]
fn the_summary_is_one_markdown_table_of_the_run() {
    let mut run = run();
    // A second experiment with three points against the HBase here.
    let mut r = report("single-vs-multi-column", 200.0, 100.0);
    for (ours, theirs) in [(800.0, 100.0), (50.0, 100.0)] {
        r.comparisons.push(Comparison::new(
            "p: ferrobase / Apache HBase here",
            ours,
            theirs,
        ));
    }
    run.experiments
        .push(("single-vs-multi-column".into(), Step::Done(r)));
    let md = super::markdown::render(&run);
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(
        rows[0],
        "| figure | ferrobase | Apache HBase | ferrobase / HBase |"
    );
    assert!(
        md.contains("`ferrobase bench peer all --scale 0.1 --out 'my dir'`"),
        "{md}"
    );
    // YCSB: throughput then one row per operation's p99.
    assert!(
        rows.contains(&"| YCSB load, ops/s | 4,000 | 1,000 | **4.00** |"),
        "{md}"
    );
    assert!(
        rows.contains(&"| YCSB load, insert p99 µs | 1,000 | 4,000 | 0.25 |"),
        "{md}"
    );
    assert!(
        rows.contains(&"| YCSB A, ops/s (partial / ok) | 5,000 | 2,000 | **2.50** |"),
        "{md}"
    );
    // HBase's failed workload E has no ratio.
    assert!(
        rows.contains(&"| YCSB E, ops/s (ok / failed) | 3,000 | — | **—** |"),
        "{md}"
    );
    // Experiments: only ratios against the HBase measured here count
    // (wal's published-figure comparison does not); 2, 8 and 0.5 have a
    // geometric mean of 2.
    assert!(
        rows.contains(
            &"| `wal`: wal title (1 points) | | | **3.00** (geometric mean; 3.00–3.00) |"
        ),
        "{md}"
    );
    assert!(
        rows.contains(&"| `single-vs-multi-column`: single-vs-multi-column title (3 points) | | | **2.00** (geometric mean; 0.50–8.00) |"),
        "{md}"
    );
    // Failures and reasons are rows too; a '|' in an error is escaped.
    assert!(
        md.contains("| `block-size` | failed: HBase client: region <r1>"),
        "{md}"
    );
    assert!(
        md.contains("| `regionservers` | not run: needs the ferrobase binary |"),
        "{md}"
    );
    run.experiments
        .push(("x".into(), Step::Failed("a | b".into())));
    assert!(super::markdown::render(&run).contains("failed: a \\| b"));
}
