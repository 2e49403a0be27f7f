//! Rows of a data shape (docs/workloads.md) with the seed experiments' knobs
//! on top, for tests 5–7 of the HBase 0.94 write-tuning study
//! (docs/experiments.md: qualifier length, value size, column count). With
//! no knob set, a row is exactly the shape's row.
//!
//! The knobs apply in this order to the shape's row `i`:
//! 1. `value_size` B (fixed-size shapes only; `kv` and `ycsb` take it as
//!    their own value size): every value is padded with `Q` to B bytes (as
//!    the seed pads) or cut to B bytes;
//! 2. `columns` C: the values are joined in order and cut into C pieces of
//!    near-equal length (the first ones one byte longer), qualifiers `0`..,
//!    so the bytes of a row stay the same whatever C is;
//! 3. `qualifier_len` L: qualifier number j becomes j in base 62
//!    (`0-9a-zA-Z`), left-padded with `q` to L bytes (1 byte names 62
//!    columns, 2 bytes 3,844).

use ferrobase_workloads::{GeneratedRow, Shape};

const BASE62: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// A shape and its knobs. See the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSpec {
    pub shape: Shape,
    pub columns: Option<usize>,
    pub qualifier_len: Option<usize>,
    /// Pad/cut size of every value (not for `kv`/`ycsb`, whose value size
    /// is part of the shape).
    pub value_size: Option<usize>,
}

impl RowSpec {
    /// A spec from command-line values; checks them.
    pub fn new(
        shape_name: &str,
        value_size: Option<usize>,
        columns: Option<usize>,
        qualifier_len: Option<usize>,
    ) -> Result<RowSpec, String> {
        let own_size = matches!(
            shape_name.trim().to_ascii_lowercase().as_str(),
            "kv" | "ycsb"
        ) || shape_name.trim().to_ascii_lowercase().starts_with("kv");
        let shape = Shape::parse(shape_name, if own_size { value_size } else { None })?;
        if columns == Some(0) {
            return Err("--columns must be at least 1".into());
        }
        if qualifier_len == Some(0) {
            return Err("--qualifier-len must be at least 1".into());
        }
        let spec = RowSpec {
            shape,
            columns,
            qualifier_len,
            value_size: if own_size { None } else { value_size },
        };
        if let Some(l) = qualifier_len {
            let n = spec.cells_per_row();
            let capacity = 62f64.powi(l.min(10) as i32);
            if (n as f64) > capacity {
                return Err(format!(
                    "--qualifier-len {l} cannot name {n} columns (at most {capacity} with {l} byte(s))"
                ));
            }
        }
        Ok(spec)
    }

    /// The plain shape.
    pub fn plain(shape: Shape) -> RowSpec {
        RowSpec {
            shape,
            columns: None,
            qualifier_len: None,
            value_size: None,
        }
    }

    /// Cells in every row.
    pub fn cells_per_row(&self) -> usize {
        self.columns.unwrap_or(self.shape.cells_per_row())
    }

    /// A short description, e.g. `gps60 columns=10`.
    pub fn describe(&self) -> String {
        let mut s = match self.shape {
            Shape::Kv { value_size } => format!("kv value={value_size}B"),
            Shape::Ycsb {
                field_count,
                field_length,
            } => format!("ycsb {field_count}x{field_length}B"),
            other => other.name().to_string(),
        };
        if let Some(v) = self.value_size {
            s += &format!(" value={v}B");
        }
        if let Some(c) = self.columns {
            s += &format!(" columns={c}");
        }
        if let Some(l) = self.qualifier_len {
            s += &format!(" qualifier={l}B");
        }
        s
    }

    /// Writes row `i` into `out`.
    pub fn fill(&self, i: u64, out: &mut GeneratedRow) {
        self.shape.fill_row(i, out);
        if self.value_size.is_none() && self.columns.is_none() && self.qualifier_len.is_none() {
            return;
        }
        let mut cells: Vec<(Vec<u8>, Vec<u8>)> =
            out.cells().map(|(q, v)| (q.to_vec(), v.to_vec())).collect();
        if let Some(size) = self.value_size {
            for (_, v) in &mut cells {
                v.resize(size, b'Q');
            }
        }
        if let Some(c) = self.columns {
            let joined: Vec<u8> = cells.iter().flat_map(|(_, v)| v.iter().copied()).collect();
            let (base, extra) = (joined.len() / c, joined.len() % c);
            cells.clear();
            let mut at = 0;
            for j in 0..c {
                let len = base + usize::from(j < extra);
                let mut q = Vec::new();
                push_decimal(&mut q, j);
                cells.push((q, joined[at..at + len].to_vec()));
                at += len;
            }
        }
        if let Some(l) = self.qualifier_len {
            for (j, (q, _)) in cells.iter_mut().enumerate() {
                *q = qualifier(j, l);
            }
        }
        let row = std::mem::take(&mut out.row);
        *out = GeneratedRow::new(row, cells);
    }

    /// Row `i`.
    pub fn row(&self, i: u64) -> GeneratedRow {
        let mut out = GeneratedRow::default();
        self.fill(i, &mut out);
        out
    }
}

fn push_decimal(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(v.to_string().as_bytes());
}

/// Qualifier number `j` in `len` bytes: base 62, left-padded with `q`.
pub fn qualifier(j: usize, len: usize) -> Vec<u8> {
    let mut digits = Vec::new();
    let mut v = j;
    loop {
        digits.push(BASE62[v % 62]);
        v /= 62;
        if v == 0 {
            break;
        }
    }
    let mut out = vec![b'q'; len.saturating_sub(digits.len())];
    out.extend(digits.iter().rev());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_spec_is_the_shape() -> Result<(), String> {
        let spec = RowSpec::new("log9", None, None, None)?;
        assert_eq!(spec.row(7), Shape::Log9.row(7));
        let kv = RowSpec::new("kv", Some(1000), None, None)?;
        assert_eq!(kv.row(3).cell(0).map(|c| c.1.len()), Some(1000));
        Ok(())
    }

    #[test]
    fn columns_keep_the_row_bytes() -> Result<(), String> {
        let plain = RowSpec::new("gps60", None, None, None)?.row(5);
        for c in [1usize, 2, 7, 60, 120] {
            let r = RowSpec::new("gps60", None, Some(c), None)?.row(5);
            assert_eq!(r.len(), c);
            assert_eq!(r.value_bytes(), plain.value_bytes());
            let joined: Vec<u8> = r.cells().flat_map(|(_, v)| v.to_vec()).collect();
            let orig: Vec<u8> = plain.cells().flat_map(|(_, v)| v.to_vec()).collect();
            assert_eq!(joined, orig);
        }
        Ok(())
    }

    #[test]
    fn value_size_pads_with_q_and_qualifiers_have_the_length() -> Result<(), String> {
        let r = RowSpec::new("gps60", Some(126), None, Some(1))?.row(0);
        assert_eq!(r.len(), 60);
        assert!(r.cells().all(|(q, v)| q.len() == 1 && v.len() == 126));
        assert!(r.cell(0).is_some_and(|c| c.1.ends_with(b"QQQ")));
        let mut names: Vec<_> = r.cells().map(|(q, _)| q.to_vec()).collect();
        names.dedup();
        assert_eq!(names.len(), 60);
        assert_eq!(qualifier(61, 1), b"Z".to_vec());
        assert_eq!(qualifier(62, 4), b"qq10".to_vec());
        assert!(RowSpec::new("gps60", None, Some(100), Some(1)).is_err());
        assert!(RowSpec::new("gps60", None, Some(0), None).is_err());
        assert!(RowSpec::new("nope", None, None, None).is_err());
        Ok(())
    }
}
