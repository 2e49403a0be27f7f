//! `DIR/index.html` of `bench peer all`, as a pure function of the run's
//! results ([`render`]): the machine and versions, a summary of every
//! phase, the YCSB ratio table, and each experiment's chart (inlined SVG)
//! with its ferrobase/HBase comparisons. Nothing here measures or touches
//! the filesystem, so the page is tested from hand-made results.

use super::ycsb::{Pair, RatioRow, ratio_rows};
use super::{PeerRun, Step};
use crate::experiment::{Report, int};

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:auto;padding:0 8px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top}\
th{background:#eee}td.l,th.l{text-align:left}.failed{color:#b00;font-weight:bold}.notrun{color:#a60}\
pre{background:#f4f4f4;padding:8px;overflow-x:auto}svg{max-width:100%;height:auto}code{background:#f4f4f4}";

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A figure for people: thousands separators from 100 up, else up to 2
/// decimals; `—` when not measured.
pub fn figure(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(v) if !v.is_finite() => "—".into(),
        Some(v) if v.abs() >= 100.0 => int(v),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}

/// A ratio with two decimals, `—` when either side is missing.
pub fn ratio(v: Option<f64>) -> String {
    match v {
        Some(r) if r.is_finite() => format!("{r:.2}"),
        _ => "—".into(),
    }
}

/// The whole page.
pub fn render(run: &PeerRun) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ferrobase against Apache HBase</title>\
         <style>{STYLE}</style></head><body>\n<h1>ferrobase against Apache HBase</h1>\n"
    );
    h += "<table>\n";
    for (k, v) in [
        ("machine", run.machine.as_str()),
        ("date (UTC)", run.date.as_str()),
        ("ferrobase", run.ferrobase_version.as_str()),
        ("Apache HBase", run.hbase_version.as_str()),
        ("scale", &run.scale.to_string()),
    ] {
        h += &format!(
            "<tr><th class=\"l\">{k}</th><td class=\"l\">{}</td></tr>\n",
            escape(v)
        );
    }
    h += &format!(
        "<tr><th class=\"l\">command</th><td class=\"l\"><code>{}</code></td></tr>\n</table>\n",
        escape(&run.command)
    );
    h += "<p>ferrobase/HBase: above 1 is better for throughput, below 1 for latency, CPU seconds and memory.</p>\n";
    h += &summary(run);
    h += &ycsb_section(run);
    h += "<h2 id=\"experiments\">Seed experiments</h2>\n";
    h += &format!("<p>HBase peer of the experiments: {}</p>\n", peer_line(run));
    for (name, step) in &run.experiments {
        h += &experiment_section(name, step);
    }
    h += "</body></html>\n";
    h
}

fn status_cell<T>(step: &Step<T>) -> String {
    match step {
        Step::Done(_) => "ok".into(),
        Step::Failed(e) => format!("<span class=\"failed\">FAILED</span>: {}", escape(e)),
        Step::NotRun(why) => format!("<span class=\"notrun\">not run</span>: {}", escape(why)),
    }
}

fn peer_line(run: &PeerRun) -> String {
    match &run.peer {
        Step::Done(describe) => escape(describe),
        other => status_cell(other),
    }
}

fn summary(run: &PeerRun) -> String {
    let mut h = String::from(
        "<h2>Summary</h2>\n<table><tr><th class=\"l\">phase</th><th class=\"l\">status</th></tr>\n",
    );
    let ycsb_status = match &run.ycsb {
        Step::Done(r) => {
            let failed = r.failures();
            if failed.is_empty() {
                "ok".to_string()
            } else {
                format!(
                    "<span class=\"failed\">{} phase(s) not ok</span> (below)",
                    failed.len()
                )
            }
        }
        other => status_cell(other),
    };
    h += &format!(
        "<tr><td class=\"l\"><a href=\"#ycsb\">YCSB</a></td><td class=\"l\">{ycsb_status}</td></tr>\n"
    );
    h += &format!(
        "<tr><td class=\"l\">HBase peer (experiments)</td><td class=\"l\">{}</td></tr>\n",
        status_cell(&run.peer)
    );
    for (name, step) in &run.experiments {
        let mut status = status_cell(step);
        if let Step::Done(r) = step
            && r.errors > 0
        {
            status = format!(
                "<span class=\"failed\">{} operation(s) failed</span>",
                r.errors
            );
        }
        h += &format!(
            "<tr><td class=\"l\"><a href=\"#{0}\">{0}</a></td><td class=\"l\">{status}</td></tr>\n",
            escape(name)
        );
    }
    h + "</table>\n"
}

fn pair_cells(p: &Pair) -> String {
    format!(
        "<td>{}</td><td>{}</td><td><b>{}</b></td>",
        figure(p.ferrobase),
        figure(p.hbase),
        ratio(p.ratio())
    )
}

fn ycsb_section(run: &PeerRun) -> String {
    let mut h = String::from("<h2 id=\"ycsb\">YCSB</h2>\n");
    let r = match &run.ycsb {
        Step::Done(r) => r,
        other => return h + &format!("<p>{}</p>\n", status_cell(other)),
    };
    let meta = &r.run;
    let count = |k: &str| meta.get(k).and_then(|v| v.as_f64()).map_or("?".into(), int);
    h += &format!(
        "<p>YCSB {} ({}), {} records, {} operations a workload, {} client threads, memory budget {} each; \
         HBase: {}. Full tables: <a href=\"ycsb/results.md\">ycsb/results.md</a>, \
         <a href=\"ycsb/results.json\">ycsb/results.json</a>; logs under <code>ycsb/</code>.</p>\n",
        escape(meta.get("ycsb").and_then(|v| v.as_str()).unwrap_or("?")),
        escape(meta.get("binding").and_then(|v| v.as_str()).unwrap_or("?")),
        count("records"),
        count("ops"),
        count("threads"),
        escape(meta.get("memory").and_then(|v| v.as_str()).unwrap_or("?")),
        escape(meta.get("hbase").and_then(|v| v.as_str()).unwrap_or("?")),
    );
    h += &ratio_table(&ratio_rows(r));
    let failed = r.failures();
    if !failed.is_empty() {
        h += "<p class=\"failed\">Phases not ok:</p>\n<ul>\n";
        for p in failed {
            h += &format!(
                "<li>{} {}: {}: {}</li>\n",
                escape(&p.system),
                escape(&p.phase),
                escape(&p.status.to_uppercase()),
                escape(p.error.as_deref().unwrap_or("no error recorded"))
            );
        }
        h += "</ul>\n";
    }
    for s in r.systems.iter().filter(|s| s.start_error.is_some()) {
        h += &format!(
            "<p class=\"failed\">{} did not start: {}</p>\n",
            escape(&s.system),
            escape(s.start_error.as_deref().unwrap_or(""))
        );
    }
    h
}

/// The YCSB ratio table: per phase, ferrobase, HBase and ferrobase/HBase
/// of throughput, p99 latency per operation kind, server CPU and RSS.
pub fn ratio_table(rows: &[RatioRow]) -> String {
    let mut h = String::from(
        "<table>\n<tr><th rowspan=\"2\" class=\"l\">phase</th><th rowspan=\"2\" class=\"l\">status (ferrobase / HBase)</th>\
         <th colspan=\"3\">throughput, ops/s</th><th rowspan=\"2\" class=\"l\">p99 µs: ferrobase / HBase = ratio</th>\
         <th colspan=\"3\">server CPU s</th><th colspan=\"3\">server peak RSS MiB</th></tr>\n<tr>",
    );
    for _ in 0..3 {
        h += "<th>ferrobase</th><th>HBase</th><th>ratio</th>";
    }
    h += "</tr>\n";
    for r in rows {
        let p99: Vec<String> = r
            .p99_us
            .iter()
            .map(|(op, p)| {
                format!(
                    "{}: {} / {} = <b>{}</b>",
                    escape(op),
                    figure(p.ferrobase),
                    figure(p.hbase),
                    ratio(p.ratio())
                )
            })
            .collect();
        let phase = if r.phase == "load" {
            "load".to_string()
        } else {
            format!("workload {}", r.phase)
        };
        h += &format!(
            "<tr class=\"phase\" id=\"ycsb-{}\"><td class=\"l\">{}</td><td class=\"l\">{} / {}</td>{}<td class=\"l\">{}</td>{}{}</tr>\n",
            escape(&r.phase),
            escape(&phase),
            escape(&r.status.ferrobase),
            escape(&r.status.hbase),
            pair_cells(&r.throughput),
            p99.join("<br>"),
            pair_cells(&r.server_cpu_s),
            pair_cells(&r.peak_rss_mib),
        );
    }
    h + "</table>\n"
}

fn experiment_section(name: &str, step: &Step<Report>) -> String {
    let id = escape(name);
    let r = match step {
        Step::Done(r) => r,
        other => {
            return format!(
                "<h3 id=\"{id}\" class=\"experiment\">{id}</h3>\n<p>{}</p>\n",
                status_cell(other)
            );
        }
    };
    let mut h = format!(
        "<h3 id=\"{id}\" class=\"experiment\">{id}: {} <small>({})</small></h3>\n",
        escape(&r.title),
        escape(&r.seed)
    );
    if r.errors > 0 {
        h += &format!(
            "<p class=\"failed\">{} operation(s) failed (see {id}.json)</p>\n",
            r.errors
        );
    }
    match r.svg() {
        Ok(svg) => {
            // The SVG document's own element, without an XML prologue.
            let start = svg.find("<svg").unwrap_or(0);
            h += &svg[start..];
            h.push('\n');
        }
        Err(e) => {
            h += &format!(
                "<p class=\"failed\">chart failed: {}</p>\n",
                escape(&e.to_string())
            )
        }
    }
    h += &comparison_table(r);
    if !r.notes.is_empty() {
        h += "<ul>\n";
        for n in &r.notes {
            h += &format!("<li>{}</li>\n", escape(n));
        }
        h += "</ul>\n";
    }
    h += &format!(
        "<details><summary>table</summary><pre>{}</pre></details>\n<p><a href=\"{id}.json\">{id}.json</a>, <a href=\"{id}.svg\">{id}.svg</a></p>\n",
        escape(&r.text())
    );
    h
}

/// An experiment's comparisons: against the HBase measured here first,
/// then against the seed's published figures.
pub fn comparison_table(r: &Report) -> String {
    if r.comparisons.is_empty() {
        return "<p>No ferrobase/HBase comparison in this experiment.</p>\n".into();
    }
    let mut h = String::from(
        "<table class=\"ratios\"><tr><th class=\"l\">point</th><th class=\"l\">HBase</th><th>ferrobase</th><th>HBase</th><th>ratio</th></tr>\n",
    );
    let here = |w: &str| w.contains("Apache HBase here");
    let mut sorted: Vec<_> = r.comparisons.iter().collect();
    sorted.sort_by_key(|c| !here(&c.what));
    for c in sorted {
        let (what, against) = if here(&c.what) {
            (
                c.what.replace(": ferrobase / Apache HBase here", ""),
                "here",
            )
        } else {
            (c.what.clone(), "published")
        };
        h += &format!(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{against}</td><td>{}</td><td>{}</td><td><b>{}</b></td></tr>\n",
            escape(&what),
            figure(Some(c.ours)),
            figure(Some(c.hbase)),
            ratio(Some(c.ratio))
        );
    }
    h + "</table>\n"
}
