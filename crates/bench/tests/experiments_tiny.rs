//! Every seed experiment at a tiny scale: each writes a JSON report and a
//! valid SVG chart, `all` writes the index. `regionservers` starts
//! processes of the ferrobase binary, which a library test does not have:
//! it must say so and not fake a result (it runs for real in
//! `crates/ferrobase/tests/bench_cli.rs`).

use anyhow::Result;
use ferrobase_bench::cli::{ExperimentArgs, ExperimentName, experiment};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_experiments_write_json_svg_and_index() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let args = ExperimentArgs {
        name: ExperimentName::All,
        scale: 0.0005,
        out: dir.path().to_path_buf(),
        server: None,
        etcd: None,
        root: None,
        json: false,
        peer: None,
        peer_addr: None,
        peer_heap: None,
        exe: None,
    };
    let outcome = experiment(&args).await?;
    assert_eq!(outcome.exit_code, 0, "{}", outcome.output);
    for name in ferrobase_bench::experiment::NAMES {
        let json = dir.path().join(format!("{name}.json"));
        let svg = dir.path().join(format!("{name}.svg"));
        if name == "regionservers" {
            assert!(
                !json.exists() && !svg.exists(),
                "regionservers must not fake a result"
            );
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json)?)?;
        assert_eq!(v["name"], name);
        let series = v["series"].as_array().map(Vec::len).unwrap_or(0);
        assert!(series >= 1, "{name}: no series");
        assert!(
            !v["rows"].as_array().map(Vec::is_empty).unwrap_or(true),
            "{name}: no table"
        );
        let columns = v["columns"].as_array().map(Vec::len).unwrap_or(0);
        for r in v["rows"].as_array().cloned().unwrap_or_default() {
            assert_eq!(
                r.as_array().map(Vec::len),
                Some(columns),
                "{name}: a row does not match the header: {r}"
            );
        }
        let text = std::fs::read_to_string(&svg)?;
        assert!(
            text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
            "{name}: not an SVG"
        );
        assert!(
            text.contains("<polyline") || text.contains("<circle"),
            "{name}: no data drawn"
        );
        let title = v["title"].as_str().unwrap_or_default();
        assert!(text.contains(title), "{name}: SVG without its title");
    }
    let single: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.path().join("single-vs-multi-column.json"),
    )?)?;
    assert_eq!(single["hbase"][0]["points"][0][1], 12_403.87);
    assert!(single["comparisons"][0]["ratio"].as_f64().is_some());
    // Each shape ran four times, in the order single, wide, wide, single,
    // twice over.
    let labels: Vec<String> = single["rows"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| r[0].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        labels,
        [
            "single53 (run 1)",
            "wide53 (run 2)",
            "wide53 (run 3)",
            "single53 (run 4)",
            "single53 (run 5)",
            "wide53 (run 6)",
            "wide53 (run 7)",
            "single53 (run 8)"
        ]
    );
    let index = std::fs::read_to_string(dir.path().join("index.html"))?;
    assert!(index.contains("wal.svg") && index.contains("run it through the ferrobase binary"));

    let only = ExperimentArgs {
        name: ExperimentName::Regionservers,
        ..args
    };
    let refused = experiment(&only).await?;
    assert_eq!(refused.exit_code, 2);
    assert!(
        refused
            .output
            .contains("run it through the ferrobase binary")
    );
    Ok(())
}
