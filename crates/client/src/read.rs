//! What a read asks for ([`Get`], [`Scan`]) and what it returns
//! ([`RowResult`]). Plain data; no I/O.
//!
//! Filters travel as text in HBase's filter language and are parsed and
//! applied by the server; this module never interprets them.

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
    /// A filter string (HBase's `ParseFilter` language); empty: none.
    pub filter: String,
}

impl ReadSpec {
    /// Sets `[min, max)`; `max` 0 means no upper bound.
    fn set_time_range(&mut self, min: u64, max: u64) {
        self.time_range = (min, max);
    }

    /// Only cells of timestamp `ts` (HBase's `setTimestamp`).
    fn set_timestamp(&mut self, ts: u64) {
        // [ts, ts + 1); u64::MAX has no successor, so "no upper bound" is
        // the same set of cells.
        self.time_range = (ts, ts.checked_add(1).unwrap_or(0));
    }

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
            filter: self.filter.clone(),
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

    /// Applies a server-side filter in HBase's filter language, e.g.
    /// `"ColumnPrefixFilter('a') AND ValueFilter(=, 'binary:x')"`. A filter
    /// the server cannot parse fails the read with
    /// [`ErrorCode::InvalidFilter`](ferrobase_proto::ErrorCode).
    pub fn filter(mut self, filter: impl Into<String>) -> Get {
        self.spec.filter = filter.into();
        self
    }

    /// Only cells with timestamps in `[min, max)` (HBase's `TIMERANGE`).
    pub fn time_range(mut self, min: u64, max: u64) -> Get {
        self.spec.set_time_range(min, max);
        self
    }

    /// Only cells with timestamp `ts` (HBase's `TIMESTAMP`).
    pub fn timestamp(mut self, ts: u64) -> Get {
        self.spec.set_timestamp(ts);
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
    /// Rows in descending order (HBase's `REVERSED`). Then `start_row` is
    /// the highest row (inclusive) and `stop_row` the exclusive lower bound.
    pub reversed: bool,
    /// Set by [`Scan::row_prefix`]: only rows starting with it, whatever
    /// the direction (overrides `start_row`/`stop_row`).
    pub row_prefix: Option<Bytes>,
    /// The client stops after this many rows; 0: no limit.
    pub limit: u64,
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

    /// First row (inclusive; for a reversed scan the highest row).
    pub fn start_row(mut self, row: impl Into<Bytes>) -> Scan {
        self.start_row = row.into();
        self
    }

    /// Stop row (exclusive; for a reversed scan the lower bound).
    pub fn stop_row(mut self, row: impl Into<Bytes>) -> Scan {
        self.stop_row = row.into();
        self
    }

    /// Applies a server-side filter in HBase's filter language.
    pub fn filter(mut self, filter: impl Into<String>) -> Scan {
        self.spec.filter = filter.into();
        self
    }

    /// Rows in descending order (HBase's `REVERSED => true`).
    pub fn reversed(mut self, reversed: bool) -> Scan {
        self.reversed = reversed;
        self
    }

    /// Only rows starting with `prefix` (HBase's `setRowPrefixFilter` /
    /// `ROWPREFIXFILTER`): sets the row range, not a filter.
    pub fn row_prefix(mut self, prefix: impl Into<Bytes>) -> Scan {
        self.row_prefix = Some(prefix.into());
        self
    }

    /// The client returns at most `n` rows (HBase's `LIMIT`); 0: no limit.
    pub fn limit(mut self, n: u64) -> Scan {
        self.limit = n;
        self
    }

    /// Only cells with timestamps in `[min, max)`; `max` 0: no bound.
    pub fn time_range(mut self, min: u64, max: u64) -> Scan {
        self.spec.set_time_range(min, max);
        self
    }

    /// Only cells with timestamp `ts`.
    pub fn timestamp(mut self, ts: u64) -> Scan {
        self.spec.set_timestamp(ts);
        self
    }

    /// Up to `n` versions per column.
    pub fn versions(mut self, n: u32) -> Scan {
        self.spec.max_versions = n;
        self
    }

    /// The rows this scan covers as a forward range `[low, high)` (empty:
    /// unbounded), whatever the direction.
    pub(crate) fn forward_range(&self) -> (Bytes, Bytes) {
        if let Some(p) = &self.row_prefix {
            return (p.clone(), prefix_successor(p));
        }
        if !self.reversed {
            return (self.start_row.clone(), self.stop_row.clone());
        }
        // Reversed: start is the inclusive top, stop the exclusive bottom.
        let low = if self.stop_row.is_empty() {
            Bytes::new()
        } else {
            successor(&self.stop_row)
        };
        let high = if self.start_row.is_empty() {
            Bytes::new()
        } else {
            successor(&self.start_row)
        };
        (low, high)
    }
}

/// The smallest row greater than `row`.
fn successor(row: &[u8]) -> Bytes {
    let mut v = row.to_vec();
    v.push(0);
    v.into()
}

/// The smallest row greater than every row starting with `prefix` (HBase's
/// `calculateTheClosestNextRowKeyForPrefix`); empty when there is none.
pub(crate) fn prefix_successor(prefix: &[u8]) -> Bytes {
    let mut v = prefix.to_vec();
    while let Some(&last) = v.last() {
        if last == 0xFF {
            v.pop();
        } else {
            let n = v.len() - 1;
            v[n] = last + 1;
            return v.into();
        }
    }
    Bytes::new()
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
