//! The column spec (`importtsv.columns`, `--columns`): which field of a
//! line is the row key (`HBASE_ROW_KEY`), which the timestamp
//! (`HBASE_TS_KEY`), and which cell (`family:qualifier`, or `family` for
//! the empty qualifier) each other field fills, as HBase's ImportTsv
//! reads it.
//!
//! This module parses and checks the spec; it never reads a line.

use crate::ImportError;

/// The row key column's name.
pub const ROW_KEY: &str = "HBASE_ROW_KEY";
/// The timestamp column's name.
pub const TS_KEY: &str = "HBASE_TS_KEY";
/// HBase's other special columns, which ferrobase does not take.
const UNSUPPORTED: [&str; 3] = [
    "HBASE_ATTRIBUTES_KEY",
    "HBASE_CELL_VISIBILITY",
    "HBASE_CELL_TTL",
];

/// What one field of a line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    RowKey,
    Timestamp,
    /// A cell: index into [`ColumnSpec::families`], and its qualifier.
    Cell {
        family: usize,
        qualifier: Vec<u8>,
    },
}

/// A parsed `--columns` value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    /// One per field, in line order.
    pub columns: Vec<Column>,
    /// Families named, in first-mention order.
    pub families: Vec<String>,
    /// Field index of the row key.
    pub row_key: usize,
    /// Field index of the timestamp, if any.
    pub timestamp: Option<usize>,
}

impl ColumnSpec {
    /// Parses `HBASE_ROW_KEY,f:a,f:b,…`.
    pub fn parse(text: &str) -> Result<ColumnSpec, ImportError> {
        let bad = |why: String| ImportError::Columns(why);
        if text.trim().is_empty() {
            return Err(bad(format!(
                "no columns given; name every field of a line, e.g. {ROW_KEY},f:a,f:b"
            )));
        }
        let mut spec = ColumnSpec {
            columns: Vec::new(),
            families: Vec::new(),
            row_key: usize::MAX,
            timestamp: None,
        };
        let mut seen = std::collections::HashSet::new();
        for (i, raw) in text.split(',').enumerate() {
            let name = raw.trim();
            match name {
                ROW_KEY => {
                    if spec.row_key != usize::MAX {
                        return Err(bad(format!("{ROW_KEY} is named twice")));
                    }
                    spec.row_key = i;
                    spec.columns.push(Column::RowKey);
                }
                TS_KEY => {
                    if spec.timestamp.is_some() {
                        return Err(bad(format!("{TS_KEY} is named twice")));
                    }
                    spec.timestamp = Some(i);
                    spec.columns.push(Column::Timestamp);
                }
                "" => return Err(bad(format!("column {} is empty", i + 1))),
                n if UNSUPPORTED.contains(&n) => {
                    return Err(bad(format!(
                        "{n} is not supported; the special columns are {ROW_KEY} and {TS_KEY}"
                    )));
                }
                n => {
                    let (family, qualifier) = n.split_once(':').unwrap_or((n, ""));
                    if family.is_empty() {
                        return Err(bad(format!(
                            "column '{n}' has no family (family:qualifier)"
                        )));
                    }
                    if !seen.insert(n.to_string()) {
                        return Err(bad(format!("column '{n}' is named twice")));
                    }
                    let f = match spec.families.iter().position(|x| x == family) {
                        Some(f) => f,
                        None => {
                            spec.families.push(family.to_string());
                            spec.families.len() - 1
                        }
                    };
                    spec.columns.push(Column::Cell {
                        family: f,
                        qualifier: qualifier.as_bytes().to_vec(),
                    });
                }
            }
        }
        if spec.row_key == usize::MAX {
            return Err(bad(format!(
                "the columns must name {ROW_KEY}, the row key field"
            )));
        }
        if spec.families.is_empty() {
            return Err(bad("the columns name no cell (family:qualifier)".into()));
        }
        Ok(spec)
    }

    /// Fields a line must have.
    pub fn width(&self) -> usize {
        self.columns.len()
    }

    /// The cell columns of family `f`, as `(field index, qualifier)`,
    /// sorted by qualifier (the order cells take in a store file).
    pub fn cells_of(&self, f: usize) -> Vec<(usize, Vec<u8>)> {
        let mut out: Vec<(usize, Vec<u8>)> = self
            .columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match c {
                Column::Cell { family, qualifier } if *family == f => Some((i, qualifier.clone())),
                _ => None,
            })
            .collect();
        out.sort_by(|a, b| a.1.cmp(&b.1));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_like_importtsv() {
        let s = ColumnSpec::parse("HBASE_ROW_KEY,f:b,g,HBASE_TS_KEY,f:a").unwrap();
        assert_eq!(s.row_key, 0);
        assert_eq!(s.timestamp, Some(3));
        assert_eq!(s.families, vec!["f", "g"]);
        assert_eq!(s.width(), 5);
        assert_eq!(s.cells_of(0), vec![(4, b"a".to_vec()), (1, b"b".to_vec())]);
        assert_eq!(s.cells_of(1), vec![(2, Vec::new())]);
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (spec, says) in [
            ("", "no columns"),
            ("f:a,f:b", "must name HBASE_ROW_KEY"),
            ("HBASE_ROW_KEY", "no cell"),
            ("HBASE_ROW_KEY,HBASE_ROW_KEY,f:a", "named twice"),
            ("HBASE_ROW_KEY,f:a,f:a", "'f:a' is named twice"),
            ("HBASE_ROW_KEY,:a", "no family"),
            ("HBASE_ROW_KEY,,f:a", "column 2 is empty"),
            ("HBASE_ROW_KEY,f:a,HBASE_CELL_TTL", "not supported"),
        ] {
            let e = ColumnSpec::parse(spec).unwrap_err().to_string();
            assert!(e.contains(says), "{spec}: {e}");
        }
    }
}
