//! One line of input: split on the separator and checked against the
//! column spec. A line is *bad* (counted, written to the rejects file,
//! skipped) when its field count differs from the spec's, its row key is
//! empty or longer than a row key may be, its `HBASE_TS_KEY` field is not
//! a timestamp, or one of its cells is larger than
//! `hbase.client.keyvalue.maxsize` (the check the server makes).
//!
//! This module never allocates per line: fields are ranges into the line,
//! kept in a buffer the parser reuses.

use crate::columns::{Column, ColumnSpec};
use ferrobase_types::LATEST_TIMESTAMP;
use ferrobase_types::key::MAX_ROW_LEN;
use ferrobase_types::mutation::{MutationError, check_cell};
use std::fmt;
use std::sync::Arc;

/// Why a line was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadLine {
    ColumnCount {
        found: usize,
        expected: usize,
    },
    EmptyRowKey,
    RowKeyTooLong {
        len: usize,
    },
    BadTimestamp(String),
    CellTooLarge {
        column: String,
        size: usize,
        max: usize,
    },
}

impl fmt::Display for BadLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadLine::ColumnCount { found, expected } => {
                write!(f, "{found} field(s), the columns name {expected}")
            }
            BadLine::EmptyRowKey => write!(f, "empty row key"),
            BadLine::RowKeyTooLong { len } => {
                write!(f, "row key of {len} bytes, longer than {MAX_ROW_LEN}")
            }
            BadLine::BadTimestamp(t) => {
                write!(f, "timestamp '{t}' is not a number of milliseconds")
            }
            BadLine::CellTooLarge { column, size, max } => write!(
                f,
                "cell {column} of {size} bytes is larger than hbase.client.keyvalue.maxsize ({max})"
            ),
        }
    }
}

/// A line that passed every check: its row, timestamp and fields.
pub struct Parsed<'a> {
    pub row: &'a [u8],
    row_start: usize,
    pub timestamp: u64,
    line: &'a [u8],
    fields: &'a [(usize, usize)],
}

impl<'a> Parsed<'a> {
    /// The whole line.
    pub fn whole(&self) -> &'a [u8] {
        self.line
    }

    /// Where the row key starts in [`whole`](Self::whole).
    pub fn row_offset(&self) -> usize {
        self.row_start
    }

    /// Field `i` (an index of the column spec).
    pub fn field(&self, i: usize) -> &[u8] {
        self.fields
            .get(i)
            .and_then(|&(s, e)| self.line.get(s..e))
            .unwrap_or_default()
    }
}

/// Splits and checks lines (see the module docs).
pub struct LineParser {
    spec: Arc<ColumnSpec>,
    separator: u8,
    /// The timestamp of every cell when the spec has no `HBASE_TS_KEY`.
    default_ts: u64,
    max_cell: usize,
    fields: Vec<(usize, usize)>,
}

impl LineParser {
    pub fn new(spec: Arc<ColumnSpec>, separator: u8, default_ts: u64, max_cell: usize) -> Self {
        LineParser {
            spec,
            separator,
            default_ts,
            max_cell,
            fields: Vec::new(),
        }
    }

    /// Splits `line` (without its line break) and checks it.
    pub fn parse<'a>(&'a mut self, line: &'a [u8]) -> Result<Parsed<'a>, BadLine> {
        self.fields.clear();
        let mut start = 0;
        for (i, &b) in line.iter().enumerate() {
            if b == self.separator {
                self.fields.push((start, i));
                start = i + 1;
            }
        }
        self.fields.push((start, line.len()));
        let expected = self.spec.width();
        if self.fields.len() != expected {
            return Err(BadLine::ColumnCount {
                found: self.fields.len(),
                expected,
            });
        }
        let field = |i: usize| -> &[u8] {
            self.fields
                .get(i)
                .and_then(|&(s, e)| line.get(s..e))
                .unwrap_or_default()
        };
        let row = field(self.spec.row_key);
        if row.is_empty() {
            return Err(BadLine::EmptyRowKey);
        }
        if row.len() > MAX_ROW_LEN {
            return Err(BadLine::RowKeyTooLong { len: row.len() });
        }
        let timestamp = match self.spec.timestamp {
            None => self.default_ts,
            Some(i) => {
                let t = field(i);
                std::str::from_utf8(t)
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
                    .filter(|&ts| ts < LATEST_TIMESTAMP)
                    .ok_or_else(|| BadLine::BadTimestamp(String::from_utf8_lossy(t).into_owned()))?
            }
        };
        for (i, c) in self.spec.columns.iter().enumerate() {
            let Column::Cell { family, qualifier } = c else {
                continue;
            };
            let family_name = self.spec.families.get(*family).map_or("", |f| f.as_str());
            let value = field(i);
            match check_cell(
                row.len(),
                family_name.len(),
                qualifier,
                timestamp,
                value,
                self.max_cell,
            ) {
                Ok(()) => {}
                Err(MutationError::CellTooLarge { size, max }) => {
                    return Err(BadLine::CellTooLarge {
                        column: format!("{family_name}:{}", String::from_utf8_lossy(qualifier)),
                        size,
                        max,
                    });
                }
                Err(_) => {
                    return Err(BadLine::BadTimestamp(timestamp.to_string()));
                }
            }
        }
        let row_start = self.fields.get(self.spec.row_key).map_or(0, |f| f.0);
        Ok(Parsed {
            row,
            row_start,
            timestamp,
            line,
            fields: &self.fields,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(spec: &str) -> LineParser {
        LineParser::new(Arc::new(ColumnSpec::parse(spec).unwrap()), b',', 77, 100)
    }

    #[test]
    fn good_lines_split_into_fields() {
        let mut p = parser("f:a,HBASE_ROW_KEY,f:b");
        let l = p.parse(b"x,row1,").unwrap();
        assert_eq!(l.row, b"row1");
        assert_eq!(l.timestamp, 77);
        assert_eq!((l.field(0), l.field(2)), (&b"x"[..], &b""[..]));
        let mut p = parser("HBASE_ROW_KEY,HBASE_TS_KEY,f:a");
        assert_eq!(p.parse(b"r,123,v").unwrap().timestamp, 123);
    }

    #[test]
    fn bad_lines_say_why() {
        let mut p = parser("HBASE_ROW_KEY,HBASE_TS_KEY,f:a");
        let big = format!("r,1,{}", "v".repeat(200));
        for (line, want) in [
            ("r,1", "2 field(s), the columns name 3"),
            ("r,1,v,w", "4 field(s)"),
            ("", "1 field(s)"),
            (",1,v", "empty row key"),
            ("r,x,v", "timestamp 'x'"),
            ("r,-1,v", "timestamp '-1'"),
            (
                big.as_str(),
                "larger than hbase.client.keyvalue.maxsize (100)",
            ),
        ] {
            let e = p.parse(line.as_bytes()).err().unwrap().to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
        let long = format!("{},1,v", "k".repeat(MAX_ROW_LEN + 1));
        assert!(matches!(
            p.parse(long.as_bytes()),
            Err(BadLine::RowKeyTooLong { .. })
        ));
    }
}
