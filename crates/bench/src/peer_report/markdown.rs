//! `DIR/summary.md` of `bench peer all`: the run as one Markdown table,
//! ready for a README: the run's facts, a row per YCSB phase (throughput
//! and p99 latency on both systems) and a row per seed experiment (its
//! ferrobase/HBase ratios against the HBase measured in the same run:
//! geometric mean, lowest and highest, over its points).
//!
//! Never measures or reads files: it renders a [`PeerRun`].

use super::html::{figure, ratio};
use super::ycsb::ratio_rows;
use super::{PeerRun, Step};

/// Text safe inside a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The geometric mean, lowest and highest of positive finite ratios.
fn spread(ratios: &[f64]) -> Option<(f64, f64, f64)> {
    let r: Vec<f64> = ratios
        .iter()
        .copied()
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    if r.is_empty() {
        return None;
    }
    let mean = (r.iter().map(|x| x.ln()).sum::<f64>() / r.len() as f64).exp();
    let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((mean, lo, hi))
}

/// The whole summary.
pub fn render(run: &PeerRun) -> String {
    let mut m = format!(
        "**ferrobase against {}, one run on one machine.** Machine: {}. Date: {} UTC. \
         {}. Command: `{}` (scale {}).\n\n",
        cell(&run.hbase_version),
        cell(&run.machine),
        cell(&run.date),
        cell(&run.ferrobase_version),
        cell(&run.command),
        run.scale
    );
    m += "| figure | ferrobase | Apache HBase | ferrobase / HBase |\n|---|---|---|---|\n";
    match &run.ycsb {
        Step::Done(y) => {
            for r in ratio_rows(y) {
                let phase = if r.phase == "load" {
                    "YCSB load".to_string()
                } else {
                    format!("YCSB {}", r.phase.to_uppercase())
                };
                let not_ok = [&r.status.ferrobase, &r.status.hbase]
                    .iter()
                    .any(|s| s.as_str() != "ok");
                let status = if not_ok {
                    format!(
                        " ({} / {})",
                        cell(&r.status.ferrobase),
                        cell(&r.status.hbase)
                    )
                } else {
                    String::new()
                };
                m += &format!(
                    "| {phase}, ops/s{status} | {} | {} | **{}** |\n",
                    figure(r.throughput.ferrobase),
                    figure(r.throughput.hbase),
                    ratio(r.throughput.ratio())
                );
                for (op, p) in &r.p99_us {
                    m += &format!(
                        "| {phase}, {} p99 µs | {} | {} | {} |\n",
                        cell(&op.to_lowercase()),
                        figure(p.ferrobase),
                        figure(p.hbase),
                        ratio(p.ratio())
                    );
                }
            }
        }
        Step::Failed(e) => m += &format!("| YCSB | failed: {} | | |\n", cell(e)),
        Step::NotRun(why) => m += &format!("| YCSB | not run: {} | | |\n", cell(why)),
    }
    for (name, step) in &run.experiments {
        match step {
            Step::Done(r) => {
                let here: Vec<f64> = r
                    .comparisons
                    .iter()
                    .filter(|c| c.what.contains("Apache HBase here"))
                    .map(|c| c.ratio)
                    .collect();
                let errors = if r.errors > 0 {
                    format!(", {} failed operations", r.errors)
                } else {
                    String::new()
                };
                match spread(&here) {
                    Some((mean, lo, hi)) => {
                        m += &format!(
                            "| `{}`: {} ({} points{errors}) | | | **{}** (geometric mean; {}–{}) |\n",
                            cell(name),
                            cell(&r.title),
                            here.len(),
                            ratio(Some(mean)),
                            ratio(Some(lo)),
                            ratio(Some(hi))
                        )
                    }
                    None => {
                        m += &format!(
                            "| `{}`: {}{errors} | | | no point measured on both |\n",
                            cell(name),
                            cell(&r.title)
                        )
                    }
                }
            }
            Step::Failed(e) => m += &format!("| `{}` | failed: {} | | |\n", cell(name), cell(e)),
            Step::NotRun(why) => {
                m += &format!("| `{}` | not run: {} | | |\n", cell(name), cell(why))
            }
        }
    }
    m
}
