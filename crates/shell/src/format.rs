//! Output in the HBase shell's shapes: two-column rows (`ROW  COLUMN+CELL`
//! header, rows inset by one space), one-column rows, cells as
//! `column=f:q, timestamp=2026-11-30T21:10:26.123, value=v`, bytes as
//! `Bytes.toStringBinary`, `N row(s)` and `Took 0.0123 seconds`.
//!
//! Like HBase's `Formatter::Console`, columns are padded to the terminal
//! width only on a terminal (width 0: no padding, which is what scripts
//! and tests see). This module only formats text; it never does I/O.

use ferrobase_types::binary::to_string_binary;
use ferrobase_types::{Cell, CellType};
use std::fmt::Write as _;

/// Formats rows for a terminal of `width` columns (0: not a terminal).
#[derive(Clone, Copy, Debug)]
pub struct Formatter {
    pub width: usize,
}

impl Formatter {
    fn widths(&self) -> (usize, usize) {
        if self.width == 0 {
            (0, 0)
        } else {
            let c1 = self.width / 4;
            (c1, self.width.saturating_sub(c1 + 2))
        }
    }

    /// A two-column header (`ROW  COLUMN+CELL`): no inset, two spaces.
    pub fn header(&self, a: &str, b: &str, out: &mut String) {
        self.two(a, b, false, out);
    }

    /// A two-column row, inset by one space; long text wraps at the width.
    pub fn row(&self, a: &str, b: &str, out: &mut String) {
        self.two(a, b, true, out);
    }

    fn two(&self, a: &str, b: &str, inset: bool, out: &mut String) {
        let (w1, w2) = self.widths();
        let s1 = split(w1, a);
        let s2 = split(w2, b);
        for i in 0..s1.len().max(s2.len()) {
            if inset {
                out.push(' ');
            }
            pad(out, w1, s1.get(i).map(String::as_str).unwrap_or(""));
            if !inset {
                out.push(' ');
            }
            out.push(' ');
            pad(out, w2, s2.get(i).map(String::as_str).unwrap_or(""));
            // Padding of the last column is noise at the end of a line.
            while out.ends_with(' ') && w2 > 0 {
                out.pop();
            }
            out.push('\n');
        }
    }

    /// A one-column line (describe, list), wrapped at the width.
    pub fn line(&self, a: &str, out: &mut String) {
        for l in split(self.width, a) {
            out.push_str(&l);
            out.push('\n');
        }
    }
}

fn split(width: usize, s: &str) -> Vec<String> {
    if width == 0 {
        return vec![s.to_string()];
    }
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(width).map(|c| c.iter().collect()).collect()
}

fn pad(out: &mut String, width: usize, s: &str) {
    out.push_str(s);
    for _ in s.chars().count()..width {
        out.push(' ');
    }
}

/// `f:q` with the qualifier as `toStringBinary`.
pub fn column(cell: &Cell) -> String {
    format!(
        "{}:{}",
        String::from_utf8_lossy(&cell.family),
        to_string_binary(&cell.qualifier)
    )
}

/// `timestamp=…, value=…` (or `type=…` for a delete marker).
pub fn cell_text(cell: &Cell) -> String {
    if cell.cell_type == CellType::Put {
        format!(
            "timestamp={}, value={}",
            iso_timestamp(cell.timestamp),
            to_string_binary(&cell.value)
        )
    } else {
        format!(
            "timestamp={}, type={}",
            iso_timestamp(cell.timestamp),
            cell.cell_type
        )
    }
}

/// `N row(s)`.
pub fn rows(n: u64, out: &mut String) {
    let _ = writeln!(out, "{n} row(s)");
}

/// `Took 0.0123 seconds`.
pub fn took(seconds: f64) -> String {
    format!("Took {seconds:.4} seconds")
}

/// Milliseconds since the epoch as HBase 2's shell prints them:
/// `2026-11-30T21:10:26.123` (UTC; HBase uses the JVM's zone).
pub fn iso_timestamp(ms: u64) -> String {
    let ms = ms.min(i64::MAX as u64);
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000");
        assert_eq!(iso_timestamp(1_700_000_000_123), "2023-11-14T22:13:20.123");
        assert_eq!(iso_timestamp(951_782_400_000), "2000-02-29T00:00:00.000");
        assert!(!iso_timestamp(u64::MAX).is_empty());
    }

    #[test]
    fn rows_like_hbase() {
        let mut s = String::new();
        let f = Formatter { width: 0 };
        f.header("ROW", "COLUMN+CELL", &mut s);
        f.row("r1", "column=f:q, timestamp=x, value=v", &mut s);
        assert_eq!(
            s,
            "ROW  COLUMN+CELL\n r1 column=f:q, timestamp=x, value=v\n"
        );
        let mut s = String::new();
        let f = Formatter { width: 40 };
        f.header("ROW", "COLUMN+CELL", &mut s);
        f.row("r1", "abc", &mut s);
        assert_eq!(s, "ROW         COLUMN+CELL\n r1         abc\n");
    }
}
