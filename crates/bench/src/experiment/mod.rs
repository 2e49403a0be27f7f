//! The seed experiments: each is a sweep of one knob, run end to end
//! (tables created and dropped), written as `DIR/NAME.json` and
//! `DIR/NAME.svg`, and printed as a table. Where a seed gives HBase's
//! figure, it is in the JSON and the chart as a second series, with the
//! ratio ours/HBase. `all` runs every experiment and writes
//! `DIR/index.html`.
//!
//! With `--peer hbase` the experiments of [`PEER_EXPERIMENTS`] run every
//! point a second time against a real Apache HBase (the same rows,
//! batches, reads and client threads, over HBase's RPC), and the report
//! holds both lines, the ratio ferrobase/HBase per point, and the seed's
//! published figure as a further line labelled as such.
//!
//! `--scale` multiplies every row and operation count (scale 1: each
//! experiment ≤ 2 minutes on a 2-core machine). This module owns the
//! framework (registry, report, files); the sweeps live in [`writes`],
//! [`servers`] and [`reads`].

pub mod engine_gets;
pub mod reads;
pub mod servers;
pub mod writes;

use crate::chart::{Series, line_chart};
use crate::resources::Probe;
use crate::target::TargetUrl;
use crate::{BenchError, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Every experiment name, in the order `all` runs them.
pub const NAMES: [&str; 13] = [
    "wal",
    "handlers",
    "write-buffer",
    "regionservers",
    "qualifier-length",
    "value-size",
    "column-count",
    "flush-compaction-threads",
    "single-vs-multi-column",
    "random-write-value-size",
    "random-read",
    "block-size",
    "compression-encoding",
];

/// How an experiment runs.
#[derive(Clone, Debug)]
pub struct Ctx {
    pub scale: f64,
    /// A running cluster; `None`: embedded servers.
    pub server: Option<String>,
    pub quiet: bool,
    /// The ferrobase binary, for experiments that start cluster processes
    /// (`regionservers`); `None` when not run through it.
    pub exe: Option<PathBuf>,
    /// An existing etcd for those clusters; `None`: start one.
    pub etcd: Option<String>,
    /// Their storage root (`--root`); `None`: a temporary directory.
    pub root: Option<String>,
    /// Drive this HBase (`host:port` of its registry) instead of ferrobase.
    pub hbase: Option<String>,
    /// Also run the points against this HBase (`--peer hbase`), and how it
    /// was started (for the report).
    pub peer: Option<(String, String)>,
    /// The process id of the HBase peer's JVM (its CPU and memory are
    /// measured per point); `None` when it is not known.
    pub peer_pid: Option<u32>,
    /// The heap of the HBase peer this command started (`None` with
    /// `--peer-addr`): `handlers` and `flush-compaction-threads` start a
    /// fresh HBase with it for each point, with the point's settings.
    pub peer_heap: Option<String>,
}

/// The experiments `--peer hbase` runs against HBase too: client-side
/// sweeps of plain loads, and reads of tables loaded, flushed and
/// major-compacted through HBase's `Admin` calls, which need nothing from
/// the server HBase cannot be given per table (`compression-encoding`
/// sweeps what both systems have: HBase 2 has no PREFIX_TREE).
pub const PEER_EXPERIMENTS: [&str; 10] = [
    "wal",
    "write-buffer",
    "qualifier-length",
    "value-size",
    "column-count",
    "single-vs-multi-column",
    "random-write-value-size",
    "random-read",
    "block-size",
    "compression-encoding",
];

/// The experiments whose points change server-wide settings, which HBase
/// takes only at start: against the peer, each point starts its own HBase
/// with the point's settings (only when this command starts HBase itself,
/// not with `--peer-addr`). `regionservers` starts one with the point's
/// number of region servers, threads of its one JVM.
pub const PEER_PER_POINT_EXPERIMENTS: [&str; 3] =
    ["handlers", "flush-compaction-threads", "regionservers"];

/// Why an experiment is not run against the HBase peer.
fn peer_unsupported(name: &str) -> &'static str {
    match name {
        "handlers" | "flush-compaction-threads" => {
            "its points change server-wide settings (handler count, flush and compaction pools), which HBase takes only at start, and an HBase named with --peer-addr cannot be restarted with them (without --peer-addr each point starts its own HBase)"
        }
        "regionservers" => {
            "each point needs an HBase with that many region servers, and an HBase named with --peer-addr cannot be restarted with them (without --peer-addr each point starts its own HBase)"
        }
        _ => "no HBase run of it is built",
    }
}

impl Ctx {
    /// A context for `base` rows of tests: embedded servers, scale 1.
    pub fn new(scale: f64) -> Ctx {
        Ctx {
            scale,
            server: None,
            quiet: true,
            exe: None,
            etcd: None,
            root: None,
            hbase: None,
            peer: None,
            peer_pid: None,
            peer_heap: None,
        }
    }

    /// The server the sweeps drive.
    pub fn target(&self) -> TargetUrl {
        match &self.hbase {
            Some(addr) => TargetUrl::HBase(addr.clone()),
            None => TargetUrl::from_server(self.server.as_deref()),
        }
    }

    /// The name of the system measured, for series labels.
    pub fn system(&self) -> &'static str {
        if self.hbase.is_some() {
            "Apache HBase 2.6 (this machine)"
        } else {
            "ferrobase"
        }
    }

    /// Starts measuring the processes of a point: the server process under
    /// test when it is not this one (the HBase JVM; a `--server`
    /// ferrobase found by its port), and this process (the client, and an
    /// embedded ferrobase).
    pub fn probe(&self) -> Probe {
        if self.hbase.is_some() {
            let server = self.peer_pid.map(|pid| (pid, "Apache HBase JVM"));
            return Probe::start(server, "bench client");
        }
        match &self.server {
            None => Probe::start(None, "bench client + embedded ferrobase"),
            Some(addr) => {
                let pid =
                    crate::resources::port_of(addr).and_then(crate::resources::pid_listening_on);
                Probe::start(pid.map(|p| (p, "ferrobase server")), "bench client")
            }
        }
    }

    /// `base` rows (or operations) at this scale, at least 20.
    pub fn n(&self, base: u64) -> u64 {
        ((base as f64 * self.scale).round() as u64).max(20)
    }
}

/// Ours vs HBase at one point.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub what: String,
    pub ours: f64,
    pub hbase: f64,
    /// ours / HBase.
    pub ratio: f64,
}

impl Comparison {
    pub fn new(what: impl Into<String>, ours: f64, hbase: f64) -> Comparison {
        Comparison {
            what: what.into(),
            ours,
            hbase,
            ratio: if hbase != 0.0 { ours / hbase } else { f64::NAN },
        }
    }
}

/// An experiment's result (the JSON file).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub name: String,
    pub seed: String,
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub scale: f64,
    pub machine: String,
    pub elapsed_s: f64,
    /// Our measurements (chart lines).
    pub series: Vec<Series>,
    /// The seed's HBase figures, in the same unit (chart lines).
    pub hbase: Vec<Series>,
    pub comparisons: Vec<Comparison>,
    /// The printed table.
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Full reports of every point.
    pub points: Vec<serde_json::Value>,
    pub notes: Vec<String>,
    /// Operations that failed, over every point.
    pub errors: u64,
    /// The Apache HBase the points also ran against (`--peer hbase`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// Absolute figures to compare with the peer's, `(label, value)`, for
    /// experiments whose chart lines are relative (`block-size`); empty:
    /// the lines' points are compared.
    #[serde(skip)]
    pub peer_figures: Vec<(String, f64)>,
}

impl Report {
    pub fn new(name: &str, seed: &str, title: &str, x_desc: &str, y_desc: &str) -> Report {
        Report {
            name: name.into(),
            seed: seed.into(),
            title: title.into(),
            x_desc: x_desc.into(),
            y_desc: y_desc.into(),
            scale: 1.0,
            machine: machine(),
            elapsed_s: 0.0,
            series: Vec::new(),
            hbase: Vec::new(),
            comparisons: Vec::new(),
            columns: Vec::new(),
            rows: Vec::new(),
            points: Vec::new(),
            notes: Vec::new(),
            errors: 0,
            peer: None,
            peer_figures: Vec::new(),
        }
    }

    /// Adds a point's full report.
    pub fn point(&mut self, label: &str, value: &impl Serialize) {
        let v = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        self.errors += v.get("error_count").and_then(|n| n.as_u64()).unwrap_or(0);
        self.points
            .push(serde_json::json!({ "point": label, "report": v }));
    }

    /// The table for people.
    pub fn text(&self) -> String {
        let mut s = format!("== {} ({}; scale {})\n", self.title, self.seed, self.scale);
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if let Some(w) = widths.get_mut(i) {
                    *w = (*w).max(c.chars().count());
                }
            }
        }
        let line = |cells: &[String]| {
            cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let w = widths.get(i).copied().unwrap_or(0);
                    format!("{c:>w$}")
                })
                .collect::<Vec<_>>()
                .join("  ")
        };
        s += &line(&self.columns);
        s.push('\n');
        for r in &self.rows {
            s += &line(r);
            s.push('\n');
        }
        for c in &self.comparisons {
            s += &format!(
                "ours/HBase {}: {} / {} = {:.2}\n",
                c.what,
                figure(c.ours),
                figure(c.hbase),
                c.ratio
            );
        }
        for n in &self.notes {
            s += &format!("note: {n}\n");
        }
        if self.errors > 0 {
            s += &format!(
                "ERRORS: {} operation(s) failed (see the JSON)\n",
                self.errors
            );
        }
        s += &format!("({:.1} s)\n", self.elapsed_s);
        s
    }

    /// The chart (ours and HBase's series).
    pub fn svg(&self) -> Result<String> {
        let mut all = self.series.clone();
        all.extend(self.hbase.iter().cloned());
        line_chart(
            &format!("{} ({})", self.title, self.seed),
            &self.x_desc,
            &self.y_desc,
            &all,
        )
    }

    /// Writes `DIR/NAME.json` and `DIR/NAME.svg`.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(dir)
            .map_err(BenchError::io(format!("creating {}", dir.display())))?;
        let json = dir.join(format!("{}.json", self.name));
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| BenchError::Invalid(format!("JSON: {e}")))?;
        std::fs::write(&json, text)
            .map_err(BenchError::io(format!("writing {}", json.display())))?;
        let svg = dir.join(format!("{}.svg", self.name));
        std::fs::write(&svg, self.svg()?)
            .map_err(BenchError::io(format!("writing {}", svg.display())))?;
        Ok((json, svg))
    }
}

/// `N cores, M GiB RAM, CPU model`.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mem = ferrobase_types::settings::physical_memory() as f64 / (1u64 << 30) as f64;
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores, {mem:.0} GiB RAM, {model}")
}

/// Runs one experiment by name (and against the HBase peer, when there is
/// one and the experiment supports it).
pub async fn run(name: &str, ctx: &Ctx) -> Result<Report> {
    let start = std::time::Instant::now();
    let mut report = run_one(name, ctx).await?;
    if let Some((addr, describe)) = &ctx.peer {
        let per_point = PEER_PER_POINT_EXPERIMENTS.contains(&name) && ctx.peer_heap.is_some();
        if PEER_EXPERIMENTS.contains(&name) || per_point {
            if !ctx.quiet && per_point {
                eprintln!(
                    "experiment {name}: the same points against Apache HBase, each on an HBase started for it ..."
                );
            } else if !ctx.quiet {
                eprintln!("experiment {name}: the same points against Apache HBase at {addr} ...");
            }
            let on_hbase = Ctx {
                hbase: Some(addr.clone()),
                peer: None,
                ..ctx.clone()
            };
            let theirs = run_one(name, &on_hbase).await?;
            merge_peer(&mut report, theirs, describe);
        } else {
            report.notes.push(format!(
                "not run against the HBase peer: {}",
                peer_unsupported(name)
            ));
        }
    }
    report.scale = ctx.scale;
    report.elapsed_s = start.elapsed().as_secs_f64();
    Ok(report)
}

/// Folds the HBase peer's run of an experiment into ferrobase's: its lines,
/// its rows and points (labelled), ferrobase/HBase per point; the seed's
/// 2013 lines stay, labelled as published figures.
pub fn merge_peer(ours: &mut Report, theirs: Report, describe: &str) {
    // The write studies' HBase figures are from 2013; the read studies'
    // from other years.
    let published =
        if ["random-read", "block-size", "compression-encoding"].contains(&ours.name.as_str()) {
            "published figure"
        } else {
            "published 2013 figure"
        };
    for s in &mut ours.hbase {
        s.name = format!("{}, {published}", s.name);
    }
    for c in &mut ours.comparisons {
        c.what = format!("{} ({published})", c.what);
    }
    for (what, v) in &ours.peer_figures {
        if let Some((_, h)) = theirs.peer_figures.iter().find(|(w, _)| w == what) {
            ours.comparisons.push(Comparison::new(
                format!("{what}: ferrobase / Apache HBase here"),
                *v,
                *h,
            ));
        }
    }
    let by_series = if ours.peer_figures.is_empty() {
        ours.series.len()
    } else {
        0
    };
    for (o, t) in ours.series.iter().zip(&theirs.series).take(by_series) {
        let what = o.name.split_once(", ").map_or("", |(_, rest)| rest);
        for (x, v) in &o.points {
            if let Some(h) = t.at(x) {
                let label = if what.is_empty() {
                    format!("{x}: ferrobase / Apache HBase here")
                } else {
                    format!("{x}, {what}: ferrobase / Apache HBase here")
                };
                ours.comparisons.push(Comparison::new(label, *v, h));
            }
        }
    }
    ours.series.extend(theirs.series);
    for r in &mut ours.rows {
        if let Some(first) = r.first_mut() {
            *first = format!("ferrobase {first}");
        }
    }
    for mut r in theirs.rows {
        if let Some(first) = r.first_mut() {
            *first = format!("HBase {first}");
        }
        ours.rows.push(r);
    }
    for mut p in theirs.points {
        if let Some(label) = p.get("point").and_then(|l| l.as_str()).map(String::from) {
            p["point"] = serde_json::Value::String(format!("HBase {label}"));
        }
        p["system"] = serde_json::Value::String("hbase".into());
        ours.points.push(p);
    }
    for n in theirs.notes {
        if !ours.notes.contains(&n) {
            ours.notes
                .push(format!("Apache HBase run (\"ours\" = HBase here): {n}"));
        }
    }
    ours.errors += theirs.errors;
    ours.peer = Some(describe.to_string());
    ours.notes.push(format!(
        "peer: {describe}; {}",
        if ours.columns.iter().any(|c| c == "stalls") {
            "the same rows, threads, write buffers and durability through ferrobase-hbase-client over HBase's RPC; server stall counters are ferrobase's only (HBase does not report them to clients)"
        } else {
            "the same rows loaded the same way, flushed and major-compacted through HBase's Admin calls (FlushRegion, CompactRegion), then the same keys read by the same number of client tasks through ferrobase-hbase-client over HBase's RPC"
        }
    ));
}

async fn run_one(name: &str, ctx: &Ctx) -> Result<Report> {
    let report = match name {
        "wal" => writes::wal(ctx).await?,
        "handlers" => writes::handlers(ctx).await?,
        "write-buffer" => writes::write_buffer(ctx).await?,
        "regionservers" => servers::regionservers(ctx).await?,
        "qualifier-length" => writes::qualifier_length(ctx).await?,
        "value-size" => writes::value_size(ctx).await?,
        "column-count" => writes::column_count(ctx).await?,
        "flush-compaction-threads" => writes::flush_compaction_threads(ctx).await?,
        "single-vs-multi-column" => writes::single_vs_multi(ctx).await?,
        "random-write-value-size" => writes::random_write_value_size(ctx).await?,
        "random-read" => reads::random_read(ctx).await?,
        "block-size" => reads::block_size(ctx).await?,
        "compression-encoding" => reads::compression_encoding(ctx).await?,
        other => {
            return Err(BenchError::Invalid(format!(
                "unknown experiment '{other}'; valid: {}, all",
                NAMES.join(", ")
            )));
        }
    };
    Ok(report)
}

/// `DIR/index.html`: every chart, with links to the JSON, and the
/// experiments that could not run.
pub fn write_index(
    dir: &Path,
    reports: &[Report],
    skipped: &[(String, String)],
) -> Result<PathBuf> {
    let mut html = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ferrobase bench experiments</title>\
         <style>body{font-family:sans-serif;max-width:1000px;margin:auto}pre{background:#f4f4f4;padding:8px;overflow-x:auto}</style>\
         </head><body>\n<h1>ferrobase bench experiments</h1>\n",
    );
    if let Some(r) = reports.first() {
        html += &format!(
            "<p>Machine: {}; scale {}.</p>\n",
            escape(&r.machine),
            r.scale
        );
    }
    for r in reports {
        html += &format!(
            "<h2 id=\"{0}\">{1} <small>({2})</small></h2>\n<img src=\"{0}.svg\" alt=\"{1}\" width=\"960\"><br>\n<a href=\"{0}.json\">{0}.json</a>\n<pre>{3}</pre>\n",
            escape(&r.name),
            escape(&r.title),
            escape(&r.seed),
            escape(&r.text())
        );
    }
    for (name, why) in skipped {
        html += &format!(
            "<h2>{}</h2>\n<p>Not run: {}</p>\n",
            escape(name),
            escape(why)
        );
    }
    html += "</body></html>\n";
    let path = dir.join("index.html");
    std::fs::write(&path, html).map_err(BenchError::io(format!("writing {}", path.display())))?;
    Ok(path)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A figure for people: thousands separators from 100 up, else 2 decimals.
fn figure(v: f64) -> String {
    if v.abs() >= 100.0 {
        int(v)
    } else {
        format!("{v:.2}")
    }
}

/// Formats a number with thousands separators, no decimals.
pub fn int(v: f64) -> String {
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_run_adds_its_line_ratios_and_keeps_the_2013_figure() -> Result<()> {
        let report = |system: &str, v: f64| {
            let mut r = Report::new("x", "seed", "T", "size", "rows/s");
            let mut s = Series::new(format!("{system}, 4 threads"));
            s.push("26", v);
            s.push("126", v / 2.0);
            r.series.push(s);
            r.rows = vec![vec!["26".into(), int(v)]];
            r.point("26", &serde_json::json!({ "error_count": 0 }));
            r
        };
        let mut ours = report("ferrobase", 1000.0);
        let mut old = Series::new("HBase (study)");
        old.push("26", 100.0);
        ours.hbase.push(old);
        ours.comparisons.push(Comparison::new("26", 1000.0, 100.0));
        let theirs = report("Apache HBase 2.6 (this machine)", 250.0);
        merge_peer(&mut ours, theirs, "Apache HBase 2.6.4, heap 2g");
        assert_eq!(ours.series.len(), 2);
        assert_eq!(ours.hbase[0].name, "HBase (study), published 2013 figure");
        let here: Vec<f64> = ours
            .comparisons
            .iter()
            .filter(|c| c.what.contains("Apache HBase here"))
            .map(|c| c.ratio)
            .collect();
        assert_eq!(here, [4.0, 4.0]);
        assert_eq!(ours.rows[1][0], "HBase 26");
        assert_eq!(ours.points[1]["system"], "hbase");
        let svg = ours.svg()?;
        for line in [
            "ferrobase, 4 threads",
            "Apache HBase 2.6 (this machine)",
            "published 2013",
        ] {
            assert!(svg.contains(line), "{line} missing from the chart");
        }
        let json = serde_json::to_value(&ours).map_err(|e| BenchError::Invalid(e.to_string()))?;
        assert_eq!(json["peer"], "Apache HBase 2.6.4, heap 2g");
        Ok(())
    }

    #[test]
    fn relative_lines_are_compared_by_their_absolute_figures() {
        let report = |system: &str, gets: f64| {
            let mut r = Report::new("block-size", "seed", "T", "BLOCKSIZE", "relative");
            r.columns = vec!["point".into()];
            let mut s = Series::new(format!("{system} get"));
            s.push("16 KiB", 1.1);
            s.push("64 KiB", 1.0);
            r.series.push(s);
            r.peer_figures = vec![
                ("16 KiB gets/s".into(), gets * 1.1),
                ("64 KiB gets/s".into(), gets),
            ];
            r
        };
        let mut ours = report("ferrobase", 3000.0);
        let mut old = Series::new("HBase get (study)");
        old.push("16 KiB", 1.15);
        ours.hbase.push(old);
        merge_peer(&mut ours, report("HBase", 1000.0), "peer");
        let here: Vec<(String, f64)> = ours
            .comparisons
            .iter()
            .map(|c| (c.what.clone(), (c.ratio * 100.0).round() / 100.0))
            .collect();
        assert_eq!(
            here,
            [
                (
                    "16 KiB gets/s: ferrobase / Apache HBase here".to_string(),
                    3.0
                ),
                (
                    "64 KiB gets/s: ferrobase / Apache HBase here".to_string(),
                    3.0
                ),
            ]
        );
        // Not a 2013 study; the lines themselves are not compared.
        assert_eq!(ours.hbase[0].name, "HBase get (study), published figure");
        assert_eq!(ours.series.len(), 2);
        assert!(ours.notes.iter().any(|n| n.contains("FlushRegion")));
    }

    #[test]
    fn report_json_shape_and_table() -> Result<()> {
        let mut r = Report::new(
            "wal",
            "write-tuning study §1.1",
            "WAL",
            "durability",
            "rows/s",
        );
        let mut s = Series::new("ours");
        s.push("SKIP_WAL", 1000.0);
        r.series.push(s);
        r.comparisons.push(Comparison::new("x", 50.0, 100.0));
        r.columns = vec!["point".into(), "rows/s".into()];
        r.rows = vec![vec!["SKIP_WAL".into(), int(1234567.0)]];
        let v = serde_json::to_value(&r).map_err(|e| BenchError::Invalid(e.to_string()))?;
        for key in [
            "name",
            "seed",
            "title",
            "x_desc",
            "y_desc",
            "scale",
            "machine",
            "series",
            "hbase",
            "comparisons",
            "rows",
            "points",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["series"][0]["points"][0][0], "SKIP_WAL");
        assert_eq!(v["comparisons"][0]["ratio"], 0.5);
        let t = r.text();
        assert!(t.contains("1,234,567") && t.contains("= 0.50"), "{t}");
        Ok(())
    }
}
