//! SVG line charts of experiment results (plotters, SVG backend only): a
//! categorical x axis (the sweep's points), a y axis with its unit, a title,
//! one line per series and a legend. Owns drawing only, never measuring.

use crate::{BenchError, Result};
use plotters::prelude::*;
use serde::Serialize;

/// One line: `(x label, y value)` points.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    pub name: String,
    pub points: Vec<(String, f64)>,
}

impl Series {
    pub fn new(name: impl Into<String>) -> Series {
        Series {
            name: name.into(),
            points: Vec::new(),
        }
    }

    pub fn push(&mut self, x: impl Into<String>, y: f64) {
        self.points.push((x.into(), y));
    }

    /// The value at `x`, if any.
    pub fn at(&self, x: &str) -> Option<f64> {
        self.points.iter().find(|(l, _)| l == x).map(|(_, v)| *v)
    }
}

/// Draws `series` over the x labels (in order of first appearance) and
/// returns the SVG text.
pub fn line_chart(title: &str, x_desc: &str, y_desc: &str, series: &[Series]) -> Result<String> {
    let mut labels: Vec<String> = Vec::new();
    for s in series {
        for (l, _) in &s.points {
            if !labels.contains(l) {
                labels.push(l.clone());
            }
        }
    }
    let n = labels.len().max(1);
    let ymax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|(_, v)| *v))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let ymax = if ymax > 0.0 { ymax * 1.3 } else { 1.0 };
    let mut svg = String::new();
    draw(&mut svg, title, x_desc, y_desc, series, &labels, n, ymax).map_err(BenchError::Chart)?;
    Ok(svg)
}

#[allow(clippy::too_many_arguments)]
fn draw(
    svg: &mut String,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    labels: &[String],
    n: usize,
    ymax: f64,
) -> std::result::Result<(), String> {
    let root = SVGBackend::with_string(svg, (960, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(18)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), 0f64..ymax)
        .map_err(err)?;
    let label_of = |x: &f64| {
        let i = x.round();
        if (x - i).abs() < 0.05 && i >= 0.0 {
            labels.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .x_labels(n)
        .disable_x_mesh()
        .x_label_formatter(&label_of)
        .y_label_formatter(&|y| human(*y))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    for (k, s) in series.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|(l, v)| {
                let i = labels.iter().position(|x| x == l)?;
                v.is_finite().then_some((i as f64, *v))
            })
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(err)?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled())))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// `1.2M`, `35k`, `0.72` for axis labels.
pub fn human(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_has_title_axes_and_points() -> Result<()> {
        let mut a = Series::new("ours");
        a.push("1", 10.0);
        a.push("2", 25_000.0);
        let mut b = Series::new("HBase");
        b.push("2", 12_000.0);
        let svg = line_chart("A title", "threads", "rows/s", &[a, b])?;
        assert!(svg.starts_with("<svg"), "{}", &svg[..50.min(svg.len())]);
        assert!(svg.trim_end().ends_with("</svg>"));
        for needle in ["A title", "threads", "rows/s", "ours", "HBase", "<circle"] {
            assert!(svg.contains(needle), "missing {needle}");
        }
        Ok(())
    }
}
