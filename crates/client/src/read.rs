//! What a read asks for ([`Get`], [`Scan`]) and what it returns
//! ([`RowResult`]). Plain data; no I/O.

use bytes::Bytes;
use ferrobase_proto::pb;
use ferrobase_types::Cell;

/// Columns, versions and time range shared by gets and scans.
#[derive(Clone, Debug, Default)]
pub struct ReadSpec {
    columns: Vec<(Bytes, Vec<Bytes>)>,
    pub max_versions: u32,
    /// `[min, max)`; `max` 0 means no bound.
    pub time_range: (u64, u64),
}

impl ReadSpec {
    fn add_family(&mut self, family: Bytes) {
        match self.columns.iter_mut().find(|(f, _)| *f == family) {
            Some((_, q)) => q.clear(),
            None => self.columns.push((family, Vec::new())),
        }
    }

    fn add_column(&mut self, family: Bytes, qualifier: Bytes) {
        match self.columns.iter_mut().find(|(f, _)| *f == family) {
            Some((_, q)) => q.push(qualifier),
            None => self.columns.push((family, vec![qualifier])),
        }
    }

    pub(crate) fn to_pb(&self) -> pb::ReadSpec {
        pb::ReadSpec {
            columns: self
                .columns
                .iter()
                .map(|(f, q)| pb::ColumnSpec {
                    family: f.clone(),
                    qualifiers: q.clone(),
                })
                .collect(),
            max_versions: self.max_versions,
            min_timestamp: self.time_range.0,
            max_timestamp: self.time_range.1,
        }
    }
}

/// A read of one row (HBase's `Get`).
#[derive(Clone, Debug)]
pub struct Get {
    pub row: Bytes,
    pub spec: ReadSpec,
}

impl Get {
    /// The newest version of every column of `row`.
    pub fn new(row: impl Into<Bytes>) -> Get {
        Get {
            row: row.into(),
            spec: ReadSpec::default(),
        }
    }

    /// Only this family (adds to earlier restrictions).
    pub fn family(mut self, family: impl Into<Bytes>) -> Get {
        self.spec.add_family(family.into());
        self
    }

    /// Only this column (adds to earlier restrictions).
    pub fn column(mut self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> Get {
        self.spec.add_column(family.into(), qualifier.into());
        self
    }

    /// Up to `n` versions per column.
    pub fn versions(mut self, n: u32) -> Get {
        self.spec.max_versions = n;
        self
    }
}

/// A read of a row range (HBase's `Scan`).
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// Inclusive; empty: from the first row.
    pub start_row: Bytes,
    /// Exclusive; empty: to the last row.
    pub stop_row: Bytes,
    pub spec: ReadSpec,
    /// Rows per round trip; 0: `hbase.client.scanner.caching`.
    pub caching: u32,
    /// Bytes per round trip; 0: `hbase.client.scanner.max.result.size`.
    pub max_result_size: u64,
}

impl Scan {
    /// Every row.
    pub fn new() -> Scan {
        Scan::default()
    }

    /// Rows in `[start, stop)`.
    pub fn range(start: impl Into<Bytes>, stop: impl Into<Bytes>) -> Scan {
        Scan {
            start_row: start.into(),
            stop_row: stop.into(),
            ..Scan::default()
        }
    }

    /// Only this family.
    pub fn family(mut self, family: impl Into<Bytes>) -> Scan {
        self.spec.add_family(family.into());
        self
    }

    /// Only this column.
    pub fn column(mut self, family: impl Into<Bytes>, qualifier: impl Into<Bytes>) -> Scan {
        self.spec.add_column(family.into(), qualifier.into());
        self
    }

    /// Rows per round trip.
    pub fn caching(mut self, rows: u32) -> Scan {
        self.caching = rows;
        self
    }

    /// Bytes per round trip.
    pub fn max_result_size(mut self, bytes: u64) -> Scan {
        self.max_result_size = bytes;
        self
    }
}

/// One row's cells (HBase's `Result`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowResult {
    pub row: Bytes,
    /// In family, qualifier, newest-first order.
    pub cells: Vec<Cell>,
}

impl RowResult {
    /// True when the row had no visible cells.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The newest value of a column.
    pub fn value(&self, family: &[u8], qualifier: &[u8]) -> Option<&Bytes> {
        self.cells
            .iter()
            .find(|c| c.family == family && c.qualifier == qualifier)
            .map(|c| &c.value)
    }
}

pub(crate) fn decode_rows(block: Bytes) -> crate::Result<Vec<RowResult>> {
    Ok(ferrobase_proto::cellblock::decode_results(block)?
        .into_iter()
        .map(|(row, cells)| RowResult { row, cells })
        .collect())
}
