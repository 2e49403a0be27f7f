//! `bench peer all` end to end without Java: a ferrobase standalone server
//! speaks HBase's RPC, so it stands in for the HBase named by
//! `--peer-addr` (as in peer_reads.rs). The seed experiments run against
//! both and `index.html` shows each one: charts and ratios for those that
//! ran, the reason for one that cannot run here (`regionservers` outside
//! the ferrobase binary), and the YCSB phase as failed, with its error,
//! when its script is missing; `results.json` holds the same run as data.

use anyhow::Result;
use ferrobase_bench::cli::ExperimentName;
use ferrobase_bench::peer_report::ycsb::Workload;
use ferrobase_bench::peer_report::{PeerAllArgs, all_cmd};
use ferrobase_server::Standalone;
use ferrobase_types::Settings;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peer_all_writes_one_page_naming_every_experiment() -> Result<()> {
    let data = tempfile::tempdir()?;
    let settings = Settings {
        memory_size: 256 << 20,
        ..Settings::default()
    };
    let peer = Standalone::start(data.path(), settings, "127.0.0.1:0".parse()?).await?;
    let out = tempfile::tempdir()?;
    let missing = out.path().join("no-such-bench-peer.sh");
    let args = PeerAllArgs {
        scale: 0.0005,
        out: out.path().to_path_buf(),
        experiments: vec![
            ExperimentName::Wal,
            ExperimentName::Regionservers,
            ExperimentName::RandomRead,
        ],
        workloads: vec![Workload::A],
        threads: 2,
        memory: 256 << 20,
        no_ycsb: false,
        ycsb_script: Some(missing.clone()),
        peer_addr: Some(peer.addr().to_string()),
        peer_heap: None,
        exe: None,
    };
    let outcome = all_cmd(&args).await?;
    // The failed YCSB phase makes the run's exit code 1.
    assert_eq!(outcome.exit_code, 1, "{}", outcome.output);
    assert!(outcome.output.contains("index.html"), "{}", outcome.output);

    // The README table of the same run: a row per experiment, YCSB failed.
    let summary = std::fs::read_to_string(out.path().join("summary.md"))?;
    for name in ["wal", "regionservers", "random-read"] {
        assert!(
            summary.contains(&format!("| `{name}`")),
            "{name}: {summary}"
        );
    }
    assert!(summary.contains("| YCSB | failed: "), "{summary}");

    let page = std::fs::read_to_string(out.path().join("index.html"))?;
    assert_eq!(
        page.matches("class=\"experiment\"").count(),
        3,
        "one section per experiment"
    );
    for name in ["wal", "regionservers", "random-read"] {
        assert!(page.contains(&format!("id=\"{name}\"")), "{name} missing");
    }
    // YCSB is shown as failed with its error, not left out.
    assert!(
        page.contains(&format!(
            "FAILED</span>: the YCSB script {} is not a file",
            missing.display()
        )),
        "YCSB's failure missing"
    );
    assert!(page.contains("not run</span>: "), "regionservers' reason");
    // The experiments that ran have their chart inlined, ratios against
    // the peer, and their files beside the page.
    assert_eq!(page.matches("<svg").count(), 2);
    assert!(page.matches("<td class=\"l\">here</td>").count() >= 2);
    assert!(page.contains("(already running)"));
    for f in ["wal.json", "wal.svg", "random-read.json", "random-read.svg"] {
        assert!(out.path().join(f).is_file(), "{f} missing");
    }
    let wal: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("wal.json"))?)?;
    assert_eq!(wal["errors"], 0);
    let here = wal["comparisons"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| {
            c["what"]
                .as_str()
                .is_some_and(|w| w.contains("Apache HBase here"))
        })
        .count();
    assert!(here >= 3, "{}", wal["comparisons"]);

    // results.json holds the same run as data.
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("results.json"))?)?;
    assert_eq!(all["scale"], 0.0005);
    assert!(
        all["ycsb"]["Failed"]
            .as_str()
            .is_some_and(|e| e.contains("is not a file")),
        "{}",
        all["ycsb"]
    );
    let exps = all["experiments"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = exps.iter().filter_map(|e| e[0].as_str()).collect();
    assert_eq!(names, ["wal", "regionservers", "random-read"]);
    assert_eq!(exps[0][1]["Done"]["errors"], 0);
    assert!(exps[1][1]["NotRun"].is_string(), "{}", exps[1][1]);
    peer.stop().await?;
    Ok(())
}
